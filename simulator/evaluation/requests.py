"""Model requests for the harness: through the project's one client, cached, counted.

Every request goes through ``simulator.llm.client.ChatClient`` (the application's only path to a
model). ``Requester`` wraps it with the run's resumable cache (``cache.RequestCache``): it answers from
the cache when it can and otherwise asks the client, then records the answer before returning it.
``sent`` and ``cached`` count both kinds, so a resumed run can prove it sent nothing twice.

Two faces of the same cache:

- ``Requester.chat(item, messages, params)``: what the benchmark tasks call; ``params`` are the
  sampling parameters as a dict (``n``, ``temperature``, ``max_tokens``, optional ``top_p`` and
  ``stop``), which are also part of the cache key. A 4xx refusal (prompt too long, bad parameters)
  raises ``RequestRejected`` so a task can record it on the item and go on.
- ``Requester.client_for(item)``: a ``CachingClient`` with ``ChatClient``'s interface, for hosts that
  take a client, i.e. ``simulator.pipeline.run``; its requests share the cache and the counters, and a
  cached reply is replayed to ``on_delta`` so the pipeline's events look the same either way. The same
  request made again for one item has its own entry (new samples, as the web app would get).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulator.evaluation.cache import RequestCache, request_key
from simulator.llm.client import ChatClient, ChatResult, Choice, ModelInfo, OnDelta, Usage
from simulator.llm.errors import LLMRejected, LLMUnavailable, PromptTooLong

PARAM_KEYS = frozenset({"n", "temperature", "max_tokens", "top_p", "stop", "repetition_detection"})


class RequestRejected(RuntimeError):
    """The server refused one request (4xx: prompt too long, bad parameters); a task may record it on
    the item and go on. Anything else (server down, 5xx) ends the run; the cache keeps what was done."""


@dataclass
class Reply:
    texts: list[str]
    completion_tokens: int = 0
    prompt_tokens: int = 0
    finish_reasons: list[str | None] = field(default_factory=list)
    deltas: list[int] = field(default_factory=list)


@dataclass
class Requester:
    """The cache in front of one ``ChatClient``; concurrency is the client's (a semaphore per request)."""

    client: ChatClient
    cache: RequestCache
    sent: int = 0
    cached: int = 0
    completion_tokens: int = 0
    info: ModelInfo | None = None  # what the server said it serves (learned once per run)

    @property
    def model(self) -> str:
        return self.client.model

    async def learn_model(self) -> None:
        """Ask the server once which model it serves (and its context length, for the token budget).
        A server that is down is not an error here: a fully cached run needs none (the first request
        that is not cached fails instead). A server that serves another model is."""
        try:
            self.info = await self.client.model_info()
        except LLMUnavailable:
            self.info = ModelInfo(id=self.client.model)  # unverified: the server did not answer

    async def chat(self, item: str, messages: list[dict[str, str]], params: dict[str, Any]) -> Reply:
        """The reply to ``messages`` for ``item``, from the cache or the server."""
        try:
            return await self.complete(item, messages, params)
        except (PromptTooLong, LLMRejected) as exc:
            raise RequestRejected(str(exc)) from exc

    async def complete(
        self,
        item: str,
        messages: Sequence[dict[str, str]],
        params: dict[str, Any],
        on_delta: OnDelta | None = None,
    ) -> Reply:
        """Like ``chat`` but raising the client's own errors (``PromptTooLong`` ...), and replaying a
        cached reply to ``on_delta`` (one delta per sample)."""
        unknown = set(params) - PARAM_KEYS
        if unknown:
            raise ValueError(f"unknown sampling parameters: {', '.join(sorted(unknown))}")
        messages = [dict(m) for m in messages]
        key = request_key(self.model, messages, params, item)
        hit = self.cache.get(key)
        if hit is not None:
            self.cached += 1
            reply = Reply(
                list(hit["texts"]),
                hit.get("completion_tokens", 0),
                hit.get("prompt_tokens", 0),
                list(hit.get("finish_reasons") or [None] * len(hit["texts"])),
                list(hit.get("deltas") or [0] * len(hit["texts"])),
            )
            if on_delta is not None:
                for index, text in enumerate(reply.texts):
                    if text:
                        on_delta(index, text)
            return reply
        result = await self.client.chat(
            messages,
            n=int(params.get("n", 1)),
            temperature=float(params.get("temperature", 0.0)),
            top_p=float(params.get("top_p", 1.0)),
            max_tokens=int(params["max_tokens"]),
            stop=params.get("stop"),
            on_delta=on_delta,
            repetition=params.get("repetition_detection"),
        )
        usage = result.usage or Usage()
        reply = Reply(
            texts=[c.text for c in result.choices],
            completion_tokens=result.completion_tokens,
            prompt_tokens=usage.prompt_tokens,
            finish_reasons=[c.finish_reason for c in result.choices],
            deltas=[c.deltas for c in result.choices],
        )
        self.sent += 1
        self.completion_tokens += reply.completion_tokens
        self.cache.put(
            key,
            {
                "item": item,
                "texts": reply.texts,
                "completion_tokens": reply.completion_tokens,
                "prompt_tokens": reply.prompt_tokens,
                "finish_reasons": reply.finish_reasons,
                "deltas": reply.deltas,
            },
        )
        return reply

    def client_for(self, item: str) -> CachingClient:
        return CachingClient(self, item)


class CachingClient:
    """``ChatClient``'s interface (``model``, ``base_url``, ``model_info``, ``chat``) over a
    ``Requester``: what the pipeline gets during an evaluation, so that its requests are cached per
    ``item`` (the key also holds the messages, so each of an item's requests has its own entry)."""

    def __init__(self, requester: Requester, item: str) -> None:
        self.requester = requester
        self.item = item
        self.asked: dict[str, int] = {}  # how often each request (messages and parameters) was made
        self.model = requester.client.model
        self.base_url = requester.client.base_url

    async def model_info(self, name: str | None = None) -> ModelInfo:
        name = name or self.model
        info = self.requester.info
        if info is not None and info.id == name:
            return info
        return await self.requester.client.model_info(name)

    async def chat(
        self,
        messages: Sequence[dict[str, str]],
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
        if model is not None and model != self.model:
            raise ValueError(f"this evaluation asks {self.model!r}, not {model!r}")
        params: dict[str, Any] = {"n": n, "temperature": temperature, "max_tokens": max_tokens}
        if temperature > 0:
            params["top_p"] = top_p
        if stop:
            params["stop"] = list(stop)
        if repetition:
            params["repetition_detection"] = dict(repetition)
        # The same request made again (guided repair asking again after a fix it did not keep, two
        # identical programs simulated) gets its own cache entry, so its samples are new ones, as
        # they are when the web app sends it; the first time keeps the plain key.
        request = json.dumps([list(messages), params], sort_keys=True)
        again = self.asked.get(request, 0)
        self.asked[request] = again + 1
        item = f"{self.item}#{again}" if again else self.item
        reply = await self.requester.complete(item, messages, params, on_delta)
        choices = [
            Choice(
                index=i,
                text=text,
                finish_reason=reply.finish_reasons[i] if i < len(reply.finish_reasons) else "stop",
                deltas=reply.deltas[i] if i < len(reply.deltas) else 0,
            )
            for i, text in enumerate(reply.texts)
        ]
        usage = Usage(prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
        return ChatResult(choices=choices, model=self.model, usage=usage, max_tokens=max_tokens)
