"""The one client for OpenAI-compatible model servers (vLLM), and its typed errors.

``simulator.llm.server`` (another module) launches the default model's server; ``testing`` holds a
fake server for tests.
"""

from __future__ import annotations

from simulator.llm.client import ChatClient, ChatResult, Choice, ModelInfo, Usage
from simulator.llm.errors import (
    LLMError,
    LLMRejected,
    LLMTimeout,
    LLMUnavailable,
    MalformedReply,
    ModelNotFound,
    PromptTooLong,
)

__all__ = [
    "ChatClient",
    "ChatResult",
    "Choice",
    "LLMError",
    "LLMRejected",
    "LLMTimeout",
    "LLMUnavailable",
    "MalformedReply",
    "ModelInfo",
    "ModelNotFound",
    "PromptTooLong",
    "Usage",
]
