"""MoR textual edges (ours; ``text_edges=True``): entities linked to a node through texts.

In a KB whose facts are partly or wholly held as passages (MetaQA-hybrid keeps them as sentences
of the head entity's text: "Wish You Were Here was written by David Leland."), a hop whose edge
is missing reaches nothing structurally, and the paper's per-layer textual matching scores each
candidate's *own* texts, which need not hold the fact. A textual edge links two entities when a
sentence of one entity's texts names the other, in both directions:

- forward: the entities of the layer's category that the node's own texts name (the node is the
  subject of its passage: "Heat was directed by Michael Mann" read from Heat);
- backward: the entities of the layer's category whose texts name the node ("Tom Hanks starred
  in Big", read from Big's passage, links the person Tom Hanks to the movie Big); the texts are
  found through the BM25 index (every word of the node's name), at most ``max_rows`` of them,
  best first, and a sentence counts only when it names the node itself, not a longer name that
  holds it ("Me and Orson Welles" does not name Orson Welles).

Sentences that state the hop's relation (a word outside the names they hold starting with a root
of the relation's name: "written" for ``written_by``, "tagged" for ``has_tags``; "tagged as
directorial debut" does not state ``directed_by``) are preferred: when any of a node's
linking sentences states it, only those count; otherwise all do. Names are matched longest
first against all the KB's entity names (exact, case-insensitive), so a name inside a longer
one ("Divine" inside the film "Divine Madness") is not a mention. An entity has one type in the
KB, but a name can play several roles (the film "1941" is also a year): in a sentence that
states the relation and names no entity of the layer's category, the other entities it names
play that category, as a graph edge's schema lets them (:func:`agents.mor.traversal._structural`).
Used only when structure reached nothing at that layer.
"""

from __future__ import annotations

import re

import numpy as np

from hybridrag.agents.mor.matching import doc_table
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.text_index import words
from hybridrag.tools.text import name_pattern, sentences

MAX_NGRAM = 8
_TOKEN = re.compile(r"\S+")
_EDGE_CHARS = ".,;:!?\"'()"


def relation_roots(relations: list[str]) -> set[str]:
    """Roots of the words of the relation names.

    A root is the first 6 letters of a word longer than 3 letters, a plural ``s`` dropped
    (``written_by`` → {"writte"}, ``has_tags`` → {"tag"}).
    """
    roots = set()
    for r in relations:
        for w in re.split(r"[_\W]+", r.lower()):
            if len(w) > 3:
                roots.add((w[:-1] if w.endswith("s") else w)[:6])
    return roots


def _sentences(text: str) -> list[str]:
    """Sentences of an entity's text: not cut after an initial ("H."), only before a capital, a digit or a quote."""
    return sentences(text, after="initials", before="capital")


def states(sentence: str, roots: set[str]) -> bool:
    """Whether a word of ``sentence`` starts with one of the relation ``roots``."""
    return bool(roots) and any(w.startswith(r) for w in words(sentence) for r in roots)


def _phrases(sentence: str, spans: list[tuple[int, int]], i: int, n: int) -> list[str]:
    """The text of tokens ``i .. i+n-1`` as written, without its edge punctuation, and with a final period kept.

    Inner punctuation is kept: "No Retreat, No Surrender", "Joseph H. Lewis".
    """
    raw = sentence[spans[i][0] : spans[i + n - 1][1]]
    return list(dict.fromkeys(p for p in (raw.strip(_EDGE_CHARS), raw.lstrip(_EDGE_CHARS).rstrip(",;:!?\"')")) if p))


def read(kb: KnowledgeBase, sentence: str) -> tuple[list[list], str]:
    """The entities ``sentence`` names, longest names first, no overlaps, and the sentence without them.

    One list of KB entities, all sharing that name, per mention, in sentence order. The rest of
    the sentence is where a relation is stated ("tagged as directorial debut" does not state
    ``directed_by``).
    """
    spans = [m.span() for m in _TOKEN.finditer(sentence)]
    out, rest, i = [], list(sentence), 0
    while i < len(spans):
        for n in range(min(MAX_NGRAM, len(spans) - i), 0, -1):
            hits = next((h for p in _phrases(sentence, spans, i, n) if (h := kb.graph.lookup(p))), [])
            if hits:
                out.append(hits)
                rest[spans[i][0] : spans[i + n - 1][1]] = " " * (spans[i + n - 1][1] - spans[i][0])
                i += n
                break
        else:
            i += 1
    return out, "".join(rest)


