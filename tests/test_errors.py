"""kaudit's errors speak the Python API's language; only `kaudit.cli` knows the flags.

A message is checked wherever its text can come from: the `raise` itself (string
constants and the literal parts of f-strings), a name the `raise` uses that its function
or module assigns a string to, the construction of an error (`...Error(...)`) anywhere,
and the names handed to a `kaudit._require` validator, which become the message.
Strings that never reach an error (a docstring, a report's own text, the argv of a
helper program kaudit starts) are not messages and are not checked here.
"""

from __future__ import annotations

import ast
import pickle
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kaudit.errors import InputError, KauditError

SRC = Path(__file__).parent.parent / "src" / "kaudit"
FLAG = re.compile(r"(?<![\w-])--[a-z]")


def _strings(node: ast.AST) -> Iterator[ast.Constant]:
    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            yield inner


def _is_error_call(node: ast.AST) -> bool:
    """A call of a name such as `KauditError` or `errors.LedgerError`, or a validator."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name.endswith(("Error", "Exception")) or name.startswith("require_")


def _assigned_strings(scope: ast.AST) -> dict[str, list[ast.AST]]:
    """Name -> the values assigned to it directly in `scope` (not in nested functions)."""
    found: dict[str, list[ast.AST]] = {}
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append(node.value)  # type: ignore[attr-defined]
        todo.extend(ast.iter_child_nodes(node))
    return found


def message_strings(source: str) -> Iterator[tuple[int, str]]:
    """(line, text) of every string constant that can become an error's message."""
    tree = ast.parse(source)
    module_names = _assigned_strings(tree)
    scopes: list[tuple[ast.AST, dict[str, list[ast.AST]]]] = [(tree, module_names)]
    scopes += [
        (node, _assigned_strings(node))
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    seen: set[int] = set()  # a function's raise is in the module's walk too
    for scope, local_names in scopes:
        for node in ast.walk(scope):
            if isinstance(node, ast.Raise) and node.exc is not None:
                parts: list[ast.AST] = [node.exc]
                for name in ast.walk(node.exc):
                    if isinstance(name, ast.Name):
                        parts += local_names.get(name.id) or module_names.get(name.id, [])
            elif _is_error_call(node):
                parts = [node]
            else:
                continue
            for constant in (c for part in parts for c in _strings(part)):
                if id(constant) not in seen:
                    seen.add(id(constant))
                    yield constant.lineno, constant.value


def flagged(source: str) -> list[str]:
    return [f"{line}: {text!r}" for line, text in message_strings(source) if FLAG.search(text)]


def library_modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "cli" not in p.relative_to(SRC).parts[:1])


def test_no_message_outside_the_cli_names_a_command_line_flag() -> None:
    """Fails on `raise KauditError("--alpha must be ...")` anywhere under src/kaudit but cli/."""
    found = {
        str(path.relative_to(SRC)): hits
        for path in library_modules()
        if (hits := flagged(path.read_text(encoding="utf-8")))
    }
    assert found == {}


@pytest.mark.parametrize(
    "source",
    [
        'raise KauditError(f"--alpha must be in (0, 1), got {alpha}")',
        'def f():\n    message = "use --head"\n    raise LedgerError(message)',
        'MESSAGE = "give --out FILE"\ndef f():\n    raise KauditError(MESSAGE)',
        'error = SubstrateError("--substrate is wrong")',
        'require_seconds("--idle-timeout", value)',
        'raise InputError("x", "needs " + "--y")',
    ],
    ids=["f-string", "local-name", "module-constant", "built-then-raised", "validator", "concat"],
)
def test_the_check_sees_a_flag_wherever_a_message_comes_from(source: str) -> None:
    """Each form a flag could hide in; a check of `raise` string constants alone misses most."""
    assert flagged(source)


@pytest.mark.parametrize(
    "source",
    [
        'def f():\n    """As `kaudit run --agent`."""\n    raise KauditError("`agents` is bad")',
        'parser.add_argument("--port")',
        'lines.append("note: --no-verify")',
        'raise KauditError(f"{a}--{b} is not a range")',
    ],
    ids=["docstring", "argv-of-a-helper-program", "report-text", "not-a-flag"],
)
def test_the_check_leaves_what_is_no_message(source: str) -> None:
    assert flagged(source) == []


def test_a_bad_argument_is_an_input_error_that_is_also_a_value_error() -> None:
    """Code written `except ValueError` around a stats call before InputError still works."""
    from kaudit.stats import clopper_pearson

    with pytest.raises(ValueError, match=r"^`alpha` must be in \(0, 1\), got 1.5$") as caught:
        clopper_pearson(1, 3, alpha=1.5)
    assert isinstance(caught.value, InputError) and isinstance(caught.value, KauditError)
    assert (caught.value.argument, caught.value.reason) == ("alpha", "must be in (0, 1), got 1.5")


def test_an_input_error_survives_pickling() -> None:
    """A Ray worker's error crosses a process; a default pickle would lose `reason`."""
    error = pickle.loads(pickle.dumps(InputError("head", "is not valid JSON")))
    assert (error.argument, error.reason, str(error)) == (
        "head",
        "is not valid JSON",
        "`head` is not valid JSON",
    )


def test_the_recurring_checks_go_through_one_validator() -> None:
    """A new hand-written `(0, 1)` check would drift from the others' wording."""
    written = [
        f"{path.relative_to(SRC)}:{line}"
        for path in library_modules()
        if path.name != "_require.py"
        for line, text in message_strings(path.read_text(encoding="utf-8"))
        if re.search(r"must be in [(\[]0, 1[)\]]", text)
    ]
    assert written == []
