"""The fusion method's ranking (no LLM): candidates of both branches, how they merge, the answer.

Scoring choices (``FusionContext.scoring``):

- ``paper``: Eq. 4 verbatim. The union of both branches; text hits keep their cosine, graph
  items their s_graph (Eq. 3) + ε; an item found by both keeps the higher score.
- ``normalised``: the paper's scores divided by the best score of their branch, so each
  branch's top item scores 1 (ε still favours the graph); the question's own entities last.
- ``rrf``: reciprocal-rank fusion, Σ 1 / (60 + rank) over the branches; the question's own
  entities last.
- ``evidence`` (default): every item is scored by the fact that backs it as an answer, on one
  Dice scale. A graph item by its answer-aware path score (:mod:`agents.fusion.paths`: seed,
  relation and the neighbour's type); a text hit (dense, or a passage naming a seed) by the best
  fact its sentences state about a seed, the entities a sentence names standing as their types
  (:func:`agents.fusion.facts.sentence_facts`). Items no fact backs follow: the fused dense + BM25
  ranking (:mod:`agents.fusion.text_fill`), then other hits in the order found; the entities the
  question names come last.

Whatever the scoring, an item found by both branches carries the facts of both copies, and
the answer is taken from the first fact-backed item that is not one of the question's entities
(:mod:`agents.fusion.answer` reads a span of the top passages when none is).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field, replace

from hybridrag.agents.fusion.facts import sentence_facts
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.dice import Tokenizer
from hybridrag.tools.items import Item
from hybridrag.tools.retrieval import mentions_in
from hybridrag.tools.text import name_pattern

RRF_K = 60  # the constant of Cormack et al. (2009)


@dataclass
class Candidate(Item):
    """One ranked fusion item, with the branch that scored it (``source``).

    ``path`` is a graph item's path (one verbalised triple a step), ``entity_id`` the entity a text is about, and
    ``facts`` the verbalised paths or text sentences backing the item as an answer.
    """

    path: list[str] = field(default_factory=list)
    entity_id: str | None = None
    facts: list[str] = field(default_factory=list)

    def as_ranked(self) -> dict:
        """The common ``ranked`` entry, its source in the output vocabulary (graph → kg, a text branch → doc)."""
        return {**super().as_ranked(), "source": "kg" if self.source == "graph" else "doc"}

    def as_evidence(self) -> dict:
        """The common ``evidence`` entry (the path is the item's best fact when it has no own path)."""
        src = "kg" if self.source == "graph" else "doc"
        return {
            "source": src,
            "id": self.id,
            "text": self.text or self.name,
            "score": self.score,
            "path": self.path or self.facts[:1],
        }


def hits_to_candidates(kb: KnowledgeBase, hits, source: str) -> list[Candidate]:
    """Turn text-search hits into candidates (entity documents → entities, passages stay passages)."""
    out = []
    for h in hits:
        d = h.doc
        if d.kind == "entity":
            name = kb.name(d.id)
        else:
            name = f"passage about {kb.name(d.entity_id)}" if d.entity_id else _snippet(d.text)
        out.append(Candidate(d.id, d.kind, name, float(h.score), source, d.text, [], d.entity_id))
    return out


def _snippet(text: str, words: int = 8) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def seeds_of(candidates: list[Candidate]) -> list[str]:
    """E_seed: entities of the vector branch (a passage seeds the entity it is about)."""
    return list(dict.fromkeys(c.entity_id for c in candidates if c.entity_id))


def seeded_passages(kb: KnowledgeBase, seeds: list[str], per_seed: int) -> list[Candidate]:
    """Passages naming a seed: the text side of the seeded expansion (like Figure 2's MATCH).

    Up to ``per_seed`` hits of a lexical search for each seed's name, kept when the name occurs
    as a whole phrase (the search only bounds the work of finding every such passage). A KB
    without passages (entity documents only, e.g. the full MetaQA KB) has none: no search is run.
    """
    out: list[Candidate] = []
    if per_seed <= 0 or not has_passages(kb):
        return out
    for seed in dict.fromkeys(seeds):
        name = kb.name(seed)
        if not name.strip():
            continue
        pattern = name_pattern(name.strip())
        hits = [h for h in kb.lexical_search(name, per_seed) if h.doc.kind != "entity" and pattern.search(h.doc.text)]
        out += hits_to_candidates(kb, hits, "text")
    return out


_PASSAGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # KB -> whether it holds a passage


def has_passages(kb: KnowledgeBase) -> bool:
    """Whether the KB's text index holds any passage (a document that is not an entity's).

    Counted once per opened KB build.
    """
    found = _PASSAGES.get(kb)
    if found is None:
        found = _PASSAGES[kb] = any(d.kind != "entity" for d in kb.docs)
    return found


def merge(items: list[Candidate]) -> list[Candidate]:
    """Dedupe by id: the higher score wins (the first seen on a tie) and keeps both copies' facts."""
    best: dict[str, Candidate] = {}
    for c in items:
        old = best.get(c.id)
        if old is None:
            best[c.id] = c
            continue
        keep, other = (c, old) if c.score > old.score else (old, c)
        best[c.id] = replace(keep, facts=list(dict.fromkeys([*keep.facts, *other.facts])))
    return list(best.values())


def _named_last(items: list[Candidate], named: set[str]) -> list[Candidate]:
    return [c for c in items if c.id not in named] + [c for c in items if c.id in named]


def _order(items: list[Candidate], named: set[str] | None = None) -> list[Candidate]:
    """By score, graph first on a tie; entities the question names after everything else."""
    return _named_last(sorted(items, key=lambda c: (-c.score, c.source != "graph")), named or set())


def _biased(items: list[Candidate], epsilon: float) -> list[Candidate]:
    return [replace(c, score=c.score + epsilon) for c in items]


def fuse(vector: list[Candidate], graph: list[Candidate], epsilon: float, k: int | None) -> list[Candidate]:
    """The paper's R = V ∪ G with s_final = s_graph + ε for graph items; dedupe keeping the max."""
    return _order(merge([*vector, *_biased(graph, epsilon)]))[:k]


def fuse_normalised(vector, graph, epsilon: float, k: int | None, named: set[str]) -> list[Candidate]:
    """Each branch's scores over its best score (the question's entities excluded from that best)."""

    def scaled(items: list[Candidate]) -> list[Candidate]:
        top = max((c.score for c in items if c.id not in named), default=0.0) or 1.0
        return [replace(c, score=c.score / top) for c in items]

    return _order(merge([*scaled(vector), *_biased(scaled(graph), epsilon)]), named)[:k]


def fuse_rrf(vector, graph, epsilon: float, k: int | None, named: set[str]) -> list[Candidate]:
    """Reciprocal-rank fusion of the two branches, ranks counted without the question's entities."""
    total: dict[str, float] = {}
    for branch, bias in ((vector, 0.0), (graph, epsilon)):
        ranked = [c for c in _order(merge(branch)) if c.id not in named]
        for rank, c in enumerate(ranked, 1):
            total[c.id] = total.get(c.id, 0.0) + 1.0 / (RRF_K + rank) + bias
    items = [replace(c, score=total.get(c.id, 0.0)) for c in merge([*vector, *graph])]
    return _order(items, named)[:k]


def rank_by_evidence(
    kb: KnowledgeBase,
    text: list[Candidate],
    graph: list[Candidate],
    epsilon: float,
    named: set[str],
    subjects: dict[str, str],
    question: str,
    tokenizer: Tokenizer = "bigram",
    fill: list[Candidate] | None = None,
) -> list[Candidate]:
    """Fact-backed items by fact score, then ``fill``, then other hits stating no fact, then the question's entities.

    ``fill`` is the fused text ranking (:mod:`agents.fusion.text_fill`); an item of it that a fact backs
    keeps its place among the fact-backed ones.
    """
    stated, bare = [], []
    for c in merge(text):
        about = kb.name(c.entity_id) if c.entity_id and c.kind != "entity" else ""
        facts = sentence_facts(kb, question, c.text, subjects, tokenizer, about)
        if facts:
            stated.append(replace(c, score=facts[0].score, facts=[f.sentence for f in facts[:3]]))
        else:
            bare.append(c)
    backed = _order(merge([*_biased(graph, epsilon), *stated]))
    have, rest = {c.id for c in backed}, []
    for c in [*(fill or []), *bare]:
        if c.id not in have:
            have.add(c.id)
            rest.append(c)
    return _named_last(backed + rest, named)


def answer_of(
    kb: KnowledgeBase,
    question: str,
    ranked: list[Candidate],
    named: set[str],
    subjects: dict[str, str],
    tokenizer: Tokenizer = "bigram",
) -> str:
    """The first fact-backed item's answer that is not one of the question's own entities.

    An entity answers with its name; a passage (scored or not) with the entity its best fact
    about a subject names besides the question's entities (the longest such mention). A bare
    entity name is no answer; nothing fact-backed gives no answer ("").
    """

    def own(entity_id: str, name: str) -> bool:
        return entity_id in named or bool(name.strip()) and name_pattern(name.strip()).search(question) is not None

    for c in ranked:
        if c.kind == "entity":
            if c.facts and not own(c.id, c.name):
                return c.name
            continue
        about = kb.name(c.entity_id) if c.entity_id else ""
        facts = c.facts or [f.sentence for f in sentence_facts(kb, question, c.text, subjects, tokenizer, about)[:1]]
        names = [n for i in mentions_in(kb, facts[0]) if not own(i, n := kb.name(i))] if facts else []
        if names:
            return max(names, key=lambda n: len(n.split()))
    return ""
