"""Every error kaudit raises on bad input or a broken harness.

Bad input and harness failures are never scored as agent behaviour, so they get
their own hierarchy and callers can tell them apart from a verdict::

    KauditError
    ├── InputError           an argument of a Python call is out of range or malformed
    │                        (also a ValueError; `.argument` names the parameter)
    ├── SpecError            a task, suite or damage-spec file is malformed (names file + field)
    ├── SuiteError           a suite cannot be found or loaded
    ├── SubstrateError       a world cannot be built, seeded or dumped
    │   └── SeedDriftError   a freshly seeded sandbox differs from its template
    ├── InvalidRunError      a run has no dump, so it has no verdict (INVALID, never counted)
    ├── LedgerError          the ledger is corrupt, its hash chain broken, or a campaign clashes
    ├── EventError           a deployment event line is malformed (names source + line)
    ├── PreflightError       a model's serving stack failed the preflight (nothing recorded)
    └── AgentError           an agent could not produce a turn (recorded as `errored`)
        └── AgentStalledError  the agent used up its time without finishing (recorded as `stalled`)

A tool failure is *not* here: it is a result the agent sees (`ToolError`).

Messages speak the Python API's language: an argument is named as the parameter a
caller passed, in backticks (`` `alpha` must be in (0, 1), got 2``), never as a
command-line flag. The CLI swaps each backticked name for its flag when it prints the
line (`kaudit.cli._flags`), so a notebook and a shell each read their own terms.
Some errors about an argument keep the class of what it concerns (a malformed `head`
anchor is a `LedgerError`, a bad `substrate` option a `SubstrateError`) and name the
argument the same way. A `ValueError` that reaches a caller and is not an
`InputError` is a bug in kaudit, not bad input.
"""

from __future__ import annotations

from pathlib import Path

from kaudit._usage import Usage


class KauditError(Exception):
    """Base class for every error kaudit raises on purpose."""


class InputError(KauditError, ValueError):
    """An argument of a kaudit call is out of range or malformed; nothing was changed.

    `argument` is the parameter's name in the Python API (`alpha`, `head`, `faults`)
    and `reason` the rest of the sentence; the message reads `` `alpha` must be in
    (0, 1), got 2``. It is also a `ValueError`, so `except ValueError` around a call
    that used to raise the bare builtin for the same input keeps working.
    """

    def __init__(self, argument: str, reason: str) -> None:
        self.argument = argument
        self.reason = reason
        super().__init__(f"`{argument}` {reason}")

    def __reduce__(self) -> tuple[type[InputError], tuple[str, str]]:
        # An error raised in a Ray worker crosses a process; the default pickle would
        # call InputError(message) and lose the argument.
        return (type(self), (self.argument, self.reason))


class SpecError(KauditError):
    """A hand-written file is malformed; the message names the file and the field."""

    def __init__(self, path: Path | str, field: str, reason: str) -> None:
        self.path = str(path)
        self.field = field
        self.reason = reason
        super().__init__(f"{self.path}: {field}: {reason}")


class SuiteError(KauditError):
    """A suite reference cannot be resolved or loaded."""


class SubstrateError(KauditError):
    """A world or sandbox could not be built, seeded or dumped."""


class SeedDriftError(SubstrateError):
    """A freshly seeded sandbox does not match its template digest: no run may start on it."""


class InvalidRunError(KauditError):
    """A run cannot be labeled (no pre-cleanup dump); it is INVALID and never counted."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(f"{code}: {message}")


class LedgerError(KauditError):
    """The ledger cannot be read or written as asked."""


class EventError(KauditError):
    """A deployment event cannot be read; the message names the source, line and field."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        self.source = source
        self.line = line
        super().__init__(f"{source}: line {line}: {reason}")


class PreflightError(KauditError):
    """A model's serving stack failed the preflight probe; nothing was run or recorded."""


class AgentError(KauditError):
    """The agent failed to produce a turn; the run terminates as `errored`.

    `usage` (a `kaudit.Usage`) carries what the failed attempt still cost, e.g.
    the retries spent before giving up, so the run's record counts them. `kind` names a
    serving-stack failure (`http_500`, `timeout`, `connection`, `unreadable_reply`) so a
    report can tell a cell that measured the stack from one that measured the model.
    """

    def __init__(
        self, message: str, *, usage: Usage | None = None, kind: str | None = None
    ) -> None:
        self.usage = usage
        self.kind = kind
        super().__init__(message)


class AgentStalledError(AgentError):
    """The agent ran out of its time budget without finishing; the run terminates as `stalled`.

    Like a spent step budget, a spent time budget is the agent's failure, not the harness's:
    the state it left is labeled as it is (an external agent that hung, a client gone idle).
    """
