"""SSRAG query understanding and augmentation (paper §III-A, Algorithm 1).

Four LLM roles in the order of Algorithm 1 — DecomposeQuery, ExtractKeyEntities,
DetectIntent, EnhanceQuery — each one structured call (see :mod:`agents.llm.structured`) with a
rule-based fallback when the reply cannot be parsed after one retry:

- decomposition falls back to the question itself as the only sub-question;
- entity extraction falls back to explicitly marked or capitalised spans and KB mentions;
- intent detection falls back to the rule cues (question word, temporal and factual cues);
- the rewrite falls back to the question with its entities canonicalised.

Rules that check the LLM (ours, to keep small models honest): a sub-question must share a
content word with the question, extracted entities must occur in the question (up to case and
one typo a long word, :func:`agents.ssrag.typos.written_close`) and time hints verbatim,
and a rewrite that drops a named entity is rejected. The rewrite is cut to ``max_tokens``
tokens (the paper's "≤ 40 tokens"). The rule cues, the token count and these checks are
:mod:`agents.ssrag.cues`. Aliases are canonicalised through the KB's alias store, keeping the
longest surface form of each canonical entity (the paper's Churchill example).
"""

from __future__ import annotations

from typing import Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from hybridrag.agents.llm.structured import call_structured
from hybridrag.agents.ssrag.cues import content_words, count_tokens, cut_tokens, rule_cues, unique, written_in
from hybridrag.agents.ssrag.typos import respelled, written_close
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts import ssrag as P
from hybridrag.prompts.data_block import data_list
from hybridrag.tools.retrieval import explicit_mentions, mentions_in
from hybridrag.tools.text import name_pattern

Intent = Literal["who", "what", "when", "where", "which", "why", "how"]
WH_WORDS: tuple[str, ...] = Intent.__args__  # type: ignore[attr-defined]


class SubQuestions(BaseModel):
    """DecomposeQuery: the question split into self-contained sub-questions."""

    sub_questions: list[str] = Field(description="Sub-questions; the question itself when it asks one thing.")


class NamedEntity(BaseModel):
    """One named entity as written in the question."""

    name: str = Field(description="The entity exactly as written in the question.")
    type: str = Field(default="", description="Its kind in one word: person, organisation, place, work...")


class KeyEntities(BaseModel):
    """ExtractKeyEntities: the named entities of the question."""

    entities: list[NamedEntity] = Field(default_factory=list, description="Named entities of the question.")


class IntentCues(BaseModel):
    """DetectIntent: what is asked, its implicit aspects, and its temporal and factual cues."""

    intent: Intent = Field(description="Kind of answer wanted; inferred when there is no question word.")
    subtopics: list[str] = Field(default_factory=list, description="Implicit aspects to cover.")
    time_hints: list[str] = Field(default_factory=list, description="Words tying the question to a time.")
    factual_cues: list[str] = Field(default_factory=list, description="Proper nouns, periods, science terms.")


class AugmentedQuery(BaseModel):
    """EnhanceQuery: one rewritten search query."""

    query: str = Field(description="The augmented query.")


def decompose(model: BaseChatModel, question: str, method: str, shots: str = "") -> tuple[list[str], dict, str | None]:
    """DecomposeQuery; returns (sub-questions, usage, fallback note or None)."""
    messages = [("system", P.DECOMPOSE_SYSTEM.template + shots), ("human", P.DECOMPOSE.format(question=question))]
    reply, usage = call_structured(model, SubQuestions, messages, role="decomposer", method=method)
    if reply is None:
        return [question], usage, "unparseable decomposition: the question itself"
    subs = unique(reply.sub_questions)
    kept = [s for s in subs if content_words(s) & content_words(question)]
    if not kept:
        return [question], usage, "no sub-question shares a word with the question: the question itself"
    return (
        kept,
        usage,
        (f"dropped {len(subs) - len(kept)} sub-questions unrelated to the question" if len(kept) < len(subs) else None),
    )


def extract_entities(
    model: BaseChatModel,
    kb: KnowledgeBase,
    question: str,
    subs: list[str],
    method: str,
    follow_up: tuple = (),
    shots: str = "",
    choices: dict | None = None,
    spellings: dict[str, str] | None = None,
) -> tuple[list[dict], dict, str | None]:
    """ExtractKeyEntities; entities not found in the question are dropped as hallucinated.

    ``follow_up``: the earlier reply and the feedback on it (the corrective loop); ``shots``:
    rendered examples from the KB at hand, put before the question; ``choices``: the names and
    types a constrained model decodes within (:func:`agents.ssrag.small.entity_choices`);
    ``spellings``: the question's typo'd spans and the KB's spelling of each
    (:func:`agents.ssrag.typos.spelled`), shown after the question.
    """
    ask = P.ENTITIES.format(question=question, sub_questions=" | ".join(subs))
    if spellings:
        shown = data_list(f"{written} → {kb_name}" for written, kb_name in spellings.items())
        ask += "\n" + P.ENTITY_SPELLINGS.format(spellings=shown)
    messages = [("system", P.ENTITIES_SYSTEM.template + shots), ("human", ask), *follow_up]
    reply, usage = call_structured(
        model, KeyEntities, messages, role="entity_extractor", method=method, choices=choices
    )
    if reply is None:
        names = explicit_mentions(question) + [kb.name(i) for i in mentions_in(kb, question)]
        names += list((spellings or {}).values())
        found = [{"name": n, "type": ""} for n in unique(names)]
        return found, usage, "unparseable entity list: marked spans and KB mentions"
    kept = [{"name": e.name.strip(), "type": e.type.strip()} for e in reply.entities if e.name.strip()]
    kept = [e for e in kept if written_close(question, e["name"])]
    dropped = len(reply.entities) - len(kept)
    return _unique_entities(kept), usage, (f"dropped {dropped} entities absent from the question" if dropped else None)


