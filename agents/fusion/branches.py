"""Fusion's two branches and their merge, as the graph's three nodes run them.

:func:`vector_branch` is V_k (or a baseline's seeding) with the seed entities E_seed and, under
'evidence' scoring, the dense and BM25 rankings fused (:mod:`agents.fusion.text_fill`);
:func:`graph_branch` is G_k, the seeded expansion (with the passages naming a seed under
'evidence' scoring); :func:`merge_branches` ranks them by the context's scoring
(:mod:`agents.fusion.scoring`) and reads the answer (:mod:`agents.fusion.answer`). Every
retrieval step goes through the ``step`` runner the caller passes, ``step(name, **args) -> result``
(the steps: :mod:`agents.fusion.tools`), so a user's tool can stand in for any of them.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from hybridrag.agents.fusion.answer import answer
from hybridrag.agents.fusion.context import FusionContext
from hybridrag.agents.fusion.paths import Scored
from hybridrag.agents.fusion.scoring import (
    Candidate,
    fuse,
    fuse_normalised,
    fuse_rrf,
    hits_to_candidates,
    rank_by_evidence,
    seeds_of,
)
from hybridrag.agents.fusion.text_fill import corroborated, reciprocal_rank_fusion
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.lexicon import topics_only
from hybridrag.tools.names import close_spellings, prefer_exact
from hybridrag.tools.retrieval import mention_spans, mentions_in

StepRunner = Callable[..., Any]
"""Runs one retrieval step by name with its arguments and returns the step's result."""


def rows(items: list[Candidate]) -> list[dict]:
    """Candidates as JSON dicts (``asdict`` without its recursive deep copy: the fields are flat)."""
    return [{**vars(c), "path": list(c.path), "facts": list(c.facts)} for c in items]


def candidates(items: list[dict]) -> list[Candidate]:
    """Candidates back from their JSON dicts."""
    return [Candidate(**c) for c in items]


def seeds_for(scoring: str, dense: list[str], named: list[str]) -> list[str]:
    """E_seed under ``scoring``: the dense hits' entities, the question's named entities, or both.

    'paper' seeds from the dense hits alone; 'normalised' and 'rrf' from the dense hits and the
    named entities; 'evidence' from the named entities and only the nearest dense entity, which
    catches a name the exact match misses while further dense hits (mostly namesakes of the topic)
    stay text candidates.
    """
    if scoring == "paper":
        return dense
    return list(dict.fromkeys((dense[:1] if scoring == "evidence" else dense) + named))


_LABELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # KB -> its relation and type names


def kinds_and_relations(kb: KnowledgeBase) -> tuple[str, ...]:
    """The KB's relation and entity type names (its schema, read once per opened KB build)."""
    labels = _LABELS.get(kb)
    if labels is None:
        schema = kb.graph.schema()
        labels = _LABELS[kb] = (*schema.relation_types, *schema.entity_types)
    return labels


def fused_text(kb: KnowledgeBase, ctx: FusionContext, dense: list, lexical: list) -> list[Candidate]:
    """The first ``top_k`` dense and BM25 hits, fused by reciprocal rank, near-duplicates by corroboration."""
    depth = ctx.top_k
    rankings = [hits_to_candidates(kb, dense[:depth], "vector"), hits_to_candidates(kb, lexical[:depth], "bm25")]
    fused = reciprocal_rank_fusion(rankings, ctx.text_rrf_k)
    return corroborated(fused) if ctx.corroborate else fused


def hybrid_text(
    kb: KnowledgeBase, ctx: FusionContext, question: str, named: list[str], step: StepRunner
) -> tuple[list[Candidate], list[Candidate], list[str]]:
    """The hybrid mode's vector branch V_k, its fused text ranking, and its seed entities.

    One dense search serves both: its first ``k1`` hits are the vector branch (candidates and
    seeds), and under 'evidence' scoring its first ``top_k`` are fused with as many BM25 hits
    (:func:`fused_text`).
    """
    fused = ctx.scoring == "evidence" and ctx.top_k > 0
    depth = max(ctx.k1, ctx.top_k) if fused else ctx.k1
    dense = step("dense_search", query=question, k=depth) if depth > 0 else []
    vec = hits_to_candidates(kb, dense[: ctx.k1], "vector")
    seeds = seeds_for(ctx.scoring, prefer_exact(kb, question, seeds_of(vec), named), named)
    if not fused:
        return vec, [], seeds
    lexical = step("lexical_search", query=question, k=ctx.top_k)
    return vec, fused_text(kb, ctx, dense, lexical), seeds


