"""HydraRAG's documents (paper §4.2.1, Algorithm 2 lines 8-9): Doc(e), the sentence screening, the documents read.

- Doc(e): the passages attached to a topic entity, and (ours) the passages naming it as a whole
  phrase; a topic name no KB entity aligns to (most of what a KB of documents is about) has the
  passages naming it. The ``doc_pool`` best corpus passages for the query (dense and BM25 fused,
  :func:`tools.fused_text.hybrid_search`) join them (ours).
- Screening: the dense retrieval model keeps the sentences most similar to the skyline indicator.
- The documents read: every gathered document with its best sentence and that sentence's score.
  The evidence lists them after the paths, best screened first (:func:`unread`), so a document
  the exploration read but built no selected path from still ranks among what was retrieved.
"""

from __future__ import annotations

import threading

from hybridrag.agents import vector_table
from hybridrag.agents.hydrarag.pruning import SENTENCE_TABLE, embed_texts
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.fused_text import hybrid_search
from hybridrag.tools.text import name_pattern
from hybridrag.tools.text import sentences as split_sentences

NAMING_PER_POOL = 4  # passages naming a topic: up to 4 x doc_pool
_FOLDED: dict[int, tuple[KnowledgeBase, list]] = {}
_FOLDED_LOCK = threading.Lock()


def sentences(text: str) -> list[str]:
    """The sentences of a text, each at least three characters long.

    An initial or a title ("Albert S. Rogell", "Dr.") ends none, nor does a mark before a lower-case
    word ("Railroaded! was").
    """
    return split_sentences(text, before="not lower", min_chars=3)


def _folded(kb: KnowledgeBase) -> list:
    """(passage, case-folded text) of every passage of ``kb`` (built once per opened KB)."""
    with _FOLDED_LOCK:
        if id(kb) not in _FOLDED or _FOLDED[id(kb)][0] is not kb:
            _FOLDED[id(kb)] = (kb, [(d, d.text.casefold()) for d in kb.docs if d.kind == "passage"])
        return _FOLDED[id(kb)][1]


def naming(kb: KnowledgeBase, name: str, k: int) -> list:
    """Up to ``k`` passages that name ``name`` as a whole phrase (case-insensitive, in KB order)."""
    low = name.casefold().strip()
    if len(low) < 3 or k <= 0:
        return []
    rx = name_pattern(low)  # both sides case-folded
    out = []
    for d, text in _folded(kb):
        if low in text and rx.search(text):
            out.append(d)
            if len(out) == k:
                break
    return out


def gather_docs(
    kb: KnowledgeBase, topic_ids: list[str], query: str, pool: int, topic_names: list[str] | None = None
) -> list[tuple[str, str, str]]:
    """``(id, name, text)`` of the topics' documents and the ``pool`` best corpus passages.

    Doc(e) is the passages attached to e and (ours) up to ``4·pool`` passages naming e as a whole phrase;
    a topic name no KB entity aligns to (``topic_names``) has the passages naming it as its documents,
    when at most ``4·pool`` do (a name more passages write, a year or a country, names no topic).
    """
    own = kb.passages_of(set(topic_ids))
    names = kb.names({d.id for d in own if d.kind != "passage"} | set(topic_ids)) if own or topic_ids else {}
    docs = [d for d in own if d.kind == "passage" or d.text != names[d.id]]
    for name in dict.fromkeys(names[t] for t in topic_ids) if pool > 0 else ():
        docs += naming(kb, name, NAMING_PER_POOL * pool)
    for name in dict.fromkeys(topic_names or []) if pool > 0 else ():
        found = naming(kb, name, NAMING_PER_POOL * pool + 1)
        docs += found if len(found) <= NAMING_PER_POOL * pool else []  # more: a word of many passages ("1999")
    docs += [h.doc for h in hybrid_search(kb, query, pool, "passage")] if pool > 0 else []  # dense + BM25 fused
    owners = {d.entity_id for d in docs if d.entity_id and d.entity_id not in names}
    names.update(kb.names(owners) if owners else {})  # one more read, for the owners of the passages found
    out: dict[str, tuple[str, str, str]] = {}
    for d in docs:
        out.setdefault(d.id, (d.id, names[d.entity_id] if d.entity_id else d.id, d.text))
    return list(out.values())


