"""The agent's process: started under its guard, watched, its output kept, its group ended.

The command runs in its own process group under a guard (`_guard`) that ends the group
if kaudit itself dies; the whole group is ended with the run, so a shell's children
cannot outlive it. The last `OUTPUT_LIMIT` bytes of its stdout and of its stderr are
kept for the run's record whatever its exit code.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EXIT_GRACE_S = 5.0
"""How long a finished agent may take to exit by itself, and a terminated one to die."""
OUTPUT_LIMIT = 64 * 1024
"""Bytes of stdout and of stderr kept per run (the last ones: where the failure is)."""
GUARD = Path(__file__).with_name("_guard.py")
"""The agent's guard, started by path: ends the agent's group if kaudit dies (`_guard`)."""


def guarded(argv: list[str]) -> list[str]:
    """The command line that runs `argv` under its guard, in this interpreter."""
    return [sys.executable, "-I", str(GUARD), *argv]


class OutputTail:
    """The last `limit` bytes of a stream, and how many bytes came before them."""

    def __init__(self, limit: int = OUTPUT_LIMIT) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        """Append `chunk`, dropping the oldest bytes beyond the limit."""
        self.data += chunk
        over = len(self.data) - self.limit
        if over > 0:
            del self.data[:over]
            self.dropped += over

    def text(self) -> str:
        """The kept bytes as text (undecodable bytes replaced)."""
        return self.data.decode(errors="replace")

    def last_lines(self, count: int) -> list[str]:
        """The last `count` non-empty lines."""
        return [line for line in self.text().splitlines() if line.strip()][-count:]


@dataclass(frozen=True)
class Exit:
    """How the agent's process ended: its code, or that its time ran out."""

    code: int | None
    timed_out: bool


class AgentProcess:
    """One run's agent command: start, wait (bounded), end its group, keep its output."""

    def __init__(self, command: str, environment: Mapping[str, str]) -> None:
        self.command = command
        self.environment = dict(environment)
        self.stdout = OutputTail()
        self.stderr = OutputTail()
        self.exit: Exit | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._readers: list[asyncio.Task[None]] = []
        self._lifeline: _Lifeline | None = None

    async def start(self) -> None:
        """Start the command under its guard; raises `OSError` when it cannot be."""
        self._lifeline = _Lifeline()
        try:
            self._process = await asyncio.create_subprocess_exec(
                *guarded(shlex.split(self.command)),
                stdin=self._lifeline.reader,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self.environment,
                start_new_session=True,  # its own process group, ended as one with the run
            )
        finally:
            self._lifeline.hand_over()  # the guard's copy is then the only reading end
        assert self._process.stdout is not None and self._process.stderr is not None
        self._readers = [
            asyncio.create_task(_drain(self._process.stdout, self.stdout)),
            asyncio.create_task(_drain(self._process.stderr, self.stderr)),
        ]

    @property
    def pid(self) -> int | None:
        """The guard's pid (the group's id), once started."""
        return None if self._process is None else self._process.pid

    async def wait(self, timeout_s: float) -> Exit:
        """Wait for the command to exit, at most `timeout_s`; the exit is kept."""
        assert self._process is not None, "wait before start"
        try:
            code = await asyncio.wait_for(self._process.wait(), timeout_s)
        except TimeoutError:
            self.exit = Exit(None, timed_out=True)
        else:
            self.exit = Exit(code, timed_out=False)
        return self.exit

    async def end(self, grace_s: float = EXIT_GRACE_S) -> None:
        """End the group (after `grace_s` for a leader still running), then read its output."""
        if self._process is not None:
            timed_out = self.exit is not None and self.exit.timed_out
            await end_group(self._process, 0.0 if timed_out else grace_s)
            if self.exit is None:
                self.exit = Exit(self._process.returncode, timed_out=False)
        for reader in self._readers:
            try:
                await asyncio.wait_for(reader, EXIT_GRACE_S)
            except TimeoutError:  # a process that left the group still holds the pipe
                reader.cancel()
        if self._lifeline is not None:
            self._lifeline.close()

    def stderr_line(self) -> str:
        """The last line on stderr, for an `errored` run's reason."""
        lines = self.stderr.last_lines(1)
        return lines[0] if lines else "(no output on stderr)"

    def output(self) -> dict[str, Any]:
        """What the record keeps: exit code, whether it timed out, the ends of both streams."""
        found: dict[str, Any] = {
            "exit_code": None if self.exit is None else self.exit.code,
            "timed_out": bool(self.exit and self.exit.timed_out),
            "stdout": self.stdout.text(),
            "stderr": self.stderr.text(),
        }
        for name, tail in (("stdout", self.stdout), ("stderr", self.stderr)):
            if tail.dropped:
                found[f"{name}_dropped_bytes"] = tail.dropped
        return found


async def _drain(stream: asyncio.StreamReader, tail: OutputTail) -> None:
    while chunk := await stream.read(65536):
        tail.add(chunk)


class _Lifeline:
    """A pipe whose reading end is the guard's stdin and whose writing end is kaudit's life.

    The writing end is held by this process only (non-inheritable, never written to): it
    closes when the run ends, after the group has been ended, or when the kernel ends
    kaudit; either way the guard sees end of file and kills the group.
    """

    def __init__(self) -> None:
        self.reader, self._writer = os.pipe()
        self._reader_open = True
        self._writer_open = True

    def hand_over(self) -> None:
        """Close kaudit's copy of the reading end once the guard holds its own."""
        if self._reader_open:
            self._reader_open = False
            os.close(self.reader)

    def close(self) -> None:
        """Close both of kaudit's ends (the guard then ends the group, if still there)."""
        self.hand_over()
        if self._writer_open:
            self._writer_open = False
            os.close(self._writer)


async def end_group(process: asyncio.subprocess.Process, grace_s: float) -> None:
    """Wait `grace_s` for the process to exit, then SIGTERM, then SIGKILL its group.

    Whatever the leader did, members of its group still alive (a shell's children) are
    killed at the end: nothing a run started outlives it.
    """
    if process.returncode is None and grace_s > 0:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), grace_s)
    if process.returncode is None:
        _signal_group(process, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), EXIT_GRACE_S)
        except TimeoutError:
            _signal_group(process, signal.SIGKILL)
            await process.wait()
    _signal_group(process, signal.SIGKILL)


def _signal_group(process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)  # the group's id is the leader's pid (a new session)
