"""`python -m kaudit.agents.chat.local` stops the server it started, however it is ended."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from kaudit.agents.chat.local import free_port

FAKE_SERVER = textwrap.dedent(
    """
    import http.server, os, sys
    open(sys.argv[2], "w").write(str(os.getpid()))
    class Models(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"data": [{"id": "smollm2"}]}')
        def log_message(self, *args):
            pass
    http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Models).serve_forever()
    """
)
"""A stand-in for the model server: answers `/v1/models` and writes its pid to a file."""


def foreground_command(script: Path, pidfile: Path) -> str:
    """`python -m kaudit.agents.chat.local` with `script` standing in for the server."""
    return (
        "import sys, kaudit.agents.chat.local as local\n"
        f"local.server_command = lambda options, port: [sys.executable, {str(script)!r}, "
        f"str(port), {str(pidfile)!r}]\n"
        f"local.main(['--port', '{free_port()}'])\n"
    )


def outlives_sigterm(foreground: subprocess.Popen[Any], server: int) -> bool:
    """SIGTERM the foreground command; whether the server is still alive 10 s after it ends."""
    foreground.send_signal(signal.SIGTERM)
    foreground.wait(30)
    deadline = time.monotonic() + 10
    while alive(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive(server)


def clean_up(foreground: subprocess.Popen[Any], pidfile: Path) -> None:
    """Kill what a failed test left running."""
    foreground.kill()
    if pidfile.exists() and pidfile.read_text() and alive(int(pidfile.read_text())):
        os.kill(int(pidfile.read_text()), signal.SIGKILL)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_to_the_foreground_server_stops_the_model_server(tmp_path: Path) -> None:
    """Fails if SIGTERM (`kill %1`, or killing its process group) ends the foreground
    command without stopping the server it started: the server runs in its own session,
    so it would be orphaned, still holding the port and the cores."""
    script, pidfile = tmp_path / "fake.py", tmp_path / "server.pid"
    script.write_text(FAKE_SERVER)
    launcher = foreground_command(script, pidfile)
    with subprocess.Popen(
        [sys.executable, "-c", launcher], stdout=subprocess.PIPE, text=True
    ) as foreground:
        try:
            assert foreground.stdout is not None
            assert "serving smollm2" in foreground.stdout.readline()
            server = int(pidfile.read_text())
            assert alive(server)
            assert outlives_sigterm(foreground, server) is False, "the server outlived it"
        finally:
            clean_up(foreground, pidfile)


def test_sigterm_while_the_model_loads_stops_the_model_server(tmp_path: Path) -> None:
    """Fails if a SIGTERM that arrives before the server answers (a model server can take
    minutes to load a model) ends the foreground command with the server still running:
    the interrupt lands in `start`, before the `with` block that would stop it."""
    script, pidfile = tmp_path / "slow.py", tmp_path / "server.pid"
    script.write_text("import os, sys, time\nopen(sys.argv[2], 'w').write(str(os.getpid()))\n"
                      "time.sleep(120)\n")  # fmt: skip
    launcher = foreground_command(script, pidfile)
    with subprocess.Popen([sys.executable, "-c", launcher], stderr=subprocess.PIPE) as foreground:
        try:
            deadline = time.monotonic() + 30
            while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
                time.sleep(0.05)
            server = int(pidfile.read_text())
            assert outlives_sigterm(foreground, server) is False, "the loading server did"
        finally:
            clean_up(foreground, pidfile)
