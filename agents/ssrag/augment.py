"""SSRAG query understanding and augmentation (paper §III-A, Algorithm 1).

Four LLM roles in the order of Algorithm 1 — DecomposeQuery, ExtractKeyEntities,
DetectIntent, EnhanceQuery — each one structured call (see :mod:`agents.llm.structured`) with a
rule-based fallback when the reply cannot be parsed after one retry:

- decomposition falls back to the question itself as the only sub-question;
- entity extraction falls back to explicitly marked or capitalised spans and KB mentions;
- intent detection falls back to the rule cues (question word, temporal and factual cues);
- the rewrite falls back to the question with its entities canonicalised.

Rules that check the LLM (ours, to keep small models honest): a sub-question must share a
content word with the question, extracted entities and time hints must occur in the question,
and a rewrite that drops a named entity is rejected. The rewrite is cut to ``max_tokens``
tokens (the paper's "≤ 40 tokens") counted by :func:`count_tokens`. Aliases are canonicalised through the
KB's alias store, keeping the longest surface form of each canonical entity (the paper's
Churchill example).
"""

from __future__ import annotations

import re
from datetime import date
from typing import Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from agents.llm.structured import call_structured
from kb.base import KnowledgeBase
from kb.text_index import words
from prompts import ssrag as P
from prompts.data_block import data_list
from tools.retrieval import explicit_mentions, mentions_in

# A deterministic approximation of a BPE tokenizer (no tokenizer file is needed offline):
# runs of letters in pieces of at most 8, runs of digits in pieces of at most 3 (as GPT-4's
# cl100k groups digits), and every other non-space character (punctuation, "_") alone.
_TOKEN = re.compile(r"[^\W\d_]{1,8}|\d{1,3}|[^\w\s]|_|\w")


def count_tokens(text: str) -> int:
    """Tokens of ``text`` under the approximation above (a word of 1-8 letters is one token)."""
    return sum(1 for _ in _TOKEN.finditer(text))


def cut_tokens(text: str, max_tokens: int) -> str:
    """``text`` up to the end of its ``max_tokens``-th token (unchanged when it fits)."""
    for n, m in enumerate(_TOKEN.finditer(text), 1):
        if n == max_tokens:
            return text[: m.end()]
    return text


Intent = Literal["who", "what", "when", "where", "which", "why", "how"]
WH_WORDS: tuple[str, ...] = Intent.__args__  # type: ignore[attr-defined]

_WH = re.compile(r"\b(who|whom|whose|what|when|where|which|why|how)\b", re.IGNORECASE)
# Cues that a question asks about the present or the recent past (paper §III-B examples).
_RECENCY = re.compile(
    r"\b(today|tonight|now|nowadays|currently|current|lately|latest|recent|recently|newest|trending|"
    r"upcoming|breaking|this (?:week|month|year|season)|(?:last|past|next) (?:week|month|few days)|"
    r"so far this year|yesterday|tomorrow)\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:in |since |during )?((?:1[5-9]|20)\d{2})\b", re.IGNORECASE)
_PERIOD = re.compile(
    r"\b(\d{1,2}(?:st|nd|rd|th) century|middle ages|renaissance|world war (?:i{1,2}|one|two|1|2)|"
    r"cold war|ancient \w+|medieval|victorian era|bronze age|iron age|(?:1[5-9]|20)\d0s)\b", re.IGNORECASE)
_STOP = {"the", "and", "for", "with", "who", "what", "when", "where", "which", "why", "how", "did", "does",
         "was", "were", "are", "is", "that", "this", "from", "into", "about", "has", "have", "had"}
RECENT_YEARS = 2  # a year within this many years of today is a recency cue ("in 2023", paper §III-B)


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


def rule_cues(question: str) -> dict:
    """Cues read by rule: question word, time hints, recency, factual cues (paper §III-A, §III-B)."""
    wh = _WH.search(question)
    intent = None
    if wh:
        word = wh.group(1).lower()
        intent = "who" if word in ("whom", "whose") else word
    this_year = date.today().year
    years = [(m.group(0).strip(), int(m.group(1))) for m in _YEAR.finditer(question)]
    recency = [m.group(0) for m in _RECENCY.finditer(question)]
    recent_years = [text for text, y in years if y >= this_year - RECENT_YEARS]
    factual = [*explicit_mentions(question), *(m.group(0) for m in _PERIOD.finditer(question)),
               *(str(y) for _, y in years if y < this_year - RECENT_YEARS)]
    return {"intent": intent, "time_hints": _unique(recency + [t for t, _ in years]),
            "recency": bool(recency or recent_years), "factual_cues": _unique(factual)}


def _unique(items: list[str]) -> list[str]:
    seen, out = set(), []
    for s in (i.strip() for i in items):
        if s and s.lower() not in seen:
            seen.add(s.lower())
            out.append(s)
    return out


def _in(text: str, phrase: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(phrase.strip())}(?!\w)", text, re.IGNORECASE) is not None


def decompose(model: BaseChatModel, question: str, method: str,
              shots: str = "") -> tuple[list[str], dict, str | None]:
    """DecomposeQuery; returns (sub-questions, usage, fallback note or None)."""
    messages = [("system", P.DECOMPOSE_SYSTEM.template + shots), ("human", P.DECOMPOSE.format(question=question))]
    reply, usage = call_structured(model, SubQuestions, messages, role="decomposer", method=method)
    if reply is None:
        return [question], usage, "unparseable decomposition: the question itself"
    subs = _unique(reply.sub_questions)
    kept = [s for s in subs if _content(s) & _content(question)]
    if not kept:
        return [question], usage, "no sub-question shares a word with the question: the question itself"
    return kept, usage, (f"dropped {len(subs) - len(kept)} sub-questions unrelated to the question"
                         if len(kept) < len(subs) else None)


