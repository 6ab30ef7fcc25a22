"""The client settings a server allows: one :class:`Rule` per Context field in :data:`RULES`.

Default deny: a Context field without a rule here is server-only (app/policy.py refuses it).
Adding a client choice is one line in :data:`RULES` (e.g. ``"scoring": choice("dice",
"cosine")``). A numeric bound is a number or the name of an operator limit
(``app.server_config.LIMITS``: ``max_top_k``, ``max_iterations``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """How a client may set one field: kind, numeric bounds (a number or a LIMITS name), choices."""

    kind: str  # kb | model | int | float | bool | choice | subset
    lo: float = 0
    hi: float | str = 0
    choices: tuple[str, ...] = ()


def count(hi: float | str, lo: int = 1) -> Rule:
    """An integer in ``lo..hi``."""
    return Rule("int", lo, hi)


def ratio(lo: float = 0.0, hi: float = 1.0) -> Rule:
    """A finite number in ``lo..hi``."""
    return Rule("float", lo, hi)


def choice(*values: str) -> Rule:
    """One of ``values``."""
    return Rule("choice", choices=values)


def subset(*values: str) -> Rule:
    """A comma-separated, non-empty subset of ``values``."""
    return Rule("subset", choices=values)


FLAG = Rule("bool")
STRUCTURED = choice("function_calling", "json_schema", "json_mode")

RULES: dict[str, Rule] = {
    # every method
    "kb": Rule("kb"),
    "llm": Rule("model"),
    "top_k": count("max_top_k"),
    "max_iterations": count("max_iterations"),
    "structured_method": STRUCTURED,
    "answer": FLAG,
    "approve": FLAG,
    "spelling": FLAG,
    # fusion
    "mode": choice("hybrid", "vector", "graph", "bm25"),
    "k1": count("max_top_k"),
    "epsilon": ratio(),
    "tokenizer": choice("bigram", "word"),
    "scoring": choice("evidence", "paper", "normalised", "rrf"),
    "hops": count(3),
    "seed_passages": count(1000, lo=0),
    "text_rrf_k": count(1000, lo=0),
    "corroborate": FLAG,
    # hybgrag
    "radius": count(3, lo=0),
    "num_references": count(10),
    "num_few_shot": count(20, lo=0),
    "small_model_few_shot": count(20, lo=0),
    "validator_examples": count(10, lo=0),
    "examples": choice("kb", "bundled", "none"),
    "num_experiences": count(50, lo=0),
    "commentor": choice("llm", "rules"),
    "judge": choice("auto", "llm", "rules"),  # who judges; small-model rules (hybgrag, hydrarag, ssrag)
    "text_hops": FLAG,
    # mor
    "planner": choice("paths", "triplets"),
    "max_hops": count(5),
    "ranking": choice("graph_first", "paper"),
    "retrieval": choice("mixed", "structural", "textual"),
    "text_matcher": choice("bm25", "dense"),
    "seed_k": count("max_top_k"),
    "layer_k": count("max_top_k"),
    "layer_match": choice("always", "restricted"),
    "max_frontier": count(10000),
    "num_candidates": count(500),
    "fill_with_text": FLAG,
    "reranker": choice("neural", "structure", "none"),
    "fingerprint_length": count(5),
    "reranker_features": subset("tf", "sf", "ti"),
    # hydrarag
    "max_depth": count(5),
    "max_width": count(10),
    "beam_width": count(200),
    "cross_width": count(50),
    "lambda_sem": ratio(),
    "alpha_cross": ratio(),
    "rho_kg": ratio(),
    "rho_docs": ratio(),
    "rho_web": ratio(),
    "alpha_source": ratio(),
    "alpha_agreement": ratio(),
    "alpha_alignment": ratio(),
    "gamma": ratio(),
    "link_threshold": ratio(),
    "num_sentences": count(10),
    "doc_pool": count(20, lo=0),
    "web_results": count(10),
    "source_selector": FLAG,
    "path_refinement": FLAG,
    "variant": choice("hydrarag", "hydrarag-e"),
    "exploration_temperature": ratio(0.0, 2.0),
    "beam_score": choice("cross", "relevance"),
    "follow_up_topics": FLAG,
    "path_summary": FLAG,
    "length_floor": FLAG,
    "beam_text": choice("relations", "path"),
    "num_examples": count(5, lo=0),
    # ssrag
    "vector_k": count("max_top_k"),
    "graph_k": count("max_top_k"),
    "llm_nodes": count("max_top_k", lo=0),
    "graph_hops": count(3),
    "max_node_facts": count(100),
    "graph_to_text": choice("llm", "template"),
    "routing": choice("llm", "rules"),
    "web_k": count(10),
    "local_min_score": ratio(),
    "link_min_score": ratio(),
    "max_query_tokens": count(200, lo=5),
    "rerank_query": choice("augmented", "original"),
    "dedup_threshold": ratio(),
    "llm_dedup": FLAG,
    "context_budget": count(20000, lo=100),
    "text_edges": FLAG,
    "n_examples": count(10, lo=0),
    "bare_contexts_last": FLAG,
    "fact_scoring": choice("parts", "sentence"),
    "graph_vectors": choice("facts", "text"),
    "joint_rerank": choice("interleave", "paper"),
    "audit": FLAG,
    "relation_match": ratio(),
    "prune_text": choice("relations", "path"),
}


PYTHON_ONLY = frozenset({"tools"})
"""Fields that hold Python objects (a method's retrieval-step tools): never from a client, never in a schema."""
