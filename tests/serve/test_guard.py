"""The guard of an `--agent mcp` command, run as kaudit runs it: real processes, a real pipe."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kaudit.serve._process import guarded
from tests.serve.test_mcp_agent import gone

SPAWNER = """
import os, subprocess, sys, time
from pathlib import Path
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
Path(sys.argv[1] + ".part").write_text(f"{child.pid} {os.getpid()}")
Path(sys.argv[1] + ".part").replace(sys.argv[1])
time.sleep(600)
"""


@contextmanager
def guard(argv: list[str]) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """The guard of `argv` in a new session, and the writing end of its lifeline."""
    read, write = os.pipe()
    process = subprocess.Popen(guarded(argv), stdin=read, start_new_session=True)
    os.close(read)
    try:
        yield process, write
    finally:
        with contextlib.suppress(OSError):
            os.close(write)  # unless the test closed it on purpose
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def pids(pidfile: Path) -> tuple[int, int]:
    for _ in range(300):
        if pidfile.exists():
            break
        time.sleep(0.05)
    child, agent = (int(pid) for pid in pidfile.read_text().split())
    return child, agent


@pytest.mark.parametrize(
    ("script", "code"),
    [("import sys; sys.exit(3)", 3), ("import os; os.kill(os.getpid(), 15)", -15)],
)
def test_guard_exits_as_the_agent_did(script: str, code: int) -> None:
    """Fails if the guard's own exit hides the agent's (a signal death reported as exit 0
    or 1 would turn an errored run's reason into another one)."""
    with guard([sys.executable, "-c", script]) as (process, _):
        assert process.wait(timeout=60) == code


def test_closing_the_lifeline_kills_the_agent_and_its_child(tmp_path: Path) -> None:
    """Fails if the end of kaudit (its end of the pipe closing, as the kernel does on
    SIGKILL) leaves the agent or a child it started running: a guard that does not watch
    the pipe, or that ends only the agent instead of the whole group."""
    pidfile = tmp_path / "pids"
    with guard([sys.executable, "-c", SPAWNER, str(pidfile)]) as (process, write):
        child, agent = pids(pidfile)
        os.close(write)
        assert process.wait(timeout=60) == -signal.SIGKILL
        for _ in range(100):  # inside: leaving the block SIGKILLs the group itself
            if gone(agent) and gone(child):
                break
            time.sleep(0.05)
        assert (gone(agent), gone(child)) == (True, True)


def test_sigterm_to_the_group_leaves_the_agent_its_grace(tmp_path: Path) -> None:
    """Fails if the guard dies of the group's SIGTERM (kaudit would then take the agent
    for dead and SIGKILL it without the grace it gives for a clean exit) or passes its
    SIGTERM handler on to the agent."""
    ready = tmp_path / "ready"
    script = (
        "import signal, sys, time; from pathlib import Path\n"
        "signal.signal(signal.SIGTERM, lambda *_: (time.sleep(0.5), sys.exit(7)))\n"
        f"Path({str(ready)!r}).touch(); time.sleep(600)\n"
    )
    with guard([sys.executable, "-c", script]) as (process, _):
        for _ in range(300):
            if ready.exists():
                break
            time.sleep(0.05)
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(timeout=60) == 7
