"""HydraRAG initialization helpers (paper §4.1) and the exploration probes of §4.2 (no LLM here).

- Available evidence detection: each extracted topic entity is aligned to the KB by exact
  name/alias, else by embedding similarity above a threshold; a source joins ``S_t`` when
  it has topic entities (KG), documents (docs), or is configured (web, needs TAVILY_API_KEY).
- Topic choices of a constrained (small) model: the KB names the question writes; the one a rule
  takes without a call (:func:`lone_topic`); the bank examples' topic types, which same-named
  entities and the plan's topic are held to (:func:`example_types`).
- Skyline indicator: parsed into its nodes to compute the predicted depth (the largest
  distance between the answer node and a topic-entity node) and the topic order.
- Probes: what one exploration phase searches (phase, sources, depth, and one chain per
  skyline: ordered topic entities, indicator, query, document topics).
"""

from __future__ import annotations

import os
import re

from hybridrag.agents.extraction.spans import FUNCTION_WORDS
from hybridrag.agents.hydrarag.pruning import embed_texts
from hybridrag.agents.llm.constrained import question_spans
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.names import known_names

_PLAIN_WORDS = FUNCTION_WORDS | {"other", "others", "same", "another", "film", "films", "movie", "movies"}
_SEPARATOR = re.compile(r"\s+[-–—]+\s+|\s*(?:->|→|<-|←)\s*")
_STRIP = " \t\"'[]{}()."


def split_chain(text: str) -> list[str]:
    """Items of an ``a - r - b`` chain (hyphens inside words are kept)."""
    return [t.strip(_STRIP) for t in _SEPARATOR.split(text or "") if t.strip(_STRIP)]


def _matches(node: str, name: str) -> bool:
    node, name = node.lower(), name.lower()
    return bool(name) and (name in node or (len(node) >= 3 and node in name))


def predicted_depth(skyline: str, topic_names: list[str]) -> int | None:
    """Largest hop distance between the answer and a topic entity along the skyline, or None."""
    nodes = split_chain(skyline)[0::2]
    if len(nodes) < 2:
        return None
    answer = next((i for i, n in enumerate(nodes) if "answer" in n.lower()), len(nodes) - 1)
    found = [i for i, n in enumerate(nodes) if i != answer and any(_matches(n, t) for t in topic_names)]
    ends = found or [0, len(nodes) - 1]
    return max(1, max(abs(i - answer) for i in ends))


def reorder(topics: list[dict], skyline: str) -> list[dict]:
    """Topic entities in the order the skyline names them (unnamed ones last, order kept)."""
    low = (skyline or "").lower()

    def position(t: dict) -> int:
        hits = [low.find(n.lower()) for n in (t["mention"], t["name"]) if n and low.find(n.lower()) >= 0]
        return min(hits) if hits else len(low) + 1

    return sorted(topics, key=position)


def _prefer(entities: list, mention: str, types: frozenset[str] = frozenset()) -> str:
    """Among same-named entities: one of ``types``, else the exact spelling, else a proper-cased name, else the first.

    ``types``: the topic types of the shown bank examples (:func:`example_types`): "who directed the
    films steve martin was in" writes the tag ``steve martin``, but its examples start from a person.
    """
    typed = [e for e in entities if e.type in types]
    exact = [e for e in entities if e.name == mention]
    cased = [e for e in entities if e.name != e.name.lower()]
    return ([e for e in typed if e in exact] or typed or exact or cased or entities)[0].id


def example_types(examples: list[dict]) -> frozenset[str]:
    """The KB types of the shown bank examples' first topic entities (empty when none is typed)."""
    return frozenset(e["topic_types"][0] for e in examples if e.get("topic_types") and e["topic_types"][0])


def link_names(
    kb: KnowledgeBase, names: list[str], threshold: float, types: frozenset[str] = frozenset()
) -> dict[str, str | None]:
    """Align names to KB entity ids: exact name/alias, else the dense match scoring ≥ threshold.

    Among same-named entities, one of ``types`` comes first (:func:`_prefer`).
    """
    out: dict[str, str | None] = {}
    rest = []
    for name in dict.fromkeys(n.strip() for n in names if n and n.strip()):
        exact = kb.graph.lookup(name)
        if exact:
            out[name] = _prefer(exact, name, types)
        else:
            rest.append(name)
    if rest:
        for name, vec in zip(rest, embed_texts(kb, rest), strict=True):
            hits = kb.dense_search(vec, k=1, kind="entity")
            ok = hits and hits[0].score >= threshold
            out[name] = (
                _prefer(kb.graph.lookup(kb.name(hits[0].doc.id)) or [kb.graph.get(hits[0].doc.id)], name, types)
                if ok
                else None
            )
    return out


def topic_choices(kb: KnowledgeBase, question: str) -> list[str]:
    """What a constrained topic extraction may name: the KB names the question writes, else its spans.

    The names keep their punctuation (:func:`tools.names.known_names`) and come longest first; a
    question that writes no KB name offers every span of the question.
    """
    return sorted(known_names(kb, question), key=len, reverse=True) or question_spans(question)


