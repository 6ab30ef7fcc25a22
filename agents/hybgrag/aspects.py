"""What HybGRAG's experience entries read off a solved example: its topic, answers and textual aspects (no LLM here).

A solved example of the KB's bank (:mod:`agents.shots`) names its topic entities and relation
path; these helpers link the topic, follow the path to the answers, and find the words of a
question (or of an answer's passage) that name nothing in the KB: the textual aspects the
commentor's ``incorrect_entity_relation`` examples take for entities (:mod:`agents.hybgrag.experience`).
"""

from __future__ import annotations

import re
from typing import Any

from hybridrag.agents.hybgrag.paths import follow_path
from hybridrag.agents.hybgrag.retrieval import link_entity
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.text import sentences

_WORD = re.compile(r"[\w'-]+")
_STOP = frozenset(
    "a an the of in on at to for by with from and or is was were are be been did does do what which who whom whose "
    "when where why how many much that this these those it its as has have had some any one also about "
    "me list name find give tell shares".split()
)


def entities_of(ex: Any) -> list[dict]:
    """A solved example's topic entities as the router names them (``name``, ``type``)."""
    return [{"name": n, "type": t} for n, t in zip(ex.topic, ex.topic_types, strict=False)]


def topic_id(kb: KnowledgeBase, ex: Any) -> str | None:
    """The KB id of a solved example's first topic entity, or None when it links to nothing."""
    if not ex.topic:
        return None
    ent = link_entity(kb, ex.topic[0], ex.topic_types[0] if ex.topic_types else None)
    return ent.id if ent else None


def textual_aspect(kb: KnowledgeBase, ex: Any) -> str | None:
    """The longest run of the question's content words that names no KB entity, type or relation (or None)."""
    schema = kb.graph.schema()
    topic_words = {w.casefold() for name in ex.topic for w in _WORD.findall(name)}
    # the relational side (types, relation words) and the topic's names are not textual aspects
    topic_words |= {
        w.casefold() for t in [*schema.entity_types, *schema.relation_types] for w in _WORD.findall(t.replace("_", " "))
    }
    runs, run = [], []
    for tok in [*_WORD.findall(ex.question), ""]:
        if tok and tok.casefold() not in _STOP and tok.casefold() not in topic_words and not tok.isdigit():
            run.append(tok)
            continue
        if run:
            runs.append(" ".join(run))
        run = []
    found = [r for r in runs if len(r) >= 4 and not kb.graph.lookup(r)]
    return min(found, key=lambda r: (-len(r), r)) if found else None


def answer_ids(kb: KnowledgeBase, ex: Any) -> tuple[str | None, list[str]]:
    """(topic id, ids of the answers the example's path reaches from it)."""
    topic = topic_id(kb, ex)
    reached = follow_path(kb, topic, tuple(ex.relations)) if topic else {}
    names = kb.names(reached) if reached else {}
    answers = {a.casefold() for a in ex.answers}
    return topic, sorted(e for e in reached if names[e].casefold() in answers)


def passage_aspect(kb: KnowledgeBase, ex: Any) -> str | None:
    """A description of an answer from its own passage (a sentence without the names it joins), or None.

    Added to a question that has no words of its own besides the relational side, it makes the
    question hybrid: a textual aspect next to the relational one.
    """
    _, answers = answer_ids(kb, ex)
    for doc in kb.passages_of(set(answers[:3])):
        if doc.kind == "entity":
            continue
        for sent in sentences(doc.text):
            if any(n.casefold() in sent.casefold() for n in ex.topic):
                continue
            words = [w for w in _WORD.findall(sent.replace(doc.entity_id or "", " "))]
            while words and words[0].casefold() in _STOP | {"is", "was"}:
                words.pop(0)
            text = " ".join(words)
            if len(words) >= 2 and not kb.graph.lookup(text):
                return text
    return None