def names(kb: KnowledgeBase, sentence: str) -> list[list]:
    """The entities ``sentence`` names (:func:`read`)."""
    return read(kb, sentence)[0]


def _forward(kb: KnowledgeBase, parent: str, category: str, roots: set[str]) -> list[tuple[str, bool, bool]]:
    """(entity, stated, forward) triples: entities of ``category`` the parent's own sentences name."""
    table, out = doc_table(kb), []
    for row in table.rows_of.get(parent, []):
        for sentence in _sentences(kb.docs[row].text):
            named, rest = read(kb, sentence)
            stated = states(rest, roots)
            mentions = [hits for hits in named if all(h.id != parent for h in hits)]
            typed = [
                next(h for h in hits if h.type == category)
                for hits in mentions
                if any(h.type == category for h in hits)
            ]
            if not typed and stated:  # a name playing the category in a sentence stating the relation
                typed = [hits[0] for hits in mentions]
            out += [(e.id, stated, True) for e in typed]
    return out


def rows_naming(kb: KnowledgeBase, name: str, category: str, max_rows: int) -> list[int]:
    """Rows of texts of ``category`` entities holding every indexed word of ``name``: best BM25 first, ``max_rows``."""
    table, vocab = doc_table(kb), kb.bm25.vocab
    toks = [t for t in dict.fromkeys(words(name)) if t in vocab]  # words the index keeps
    if not toks or max_rows <= 0:
        return []
    sub = kb.bm25.weights[:, [vocab[t] for t in toks]]
    hits = np.asarray((sub > 0).sum(axis=1)).ravel() == len(toks)
    hits &= table.row_type == category
    rows = np.nonzero(hits)[0]
    if rows.size > max_rows:
        scores = np.asarray(sub[rows].sum(axis=1)).ravel()
        rows = rows[np.argsort(-scores, kind="stable")[:max_rows]]
    return rows.tolist()


def _backward(
    kb: KnowledgeBase, parent: str, category: str, roots: set[str], max_rows: int, name: str
) -> list[tuple[str, bool, bool]]:
    """(entity, stated, forward) triples: entities of ``category`` whose texts name the parent, called ``name``.

    A mention is of the name itself, not a part of a longer name: "Me and Orson Welles" does not
    name Orson Welles.
    """
    table, name = doc_table(kb), name.strip()
    if not name:
        return []
    phrase, out = name_pattern(name), []
    for row in rows_naming(kb, name, category, max_rows):
        owner = table.row_entity[row]
        if owner is None or owner == parent:
            continue
        for sentence in _sentences(kb.docs[row].text):
            if not phrase.search(sentence):
                continue
            named, rest = read(kb, sentence)
            if any(h.id == parent for hits in named for h in hits):
                out.append((owner, states(rest, roots), False))
    return out


def mentioned(
    kb: KnowledgeBase,
    parents: list[str],
    category: str,
    relations: list[str],
    max_rows: int = 200,
    backward: bool = True,
) -> dict[str, list[tuple[str, bool]]]:
    """Parent id → ``(entity, forward)`` for the entities of ``category`` linked to it by texts.

    See the module docstring; ``forward``: the parent's text names it. Forward links come first;
    only relation-stating links are kept when the parent has any.

    Args:
        kb: the knowledge base.
        parents: the nodes to link from.
        category: the layer's entity category.
        relations: the hop's relation names (their roots mark the stating sentences).
        max_rows: most texts read per parent for backward links.
        backward: also link entities whose texts name the parent (False: forward only).
    """
    roots, out = relation_roots(relations), {}
    called = kb.names(list(dict.fromkeys(parents))) if backward and parents else {}  # one read for every name
    for parent in parents:
        pairs = _forward(kb, parent, category, roots)
        if backward:
            pairs += _backward(kb, parent, category, roots, max_rows, called.get(parent, ""))
        kept = [p for p in pairs if p[1]] or pairs
        found = {e: fwd for e, _, fwd in reversed(kept) if e != parent}  # the first link of each wins
        if found:
            out[parent] = [(e, found[e]) for e in dict.fromkeys(e for e, _, _ in kept if e in found)]
    return out
