"""The process `LocalServer` starts: llama.cpp's C++ server, embedded by `xllamacpp`.

`xllamacpp.Server` loads the model and serves llama.cpp's HTTP API (OpenAI Chat
Completions, Anthropic Messages, `/health`) from threads inside this process. It runs in a
process of its own, not in kaudit's, so that its threads never compete with the harness's
interpreter and a SIGTERM (the default action: no Python handler is installed) ends it
at once, even in the middle of a long generation.

    python -m kaudit.agents.chat._serve --model PATH --port N [--template tools|model] ...
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from importlib import resources

TEMPLATE_NAME = "chatml-tools.jinja"
"""kaudit's ChatML template with tool calling, shipped beside this module."""


def tools_template() -> str:
    """The text of kaudit's tool-calling ChatML template (package data)."""
    return resources.files("kaudit.agents.chat").joinpath(TEMPLATE_NAME).read_text("utf-8")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m kaudit.agents.chat._serve")
    parser.add_argument("--model", required=True, help="the GGUF file")
    parser.add_argument("--alias", required=True, help="the model name the API answers to")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--context", type=int, required=True, help="context tokens per slot")
    parser.add_argument("--slots", type=int, required=True)
    parser.add_argument("--max-reply-tokens", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument(
        "--template",
        choices=["tools", "model"],
        default="tools",
        help="kaudit's tool-calling template, or the GGUF's own (which drops tools)",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    """Load the model, serve it on 127.0.0.1, and block until the process is killed."""
    args = _parser().parse_args(argv)
    # The wheel's llama.cpp runs its threads with OpenMP, whose default waiters spin. On a
    # machine whose cores are shared, a spinning thread holds the core its partner needs:
    # measured here with 2 threads under load 7 on 2 cores, generation fell from ~45 to
    # 2-8 tokens/s; passive waiting kept it at ~45. Read once, when libgomp loads.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import xllamacpp  # late: `--help` works without the runtime, and after the line above

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_parallel = args.slots
    params.n_ctx = args.context * args.slots  # split evenly between the slots
    params.n_predict = args.max_reply_tokens  # for requests without max_tokens
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.use_jinja = True
    if args.template == "tools":
        params.chat_template = tools_template()
    server = xllamacpp.Server(params)
    print(f"serving {args.alias} at {server.listening_address}", file=sys.stderr, flush=True)
    threading.Event().wait()  # the server's threads do the work; SIGTERM ends the process


if __name__ == "__main__":
    main()