def _content(text: str) -> set[str]:
    return {w for w in words(text) if len(w) > 2 and w not in _STOP}


def extract_entities(model: BaseChatModel, kb: KnowledgeBase, question: str, subs: list[str],
                     method: str, follow_up: tuple = (), shots: str = "",
                     choices: dict | None = None) -> tuple[list[dict], dict, str | None]:
    """ExtractKeyEntities; entities not found in the question are dropped as hallucinated.

    ``follow_up``: the earlier reply and the feedback on it (the corrective loop); ``shots``:
    rendered examples from the KB at hand, put before the question; ``choices``: the names and
    types a constrained model decodes within (:func:`graphs.ssrag_small.entity_choices`).
    """
    messages = [("system", P.ENTITIES_SYSTEM.template + shots),
                ("human", P.ENTITIES.format(question=question, sub_questions=" | ".join(subs))), *follow_up]
    reply, usage = call_structured(model, KeyEntities, messages, role="entity_extractor", method=method,
                                   choices=choices)
    if reply is None:
        names = explicit_mentions(question) + [kb.name(i) for i in mentions_in(kb, question)]
        found = [{"name": n, "type": ""} for n in _unique(names)]
        return found, usage, "unparseable entity list: marked spans and KB mentions"
    kept = [{"name": e.name.strip(), "type": e.type.strip()} for e in reply.entities if e.name.strip()]
    kept = [e for e in kept if _in(question, e["name"])]
    dropped = len(reply.entities) - len(kept)
    return _unique_entities(kept), usage, (f"dropped {dropped} entities absent from the question"
                                           if dropped else None)


def _unique_entities(entities: list[dict]) -> list[dict]:
    seen, out = set(), []
    for e in entities:
        if e["name"].lower() not in seen:
            seen.add(e["name"].lower())
            out.append(e)
    return out


def canonicalise(kb: KnowledgeBase, entities: list[dict]) -> list[dict]:
    """Map surfaces through the KB alias store; one entry per canonical entity, longest surface kept.

    Returns ``[{"name": canonical surface, "type", "id": KB id or None, "surfaces": [...]}]``.
    """
    groups: dict[str, dict] = {}
    for e in entities:
        found = kb.graph.lookup(e["name"])
        best = next((x for x in found if x.name == e["name"]), found[0]) if found else None
        key = best.id if best else e["name"].lower()
        group = groups.setdefault(key, {"type": e.get("type", ""), "id": best.id if best else None,
                                        "surfaces": []})
        group["surfaces"] += [e["name"], *([best.name, *best.aliases] if best else [])]
    out = []
    for g in groups.values():
        surfaces = _unique(g["surfaces"])
        out.append({"name": max(surfaces, key=len), "type": g["type"], "id": g["id"], "surfaces": surfaces})
    return out


def detect_intent(model: BaseChatModel, question: str, subs: list[str], entities: list[dict],
                  method: str) -> tuple[dict, dict, str | None]:
    """DetectIntent merged with the rule cues; the question word found by rule wins."""
    rules = rule_cues(question)
    names = data_list(e["name"] for e in entities)  # canonical names come from the KB's alias store
    messages = [("system", P.INTENT_SYSTEM.template),
                ("human", P.INTENT.format(question=question, sub_questions=" | ".join(subs), entities=names))]
    reply, usage = call_structured(model, IntentCues, messages, role="intent_detector", method=method)
    if reply is None:
        return {**rules, "intent": rules["intent"] or "what", "subtopics": []}, usage, \
            "unparseable intent: rule cues only"
    hints = rules["time_hints"] + [h for h in reply.time_hints if _in(question, h)]
    cues = {"intent": rules["intent"] or reply.intent, "subtopics": _unique(reply.subtopics),
            "time_hints": _unique(hints), "recency": rules["recency"],
            "factual_cues": _unique(rules["factual_cues"] + reply.factual_cues)}
    return cues, usage, None


def canonical_question(question: str, entities: list[dict]) -> str:
    """The question with every surface of an entity replaced by its canonical (longest) form."""
    out = question
    for e in entities:
        for s in sorted(e.get("surfaces", []), key=len, reverse=True):
            if s != e["name"] and not _in(out, e["name"]):
                out = re.sub(rf"(?<!\w){re.escape(s)}(?!\w)", e["name"], out, flags=re.IGNORECASE)
    return out


def enhance_query(model: BaseChatModel, question: str, entities: list[dict], cues: dict, max_tokens: int,
                  method: str) -> tuple[str, dict, str | None]:
    """EnhanceQuery: one rewritten query that keeps the entities verbatim within the token limit."""
    user = P.REWRITE.format(entities=data_list(e["name"] for e in entities),
                            time_hints=", ".join(cues["time_hints"]) or "(none)", intent=cues["intent"],
                            aspects=data_list(cues.get("subtopics", [])),
                            max_tokens=max_tokens, question=question)
    messages = [("system", P.REWRITE_SYSTEM.template), ("human", user)]
    reply, usage = call_structured(model, AugmentedQuery, messages, role="rewriter", method=method)
    fallback_query = canonical_question(question, entities)
    text = " ".join((reply.query if reply else "").split())
    if not text:
        return fallback_query, usage, "unparseable or empty rewrite: canonicalised question"
    tokens = count_tokens(text)
    note = f"rewrite cut to {max_tokens} tokens (was {tokens})" if tokens > max_tokens else None
    text = cut_tokens(text, max_tokens)
    lost = [e["name"] for e in entities if not any(_in(text, s) for s in e["surfaces"])]
    if lost:
        return fallback_query, usage, f"rewrite dropped {', '.join(lost)}: canonicalised question"
    return canonical_question(text, entities), usage, note
