"""The model layer's two user-facing errors (re-exported by :mod:`agents.llm.models`)."""

from __future__ import annotations


class ModelConfigError(RuntimeError):
    """A model spec cannot be resolved; the message is one line meant for users."""


class LLMUnavailableError(RuntimeError):
    """The model's server timed out, refused, failed or sent an unreadable response (one line)."""
