"""SSRAG context unification and answer generation (paper §III-C, Algorithm 3 lines 9-12).

- Joint rerank and TextDedup's exact and cosine steps: :mod:`agents.ssrag.rerank` (re-exported
  here). Then the LLM filter (§III-D "LLM-based filtering"), which names the items an earlier
  item already covers. An unparseable filter reply removes nothing. The top ``k`` survivors are
  the unified context.
- Answer: one LLM call over the unified context; an unparseable reply falls back to the
  name of the top context (an entity name, or the entity a passage is about), and so does a
  reply the retrieved contexts do not support, or one that is only the question's own entity
  (the checks: :mod:`agents.ssrag.support`).
The filter and the answerer read the contexts (and the augmented query, which may hold KB
names) as quoted data blocks: whole contexts in rank order while their texts fit the
character budget (``context_budget``; a context that does not fit is skipped, a top context
longer than the whole budget is cut to it). Contexts the filter does not see are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from hybridrag.agents.llm.structured import add_usage, call_structured
from hybridrag.agents.ssrag.context_vectors import item_scores, item_vectors  # noqa: F401 - re-exported
from hybridrag.agents.ssrag.rerank import joint_rerank, states_nothing, text_dedup  # noqa: F401 - re-exported
from hybridrag.agents.ssrag.support import own_entity, supported
from hybridrag.prompts import ssrag as P
from hybridrag.prompts.data_block import data_block
from hybridrag.prompts.grounding import norm
from hybridrag.tools.answer_span import bare_passage, names_passage, passage_answer

DEFAULT_BUDGET = 8000  # characters of context text shown to the filter and the answerer


class Redundancy(BaseModel):
    """The LLM filter's verdict on the ranked contexts."""

    reasoning: str = Field(description="One short sentence on which contexts repeat earlier ones.")
    redundant: list[int] = Field(default_factory=list, description="Numbers of the redundant contexts.")


class Answer(BaseModel):
    """A short answer grounded in the unified context."""

    reasoning: str = Field(description="One or two sentences of reasoning over the contexts.")
    answer: str = Field(description="The short answer.")


class ChosenAnswer(BaseModel):
    """A constrained (small) model's answer: one of the contexts' names."""

    answer: str = Field(description="The answer, one of the context names.")


def fit_budget(items: list[dict], budget: int) -> list[dict]:
    """The items whose whole texts fit ``budget`` characters in rank order (the rest skipped).

    The top item is always shown, cut to the budget when it alone is longer.
    """
    return [it for _, it in _fit(items, budget)]


def _fit(items: list[dict], budget: int) -> list[tuple[int, dict]]:
    shown: list[tuple[int, dict]] = []
    used = 0
    for row, it in enumerate(items):
        text = it["text"] or ""
        if not shown and len(text) > budget:
            text = text[: max(budget, 0)]
        elif used + len(text) > budget:
            continue
        shown.append((row, {**it, "text": text}))
        used += len(text)
    return shown


def format_contexts(items: list[dict]) -> str:
    """Numbered contexts as quoted data blocks: source, name and text (fit with :func:`fit_budget`)."""
    return "\n".join(
        data_block([("name", it["name"]), ("text", it["text"] or "")], n=i, source=it["source"])
        for i, it in enumerate(items, 1)
    )


def llm_filter(
    model: BaseChatModel, query: str, items: list[dict], method: str, budget: int = DEFAULT_BUDGET
) -> tuple[list[dict], list[dict], dict, str | None]:
    """LLM-based filtering; returns (kept, removed, usage, fallback note or None). Item 1 always stays."""
    shown = _fit(items, budget)
    if len(shown) < 2:
        return items, [], {}, None
    blocks = format_contexts([it for _, it in shown])
    messages = [
        ("system", P.DEDUP_SYSTEM.template),
        ("human", P.DEDUP.format(query=data_block(query), contexts=blocks)),
    ]
    reply, usage = call_structured(model, Redundancy, messages, role="deduplicator", method=method)
    if reply is None:
        return items, [], usage, "unparseable filter reply: nothing removed"
    drop = {shown[n - 1][0] for n in reply.redundant if 2 <= n <= len(shown)}
    removed = [{"id": it["id"], "reason": f"LLM: {reply.reasoning}"} for row, it in enumerate(items) if row in drop]
    return [it for row, it in enumerate(items) if row not in drop], removed, usage, None