def named_entities(kb: KnowledgeBase, question: str) -> list[str]:
    """The entities the question names: exact mentions, and names written with one typo (:func:`close_spellings`).

    A typo'd span replaces the exact mentions inside it ("A Sumemr by the River" is the film, not "the River").
    """
    typos = close_spellings(kb, question)
    if not typos:
        return mentions_in(kb, question)
    inside = {
        i
        for s, form, ids in mention_spans(kb, question)
        for i in ids
        if any(a <= s and s + len(form) <= b for a, b, _ in typos)
    }
    exact = [i for _, _, ids in mention_spans(kb, question) for i in ids if i not in inside]
    return list(dict.fromkeys([*exact, *(i for _, _, ids in typos for i in ids)]))


def vector_branch(
    kb: KnowledgeBase, ctx: FusionContext, question: str, step: StepRunner
) -> tuple[list[Candidate], list[Candidate], list[str], list[str]]:
    """The text hits of the context's mode, the fused text ranking, the seed entities, and the named entities."""
    found = named_entities(kb, question)  # the entities the question names (entity mapping, Figure 1)
    names = kb.names(found)
    named = topics_only(
        {i: names.get(i, i) for i in found}, kinds_and_relations(kb)
    )  # a cue word ("good", "cast") is no topic
    fill: list[Candidate] = []
    match ctx.mode:
        case "hybrid":
            vec, fill, seeds = hybrid_text(kb, ctx, question, named, step)
        case "vector":
            vec, seeds = hits_to_candidates(kb, step("dense_search", query=question, k=ctx.top_k), "vector"), []
        case "bm25":
            vec, seeds = hits_to_candidates(kb, step("lexical_search", query=question, k=ctx.top_k), "bm25"), []
        case "graph":
            vec, seeds = [], named
        case other:
            raise ValueError(f"unknown fusion mode {other!r}; use hybrid, vector, graph or bm25")
    return vec, fill, seeds, named


def graph_branch(
    kb: KnowledgeBase, ctx: FusionContext, question: str, seeds: list[str], step: StepRunner
) -> tuple[list[Candidate], list[Candidate]]:
    """The entities within ``ctx.hops`` of the seeds, by their Dice path score, and the passages naming a seed.

    The passages are searched under 'evidence' scoring of the hybrid mode only (none otherwise).
    """
    aware = ctx.mode == "hybrid" and ctx.scoring == "evidence"
    text = step("seed_passages", seeds=seeds, k=ctx.seed_passages) if aware and ctx.seed_passages > 0 else []
    scored = step(
        "graph_expand",
        question=question,
        seeds=seeds,
        k=ctx.top_k,
        hops=ctx.hops,
        tokenizer=ctx.tokenizer,
        answer_aware=aware,
    )
    return path_candidates(kb, scored), text


def path_candidates(kb: KnowledgeBase, scored: list[Scored]) -> list[Candidate]:
    """Graph candidates: each entity reached, its path verbalised as its one fact."""
    names = kb.names({e for path, _, _ in scored for t in path for e in (t.head, t.tail)})
    out = []
    for path, s, n in scored:
        steps = [t.verbalise(names) for t in path]
        fact = " / ".join(steps)
        out.append(Candidate(n, "entity", names[n], s, "graph", fact, steps, n, [fact]))
    return out


def merge_branches(
    kb: KnowledgeBase,
    ctx: FusionContext,
    question: str,
    branches: tuple[list[Candidate], list[Candidate], list[Candidate], list[Candidate]],
    seeds: list[str],
    named: set[str],
) -> tuple[str, list[Candidate], str]:
    """Merge the (vector, graph, seed passage, fused text) candidates by the context's scoring.

    Returns:
        The scoring used (the baselines always use 'paper'), the best ``ctx.top_k`` items, and the
        answer (:func:`agents.fusion.answer.answer`; "" when nothing but the question's own entities is returned).
    """
    vec, graph, text, fill = branches
    scoring = ctx.scoring if ctx.mode == "hybrid" else "paper"
    subjects = kb.names([*seeds, *named])
    match scoring:
        case "paper":
            pool = fuse(vec, graph, ctx.epsilon, None)
        case "normalised":
            pool = fuse_normalised(vec, graph, ctx.epsilon, None, named)
        case "rrf":
            pool = fuse_rrf(vec, graph, ctx.epsilon, None, named)
        case _:
            pool = rank_by_evidence(
                kb, [*vec, *text], graph, ctx.epsilon, named, subjects, question, ctx.tokenizer, fill
            )
    top = pool[: ctx.top_k]
    return scoring, top, answer(kb, question, pool, top, named, subjects, ctx.tokenizer)
