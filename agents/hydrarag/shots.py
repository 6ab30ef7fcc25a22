"""HydraRAG's few-shot examples (paper App. E: every role's prompt is "in-context few-shot").

``examples = "kb"`` (default): the solved examples of the KB at hand nearest to the masked
question (:func:`agents.shots.bank_for`), rendered per role from their topic entities, types,
relation path and answers, so every prompt names only that KB's entity types and relations.
``examples = "bundled"``: the project's own movie examples (:data:`prompts.hydrarag.BUNDLED`),
for the MetaQA evaluations or as an explicit choice. ``num_examples = 0``: no examples.

An example is a plain line in the system prompt (never a data block: it is not evidence) with
its values neutralised (no angle brackets, no line breaks). Every role the paper's appendix
gives examples has them: topic extraction, question analysis (``analysis``; ``plan``: the small
model's JSON fields, in the form its reply takes), source selector, paragraph → paths,
follow-up question, predictions, path selection, path refinement, answer check and answer
generation; Algorithm 2's path summary too (web result selection has none).
"""

from __future__ import annotations

import json
from typing import Any

from hybridrag.agents.shots import SolvedExample, bank_for
from hybridrag.prompts import hydrarag as P
from hybridrag.prompts.data_block import neutralise

ROLES = (
    "topics",
    "analysis",
    "plan",
    "selector",
    "text_paths",
    "follow_up",
    "predict",
    "select_paths",
    "path_summary",
    "refine",
    "check",
    "generate",
)
SHOWN_ANSWERS = 3


def _words(relation: str) -> str:
    return relation.replace("_", " ")


def chain(topic: str, relations: list[str], answer_type: str) -> str:
    """``topic - relation words - entity - ... - answer(answer type)``: a skyline from its parts."""
    parts = [topic or "topic"]
    for i, rel in enumerate(relations):
        last = i == len(relations) - 1
        parts += [_words(rel), f"answer({answer_type or 'entity'})" if last else "entity"]  # middle types unknown
    return " - ".join(parts)


def skyline(ex: SolvedExample) -> str:
    """The skyline of an example (:func:`chain` of its topic, relations and answer type)."""
    return chain(ex.topic[0] if ex.topic else "topic", list(ex.relations), ex.answer_type)


def sub_questions(topic: str, relations: list[str], answer_type: str) -> list[str]:
    """One templated sub-question per relation of a chain (no LLM)."""
    out, subject = [], topic or "it"
    for i, rel in enumerate(relations):
        kind = (answer_type or "entity") if i == len(relations) - 1 else "entities"
        out.append(f"What {kind} is linked to {subject} by {_words(rel)}?")
        subject = "those entities"
    return out


def _sub_questions(ex: SolvedExample) -> list[str]:
    return sub_questions(ex.topic[0] if ex.topic else "it", list(ex.relations), ex.answer_type)


def _path(ex: SolvedExample) -> str:
    answers = ", ".join(ex.answers[:SHOWN_ANSWERS])
    arrows = " → ".join(_words(r) for r in ex.relations)
    return f"{{{', '.join(ex.topic)}}} → {arrows} → {{{answers}}}"


def render(ex: SolvedExample, role: str) -> str:
    """One example line for ``role`` ("" when the example cannot illustrate it)."""
    q, topics = ex.question, list(ex.topic)
    match role:
        case "topics":
            line = f'"{q}" → {topics}'
        case "analysis":
            line = (
                f'question "{q}", topic entities {topics}: sub-questions {_sub_questions(ex)}; skyline "{skyline(ex)}"'
            )
        case "plan":
            if not topics or not ex.relations:
                return ""
            fields = {"topic": topics[0], "relations": list(ex.relations), "answer_type": ex.answer_type}
            line = f'"{q}" → {json.dumps(fields, ensure_ascii=False)}'
        case "text_paths":
            if ex.hops != 1 or not ex.answers or not topics:
                return ""
            fact = f"{topics[0]} {_words(ex.relations[0])} {ex.answers[0]}."
            line = f'paragraph 1 "{fact}" → paragraph 1, "{topics[0]} - {_words(ex.relations[0])} - {ex.answers[0]}"'
        case "check":
            if not ex.answers:
                return ""
            line = f'question "{q}", evidence "{_path(ex)}" → yes, answer "{ex.answers[0]}"'
        case _:
            return _later_role(ex, role)
    return "Example: " + neutralise(line)


def _partial(ex: SolvedExample) -> str:
    """The example's path cut before its last hop (the state after a first round that stopped short)."""
    arrows = " → ".join(_words(r) for r in ex.relations[:-1])
    return f"{{{', '.join(ex.topic)}}}" + (f" → {arrows} → {{...}}" if arrows else "")


