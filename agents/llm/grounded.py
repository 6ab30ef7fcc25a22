"""The answering roles' shared call: ask for an answer, keep it only when the quoted evidence supports it.

A reply the evidence does not support (:func:`prompts.grounding.check_answer`) is dropped, counted as
``unsupported_answers`` in the usage, and the caller falls back to its top-ranked candidate.
"""

from __future__ import annotations

import logging

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from hybridrag.agents.llm.structured import add_usage, call_structured
from hybridrag.prompts.grounding import check_answer, evidence_from_prompt

log = logging.getLogger(__name__)
UNSUPPORTED_USAGE = {"unsupported_answers": 1, "by_role": {"answerer": {"unsupported_answers": 1}}}


def grounded_answer(
    model: BaseChatModel, schema: type[BaseModel], messages: list, question: str, evidence: str, method: str, who: str
) -> tuple[BaseModel | None, dict]:
    """The answerer's reply (a schema with an ``answer`` field) when ``evidence`` supports it, else None."""
    reply, usage = call_structured(model, schema, messages, role="answerer", method=method)
    if reply is None:
        return None, usage
    verdict = check_answer(reply.answer, question, *evidence_from_prompt(evidence))  # type: ignore[attr-defined]
    if verdict.ok:
        return reply, usage
    log.warning("%s: %s; falling back to the top candidate", who, verdict.reason)
    return None, add_usage(usage, UNSUPPORTED_USAGE)


def answer_decision(reply: BaseModel | None, usage: dict, fallback: str, unsupported: str) -> str:
    """The trace decision of an answer step: answered, or which fallback and why."""
    if reply is not None:
        return "answered"
    return f"fallback: {fallback} ({unsupported})" if usage.get("unsupported_answers") else f"fallback: {fallback}"
