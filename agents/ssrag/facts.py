"""SSRAG graph branch, reading: a node's facts from the KB (KG triples and, ours, text facts).

A node's knowledge is its facts as "subject relation object" sentences: the KG triples that
touch it and, with ``text_edges`` (ours; the paper builds its graph from documents, so a fact
held only in text is still a relation), the sentences of passages about it or naming it
(:func:`text_facts`). A node's first ``FACT_POOL`` triples and their sentences are cached per
KB and process (hubs recur; a node's pool is the same, in the same order, on every backend, :func:`pool_of`);
:func:`prefetch` reads those of many nodes with one ``neighbors`` call and one ``names`` call
(:func:`split_by_node` gives each node its share, in the order a one-node read gives); on a graph
server with one ``node_pools`` request (a hub's pool cut on the server) whose answer also brings
the names along (:mod:`kb.graph_pools`).
Choosing and scoring the nodes is :mod:`agents.ssrag.nodes`.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from hybridrag.agents import vector_table
from hybridrag.agents.ssrag.vectors import FACT_PARTS, FACT_TABLE, fact_parts
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.model import Triple
from hybridrag.tools.text import name_pattern, sentences

FACT_POOL = 500  # KG facts of one kept node scored for relevance (bounds the work on hub nodes)
TEXT_HITS = 20  # passages naming a kept node, from BM25
TEXT_POOL = 400  # BM25 passages read to find them (the name's words also match entity documents and
# passages naming other people: "Frank Albertson" is the 9th passage hit, after films titled "Frank...")
NODE_CACHE = 4_000  # per KB and process: nodes' first FACT_POOL triples and text facts (hubs recur)

_about: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_memo_lock = threading.Lock()


def _memoised(kb: KnowledgeBase, key: tuple, compute: Callable[[], list]) -> list:
    """``compute()`` once per KB and key while it stays among the last ``NODE_CACHE`` keys."""
    with _memo_lock:
        cache = _memo.setdefault(kb, OrderedDict())
        found = cache.get(key)
    if found is None:
        found = compute()
        with _memo_lock:
            cache[key] = found
            while len(cache) > NODE_CACHE:
                cache.popitem(last=False)
    return found


def _remember(kb: KnowledgeBase, key: tuple, value: list) -> None:
    with _memo_lock:
        cache = _memo.setdefault(kb, OrderedDict())
        cache[key] = value
        while len(cache) > NODE_CACHE:
            cache.popitem(last=False)


def _uncached(kb: KnowledgeBase, kind: str, nodes: list[str]) -> list[str]:
    with _memo_lock:
        cache = _memo.get(kb, {})
        return [n for n in dict.fromkeys(nodes) if (kind, n) not in cache]


def split_by_node(triples: list[Triple], nodes: list[str]) -> dict[str, list[Triple]]:
    """Each node's share of one ``neighbors(nodes)`` answer, as ``neighbors([node])`` lists it.

    A store answers for each asked node in turn, so an edge between two asked nodes comes once per end
    (its first copy belongs to the end asked first) and a self-loop's copies all belong to its node; a
    store that sends such an edge once gives it to both ends.
    """
    rank = {n: i for i, n in enumerate(dict.fromkeys(nodes))}
    copies: dict[Triple, int] = {}
    for t in triples:
        copies[t] = copies.get(t, 0) + 1
    seen: dict[Triple, int] = {}
    out: dict[str, list[Triple]] = {n: [] for n in rank}
    for t in triples:
        ends = [e for e in dict.fromkeys((t.head, t.tail)) if e in rank]
        if len(ends) == 2 and copies[t] >= 2:
            ends.sort(key=rank.__getitem__)
            ends = [ends[min(seen.get(t, 0), 1)]]
            seen[t] = seen.get(t, 0) + 1
        for e in ends:
            out[e].append(t)
    return out


def prefetch(kb: KnowledgeBase, nodes: list[str]) -> dict[str, str]:
    """Cache the triples of ``nodes`` (one ``neighbors`` read) and their sentences (one ``names`` read).

    Returns:
        The nodes' own names, by id (the ``names`` read gives them).
    """
    missing = _uncached(kb, "triples", nodes)
    if missing:
        pools = getattr(kb.graph, "node_pools", None)  # a graph server: one request, a hub's pool cut there
        read = pools(missing, FACT_POOL) if pools is not None else split_by_node(kb.graph.neighbors(missing), missing)
        for n in missing:
            _remember(kb, ("triples", n), pool_of(read.get(n, [])))
    missing = _uncached(kb, "sentences", nodes)
    per = {n: _node_triples(kb, n) for n in missing}
    wanted = {e for ts in per.values() for t in ts for e in (t.head, t.tail)} | set(nodes)
    reader = getattr(kb.graph, "names", None)  # a graph server: names its reads brought along are not read again
    names = kb.names(wanted) if reader is None else {i: i for i in wanted} | reader(wanted)
    for n, ts in per.items():
        _remember(kb, ("sentences", n), [_sentence(t, names) for t in ts])
    return names


def _node_triples(kb: KnowledgeBase, node: str) -> list[Triple]:
    """The ``FACT_POOL`` triples of ``node`` that :func:`pool_of` keeps."""
    return _memoised(kb, ("triples", node), lambda: pool_of(kb.graph.neighbors([node])))


def pool_of(triples: list[Triple]) -> list[Triple]:
    """A node's first ``FACT_POOL`` triples by (relation, head, tail): all of them, sorted, below that.

    Stores list a node's edges in different orders (the in-memory store by ingest order, a Cypher
    server by its own), and neither the pool of a hub nor the order its facts are scored in (ties keep
    it) may depend on the backend.
    """
    return sorted(triples, key=lambda t: (t.type, t.head, t.tail))[:FACT_POOL]


def _node_sentences(kb: KnowledgeBase, node: str) -> list[str]:
    """:func:`sentence` of each of :func:`_node_triples` (cached with them: hubs recur)."""
    return _memoised(kb, ("sentences", node), lambda: [sentence(kb, t) for t in _node_triples(kb, node)])


def _sentence(t: Triple, names: dict[str, str]) -> str:
    return f"{names[t.head]} {t.type.replace('_', ' ')} {names[t.tail]}"


def sentence(kb: KnowledgeBase, t: Triple) -> str:
    """A triple as "subject relation object" (underscores as spaces)."""
    return f"{kb.name(t.head)} {t.type.replace('_', ' ')} {kb.name(t.tail)}"


def _passages_about(kb: KnowledgeBase) -> dict[str, list[str]]:
    return _passage_tables(kb)[0]


def _passage_tables(kb: KnowledgeBase) -> tuple[dict[str, list[str]], np.ndarray]:
    """(passage texts by the entity they are about, which index rows are passages), once per KB."""
    found = _about.get(kb)
    if found is None:
        index: dict[str, list[str]] = {}
        for d in kb.docs:
            if d.kind == "passage" and d.entity_id:
                index.setdefault(d.entity_id, []).append(d.text)
        found = _about[kb] = (index, np.array([d.kind == "passage" for d in kb.docs], dtype=bool))
    return found


def _naming_passages(kb: KnowledgeBase, node: str, name: str, names: re.Pattern) -> list[str]:
    """The first ``TEXT_HITS`` of the ``TEXT_POOL`` best BM25 passages for ``name`` that name it, not about ``node``.

    What ``kb.lexical_search(name, TEXT_POOL, kind="passage")`` filtered gives, read from the
    index's rows directly and stopped at ``TEXT_HITS``.
    """
    bm25 = getattr(kb, "bm25", None)
    if bm25 is None:  # another KB implementation: its own search
        hits = (h.doc for h in kb.lexical_search(name, TEXT_POOL, kind="passage"))
    else:
        ids, _ = bm25.search(name, max(4 * TEXT_POOL, 50))
        hits = (kb.docs[int(i)] for i in ids[_passage_tables(kb)[1][ids]][:TEXT_POOL])
    out: list[str] = []
    low = name.lower() if name.isascii() else None  # ASCII: a case-insensitive match is a lower-case substring
    for d in hits:
        if low is not None and d.text.isascii() and low not in d.text.lower():
            continue
        if d.entity_id != node and names.search(d.text):
            out.append(d.text)
            if len(out) == TEXT_HITS:
                break
    return out


def text_facts(kb: KnowledgeBase, node: str, search: bool, name: str | None = None) -> list[str]:
    """Sentences of passages about ``node``, and (``search``) of passages naming it (BM25).

    ``name`` is the node's display name when the caller has read it already.
    """
    return list(_memoised(kb, ("text", node, search), lambda: _text_facts(kb, node, search, name)))


def _text_facts(kb: KnowledgeBase, node: str, search: bool, name: str | None = None) -> list[str]:
    name = kb.name(node) if name is None else name
    if not name:
        return []
    names = name_pattern(name)  # the texts naming the node
    texts = list(_passages_about(kb).get(node, []))
    if search and _passages_about(kb):  # a KB without passages has no text naming the node
        texts += _naming_passages(kb, node, name, names)
    out = [s for t in texts for s in passage_sentences(t)]
    return list(dict.fromkeys(s for s in out if s and names.search(s)))


def passage_sentences(text: str) -> list[str]:
    """A passage's sentences as text facts (an initial or a title ends none; no final period)."""
    return [s.rstrip(".") for s in sentences(text)]


