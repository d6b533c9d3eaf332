"""A local OpenAI- and Anthropic-compatible server with scripted, seeded and faulty replies.

The test double for chat agents, shipped with the library so tests, benchmarks and users
can exercise the real SDKs over real HTTP without a model: each model name maps to a
`Persona` that picks a script per run from the run's seed, replays it one reply per turn,
and injects 500s, 429s and timeouts on chosen attempts. A request with `"stream": true`
gets the reply as server-sent events in the provider's chunk format (`_stream`), so
streaming clients and the recording model proxy can be tested too. Standard library only.

    with ChatTestServer({"bot": Persona.single([Reply(content="hi")])}) as server:
        ...  # point an agent at server.openai_url or server.anthropic_url
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kaudit.agents.chat._sse_replies import responses_events, responses_turn, sse_events

Fault = str
"""One attempt's outcome: "500", "429", "529", "timeout", or "ok"."""


@dataclass(frozen=True)
class Call:
    """A tool call in a reply; a `str` argument is sent as is (malformed JSON included)."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """One scripted model reply: text, tool calls, or both."""

    content: str | None = None
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class Persona:
    """How one model name behaves.

    `scripts` are drawn per run with `weights` from the run's seed (the `seed` field or
    the `X-Kaudit-Seed` header). `faults[i]` is the outcome of the i-th attempt at each
    turn in `fault_turns` (every turn when None; attempts past the list succeed);
    `fault_rate` adds seeded random faults drawn from `fault_kinds`. `latency_s` delays
    every reply.
    """

    scripts: Mapping[str, Sequence[Reply]]
    weights: Mapping[str, float] | None = None
    faults: Sequence[Fault] = ()
    fault_turns: Sequence[int] | None = None
    fault_rate: float = 0.0
    fault_kinds: Sequence[Fault] = ("500", "429")
    latency_s: float = 0.0
    drops_tools: bool = False
    """Behave like a stack without tool calling: tools are not in the prompt (its token
    count), and replies carry no tool calls."""
    rejects_null_content: bool = False
    """Answer HTTP 500 to an assistant message with `"content": null`, as
    llama-cpp-python's server does."""
    answer: Callable[[Mapping[str, Any]], Reply] | None = None
    """Reply from the request body instead of the scripts: a scripted judge that answers
    from what it is shown (faults still apply)."""

    @classmethod
    def single(cls, replies: Sequence[Reply], **options: Any) -> Persona:
        """A persona with one script."""
        return cls(scripts={"only": tuple(replies)}, **options)

    def script_name(self, seed: int) -> str:
        """The script a run with `seed` follows; a pure function of the seed."""
        names = sorted(self.scripts)
        if self.weights is None:
            return names[0]
        return random.Random(seed).choices(names, [self.weights.get(n, 0.0) for n in names])[0]

    def reply(self, seed: int, turn: int) -> Reply:
        """The reply at `turn`; past the end of the script, a closing message."""
        script = self.scripts[self.script_name(seed)]
        return script[turn] if turn < len(script) else Reply(content="Done.")

    def fault(self, seed: int, turn: int, attempt: int) -> Fault:
        """The outcome of `attempt` (0-based) at `turn`."""
        at_turn = self.fault_turns is None or turn in self.fault_turns
        if at_turn and attempt < len(self.faults):
            return self.faults[attempt]
        if self.fault_rate > 0:
            rng = random.Random(f"{seed}:{turn}:{attempt}")
            if rng.random() < self.fault_rate:
                return rng.choice(list(self.fault_kinds))
        return "ok"


