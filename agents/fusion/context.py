"""Fusion's settings (the LangGraph ``context_schema`` of :mod:`graphs.fusion`) and its fixed choices.

Paper defaults except ``scoring``. Each choice field is annotated with its ``Literal`` (the JSON
schema lists the values as an enum, Studio offers them); :func:`check` refuses an unknown value, a
depth or passage count out of range, and a ``tools`` override that is not one of fusion's steps
(:mod:`agents.fusion.tools`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from hybridrag.agents.context import Context, setting
from hybridrag.agents.fusion.paths import MAX_HOPS
from hybridrag.agents.fusion.tools import STEPS
from hybridrag.tools.dice import Tokenizer
from hybridrag.tools.steps import check_overrides

Mode = Literal["hybrid", "vector", "graph", "bm25"]
Scoring = Literal["evidence", "paper", "normalised", "rrf"]
MAX_SEED_PASSAGES = 1000
MAX_RRF_K = 1000


@dataclass(kw_only=True)
class FusionContext(Context):
    """Settings of the fusion method (defaults from the paper, except ``scoring``)."""

    mode: Mode = setting("hybrid", "hybrid (the method), or a baseline: vector, graph, bm25.")
    k1: int = setting(
        3,
        "K1: top dense hits kept as candidates and used as seeds (the paper gives no value; 3 was best "
        "of 2/3/5/10 on 300 MetaQA-hybrid-50 dev questions, see docs/benchmarks.md). Under 'evidence' "
        "scoring only the first seeds the graph, beside the entities the question names.",
    )
    epsilon: float = setting(1e-6, "ε bias in favour of graph results on ties.")
    tokenizer: Tokenizer = setting("bigram", "Dice token sets: 'bigram' (character bigrams, as APOC) or 'word'.")
    scoring: Scoring = setting(
        "evidence",
        "How the hybrid mode ranks (the baselines always keep the paper's scores). 'evidence' (default): "
        "seeds are the entities the question names plus the nearest dense hit's; each item is scored by "
        "the fact backing it on one Dice scale (a graph item by the mean Dice of its seed and of its relation "
        "label with the neighbour's type, plus a bonus when the question uses an everyday word for the relation; "
        "a text hit by its best sentence about a seed, the entities the sentence "
        "names standing as their types); hits stating no fact follow; the question's own "
        "entities come last. 'paper': the paper's Eq. 3-4 verbatim (dense seeds, cosine vs mean Dice of "
        "seed, relation, neighbour, +ε, dedupe by max). 'normalised': paper scores over each branch's best. "
        "'rrf': reciprocal-rank fusion. 'normalised' and 'rrf' use both seed sources and put the question's "
        "own entities last. Chosen on MetaQA dev, see docs/benchmarks_fusion.md.",
    )
    seed_passages: int = setting(
        200,
        "'evidence' scoring: passages naming each seed, at most this many from a lexical search of its "
        f"name (the text side of the seeded expansion), 0 to {MAX_SEED_PASSAGES}; 0 turns it off. 200 was best of "
        "0/50/100/200 on MetaQA dev (tune part), see docs/benchmarks_fusion.md.",
    )
    text_rrf_k: int = setting(
        0,
        "'evidence' scoring: the constant c of the reciprocal-rank fusion (Σ 1 / (c + rank)) of the dense and "
        f"BM25 rankings, each top_k deep, that fills top_k after the fact-backed items; 0 to {MAX_RRF_K}. "
        "0 had the best mean supporting-document recall@2/5/10 of 0/1/5/10/20/60 on AdvHotpotQA dev, see "
        "docs/benchmarks_realdata.md.",
    )
    corroborate: bool = setting(
        True,
        "'evidence' scoring: among near-duplicate passages of the fused text ranking, put first the one whose own "
        "words the other fused items also state (a doctored or outdated copy ranks below the text it imitates).",
    )
    hops: int = setting(
        1,
        f"Graph expansion depth, 1 to {MAX_HOPS}. 1 is the paper's one-hop expansion; 2-3 reach each "
        "entity once by its best path (for multi-hop questions; worse on one-hop questions).",
    )


CHOICES = {"mode": Mode, "tokenizer": Tokenizer, "scoring": Scoring}  # each choice field and its Literal


def check(ctx: FusionContext) -> FusionContext:
    """Refuse unknown choices, out-of-range settings and overrides of steps fusion does not have; returns ``ctx``.

    Raises:
        ValueError: a choice, ``hops``, ``seed_passages`` or ``text_rrf_k`` out of range, or a ``tools``
            override naming no step of fusion or that is not a LangChain tool (a ``StepError``).
    """
    for name, choice in CHOICES.items():
        if getattr(ctx, name) not in get_args(choice):
            raise ValueError(f"unknown fusion {name} {getattr(ctx, name)!r}; use {', '.join(get_args(choice))}")
    if not 1 <= ctx.hops <= MAX_HOPS:
        raise ValueError(f"fusion hops must be between 1 and {MAX_HOPS}, got {ctx.hops}")
    if not 0 <= ctx.seed_passages <= MAX_SEED_PASSAGES:
        raise ValueError(f"fusion seed_passages must be between 0 and {MAX_SEED_PASSAGES}, got {ctx.seed_passages}")
    if not 0 <= ctx.text_rrf_k <= MAX_RRF_K:
        raise ValueError(f"fusion text_rrf_k must be between 0 and {MAX_RRF_K}, got {ctx.text_rrf_k}")
    check_overrides("fusion", ctx.tools, STEPS)
    return ctx