def lone_topic(kb: KnowledgeBase, question: str, types: frozenset[str] = frozenset()) -> str | None:
    """The topic a rule takes without asking: the one KB name the question writes, its one cased name, or typed one.

    "who is listed as director of the films starred by The Naked Kiss actors" writes three KB names,
    but ``director`` and ``actors`` are lower-case tags the question uses as words; when exactly one
    written name carries a capital letter and the others none, that one is the topic. Else, when
    exactly one names an entity of ``types`` (the shown examples' topic types, :func:`example_types`),
    not counting names of plain words only ("the other") when there are several, that one: "list the
    other movies of the director of targets" with examples starting from a movie is about the film
    Targets, not the tag ``director``. Otherwise None: the model is asked.
    """
    names = known_names(kb, question)
    if len(names) == 1:
        return names[0]
    cased = [n for n in names if n != n.lower()]
    if len(cased) == 1:
        return cased[0]
    typed = [n for n in names if any(e.type in types for e in kb.graph.lookup(n))]
    named = [n for n in typed if not set(n.casefold().split()) <= _PLAIN_WORDS] if len(typed) > 1 else typed
    return named[0] if len(named) == 1 else None


def pinned_topic(kb: KnowledgeBase, question: str, types: frozenset[str] = frozenset()) -> str | None:
    """The topic a rule chose among several KB names the question writes (:func:`lone_topic`), else None.

    The plan is then held to it: "when were the other films written by the writer of Secret Honor
    released" names the film ``The Other`` too, which a small model's plan would otherwise start from.
    """
    return lone_topic(kb, question, types) if len(known_names(kb, question)) > 1 else None


def web_available(use_web: bool) -> tuple[bool, str | None]:
    """Whether web search can run, and the note explaining why not."""
    if not use_web:
        return False, "web source disabled (use_web=false)"
    if not os.environ.get("TAVILY_API_KEY"):
        return False, "web source dropped: TAVILY_API_KEY is not set"
    return True, None


def detect_sources(
    kb: KnowledgeBase, mentions: list[str], threshold: float, use_web: bool, types: frozenset[str] = frozenset()
) -> dict:
    """Align mentions per source (same-named entities of ``types`` first) and build ``S_t`` (kg, docs, web)."""
    linked = link_names(kb, mentions, threshold, types)
    topics, seen = [], set()
    for mention, eid in linked.items():
        if eid is not None and eid not in seen:
            seen.add(eid)
            topics.append({"mention": mention, "id": eid, "name": kb.name(eid)})
    unlinked = [m for m, eid in linked.items() if eid is None]
    doc_topics = sorted({d.entity_id for d in kb.passages_of(seen) if d.kind == "passage" and d.entity_id is not None})
    has_passages = any(d.kind == "passage" for d in kb.docs)
    web_ok, note = web_available(use_web)
    available = [
        s for s, ok in (("kg", bool(topics)), ("docs", bool(doc_topics) or has_passages), ("web", web_ok)) if ok
    ]
    keys = [f"id:{t['id']}" for t in topics] + [f"name:{m.lower()}" for m in unlinked]
    return {
        "topics": topics,
        "unlinked": unlinked,
        "doc_topics": doc_topics,
        "available": available,
        "topic_keys": keys,
        "notes": [note] if note else [],
    }


def _typed(kb: KnowledgeBase, topics: list[dict], types: frozenset[str]) -> bool:
    return any((e := kb.graph.get(t["id"])) is not None and e.type in types for t in topics)


def planned_topic(
    kb: KnowledgeBase,
    topics: list[dict],
    skyline: str,
    threshold: float,
    use_web: bool,
    types: frozenset[str] = frozenset(),
) -> tuple[list[dict], list[dict], dict]:
    """The topic entities a small model's plan names (its ``topic``, the skyline's first item).

    Topics the plan does not name are dropped (e.g. the tags ``film`` or ``actors`` of "the films
    that share directors with the film Forever Strong", which every KG path would otherwise have to
    join). When the plan names none of them, its topic is aligned to the KB (:func:`detect_sources`);
    when that fails too, or it aligns to none of ``types`` (the shown examples' topic types) while a
    topic is one of them, the topics stay as they are.

    Returns:
        ``(topics, dropped, found)``: ``found`` holds the new ``topic_keys``, ``doc_topics`` and
        ``available`` when the plan's topic was aligned anew, else nothing.
    """
    head = split_chain(skyline)[:1]
    if not head:
        return topics, [], {}
    named = [t for t in topics if head[0].casefold() in {t["name"].casefold(), t["mention"].casefold()}]
    if named:
        return named, [t for t in topics if t not in named], {}
    found = detect_sources(kb, head, threshold, use_web, types)
    if not found["topics"] or (types and not _typed(kb, found["topics"], types) and _typed(kb, topics, types)):
        return topics, [], {}
    return found["topics"], topics, {k: found[k] for k in ("topic_keys", "doc_topics", "available")}


def chain(
    topics: list[dict], indicator: str, query: str, doc_topics: list[str], doc_names: list[str] | None = None
) -> dict:
    """One exploration chain: ordered topic ids (KG), indicator, query, document topics.

    ``doc_names``: topic names no KB entity aligns to, whose documents are the passages naming them
    (a KB of documents has no entity for most of what its passages are about).
    """
    return {
        "topics": [t["id"] for t in topics],
        "names": [t["name"] for t in topics],
        "indicator": indicator,
        "query": query,
        "doc_topics": list(dict.fromkeys([*doc_topics, *(t["id"] for t in topics)])),
        "doc_names": list(dict.fromkeys(n.strip() for n in doc_names or [] if n.strip())),
    }


def probe(phase: str, round_: int, sources: list[str], depth: int, chains: list[dict], floor: bool = False) -> dict:
    """What one exploration phase searches: phase, round, sources, depth, chains.

    ``floor``: keep only KG paths longer than ``|Topic|·(depth-1)`` (Algorithm 1's lower bound on
    Paths_I, initial round).
    """
    return {"phase": phase, "round": round_, "sources": list(sources), "depth": depth, "chains": chains, "floor": floor}