def _unique_entities(entities: list[dict]) -> list[dict]:
    seen, out = set(), []
    for e in entities:
        if e["name"].lower() not in seen:
            seen.add(e["name"].lower())
            out.append(e)
    return out


def canonicalise(kb: KnowledgeBase, entities: list[dict], spellings: dict[str, str] | None = None) -> list[dict]:
    """Map surfaces through the KB alias store; one entry per canonical entity, longest surface kept.

    A name the question writes with a typo is looked up as the KB spells it (``spellings``,
    :func:`agents.ssrag.typos.spelled`). Returns ``[{"name": canonical surface, "type", "id": KB id
    or None, "surfaces": [...]}]``.
    """
    groups: dict[str, dict] = {}
    for e in entities:
        found = kb.graph.lookup(e["name"]) or kb.graph.lookup(respelled(e["name"], spellings or {}))
        best = next((x for x in found if x.name == e["name"]), found[0]) if found else None
        key = best.id if best else e["name"].lower()
        group = groups.setdefault(
            key, {"type": e.get("type", ""), "id": best.id if best else None, "surfaces": [], "typos": set()}
        )
        group["surfaces"] += [e["name"], *([best.name, *best.aliases] if best else [])]
        if best and not written_in(best.name, e["name"]) and not any(written_in(a, e["name"]) for a in best.aliases):
            group["typos"].add(e["name"])  # the name as typed: a surface, never the canonical one
    out = []
    for g in groups.values():
        surfaces = unique(g["surfaces"])
        spelled_right = [s for s in surfaces if s not in g["typos"]] or surfaces
        out.append({"name": max(spelled_right, key=len), "type": g["type"], "id": g["id"], "surfaces": surfaces})
    return out


def detect_intent(
    model: BaseChatModel, question: str, subs: list[str], entities: list[dict], method: str
) -> tuple[dict, dict, str | None]:
    """DetectIntent merged with the rule cues; the question word found by rule wins."""
    rules = rule_cues(question)
    names = data_list(e["name"] for e in entities)  # canonical names come from the KB's alias store
    messages = [
        ("system", P.INTENT_SYSTEM.template),
        ("human", P.INTENT.format(question=question, sub_questions=" | ".join(subs), entities=names)),
    ]
    reply, usage = call_structured(model, IntentCues, messages, role="intent_detector", method=method)
    if reply is None:
        return (
            {**rules, "intent": rules["intent"] or "what", "subtopics": []},
            usage,
            "unparseable intent: rule cues only",
        )
    hints = rules["time_hints"] + [h for h in reply.time_hints if written_in(question, h)]
    cues = {
        "intent": rules["intent"] or reply.intent,
        "subtopics": unique(reply.subtopics),
        "time_hints": unique(hints),
        "recency": rules["recency"],
        "factual_cues": unique(rules["factual_cues"] + reply.factual_cues),
    }
    return cues, usage, None


def canonical_question(question: str, entities: list[dict]) -> str:
    """The question with every surface of an entity replaced by its canonical (longest) form."""
    out = question
    for e in entities:
        for s in sorted(e.get("surfaces", []), key=len, reverse=True):
            if s != e["name"] and not written_in(out, e["name"]):
                out = name_pattern(s).sub(e["name"], out)
    return out


def enhance_query(
    model: BaseChatModel, question: str, entities: list[dict], cues: dict, max_tokens: int, method: str
) -> tuple[str, dict, str | None]:
    """EnhanceQuery: one rewritten query that keeps the entities verbatim within the token limit."""
    user = P.REWRITE.format(
        entities=data_list(e["name"] for e in entities),
        time_hints=", ".join(cues["time_hints"]) or "(none)",
        intent=cues["intent"],
        aspects=data_list(cues.get("subtopics", [])),
        max_tokens=max_tokens,
        question=question,
    )
    messages = [("system", P.REWRITE_SYSTEM.template), ("human", user)]
    reply, usage = call_structured(model, AugmentedQuery, messages, role="rewriter", method=method)
    fallback_query = canonical_question(question, entities)
    text = " ".join((reply.query if reply else "").split())
    if not text:
        return fallback_query, usage, "unparseable or empty rewrite: canonicalised question"
    tokens = count_tokens(text)
    note = f"rewrite cut to {max_tokens} tokens (was {tokens})" if tokens > max_tokens else None
    text = cut_tokens(text, max_tokens)
    lost = [e["name"] for e in entities if not any(written_in(text, s) for s in e["surfaces"])]
    if lost:
        return fallback_query, usage, f"rewrite dropped {', '.join(lost)}: canonicalised question"
    return canonical_question(text, entities), usage, note
