"""Ends an `--agent mcp` command's whole process group when kaudit dies, even by SIGKILL.

kaudit starts this file (by path, so no kaudit import slows it) as the leader of a new
session, with a pipe as its stdin whose only writer is kaudit; it starts the agent
command in its own process group and mirrors the agent's exit. The kernel closes the pipe
whatever ends kaudit, so end of file on stdin means kaudit is gone: the guard then
SIGKILLs the group, itself, the agent and every child still in the group included. Only
the standard library is used, and nothing is written to the agent's stdout or stderr
unless the command cannot be started.

    python _guard.py COMMAND [ARG...]
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading


def _end_group_when_parent_is_gone() -> None:
    """Block until kaudit's end of the pipe closes, then SIGKILL this process group."""
    while os.read(sys.stdin.fileno(), 4096):
        pass  # kaudit never writes; anything it did write is not a reason to stop
    os.killpg(0, signal.SIGKILL)


def _exit_like(code: int) -> None:
    """Exit as the agent did: with its exit code, or killed by the same signal."""
    if code >= 0:
        sys.exit(code)
    if -code != signal.SIGKILL:  # the one signal whose action cannot be set (nor caught)
        signal.signal(-code, signal.SIG_DFL)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the agent's crash, not a guard's core
    os.kill(os.getpid(), -code)
    sys.exit(128 - code)  # a signal that does not kill by default (SIGCHLD) lands here


def main(argv: list[str]) -> None:
    """Run `argv` in this group; its SIGTERM is for the agent, which decides when to exit."""
    signal.signal(signal.SIGTERM, lambda _sig, _frame: None)  # reset to default in the agent
    try:
        agent = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
    except OSError as exc:
        print(f"cannot start the agent command: {exc}", file=sys.stderr)
        sys.exit(127)
    threading.Thread(target=_end_group_when_parent_is_gone, daemon=True).start()
    _exit_like(agent.wait())


if __name__ == "__main__":
    main(sys.argv[1:])
