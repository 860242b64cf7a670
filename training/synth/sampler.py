"""Samples from a served model (vLLM, OpenAI-compatible) through ``simulator.llm``'s client.

Synthesis asks a model two things: write a program for a constraint (the second data source) and
predict a program's output (the difficulty filter's reference model). Both go through ``Sampler``, a
small protocol, so tests can pass a scripted test double and the CLI can point at any server by URL.
``train data --solve-url`` asks one the pipeline's own solve request (``ServedModel.chat``: whole
conversations, prefill and stop strings) for the solve examples answered by its own solutions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from simulator.pipeline.settings import RunSettings


class Sampler(Protocol):
    name: str  # recorded in the dataset card

    def sample(self, prompts: list[str], *, n: int, temperature: float, max_tokens: int) -> list[list[str]]:
        """``n`` completions for each prompt, in prompt order."""
        ...


@dataclass
class ServedModel:
    """A model behind an OpenAI-compatible URL (``simulator.llm.ChatClient``)."""

    url: str | None = None
    model: str | None = None
    top_p: float = RunSettings.top_p  # as the app samples: own solutions and fixes come from its distribution
    concurrency: int = 8
    timeout_s: float = 300.0

    @property
    def name(self) -> str:
        from simulator import config

        return f"{self.model or config.model_name()} @ {self.url or config.model_url()}"

    def sample(self, prompts: list[str], *, n: int, temperature: float, max_tokens: int) -> list[list[str]]:
        conversations = [[{"role": "user", "content": p}] for p in prompts]
        return self.chat(conversations, n=n, temperature=temperature, max_tokens=max_tokens)

    def chat(
        self,
        conversations: list[list[dict[str, str]]],
        *,
        n: int,
        temperature: float,
        max_tokens: int,
        stop: tuple[str, ...] = (),
        repetition: Mapping[str, int] | None = None,
    ) -> list[list[str]]:
        """``n`` replies to each conversation, in order; one that ends with an assistant turn is
        continued (the solve request's prefilled fence), and ``stop`` and ``repetition`` (vLLM's
        loop stop) end a reply as the pipeline's requests do."""
        return asyncio.run(self._chat(conversations, n, temperature, max_tokens, stop, repetition))

    async def _chat(
        self,
        conversations: list[list[dict[str, str]]],
        n: int,
        temperature: float,
        max_tokens: int,
        stop: tuple[str, ...],
        repetition: Mapping[str, int] | None,
    ) -> list[list[str]]:
        from simulator.llm import ChatClient

        async with ChatClient(
            self.url, self.model, concurrency=self.concurrency, timeout_s=self.timeout_s
        ) as client:

            async def one(messages: list[dict[str, str]]) -> list[str]:
                result = await client.chat(
                    messages,
                    n=n,
                    temperature=temperature,
                    top_p=self.top_p,
                    max_tokens=max_tokens,
                    stop=stop or None,
                    repetition=repetition,
                )
                return [c.text for c in sorted(result.choices, key=lambda c: c.index)]

            return list(await asyncio.gather(*(one(m) for m in conversations)))
