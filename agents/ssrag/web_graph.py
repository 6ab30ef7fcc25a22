"""SSRAG's graph branch on the web route: a graph built from the web results by the document extractor.

The paper routes every retriever to the chosen source ("the router output would point the
vector, graph, and hybrid retriever to either web snippets ... or the pre-curated corpus",
§III-B) and builds its graph from text: LangChain text splitting, entity extraction, an
entity-relationship graph (§III-D). On the web route the graph branch therefore reads no local
graph; the web results the vector branch fetched go through the same pipeline as documents
ingested into a KB (:mod:`agents.extraction`):

- Documents: each result's content (the text the vector branch ranks; the title is not added)
  is a text document keyed by its URL, split by :func:`kb.documents.chunk_pages` with the
  ingest's splitter and sizes; chunk ids are ``<url>#<n>``.
- Extraction: :func:`agents.extraction.extractor.extract_within`, one structured call per chunk
  with the ingest's prompt and reply schema (constrained decoding on llama.cpp, one retry on an
  unparseable reply), checked by :func:`kb.extract.clean` (names must occur in the chunk).
- Fallback (ours; the paper has none): a chunk with no usable reply (no model for the graph
  branch, an unparseable reply, or past the LLM call cap) is extracted by rule
  (:func:`agents.extraction.rules.rule_extraction`) and goes through the same check, so the
  graph branch still has the results' facts. A parsed reply with no fact is kept as it is.
- Resolution: :func:`kb.resolve.resolve`, with the question's entities as the known ones (a web
  mention of a question entity becomes that entity); every triple keeps its chunks.
- Caps (operator settings, :class:`WebCaps`): pages read, chunks kept, LLM calls.
- Nodes: the facts grouped by entity; the question's entities first, then the others by the
  cosine of their best fact to the question; each fact cites its chunks (``... [<url>#<n>]``),
  so the evidence of a web-graph context points at the page and chunk it came from.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hybridrag.agents.extraction.extractor import extract_within
from hybridrag.agents.extraction.rules import rule_extraction
from hybridrag.agents.ssrag.vectors import vectors
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.documents import CHUNK_OVERLAP, CHUNK_SIZE, Chunk, check_chunking, chunk_pages
from hybridrag.kb.extract import clean
from hybridrag.kb.extract_schema import GraphSchema
from hybridrag.kb.model import Entity
from hybridrag.kb.resolve import resolve

ROLE = "triple_extractor"


@dataclass(frozen=True)
class WebCaps:
    """Bounds of the web graph: pages read, chunks kept (in page order), LLM extraction calls."""

    pages: int = 5
    chunks: int = 10
    calls: int = 10
    chunk_size: int = CHUNK_SIZE
    chunk_overlap: int = CHUNK_OVERLAP

    def __post_init__(self) -> None:
        for name in ("pages", "chunks", "calls"):
            if getattr(self, name) < 0:
                raise ValueError(f"web graph cap {name} must be 0 or more, not {getattr(self, name)}")
        check_chunking(self.chunk_size, self.chunk_overlap)

    @classmethod
    def from_env(cls) -> WebCaps:
        """Caps from ``HYBRIDRAG_WEB_GRAPH_PAGES`` / ``_CHUNKS`` / ``_CALLS`` (defaults when unset)."""
        values = {}
        for name in ("pages", "chunks", "calls"):
            var = f"HYBRIDRAG_WEB_GRAPH_{name.upper()}"
            raw = os.environ.get(var, "").strip()
            if raw:
                try:
                    values[name] = int(raw)
                except ValueError:
                    raise ValueError(f"{var} must be a whole number, not {raw!r}") from None
        return cls(**values)


@dataclass(frozen=True)
class WebFact:
    """A resolved triple of the web graph and the chunks (``<url>#<n>``) it was extracted from."""

    head: str
    relation: str
    tail: str
    chunks: tuple[str, ...]

    @property
    def sentence(self) -> str:
        """The triple as "head relation tail" (the relation's underscores as spaces)."""
        return f"{self.head} {self.relation.replace('_', ' ')} {self.tail}"


def web_chunks(items: Sequence[dict], caps: WebCaps) -> tuple[list[Chunk], list[str]]:
    """The results as chunks (page order), within the caps; and notes on what the caps left out."""
    pages = [it for it in items if (it.get("text") or "").strip()]
    chunks = [
        c
        for n, it in enumerate(pages[: caps.pages])
        for c in chunk_pages(
            it.get("id") or f"web:{n}", "text", [(None, it["text"])], caps.chunk_size, caps.chunk_overlap
        )
    ]
    notes = (
        [f"{len(pages) - caps.pages} pages over the cap of {caps.pages} not read"] if len(pages) > caps.pages else []
    )
    if len(chunks) > caps.chunks:
        notes.append(f"{len(chunks) - caps.chunks} chunks over the cap of {caps.chunks} not read")
    return chunks[: caps.chunks], notes


def extract(
    model, items: Sequence[dict], method: str, entities: Sequence[str] = (), caps: WebCaps | None = None
) -> tuple[list[WebFact], dict, str | None]:
    """The web results' facts with their chunks; returns (facts, usage, note on fallbacks/caps or None).

    ``model`` None extracts every chunk by rule; ``entities`` are the question's entity names.
    """
    caps = caps or WebCaps.from_env()
    chunks, notes = web_chunks(items, caps)
    schema = GraphSchema()
    replies: list = []
    usage: dict = {}
    asked = 0
    if model is not None and chunks:
        replies, usage, asked = extract_within(chunks, model, schema, method, caps.calls, role=ROLE)
    replies += [None] * (len(chunks) - asked)
    unparseable = sum(r is None for r in replies[:asked])
    facts = [
        clean(c, r if r is not None else rule_extraction(c.text), schema) for c, r in zip(chunks, replies, strict=True)
    ]
    if model is not None and unparseable:
        notes.append(f"unparseable extraction of {unparseable} chunks: names of each sentence linked by rule")
    if model is not None and len(chunks) > asked:
        notes.append(f"LLM call cap of {caps.calls} reached: {len(chunks) - asked} chunks extracted by rule")
    dropped = sum((f.dropped for f in facts), Counter())
    if dropped:
        notes.append("left out: " + ", ".join(f"{n} {why}" for why, n in sorted(dropped.items())))
    known = [Entity(name, name) for name in dict.fromkeys(e.strip() for e in entities) if name]
    resolved = resolve(facts, known)
    names = {e.id: e.name for e in [*known, *resolved.entities]}
    found = [
        WebFact(names.get(t.head, t.head), t.type, names.get(t.tail, t.tail), tuple(chunks_of))
        for t, chunks_of in resolved.provenance.items()
    ]
    return found, usage, "; ".join(notes) or None


def web_nodes(
    kb: KnowledgeBase, facts: Sequence[WebFact], entities: list[str], qv: np.ndarray, k: int, max_facts: int
) -> list[dict]:
    """Graph nodes of the web facts: question entities first, then by best fact cosine.

    Each node's facts cite their chunks; ``triples`` holds the uncited ``[head, relation, tail]``
    and ``sources`` the chunk ids of each fact.
    """
    by_node: dict[str, dict[str, WebFact]] = {}
    for f in facts:
        for end in (f.head, f.tail):
            by_node.setdefault(end, {}).setdefault(f.sentence, f)
    if not by_node or k <= 0:
        return []
    sentences = list(dict.fromkeys(s for fs in by_node.values() for s in fs))
    score = dict(zip(sentences, (vectors(kb, sentences) @ qv).tolist(), strict=True))
    asked = {e.lower() for e in entities}
    best = {n: max(score[s] for s in fs) for n, fs in by_node.items()}
    order = sorted(by_node, key=lambda n: (n.lower() not in asked, -best[n]))
    nodes: list[dict] = []
    for name in order[:k]:
        ranked = sorted(by_node[name].items(), key=lambda sf: -score[sf[0]])[:max_facts]
        nodes.append(
            {
                "id": f"web:{name}",
                "name": name,
                "facts": [f"{s} [{', '.join(f.chunks)}]" for s, f in ranked],
                "triples": [[f.head, f.relation.replace("_", " "), f.tail] for _, f in ranked],
                "sources": [list(f.chunks) for _, f in ranked],
                "links": {},
                "hop": 0,
                "prior": None if name.lower() in asked else round(best[name], 4),
            }
        )
    return nodes
