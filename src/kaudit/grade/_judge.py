"""An LLM judge: one request per run through kaudit's own chat clients, a strict JSON answer.

The request goes through the same SDK clients, retry classification, backoff and rate
cap as the chat agents (`kaudit.agents.chat`); only the API call is retried. A reply that
is not the asked-for JSON object is recorded as a judge failure with its text, never
asked again: asking until an answer parses would be re-grading by sampling.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import json
import random
import time
from dataclasses import dataclass, field, replace
from typing import Any

from kaudit._usage import Usage
from kaudit.agents.chat import ModelConfig
from kaudit.agents.chat._body import MessageBody, post
from kaudit.agents.chat._retry import Backoff, RateLimiter, SdkErrors
from kaudit.agents.chat._session import json_object
from kaudit.errors import KauditError
from kaudit.grade._case import JudgeCase, judge_messages, messages_digest
from kaudit.grade._rubric import Rubric
from kaudit.ledger._grades import JudgeGrade

__all__ = ["ANSWER_SCHEMA", "Judge", "JudgeAnswer", "MalformedAnswer", "parse_answer"]

GRADES: tuple[JudgeGrade, ...] = ("damage", "safe", "cannot_tell")
RAW_CHARS = 2000
"""The reply text kept with a grade, so a failure can be read."""
REASON_CHARS = 1000

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": list(GRADES)},
        "reason": {"type": "string"},
    },
    "required": ["verdict", "reason"],
    "additionalProperties": False,
}
"""The structured output asked of OpenAI-compatible servers (`response_format`)."""


class MalformedAnswer(ValueError):
    """The judge's reply is not exactly the JSON answer the rubric asks for."""


def parse_answer(text: str | None) -> tuple[JudgeGrade, str]:
    """(grade, reason) from a reply that is one JSON object with exactly those two fields.

    Surrounding whitespace and one Markdown code fence are tolerated; anything else
    (prose, a refusal to judge, extra fields, another verdict word) is `MalformedAnswer`.
    """
    body = (text or "").strip()
    if body.startswith("```") and body.endswith("```"):
        body = body.removeprefix("```").removesuffix("```").strip()
        body = body.removeprefix("json").strip()
    if not body:
        raise MalformedAnswer("empty reply")
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise MalformedAnswer(f"not JSON ({exc.msg})") from None
    if not isinstance(value, dict) or set(value) != {"verdict", "reason"}:
        raise MalformedAnswer("not an object with exactly 'verdict' and 'reason'")
    verdict, reason = value["verdict"], value["reason"]
    if verdict not in GRADES:
        raise MalformedAnswer(f"verdict {verdict!r} is not damage, safe or cannot_tell")
    if not isinstance(reason, str):
        raise MalformedAnswer("reason is not a string")
    return verdict, reason[:REASON_CHARS]


@dataclass
class JudgeAnswer:
    """What one grading call produced, success or failure, with what it cost."""

    grade: JudgeGrade | None = None
    reason: str | None = None
    failure: str | None = None
    raw_reply: str | None = None
    prompt_digest: str = ""
    usage: Usage = field(default_factory=Usage)
    """Every call of the grade (retries included), their time, the reply's tokens and cost."""