def build_fact_table(kb: KnowledgeBase, progress: bool = False) -> int:
    """Encode the parts of every passage sentence into the vector table :func:`agents.ssrag.vectors.vectors` reads.

    The parts are :func:`agents.ssrag.vectors.fact_parts`' (the words without the entity names);
    each sentence's parts are kept for :func:`~agents.ssrag.vectors.fact_parts`.

    Returns:
        How many distinct texts were encoded.
    """
    parts = {s: fact_parts(kb, s, None) for d in kb.docs if d.kind == "passage" for s in passage_sentences(d.text) if s}
    rests = {rest for _, rest in parts.values()}
    vector_table.build(kb, FACT_TABLE, rests, progress)
    vector_table.save_json(kb, FACT_PARTS, {s: [ids, rest] for s, (ids, rest) in parts.items()})
    return len(rests)


def facts_of(
    kb: KnowledgeBase, node: str, pool: int, text_edges: bool, search: bool, name: str | None = None
) -> tuple[list[str], list[list[str] | None]]:
    """A node's first ``pool`` KG facts and, with ``text_edges``, its text facts not among them.

    Returns:
        The fact sentences, and each one's ``[head, relation, tail]`` (None for a text fact).
    """
    triples = _node_triples(kb, node)[:pool]
    facts = _node_sentences(kb, node)[:pool]
    rows: list[list[str] | None] = [[t.head, t.type, t.tail] for t in triples]
    if text_edges:
        known = set(facts)
        extra = [s for s in text_facts(kb, node, search, name) if s not in known]
        facts, rows = facts + extra, rows + [None] * len(extra)
    return facts, rows
