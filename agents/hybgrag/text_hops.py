"""Text hops: a relation followed through passages when the graph lacks the edge (no LLM here).

In a KB whose facts are partly or only in passages (a passage is about one entity, its
owner), a relation path breaks where an edge is missing from the graph. The hybrid module
then also steps along the relation through the text, one sentence at a time:

- forward: a sentence of a frontier entity's own passages names another entity;
- backward: a passage found by lexical search for a frontier entity's name names it in a
  sentence; the step goes to the passage's owner.

A step is kept when the entity reached has a type the relation's schema gives for its other
end and its sentence carries a word of the relation's name (its first five letters:
"directed" for directed_by), so that a film's director is not taken for its writer. Without
such a word (in_language: "X is in French") the type alone decides, but only for a relation
that is the schema's only one between its two types. The step's triple is the relation with
the ``TEXT`` mark, so reasoning paths show that it came from a passage.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agents.hybgrag.retrieval import _doc_rows
from kb.base import KnowledgeBase
from kb.model import Triple
from tools.retrieval import mentions_in

TEXT = " (text)"
SEARCH_K = 50  # passages looked at per frontier entity for backward steps
_SENTENCE = re.compile(r"(?<=[^\s.]{2}[.!?])\s+")  # not after an initial ("Albert S. Rogell")
_STOP = {"by", "has", "in", "of", "the", "is", "to", "a", "an"}


@lru_cache(maxsize=8)
def has_passages(kb: KnowledgeBase) -> bool:
    """Whether the KB holds any passage (text hops are pointless otherwise)."""
    return any(d.kind == "passage" for d in kb.docs)


def _stems(relation: str) -> list[str]:
    return [w[:5] for w in relation.lower().split("_") if w and w not in _STOP]


def _carries(sentence: str, stems: list[str]) -> bool:
    low = sentence.lower()
    return any(re.search(rf"\b{re.escape(s)}", low) for s in stems)


def _sole_link(kb: KnowledgeBase, relation: str) -> bool:
    """Whether no other relation of the schema joins the same entity types."""
    types = kb.graph.schema().relation_types
    ends = {r: set(t.head_types) | set(t.tail_types) for r, t in types.items()}
    return relation in ends and all(e != ends[relation] for r, e in ends.items() if r != relation)


def _other_types(kb: KnowledgeBase, relation: str, own: str | None) -> set[str]:
    rt = kb.graph.schema().relation_types.get(relation)
    if rt is None:
        return set()
    ends = set(rt.head_types) | set(rt.tail_types)
    return ends - {own} if len(ends) > 1 else ends


def _sentences_of(kb: KnowledgeBase, eid: str) -> list[tuple[str, str]]:
    """(owner, sentence) of the frontier entity's own passages."""
    out = []
    for row in _doc_rows(kb).get(eid, []):
        d = kb.docs[row]
        if d.kind == "passage":
            out += [(eid, s) for s in _SENTENCE.split(d.text) if s]
    return out


def _sentences_naming(kb: KnowledgeBase, eid: str) -> list[tuple[str, str]]:
    """(owner, sentence) of other entities' passages that name the frontier entity."""
    name = kb.name(eid)
    pattern = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
    out = []
    for hit in kb.lexical_search(name, k=SEARCH_K, kind="passage"):
        owner = hit.doc.entity_id
        if owner and owner != eid:
            out += [(owner, s) for s in _SENTENCE.split(hit.doc.text) if pattern.search(s)]
    return out


def text_steps(kb: KnowledgeBase, frontier: list[str], relation: str) -> list[tuple[str, str, Triple]]:
    """(parent, child, marked triple) of the text steps along ``relation`` from ``frontier``."""
    stems, out, sole = _stems(relation), [], _sole_link(kb, relation)
    for eid in frontier:
        ent = kb.graph.get(eid)
        want = _other_types(kb, relation, ent.type if ent else None)
        found: list[tuple[str, bool, Triple]] = []
        for owner, sentence in _sentences_of(kb, eid):
            for child in mentions_in(kb, sentence):
                c = kb.graph.get(child)
                if child != eid and c is not None and c.type in want:
                    found.append((child, _carries(sentence, stems), Triple(eid, relation + TEXT, child)))
        for owner, sentence in _sentences_naming(kb, eid):
            c = kb.graph.get(owner)
            if c is not None and c.type in want:
                found.append((owner, _carries(sentence, stems), Triple(owner, relation + TEXT, eid)))
        out += [(eid, child, t) for child, strong, t in found if strong or sole]
    return out
