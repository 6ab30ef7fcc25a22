"""A run's usage record: LLM calls, tokens and seconds, overall, per role and per stage.

The shape (:func:`graphs.runtime.merge_usage` adds records up as the graph's reducer)::

    {"llm_calls": n, "input_tokens": n, "output_tokens": n, "llm_seconds": s,
     "parse_failures": n, "fallbacks": n, "unsupported_answers": n,
     "by_role": {role: {...the same counters...}}, "stages": {stage: seconds}}

A run's record carries every counter of :data:`COUNTERS`, 0 when nothing added to it (a run that
made no LLM call has ``llm_calls: 0``), so readers index it without a default. The nested
``by_role`` and ``stages`` dicts hold only what was counted.
"""

from __future__ import annotations

COUNTERS: dict[str, int | float] = {
    "llm_calls": 0,
    "input_tokens": 0,
    "output_tokens": 0,
    "llm_seconds": 0.0,
    "parse_failures": 0,  # unparseable replies, one per attempt
    "fallbacks": 0,  # structured calls whose every attempt failed, so the method took its fallback
    "unsupported_answers": 0,  # answers the references did not support, replaced by the top candidate
}


def usage_record(
    role: str, calls: int = 0, input_tokens: int = 0, output_tokens: int = 0, seconds: float = 0.0
) -> dict:
    """Build a usage increment for one role."""
    counters = {
        "llm_calls": calls,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "llm_seconds": seconds,
    }
    return {**counters, "by_role": {role: dict(counters)}}


def add_usage(total: dict, more: dict) -> dict:
    """Return the sum of two usage records: numbers added, nested dicts merged recursively."""
    out = dict(total)
    for key, value in more.items():
        out[key] = add_usage(out.get(key, {}), value) if isinstance(value, dict) else out.get(key, 0) + value
    return out


def with_counters(usage: dict | None) -> dict:
    """``usage`` with every top-level counter of :data:`COUNTERS` present (0 where none was added)."""
    return {**COUNTERS, **(usage or {})}