def context_answer(items: list[dict], at: int, question: str) -> str:
    """The answer ``items[at]`` gives: an entity's name, a passage's entity, else the passages' span.

    A passage about no entity is named by its id, never an answer: the span the passages from
    ``at`` on state (:func:`tools.answer_span.passage_answer`) answers ``question`` instead.
    """
    it = items[at]
    if bare_passage(it):
        return passage_answer(question, items[at:])
    return it["name"].removeprefix("passage about ") if it["kind"] == "passage" else it["name"]


def fallback_answer(items: list[dict], asked: AbstractSet[str] = frozenset(), question: str = "") -> str:
    """The first context's answer (:func:`context_answer`), skipping the question's own entities ``asked`` (KB ids).

    '' when no context is about another entity.
    """
    for i, it in enumerate(items):
        if (it.get("entity_id") or it["id"]) not in asked:
            return context_answer(items, i, question)
    return ""


def answer_names(items: list[dict], own: list[str], question: str = "") -> list[str]:
    """What a constrained answerer may name: each context's answer (:func:`context_answer`), not the question's own."""
    mine = {norm(n) for n in own}
    names = (context_answer([it], 0, question) for it in items)
    return [n for n in dict.fromkeys(names) if n.strip() and norm(n) not in mine]


def generate(
    model: BaseChatModel,
    question: str,
    items: list[dict],
    method: str,
    budget: int = DEFAULT_BUDGET,
    own: Sequence[str] = (),
    choose: bool = False,
) -> tuple[str, dict, str | None]:
    """Answer from the unified context; returns (answer, usage, fallback note or None).

    An answer that is only the question's own entity (a name in ``own``) is rejected like an
    unsupported one: an entity the question names is not its answer. ``choose`` (a constrained
    model): the reply is one name among the shown contexts' (:func:`answer_names`), decoded within them.
    """
    shown = fit_budget(items, budget)
    messages = [
        ("system", P.ANSWER_SYSTEM.template),
        ("human", P.ANSWER.format(question=question, contexts=format_contexts(shown) or "(none)")),
    ]
    names = answer_names(shown, list(own), question) if choose else []
    if choose and not names:
        return fallback_answer(items, question=question), {}, "no context names another entity: top context's name"
    reply: Answer | ChosenAnswer | None
    if names:
        reply, usage = call_structured(
            model, ChosenAnswer, messages, role="answerer", method=method, choices={"answer": names}
        )
    else:
        reply, usage = call_structured(model, Answer, messages, role="answerer", method=method)
    text = (reply.answer if reply else "").strip()
    if not text:
        return fallback_answer(items, question=question), usage, "unparseable or empty answer: top context's name"
    if names_passage(text, shown):
        return fallback_answer(items, question=question), usage, "answer rejected: a passage's id; top context's answer"
    if own_entity(text, list(own)):
        return (
            fallback_answer(items, question=question),
            usage,
            "answer rejected: the question's own entity; top context's name",
        )
    verdict = supported(text, question, shown)
    if not verdict.ok:
        usage = add_usage(usage, {"unsupported_answers": 1, "by_role": {"answerer": {"unsupported_answers": 1}}})
        return (
            fallback_answer(items, question=question),
            usage,
            f"answer rejected: {verdict.reason}; top context's name",
        )
    return text, usage, None


def candidates_first(items: list[dict], asked: set[str]) -> list[dict]:
    """The contexts in rank order with the question's own entities last.

    Ours: an entity the question names is not its answer. Used for ``ranked`` and the non-LLM
    answer; the contexts shown to the answerer keep their order.
    """

    def own(i: dict) -> bool:
        return i["kind"] == "entity" and (i.get("entity_id") or i["id"]) in asked

    return [i for i in items if not own(i)] + [i for i in items if own(i)]


def as_ranked(item: dict) -> dict:
    """The common ``ranked`` entry."""
    return {k: item[k] for k in ("id", "kind", "name", "score", "source")}


def as_evidence(item: dict) -> dict:
    """The common ``evidence`` entry (graph items carry their facts as the path)."""
    return {
        "source": item["source"],
        "id": item["id"],
        "text": item["text"] or item["name"],
        "score": item["score"],
        "path": item["path"],
    }
