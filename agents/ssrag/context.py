"""SSRAG's settings (the LangGraph ``context_schema`` of :mod:`graphs.ssrag`) and its fixed choices.

Paper defaults where the paper gives them; where ours differs, the description names the
paper's value (one setting away). Each choice field is annotated with its ``Literal`` (the JSON
schema lists the values as an enum, Studio offers them); :func:`check` refuses an unknown value
and a ``tools`` override that is not one of SSRAG's steps (:mod:`agents.ssrag.tools`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from hybridrag.agents.context import LLMContext, StructuredMethod, setting
from hybridrag.agents.llm.judge import Judge
from hybridrag.agents.ssrag.rerank import JointRerank
from hybridrag.agents.ssrag.tools import STEPS
from hybridrag.tools.steps import check_overrides

ExampleSource = Literal["kb", "none"]
GraphToText = Literal["llm", "template"]
Routing = Literal["llm", "rules"]
RerankQuery = Literal["augmented", "original"]
FactScoring = Literal["parts", "sentence"]
GraphVectors = Literal["facts", "text"]


@dataclass(kw_only=True)
class SSRAGContext(LLMContext):
    """SSRAG settings; each field falls back to ``HYBRIDRAG_<FIELD>``."""

    examples: ExampleSource = setting(
        "kb",
        "Few-shot examples of the decomposer and the entity extractor: 'kb' (the KB's solved-examples bank, "
        "nearest by masked question) or 'none' (the paper's zero-shot prompts).",
    )
    n_examples: int = setting(2, "Examples shown per role (0: none).")
    top_k: int = setting(20, "k: contexts kept after dedup (N=20 was best in Table V); 2k are reranked.")
    vector_k: int = setting(20, "Texts from the vector branch (topkEmbeds).")
    graph_k: int = setting(20, "Graph nodes made into text (relevantNodes).")
    graph_hops: int = setting(
        2,
        "Hops of the graph branch's walk from the linked entities (1: the paper's one-hop neighbourhood, which "
        "reaches answers two edges away; 2 reaches three).",
    )
    text_edges: bool = setting(
        True,
        "Count sentences of passages about or naming a node among its facts and walk to the entities they name "
        "(false: KG triples only).",
    )
    fact_scoring: FactScoring = setting(
        "parts",
        "How the graph branch scores a fact against the question: 'parts' (ours: the sum of the stored name "
        "vectors of the entities it names and the vector of its other words, relation phrases cached) or "
        "'sentence' (each fact sentence encoded whole, seconds a question).",
    )
    max_node_facts: int = setting(25, "Most question-relevant facts per node.")
    llm_nodes: int = setting(
        5,
        "Graph nodes the LLM converts to text, most relevant first; the others keep their facts as sentences "
        "(the paper converts every node: set it to graph_k). One call per node.",
    )
    graph_to_text: GraphToText = setting(
        "llm", "'llm' (the paper: one LLM call per node) or 'template' (facts as sentences)."
    )
    routing: Routing = setting("llm", "'llm' (TEMPORAL/FACTUAL label by the LLM) or 'rules' (temporal cue → TEMPORAL).")
    web_k: int = setting(5, "Web snippets fetched on the web route (Tavily).")
    local_min_score: float = setting(
        0.5, "Best dense score under which, with no linked entity, the local corpus is empty."
    )
    link_min_score: float = setting(0.8, "Minimum dense score to link an entity without an exact name/alias match.")
    max_query_tokens: int = setting(40, "Token limit of the augmented query.")
    context_budget: int = setting(8000, "Characters of whole context texts shown to the dedup filter and the answerer.")
    rerank_query: RerankQuery = setting(
        "augmented", "Query embedded as Qv for the joint rerank: 'augmented' (Q_aug) or 'original'."
    )
    graph_vectors: GraphVectors = setting(
        "facts",
        "How a graph context is scored in the joint rerank and compared in the dedup: 'facts' (ours: it scores "
        "as its most relevant fact, and its vector is the mean of its facts' vectors, both from the graph "
        "branch) or 'text' (the paper: its converted text encoded, one long encoding per node).",
    )
    joint_rerank: JointRerank = setting(
        "interleave",
        "How the joint rerank orders the two branches' contexts: 'interleave' (ours: the cosine to Qv decides "
        "the places each branch takes and orders the graph contexts; the vector branch's texts keep their "
        "branch's order, dense and BM25 fused with near-duplicates by corroboration) or 'paper' (one cosine "
        "order over all contexts).",
    )
    bare_contexts_last: bool = setting(
        True,
        "Rank contexts that state nothing but their name after the others (false: the paper's single cosine order).",
    )
    max_iterations: int = setting(
        3,
        "Decisions per role with the corrective loop (entities, route, answer → re-augment); 1 is the paper's "
        "single pass.",
    )
    dedup_threshold: float = setting(0.95, "Cosine at or above which a lower-ranked context is a near-duplicate.")
    llm_dedup: bool = setting(True, "Run the LLM redundancy filter too.")
    judge: Judge = setting(
        "auto",
        "Who takes SSRAG's judging and small-model roles: llm (the paper: every role asks the LLM), rules "
        "(decomposition: the question itself; intent: the rule cues; rewrite: the canonicalised question; "
        "route: the temporal-cue rule; graph to text: templates; no LLM filter; entity and answer replies "
        "decoded within the KB's names) or auto (rules for small models: local:* or a name of at most 3B "
        "parameters; else the LLM).",
    )
    chain_walk: bool = setting(
        True,
        "Under the small-model rules, the graph branch also follows the nearest solved example's relation "
        "chain from the linked entities and the answer rule takes the first entity at its end "
        "(agents/ssrag/chain.py; ours, not the paper's); false: the paper's relevance walk alone.",
    )
    answer: bool = setting(True, "Generate the answer with the LLM; false answers with the top context's name.")


CHOICES = {
    "structured_method": StructuredMethod,
    "examples": ExampleSource,
    "graph_to_text": GraphToText,
    "routing": Routing,
    "rerank_query": RerankQuery,
    "fact_scoring": FactScoring,
    "graph_vectors": GraphVectors,
    "joint_rerank": JointRerank,
    "judge": Judge,
}  # each choice field and its Literal (JSON schema enums)


def check_choices(ctx: SSRAGContext) -> None:
    """Refuse a choice field outside its Literal, naming the field and the choices."""
    for name, choice in CHOICES.items():
        value = getattr(ctx, name)
        if value not in get_args(choice):
            raise ValueError(f"unknown ssrag {name} {value!r}; use {', '.join(get_args(choice))}")


def check(ctx: SSRAGContext) -> SSRAGContext:
    """Refuse unknown choices and ``tools`` overrides of steps SSRAG does not have; returns ``ctx``."""
    check_choices(ctx)
    check_overrides("ssrag", ctx.tools, STEPS)
    return ctx
