"""Typed errors of the model client, each with a message a person can act on.

The pipeline turns them into a ``run_failed`` event (or, for ``PromptTooLong``, into a recorded
per-item failure); the CLI prints the message. All derive from ``LLMError``.
"""

from __future__ import annotations


class LLMError(Exception):
    """Anything that went wrong talking to the model server."""


class LLMUnavailable(LLMError):
    """The server cannot be reached or keeps failing (connection refused, 5xx after retries)."""

    # what a person at a command line does next
    HINT = (
        "start the default model with `execsim model serve` (it prints READY), or point "
        "EXECSIM_MODEL_URL and EXECSIM_MODEL_NAME at a running server"
    )


class LLMTimeout(LLMUnavailable):
    """The server accepted the request but did not answer in time."""


class ModelNotFound(LLMError):
    """The server is up but does not serve the requested model."""


class MalformedReply(LLMError):
    """The server answered with something that is not an OpenAI-compatible reply."""


class PromptTooLong(LLMError):
    """The prompt (plus the completion budget) does not fit the model's context window."""


class LLMRejected(LLMError):
    """The server refused the request (bad parameters, authentication) and retrying will not help."""