class Judge:
    """A judge model under one rubric; one SDK client per event loop, as the chat agents."""

    def __init__(self, config: ModelConfig, rubric: Rubric) -> None:
        self.config = config
        self.rubric = rubric
        try:
            self._provider = importlib.import_module(f"kaudit.agents.chat._{config.provider}")
        except ModuleNotFoundError as exc:
            raise KauditError(
                f"the {config.provider} client is not installed: pip install "
                f"'kaudit[{config.provider}]'"
            ) from exc
        self._errors: SdkErrors = self._provider._ERRORS
        self._limiter = RateLimiter(config.requests_per_minute)
        self._client: Any = None

    def sampling(self) -> dict[str, Any]:
        """The sampling every grade of this judge uses (part of its key).

        A config's `extra_body` shapes the request (a server's structured-output form, its
        sampling extras), so it is part of the judge too.
        """
        sampling: dict[str, Any] = {
            "temperature": self.config.temperature,
            "top_p": self.config.top_p,
            "max_tokens": self.config.max_tokens,
        }
        if self.config.extra_body:
            sampling["extra_body"] = self.config.extra_body
        return sampling

    @property
    def key(self) -> str:
        """The judge's identity: model, rubric id and digest, sampling."""
        s = self.sampling()
        key = (
            f"{self.config.key}|{self.rubric.id}@{self.rubric.digest[:12]}|"
            f"temperature={s['temperature']},top_p={s['top_p']},max_tokens={s['max_tokens']}"
        )
        if "extra_body" in s:
            extra = json.dumps(s["extra_body"], sort_keys=True).encode()
            key += f",extra_body={hashlib.sha256(extra).hexdigest()[:12]}"
        return key

    def _body(self, system: str, user: str, seed: int) -> tuple[str, MessageBody]:
        config = self.config
        fields: dict[str, Any] = {"model": config.name}
        if config.temperature is not None:
            fields["temperature"] = config.temperature
        if config.top_p is not None:
            fields["top_p"] = config.top_p
        if config.provider == "anthropic":
            fields |= {"system": system, "max_tokens": config.max_tokens}
            messages = [{"role": "user", "content": user}]
            return "/v1/messages", MessageBody(fields | config.extra_body, messages)
        fields[config.max_tokens_param] = config.max_tokens
        if config.send_seed:
            fields["seed"] = seed % (2**31 - 1)
        fields["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "grade", "schema": ANSWER_SCHEMA, "strict": True},
        }
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return "/chat/completions", MessageBody(fields | config.extra_body, messages)

    async def grade(self, case: JudgeCase, run_id: str, seed: int) -> JudgeAnswer:
        """Grade one run; API failures past the retries and bad replies become failures.

        Raises `KauditError` for a setup mistake (wrong key, unknown model, no such route):
        that is never a grade.
        """
        system, user = judge_messages(self.rubric, case)
        path, body = self._body(system, user, seed)
        answer = JudgeAnswer(prompt_digest=messages_digest(system, user))
        headers = {"X-Kaudit-Run-Id": f"grade/{run_id}", "X-Kaudit-Seed": str(seed)}
        started = time.perf_counter()
        try:
            response = await self._call(path, body, headers, answer, seed)
        finally:
            answer.usage = replace(answer.usage, model_ms=(time.perf_counter() - started) * 1000)
        if response is not None:
            self._read(response, answer)
        return answer

    async def _call(
        self,
        path: str,
        body: MessageBody,
        headers: dict[str, str],
        answer: JudgeAnswer,
        seed: int,
    ) -> Any:
        """The reply, retried like an agent's call; None (failure noted) once retries run out."""
        backoff = Backoff(
            self.config.backoff_initial_s, self.config.backoff_max_s, random.Random(seed)
        )
        while True:
            await self._limiter.wait()
            answer.usage += Usage(api_calls=1)
            try:
                return await post(self._get_client(), path, body, headers)
            except Exception as exc:  # the SDKs' errors, classified as the agents do
                kind = self._errors.disposition(exc)
                said = " ".join(str(exc).split())[:300]  # one line: servers send tracebacks
                message = f"{self.config.key}: {type(exc).__name__}: {said}"
                if kind == "setup":
                    raise KauditError(f"judge {message}") from exc
                retries = answer.usage.retries
                if kind == "retry" and retries < self.config.max_retries:
                    answer.usage += Usage(retries=1)
                    await asyncio.sleep(backoff.delay(retries + 1, self._errors.retry_after(exc)))
                    continue
                answer.failure = (
                    f"api_error {self._errors.kind(exc)}: {message} (after {retries} retries)"
                )
                return None

    def _read(self, response: Any, answer: JudgeAnswer) -> None:
        """Tokens, cost and the parsed answer (or the failure) of one reply."""
        try:
            text, billed = self._reply(response)
        except (LookupError, TypeError, ValueError) as exc:
            answer.failure = f"unreadable_reply: {exc}"
            return
        answer.usage += self.config.price.priced(billed)
        answer.raw_reply = None if text is None else text[:RAW_CHARS]
        try:
            answer.grade, answer.reason = parse_answer(text)
        except MalformedAnswer as exc:
            answer.failure = f"malformed: {exc}"

    def _reply(self, response: Any) -> tuple[str | None, Usage]:
        """The reply's text and the tokens it was billed for."""
        reply = json_object(response, "reply")
        usage = json_object(reply.get("usage") or {}, "usage")
        if self.config.provider == "anthropic":
            blocks = reply.get("content")
            if not isinstance(blocks, list):
                raise ValueError("the reply has no content blocks")
            texts = [
                str(b.get("text") or "")
                for b in blocks
                if json_object(b, "content block").get("type") == "text"
            ]
            billed = Usage(
                int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
            )
            return "".join(texts) or None, billed
        choices = reply.get("choices")
        if not choices or not isinstance(choices, list):
            raise ValueError("the reply has no choices")
        message = json_object(json_object(choices[0], "choice").get("message"), "message")
        content = message.get("content")
        billed = Usage(
            int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        )
        return None if content is None else str(content), billed

    def _get_client(self) -> Any:
        if self._client is None:
            self._client = self._provider.make_client(self.config)
        return self._client

    async def aclose(self) -> None:
        """Close the SDK client, if one was built."""
        if self._client is not None:
            await self._client.close()
            self._client = None
