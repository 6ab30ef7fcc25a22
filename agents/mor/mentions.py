"""MoR textual edges (ours; ``text_edges=True``): entities a node's own texts name, as neighbours.

In a KB whose facts are partly held as passages (MetaQA-hybrid keeps half of them as sentences
of the head entity's text: "Wish You Were Here was written by David Leland."), a hop whose edge
is missing reaches nothing structurally, and the paper's per-layer textual matching scores each
candidate's *own* texts, which do not hold the fact. A textual edge reads the previous node's
texts instead: the entities of the layer's category named in its sentences become neighbours.
When a sentence names words of the hop's relation ("written" for ``written_by``), only such
sentences count; otherwise every sentence does. Names are matched longest first against the KB's
entity names (exact, case-insensitive). Used only when structure reached nothing at that layer.
"""

from __future__ import annotations

import re

from agents.mor.matching import doc_table
from kb.base import KnowledgeBase

MAX_NGRAM = 8
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_TOKEN = re.compile(r"\S+")


def _stems(relations: list[str]) -> set[str]:
    words = {w for r in relations for w in r.lower().split("_") if len(w) > 3}
    return {w[:6] for w in words}


def _mentions(kb: KnowledgeBase, sentence: str, category: str) -> list[str]:
    """Entities of ``category`` named in ``sentence``, longest names first, no overlaps."""
    tokens = [t.strip(".,;:!?\"'()") for t in _TOKEN.findall(sentence)]
    out, i = [], 0
    while i < len(tokens):
        for n in range(min(MAX_NGRAM, len(tokens) - i), 0, -1):
            phrase = " ".join(tokens[i:i + n])
            hits = [e for e in kb.graph.lookup(phrase) if e.type == category] if phrase else []
            if hits:
                out.append(hits[0].id)
                i += n
                break
        else:
            i += 1
    return out


def mentioned(kb: KnowledgeBase, parents: list[str], category: str, relations: list[str]) -> dict[str, list[str]]:
    """Parent id → entities of ``category`` its texts name (relation sentences first)."""
    table, stems, out = doc_table(kb), _stems(relations), {}
    for parent in parents:
        sentences = [s for r in table.rows_of.get(parent, []) for s in _SENTENCE.split(kb.docs[r].text)]
        about = [s for s in sentences if stems and any(w[:6] in stems for w in s.lower().split())]
        found = [e for s in (about or sentences) for e in _mentions(kb, s, category) if e != parent]
        if found:
            out[parent] = list(dict.fromkeys(found))
    return out