def build_sentence_table(kb: KnowledgeBase, progress: bool = False) -> int:
    """Encode every sentence of the KB's documents into the vector table; returns the number of sentences.

    The documents are those :func:`gather_docs` can return; the table is the one
    :func:`agents.hydrarag.pruning.embed_texts` reads.
    """
    texts = {s for d in kb.docs if d.kind == "passage" or d.text != kb.name(d.id) for s in sentences(d.text)}
    vector_table.build(kb, SENTENCE_TABLE, texts, progress)
    return len(texts)


def screen(
    kb: KnowledgeBase, docs: list[tuple[str, str, str]], indicator: str, k: int
) -> tuple[list[dict], list[dict]]:
    """The ``k`` sentences most similar to the indicator, and every document with its best sentence.

    Both are ``{"doc_id", "doc_name", "sentence", "score"}`` dicts, best first.
    """
    rows = [(doc_id, name, s) for doc_id, name, text in docs for s in sentences(text)]
    if not rows:
        return [], []
    scores = embed_texts(kb, [s for _, _, s in rows]) @ embed_texts(kb, [indicator])[0]
    order = sorted(range(len(rows)), key=lambda i: -scores[i])
    top: dict[str, dict] = {}
    best: dict[str, dict] = {}
    for i in order:
        row = {"doc_id": rows[i][0], "doc_name": rows[i][1], "sentence": rows[i][2], "score": float(scores[i])}
        if len(top) < k:
            top.setdefault(rows[i][2], row)
        best.setdefault(rows[i][0], row)
    return list(top.values()), list(best.values())


def top_sentences(kb: KnowledgeBase, docs: list[tuple[str, str, str]], indicator: str, k: int) -> list[dict]:
    """The ``k`` sentences most similar to the indicator, with the document they come from."""
    return screen(kb, docs, indicator, k)[0] if k > 0 else []


def read(kb: KnowledgeBase, chains: list[dict], docs_of, k: int, source: str) -> tuple[list[dict], list[dict]]:
    """Each chain's top ``k`` sentences (each sentence once) and the documents read (each once, best score).

    ``docs_of(chain)`` gives a chain's ``(id, name, text)`` documents; a document is tagged with ``source``.
    """
    picked: dict[str, dict] = {}
    documents: dict[str, dict] = {}
    for ch in chains:
        top, best = screen(kb, docs_of(ch), ch["indicator"], k)
        for s in top:
            picked.setdefault(s["sentence"], s)
        for d in best:
            if d["doc_id"] not in documents or d["score"] > documents[d["doc_id"]]["score"]:
                documents[d["doc_id"]] = {**d, "source": source}
    return list(picked.values()), sorted(documents.values(), key=lambda d: -d["score"])


def unread(documents: list[dict], cited: set[str]) -> list[dict]:
    """The documents read that no path in ``cited`` (document ids) was built from, best screened first, each once."""
    best: dict[str, dict] = {}
    for d in documents:
        if d["doc_id"] not in cited and (d["doc_id"] not in best or d["score"] > best[d["doc_id"]]["score"]):
            best[d["doc_id"]] = d
    return sorted(best.values(), key=lambda d: -d["score"])


def as_evidence(d: dict) -> dict:
    """A document read, in the common evidence shape (its best sentence as the text; no path)."""
    return {
        "source": d["source"],
        "id": d["doc_id"],
        "text": d["sentence"],
        "score": round(d["score"], 6),
        "path": None,
    }


def as_ranked(d: dict) -> dict:
    """A document read, as a ranked passage (a web page for web documents)."""
    kind = "web" if d["source"] == "web" else "passage"
    return {
        "id": d["doc_id"],
        "kind": kind,
        "name": d["doc_name"],
        "score": round(d["score"], 6),
        "source": d["source"],
    }