def _later_role(ex: SolvedExample, role: str) -> str:
    """Example lines of the roles after retrieval: source choice, follow-up, predictions, selection, summary, answer."""
    q, topics, sky = ex.question, list(ex.topic), skyline(ex)
    if not ex.answers or not topics or not ex.relations:
        return ""
    kind, first = ex.answer_type or "entity", ex.answers[0]
    match role:
        case "selector":
            line = f'question "{q}", available kg, docs, skyline "{sky}" → facts between named entities: kg'
        case "follow_up":
            line = (
                f'question "{q}", paths "{_partial(ex)}", check "no: the {kind} is missing" → missing: the {kind} '
                f'reached by {_words(ex.relations[-1])}; follow-up "{q}"; skyline "{sky}"; entities {topics}'
            )
        case "predict":
            answered = sky.replace(f"answer({kind})", first)
            line = f'question "{q}", paths "{_partial(ex)}" → prediction "{first}", skyline "{answered}"'
        case "select_paths":
            line = f'question "{q}", skyline "{sky}", paths 1 "{_path(ex)}" → path 1 follows the skyline: [1]'
        case "refine":
            steps = " then ".join(_words(r) for r in ex.relations)
            line = f'question "{q}", paths "{_path(ex)}" → "{topics[0]} leads by {steps} to {first}."'
        case "generate":
            line = f'question "{q}", evidence "{_path(ex)}" → answer "{first}"'
        case "path_summary":
            if ex.hops != 1:
                return ""
            fact = f"{topics[0]} - {_words(ex.relations[0])} - {first}"
            line = f'skyline "{sky}", paths 1 "{fact}", 2 "{fact}" → "{fact}" from [1, 2]'
        case _:
            raise ValueError(f"unknown HydraRAG example role {role!r}")
    return "Example: " + neutralise(line)


def choose(kb: Any, question: str, source: str, k: int) -> list[SolvedExample]:
    """The examples of one question: the KB bank's nearest ``k`` (``kb``), none for ``bundled``."""
    if source not in ("kb", "bundled"):
        raise ValueError(f"examples must be kb or bundled, not {source!r}")
    if source == "bundled" or k <= 0:
        return []
    return bank_for(kb).nearest(question, k)


def lines(examples: list[dict], role: str, source: str, k: int) -> str:
    """The example lines of ``role`` for a system prompt (examples as stored in the state)."""
    if k <= 0:
        return ""
    if source == "bundled":
        return "\n".join(P.BUNDLED[role][:k])
    rendered = [render(SolvedExample(**{**e, "outputs": {}}), role) for e in examples]
    return "\n".join(r for r in rendered if r)


def to_state(examples: list[SolvedExample]) -> list[dict]:
    """Examples as plain dicts for the graph state (tuples kept as lists)."""
    keys = ("question", "masked", "topic", "topic_types", "relations", "answer_type", "answers", "source")
    return [
        {k: (list(v) if isinstance(v, tuple) else v) for k, v in ((k, getattr(e, k)) for k in keys)} for e in examples
    ]


def hop_range(examples: list[dict], source: str, k: int) -> tuple[int, int] | None:
    """The fewest and most relations among the shown bank examples' paths (None: no bank examples shown).

    A small model copies the examples' form but may stop a repeated-relation path early ("the
    scriptwriter of X also wrote which films": written_by twice); the masked nearest examples hold
    the right path length on nearly every templated question, so the analysis is held to it.
    """
    lengths = [len(e["relations"]) for e in examples if e.get("relations")] if source == "kb" and k > 0 else []
    return (min(lengths), max(lengths)) if lengths else None


def other_chain(examples: list[dict], topic: str, current: str) -> str:
    """The skyline of the first shown example whose relation path differs from ``current``, from ``topic``.

    This is the refined round's new skyline under the judge's rules ('' when no example differs).
    """
    for e in examples:
        if e.get("relations"):
            text = chain(topic, list(e["relations"]), e.get("answer_type", ""))
            if text != current:
                return text
    return ""


def shown_paths(examples: list[dict], source: str, k: int) -> tuple[tuple[str, ...], ...] | None:
    """The relation paths of the shown bank examples, whole and without repeats, nearest first.

    A small model asked for relation by relation keeps the first and pads the rest (it writes
    ``directed_by, has_genre, has_imdb_rating`` for the examples' ``directed_by, directed_by,
    has_genre``: the repeated relation dropped); held to one of the examples' whole paths it copies
    a path instead of composing one. None: no bank examples shown.
    """
    if source != "kb" or k <= 0:
        return None
    paths = tuple(dict.fromkeys(tuple(e["relations"]) for e in examples if e.get("relations")))
    return paths or None
