"""SSRAG's vectors: one cache of encoded texts, the KB's stored vectors, and facts scored by parts.

The graph branch scores hundreds of facts a question and the joint rerank scores every
context; encoding each of them with the KB's embedding model would cost seconds a question.
This module encodes only what has no vector yet:

- :func:`vectors`: texts through the embedding model, cached per process (``CACHE_SIZE``);
- :func:`query_vector`: one query or question, cached (the same text is asked for by the
  router, both branches and the rerank);
- :func:`doc_vectors`: the vectors the dense index already holds for entity documents and
  passages (exact: the same model, the same text);
- :func:`name_vectors`: an entity's name vector, read from the index when the entity's
  document is its bare name (MetaQA's entity documents), else encoded once;
- :func:`fact_vectors` (``fact_scoring="parts"``, ours): a fact's vector as the normalised
  sum of its parts, the name vectors of the entities it names and the vector of the rest of
  its words (a triple's relation phrase, a sentence with its names cut out), so a fact costs
  a sum of cached vectors; ``"sentence"`` encodes each whole fact sentence (exact
  and slow); :func:`node_vector`: a graph node's vector from its facts.

The contexts of the joint rerank and the dedup are scored from these in
:mod:`agents.ssrag.context_vectors`.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from typing import Any, cast

import numpy as np

from hybridrag.agents import vector_table
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.embeddings import embed_matrix
from hybridrag.kb.text_index import words
from hybridrag.tools.retrieval import mentions_in

CACHE_SIZE = 60_000  # encoded texts kept per process
FACT_SCORING = ("parts", "sentence")
FACT_TABLE = "ssrag-text-facts"  # vector table of the KB's text facts' words without names (agents.vector_table)
FACT_PARTS = "ssrag-text-fact-parts"  # each passage sentence's (entities named, other words), kept with it

_cache: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()
_parts: OrderedDict[tuple[str, str], tuple[list[str], str]] = OrderedDict()
_rows: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_names: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def vectors(kb: KnowledgeBase, texts: list[str]) -> np.ndarray:
    """Normalised vectors of ``texts`` with the KB's embedding model, through the process cache.

    The KB's table of text-fact vectors (:func:`agents.ssrag.nodes.build_fact_table`) is read
    too when it was built.
    """
    if not texts:
        return np.zeros((0, kb.dense.index.d), dtype=np.float32)
    model = kb.embeddings_spec  # vectors are the model's: two KBs of one model share them
    with _cache_lock:
        found: dict[str, np.ndarray | None] = {t: _cache.get((model, t)) for t in set(texts)}
    missing = [t for t in dict.fromkeys(texts) if found[t] is None]
    if missing:  # the KB's text facts from their table (nodes.build_fact_table), the rest encoded
        stored = vector_table.lookup(kb, FACT_TABLE, missing)
        found.update(stored)
        missing = [t for t in missing if t not in stored]
    if missing:
        mat = embed_matrix(kb.embeddings, missing)
        found.update(zip(missing, mat, strict=True))
        with _cache_lock:
            for t, v in zip(missing, mat, strict=True):
                _cache[(model, t)] = v
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return np.stack([cast(np.ndarray, found[t]) for t in texts])


def query_vector(kb: KnowledgeBase, text: str) -> np.ndarray:
    """The vector of one query (cached: several nodes embed the same query)."""
    return vectors(kb, [text])[0]


def _doc_rows(kb: KnowledgeBase) -> dict[tuple[str, str], int]:
    rows = _rows.get(kb)
    if rows is None:
        rows = {(d.kind, d.id): i for i, d in enumerate(kb.docs)}
        _rows[kb] = rows
    return rows


def _stored(kb: KnowledgeBase, rows: list[int]) -> np.ndarray:
    return kb.dense.index.reconstruct_batch(np.asarray(rows, dtype=np.int64)).astype(np.float32)


def doc_vectors(kb: KnowledgeBase, items: list[dict]) -> np.ndarray:
    """Vectors of retrieval items: stored ones for KB documents, encoded ones for the rest.

    An item is a KB document when its ``(kind, id)`` is a row of the dense index and its
    text is that row's text (the vector the index holds is then the text's own vector).
    """
    index, out = _doc_rows(kb), np.zeros((len(items), kb.dense.index.d), dtype=np.float32)
    stored: list[tuple[int, Any]] = []
    encode: list[tuple[int, Any]] = []
    for n, it in enumerate(items):
        row = index.get((it["kind"], it["id"]))
        same = row is not None and kb.docs[row].text == it["text"]
        (stored if same else encode).append((n, row))
    if stored:
        out[[n for n, _ in stored]] = _stored(kb, [r for _, r in stored])
    if encode:
        out[[n for n, _ in encode]] = vectors(kb, [items[n]["text"] or items[n]["name"] for n, _ in encode])
    return out


def _name_rows(kb: KnowledgeBase, entities: list[str]) -> list[tuple[int | None, str]]:
    """Per entity: (index row of its document when that document is its bare name, else None; its name).

    Cached per KB; the names not cached yet are read with one ``names`` call (on a graph server, its
    own: the names the graph branch's reads brought along are not read again, the rest as key and name).
    """
    table = _names.get(kb)
    if table is None or len(table) > CACHE_SIZE:
        table = _names[kb] = {}
    missing = [e for e in dict.fromkeys(entities) if e not in table]
    if missing:
        rows = _doc_rows(kb)
        reader = getattr(kb.graph, "names", None)  # unknown ids keep themselves as names, as kb.names gives
        found = kb.names(missing) if reader is None else {e: e for e in missing} | reader(missing)
        for e, name in found.items():
            row = rows.get(("entity", e))
            table[e] = (row if row is not None and kb.docs[row].text == name else None, name)
    return [table[e] for e in entities]


def name_vectors(kb: KnowledgeBase, names: list[str]) -> np.ndarray:
    """Name vectors of entity ids (or of plain names).

    The stored vector of an entity document that is its bare name, else the name encoded (cached).
    """
    out = np.zeros((len(names), kb.dense.index.d), dtype=np.float32)
    stored, encode = [], []
    for n, (row, name) in enumerate(_name_rows(kb, names)):
        if row is not None:
            stored.append((n, row))
        else:
            encode.append((n, name))
    if stored:
        out[[n for n, _ in stored]] = _stored(kb, [r for _, r in stored])
    if encode:
        out[[n for n, _ in encode]] = vectors(kb, [t for _, t in encode])
    return out


def _normalise(mat: np.ndarray) -> np.ndarray:
    return mat / np.maximum(np.linalg.norm(mat, axis=-1, keepdims=True), 1e-12)


def _rest(kb: KnowledgeBase, sentence: str, ids: list[str]) -> str:
    """The words of ``sentence`` that are not the names of ``ids``, lower-cased.

    The KB's embedding models here are uncased; a cased model sees a lower-cased relation phrase.
    """
    out = f" {' '.join(words(sentence))} "
    for name in sorted({" ".join(words(n)) for n in (kb.names(ids).values() if ids else ())}, key=len, reverse=True):
        if name:
            out = out.replace(f" {name} ", " ")
    return " ".join(out.split()) or sentence.lower()


def fact_parts(kb: KnowledgeBase, fact: str, row: list[str] | None) -> tuple[list[str], str]:
    """A fact's parts: ``(entities named, the rest of the words)``.

    A triple ``[head, relation, tail]`` gives its ends and its relation phrase, a text sentence its
    KB mentions and the rest (cached per process: the same passages' sentences come back across
    nodes and questions).
    """
    if row is not None:
        return [row[0], row[2]], row[1].replace("_", " ")
    key = (str(kb.build_dir), fact)  # mentions are the KB build's
    with _cache_lock:
        found = _parts.get(key)
    if found is None:
        kept = (vector_table.load_json(kb, FACT_PARTS) or {}).get(fact)  # parsed when the table was built
        ids = kept[0] if kept else mentions_in(kb, fact)
        found = (ids, kept[1] if kept else _rest(kb, fact, ids))
        with _cache_lock:
            _parts[key] = found
            while len(_parts) > CACHE_SIZE:
                _parts.popitem(last=False)
    return list(found[0]), found[1]


def fact_vectors(
    kb: KnowledgeBase, facts: list[str], rows: list[list[str] | None], scoring: str = "parts"
) -> np.ndarray:
    """Normalised vectors of facts (see the module docstring for ``scoring``)."""
    if scoring not in FACT_SCORING:
        raise ValueError(f"fact_scoring must be one of {FACT_SCORING}, not {scoring!r}")
    if scoring == "sentence" or not facts:
        return vectors(kb, facts)
    parts = [fact_parts(kb, f, r) for f, r in zip(facts, rows, strict=True)]
    ends = list(dict.fromkeys(e for ids, _ in parts for e in ids))
    at = {e: i for i, e in enumerate(ends)}
    names = np.vstack([name_vectors(kb, ends), np.zeros((1, kb.dense.index.d), dtype=np.float32)])
    summed = vectors(kb, [rest for _, rest in parts]).copy()
    width = max((len(ids) for ids, _ in parts), default=0)
    pick = np.full((len(parts), width), len(ends), dtype=np.int64)  # the zero row where a fact names fewer
    for n, (ids, _) in enumerate(parts):
        pick[n, : len(ids)] = [at[e] for e in ids]
    for j in range(width):  # the names added one position at a time, in order (the same float sums)
        summed += names[pick[:, j]]
    return _normalise(summed)


def node_vector(kb: KnowledgeBase, node: dict, scoring: str = "parts") -> np.ndarray | None:
    """A graph node's vector from its facts (their normalised mean); None for a node without facts."""
    if not node.get("facts"):
        return None
    rows = node.get("triples") or [None] * len(node["facts"])
    return _normalise(fact_vectors(kb, node["facts"], rows, scoring).mean(axis=0))
