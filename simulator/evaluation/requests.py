"""Model requests for the harness: cached, counted, concurrent.

``Requester.chat(item, messages, params)`` answers from the run's cache when it can and otherwise asks
the backend, then records the answer before returning it. ``sent`` and ``cached`` count both kinds, so
a resumed run can prove it sent nothing twice. The backend is anything with the ``ChatBackend`` shape;
``HttpChat`` is a minimal non-streaming OpenAI-compatible one (the harness needs no token stream).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx

from simulator.evaluation.cache import RequestCache, request_key


class RequestRejected(RuntimeError):
    """The server refused one request (4xx: prompt too long, bad parameters); a task may record it on
    the item and go on. Anything else (server down, 5xx) ends the run; the cache keeps what was done."""


@dataclass
class Reply:
    texts: list[str]
    completion_tokens: int = 0
    prompt_tokens: int = 0


class ChatBackend(Protocol):
    model: str

    async def chat(self, messages: list[dict[str, str]], params: dict[str, Any]) -> Reply: ...


class HttpChat:
    """POST /chat/completions; ``params`` go into the body as they are (n, temperature, max_tokens...)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout_s: float = 600.0):
        self.base_url = base_url.rstrip("/")
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(timeout=timeout_s, headers=headers)

    async def chat(self, messages: list[dict[str, str]], params: dict[str, Any]) -> Reply:
        body = {"model": self.model, "messages": messages, **params}
        response = await self._client.post(f"{self.base_url}/chat/completions", json=body)
        if 400 <= response.status_code < 500:
            raise RequestRejected(
                f"model server refused the request ({response.status_code}): {response.text[:300]}"
            )
        if response.status_code != 200:
            raise RuntimeError(f"model server answered {response.status_code}: {response.text[:300]}")
        data = response.json()
        choices = sorted(data["choices"], key=lambda c: c.get("index", 0))
        usage = data.get("usage") or {}
        return Reply(
            texts=[(c.get("message") or {}).get("content") or "" for c in choices],
            completion_tokens=int(usage.get("completion_tokens") or 0),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
        )

    async def aclose(self) -> None:
        await self._client.aclose()


@dataclass
class Requester:
    backend: ChatBackend
    cache: RequestCache
    concurrency: int = 8
    sent: int = 0
    cached: int = 0
    completion_tokens: int = 0
    _semaphore: asyncio.Semaphore | None = field(default=None, repr=False)

    async def chat(self, item: str, messages: list[dict[str, str]], params: dict[str, Any]) -> Reply:
        key = request_key(self.backend.model, messages, params, item)
        hit = self.cache.get(key)
        if hit is not None:
            self.cached += 1
            return Reply(hit["texts"], hit.get("completion_tokens", 0), hit.get("prompt_tokens", 0))
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.concurrency)
        async with self._semaphore:
            reply = await self.backend.chat(messages, params)
        self.sent += 1
        self.completion_tokens += reply.completion_tokens
        self.cache.put(
            key,
            {
                "item": item,
                "texts": reply.texts,
                "completion_tokens": reply.completion_tokens,
                "prompt_tokens": reply.prompt_tokens,
            },
        )
        return reply