@dataclass
class ServerStats:
    """What the server saw, for assertions: requests and faults served by kind."""

    requests: int = 0
    with_key: int = 0
    """Requests that carried an API key (`Authorization: Bearer` or `x-api-key`)."""
    faults: Counter[str] = field(default_factory=Counter)
    scripts: Counter[str] = field(default_factory=Counter)
    bodies: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Each request body by run id, in arrival order, when the server keeps bodies."""


class _State:
    def __init__(
        self, personas: Mapping[str, Persona], timeout_sleep_s: float, keep_bodies: bool
    ) -> None:
        self.personas = dict(personas)
        self.timeout_sleep_s = timeout_sleep_s
        self.keep_bodies = keep_bodies
        self.stats = ServerStats()
        self.attempts: Counter[tuple[str, int]] = Counter()
        self.lock = threading.Lock()

    def attempt(self, run: str, turn: int) -> int:
        with self.lock:
            self.stats.requests += 1
            number = self.attempts[(run, turn)]
            self.attempts[(run, turn)] += 1
            return number


_ERROR_TYPES = {"429": "rate_limit_error", "500": "api_error", "529": "overloaded_error"}


def _openai_body(model: str, reply: Reply, prompt_tokens: int, turn: int) -> dict[str, Any]:
    calls = [
        {
            "id": f"call_{turn}_{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": _arguments_text(c.arguments)},
        }
        for i, c in enumerate(reply.calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if calls:
        message["tool_calls"] = calls
    completion = _tokens(reply)
    return {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
        },
    }


def _anthropic_body(model: str, reply: Reply, prompt_tokens: int, turn: int) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if reply.content:
        content.append({"type": "text", "text": reply.content})
    for i, c in enumerate(reply.calls):
        arguments = dict(c.arguments) if isinstance(c.arguments, Mapping) else c.arguments
        content.append(
            {"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": c.name, "input": arguments}
        )
    return {
        "id": f"msg_{turn}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if reply.calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": prompt_tokens, "output_tokens": _tokens(reply)},
    }


def _responses_body(model: str, reply: Reply, prompt_tokens: int, turn: int) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.content:
        text = {"type": "output_text", "text": reply.content, "annotations": []}
        output.append(
            {"type": "message", "id": f"msg_{turn}", "status": "completed", "role": "assistant"}
            | {"content": [text]}
        )
    output += [
        {"type": "function_call", "id": f"fc_{turn}_{i}", "call_id": f"call_{turn}_{i}"}
        | {"name": c.name, "arguments": _arguments_text(c.arguments), "status": "completed"}
        for i, c in enumerate(reply.calls)
    ]
    completion = _tokens(reply)
    usage = {"input_tokens": prompt_tokens, "output_tokens": completion}
    usage |= {"total_tokens": prompt_tokens + completion}
    return {
        "id": f"resp_{turn}",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": model,
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
    }


_BUILDERS: dict[str, Callable[[str, Reply, int, int], dict[str, Any]]] = {
    "chat/completions": _openai_body,
    "messages": _anthropic_body,
    "responses": _responses_body,
}
"""Each API the server speaks, by the end of its path, and how it words a reply."""


def _arguments_text(arguments: Mapping[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(dict(arguments))


def _tokens(reply: Reply) -> int:
    """A deterministic stand-in for a tokenizer: ~4 characters per token."""
    text = (reply.content or "") + "".join(
        c.name + _arguments_text(c.arguments) for c in reply.calls
    )
    return 1 + len(text) // 4


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs expect
    # headers and body go out in two writes; with Nagle on, the client's delayed ACK
    # would add ~40 ms to every reply
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request log."""

    def do_POST(self) -> None:
        """Serve /v1/chat/completions, /v1/messages and /v1/responses."""
        # the client may have timed out and hung up, as a timeout fault intends
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._serve()

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        body = json.loads(raw or b"{}")
        api = next((a for a in _BUILDERS if self.path.rstrip("/").endswith(f"/{a}")), None)
        if api is None:
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        anthropic = api == "messages"
        state = self.server.state
        persona = state.personas.get(str(body.get("model")))
        if persona is None:
            self._error(404, "not_found_error", f"unknown model {body.get('model')!r}", anthropic)
            return
        seed = int(self.headers.get("X-Kaudit-Seed") or body.get("seed") or 0)
        run = self.headers.get("X-Kaudit-Run-Id") or str(seed)
        turn = (
            responses_turn(body.get("input"))
            if api == "responses"
            else sum(m.get("role") == "assistant" for m in body.get("messages", []))
        )
        outcome = persona.fault(seed, turn, state.attempt(run, turn))
        if state.keep_bodies:
            with state.lock:
                state.stats.bodies.setdefault(run, []).append(body)
        if self.headers.get("Authorization", "").startswith("Bearer ") or self.headers.get(
            "x-api-key"
        ):
            with state.lock:
                state.stats.with_key += 1
        if outcome != "ok":
            with state.lock:
                state.stats.faults[outcome] += 1
            if outcome == "timeout":
                time.sleep(state.timeout_sleep_s)
                self._send(200, {})  # too late: the client gave up
                return
            kind = _ERROR_TYPES.get(outcome, "api_error")
            self._error(int(outcome), kind, f"injected {outcome}", anthropic)
            return
        if persona.rejects_null_content and any(
            m.get("role") == "assistant" and m.get("content") is None
            for m in body.get("messages", [])
        ):
            self._error(500, "api_error", "content: Input should be a valid string", anthropic)
            return
        if turn == 0:
            with state.lock:
                state.stats.scripts[persona.script_name(seed)] += 1
        time.sleep(persona.latency_s)
        reply = persona.answer(body) if persona.answer else persona.reply(seed, turn)
        prompt = raw
        if persona.drops_tools:
            reply = Reply(content=reply.content or "I have no tools.")
            kept = {k: v for k, v in body.items() if k not in ("tools", "tool_choice")}
            prompt = json.dumps(kept, ensure_ascii=False, separators=(",", ":")).encode()
        built = _BUILDERS[api](str(body["model"]), reply, 1 + len(prompt) // 4, turn)
        if body.get("stream") and api == "responses":
            self._send_events(responses_events(built))
            return
        if body.get("stream"):
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._send_events(sse_events(built, anthropic=anthropic, include_usage=usage))
            return
        self._send(200, built)

    def _send_events(self, events: list[bytes]) -> None:
        """The reply as server-sent events, one HTTP chunk per event, as real servers do."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in [*events, b""]:  # the empty chunk ends the body
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()

    def _error(self, status: int, kind: str, message: str, anthropic: bool) -> None:
        body: dict[str, Any]
        if anthropic:
            body = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            body = {"error": {"message": message, "type": kind, "code": None}}
        self._send(status, body, {"retry-after": "0"} if status == 429 else None)

    def _send(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # many runs connect at once; the default backlog of 5 stalls them

    def __init__(self, address: tuple[str, int], state: _State) -> None:
        super().__init__(address, _Handler)
        self.state = state


class ChatTestServer:
    """The server on a background thread; use as a context manager. Port 0 picks a free one.

    With `keep_bodies`, every request body is kept in `stats.bodies` by run id, so a test
    can check what each run sent.
    """

    def __init__(
        self,
        personas: Mapping[str, Persona],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        timeout_sleep_s: float = 2.0,
        keep_bodies: bool = False,
    ) -> None:
        self._state = _State(personas, timeout_sleep_s, keep_bodies)
        self._server = _Server((host, port), self._state)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """Base URL without the API prefix (the Anthropic client's base URL)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI client (`/v1`)."""
        return self.url + "/v1"

    @property
    def anthropic_url(self) -> str:
        """Base URL for the Anthropic client (it adds `/v1/messages`)."""
        return self.url

    @property
    def stats(self) -> ServerStats:
        """Requests and faults served so far."""
        return self._state.stats

    def start(self) -> ChatTestServer:
        """Start serving on the background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> ChatTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve(
    personas: Mapping[str, Persona],
    port: int = 0,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve in the foreground until the process ends; `ready(url)` is called once bound.

    For running the server in its own process (benchmarks), away from the client's GIL.
    """
    server = ChatTestServer(personas, port=port)
    if ready is not None:
        ready(server.url)
    server._server.serve_forever()
