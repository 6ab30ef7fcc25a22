"""Structured LLM calls: a pydantic schema in, a validated object (or None) out, usage counted.

A parse failure is retried once with a short reminder; a second failure returns None so the
caller takes its method's fallback. Every attempt counts as one call in the usage record
(:mod:`agents.llm.usage`; ``usage_record`` and ``add_usage`` are importable from here too)::

    {"llm_calls": n, "input_tokens": n, "output_tokens": n, "llm_seconds": s,
     "by_role": {role: {"llm_calls": n, "input_tokens": n, "output_tokens": n, "llm_seconds": s}}}

Unparseable replies add ``parse_failures`` (one per attempt) and, when every attempt failed
and the caller falls back, ``fallbacks`` (one per call), overall and under the role.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from hybridrag.agents.llm.usage import add_usage, usage_record

Method = Literal["function_calling", "json_schema", "json_mode"]
METHODS: tuple[str, ...] = ("function_calling", "json_schema", "json_mode")
T = TypeVar("T", bound=BaseModel)
log = logging.getLogger(__name__)

RETRY_HINT = (
    "Your previous reply could not be read. Reply again with only the requested fields, "
    "as valid JSON matching the schema."
)
_PARSE_ERRORS = (OutputParserException, ValidationError, ValueError)


def estimate_tokens(text: str) -> int:
    """Rough token count (four characters a token) for models that report no usage."""
    return max(1, len(text) // 4) if text else 0


def _text_of(messages: Sequence[Any]) -> str:
    parts = []
    for m in messages:
        content = m.content if isinstance(m, BaseMessage) else (m[1] if isinstance(m, tuple) else m)
        parts.append(content if isinstance(content, str) else json.dumps(content, default=str))
    return "\n".join(parts)


def _tokens(messages: Sequence[Any], raw: Any) -> tuple[int, int]:
    """Input/output tokens from ``usage_metadata`` when present, else an estimate."""
    meta = getattr(raw, "usage_metadata", None)
    if meta and (meta.get("input_tokens") or meta.get("output_tokens")):
        return int(meta.get("input_tokens", 0)), int(meta.get("output_tokens", 0))
    out = ""
    if isinstance(raw, AIMessage):
        out = raw.content if isinstance(raw.content, str) else json.dumps(raw.content, default=str)
        out += "".join(json.dumps(tc.get("args", {}), default=str) for tc in raw.tool_calls)
    return estimate_tokens(_text_of(messages)), estimate_tokens(out)


def _bind(model: BaseChatModel, schema: type[BaseModel], method: str) -> Any:
    """``with_structured_output`` with raw output kept; None when the model has no support."""
    try:
        return model.with_structured_output(schema, method=method, include_raw=True)
    except (TypeError, ValueError):  # integrations whose with_structured_output takes no ``method``
        return model.with_structured_output(schema, include_raw=True)
    except NotImplementedError:  # the integration has no structured output: callers parse plain JSON replies
        return None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text[:200]}"


MAX_JSON_STARTS = 50
"""How many ``{`` of a plain-text reply are tried as the start of its JSON object."""


def parse_json_reply(text: str, schema: type[T]) -> T:
    """Validate the first JSON object in a plain-text reply that fits ``schema``.

    Each ``{`` (up to :data:`MAX_JSON_STARTS`) is tried with the standard library's
    ``json.JSONDecoder.raw_decode``, which reads exactly one object and ignores what follows, so
    prose, a second object or a stray brace after the reply does not spoil it (a greedy
    ``{.*}`` spans them all).
    """
    decoder, text, error = json.JSONDecoder(), text or "", None
    starts = [i for i, c in enumerate(text) if c == "{"][:MAX_JSON_STARTS]
    for start in starts:
        try:
            obj, _ = decoder.raw_decode(text, start)
            return schema.model_validate(obj)
        except json.JSONDecodeError:
            continue
        except ValidationError as exc:
            error = error or exc
    if error is not None:
        raise error
    raise ValueError("no JSON object in the reply")


def _invoke_plain(model: BaseChatModel, schema: type[T], messages: list) -> dict:
    """Ask for JSON in words and parse it (models without structured-output support)."""
    spec = json.dumps(schema.model_json_schema())
    ask = HumanMessage(f"Reply with JSON only, matching this schema: {spec}")
    raw = model.invoke([*messages, ask])
    try:
        return {"raw": raw, "parsed": parse_json_reply(str(raw.content), schema), "parsing_error": None}
    except _PARSE_ERRORS as exc:
        return {"raw": raw, "parsed": None, "parsing_error": exc}


def _unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says the model's server failed (timeout, refused, 5xx, unreadable body)."""
    if isinstance(exc, TimeoutError | ConnectionError | json.JSONDecodeError):
        return True  # reply parsing catches its own JSON errors: one escaping is the HTTP body
    names = {c.__module__.split(".")[0] for c in type(exc).__mro__}
    return bool(names & {"openai", "httpx", "httpcore", "anthropic", "requests", "urllib3"})


def _attempt(
    model: BaseChatModel,
    runnable: Any,
    schema: type[T],
    messages: list,
    choices: Any = None,
    method: str = "function_calling",
) -> dict:
    """One call; parse errors are returned in the result, a failed server is LLMUnavailableError."""
    from hybridrag.agents.llm.constrained import constrained_call
    from hybridrag.agents.llm.models import LLMUnavailableError

    try:
        if choices:
            return constrained_call(model, schema, messages, choices, method)
        if runnable is None:
            return _invoke_plain(model, schema, messages)
        out = runnable.invoke(messages)
    except _PARSE_ERRORS as exc:
        if not _unavailable(exc):
            return {"raw": None, "parsed": None, "parsing_error": exc}
        raise LLMUnavailableError(f"the language model's server failed: {_one_line(exc)}") from None
    except Exception as exc:
        if _unavailable(exc):
            raise LLMUnavailableError(f"the language model's server failed: {_one_line(exc)}") from None
        raise
    parsed = out.get("parsed")
    if isinstance(parsed, dict):
        try:
            parsed = schema.model_validate(parsed)
        except ValidationError as exc:
            return {"raw": out.get("raw"), "parsed": None, "parsing_error": exc}
    return {"raw": out.get("raw"), "parsed": parsed, "parsing_error": out.get("parsing_error")}


def call_structured(
    model: BaseChatModel,
    schema: type[T],
    messages: Sequence[Any],
    *,
    role: str,
    method: str = "function_calling",
    retries: int = 1,
    choices: Any = None,
) -> tuple[T | None, dict]:
    """Call ``model`` for a ``schema`` object; return (object or None, usage record).

    Args:
        model: any LangChain chat model.
        schema: the pydantic model of the reply (reasoning fields first, verdicts last).
        messages: chat messages (message objects or ``(role, text)`` tuples).
        role: name counted under ``usage["by_role"]``.
        method: ``function_calling``, ``json_schema`` or ``json_mode``.
        retries: extra attempts after a parse failure.
        choices: ``{"field.path": [allowed names]}``: decode within the schema with these ``enum``s
            where the backend can (:mod:`agents.llm.constrained`); a reply outside them is unparseable.

    Returns:
        The parsed object, or None after ``1 + retries`` failed parses; and the usage of all attempts.
    """
    if method not in METHODS:
        raise ValueError(f"structured method must be one of {METHODS}, not {method!r}")
    runnable = _bind(model, schema, method)
    usage: dict = {}
    msgs = list(messages)
    for attempt in range(1 + retries):
        t0 = time.perf_counter()
        result = _attempt(model, runnable, schema, msgs, choices, method)
        tokens_in, tokens_out = _tokens(msgs, result["raw"])
        usage = add_usage(usage, usage_record(role, 1, tokens_in, tokens_out, time.perf_counter() - t0))
        if result["parsed"] is not None and result["parsing_error"] is None:
            return result["parsed"], usage
        log.info("%s: unparseable reply (attempt %d): %s", role, attempt + 1, result["parsing_error"])
        usage = add_usage(usage, {"parse_failures": 1, "by_role": {role: {"parse_failures": 1}}})
        msgs = [*messages, HumanMessage(RETRY_HINT)]
    return None, add_usage(usage, {"fallbacks": 1, "by_role": {role: {"fallbacks": 1}}})
