"""SSRAG's settings: every field of :class:`graphs.ssrag.SSRAGContext` beyond the common ones.

Paper defaults where the paper gives them; where ours differs, the description names the
paper's value (one setting away). Each falls back to ``HYBRIDRAG_<FIELD>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from hybridrag.agents.llm.judge import Judge
from hybridrag.agents.llm.models import DEFAULT_LLM
from hybridrag.agents.llm.structured import Method as StructuredMethod

ExampleSource = Literal["kb", "none"]
GraphToText = Literal["llm", "template"]
Routing = Literal["llm", "rules"]
RerankQuery = Literal["augmented", "original"]
FactScoring = Literal["parts", "sentence"]
GraphVectors = Literal["facts", "text"]


@dataclass(kw_only=True)
class SSRAGSettings:
    """The SSRAG-specific fields (mixed into the graph's Context)."""

    llm: str = field(
        default=DEFAULT_LLM,
        metadata={"description": "Chat model of every role, 'provider:model' (openai:gpt-4o-mini, local:smollm2...)."},
    )
    llm_base_url: str = field(
        default="",
        metadata={"description": "Base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp); empty for none."},
    )
    structured_method: StructuredMethod = field(
        default="function_calling",
        metadata={"description": "Structured output method: function_calling, json_schema or json_mode."},
    )
    examples: ExampleSource = field(
        default="kb",
        metadata={
            "description": "Few-shot examples of the decomposer and the entity extractor: 'kb' (the KB's solved-"
            "examples bank, nearest by masked question) or 'none' (the paper's zero-shot prompts)."
        },
    )
    n_examples: int = field(default=2, metadata={"description": "Examples shown per role (0: none)."})
    top_k: int = field(
        default=20,
        metadata={"description": "k: contexts kept after dedup (N=20 was best in Table V); 2k are reranked."},
    )
    vector_k: int = field(default=20, metadata={"description": "Texts from the vector branch (topkEmbeds)."})
    graph_k: int = field(default=20, metadata={"description": "Graph nodes made into text (relevantNodes)."})
    graph_hops: int = field(
        default=2,
        metadata={
            "description": "Hops of the graph branch's walk from the linked entities (1: the paper's one-hop "
            "neighbourhood, which reaches answers two edges away; 2 reaches three)."
        },
    )
    text_edges: bool = field(
        default=True,
        metadata={
            "description": "Count sentences of passages about or naming a node among its facts and walk to the "
            "entities they name (false: KG triples only)."
        },
    )
    fact_scoring: FactScoring = field(
        default="parts",
        metadata={
            "description": "How the graph branch scores a fact against the question: 'parts' (ours: the sum of the "
            "stored name vectors of the entities it names and the vector of its other words, "
            "relation phrases cached) or 'sentence' (each fact sentence encoded whole: the earlier "
            "behaviour, seconds a question)."
        },
    )
    max_node_facts: int = field(default=25, metadata={"description": "Most question-relevant facts per node."})
    llm_nodes: int = field(
        default=5,
        metadata={
            "description": "Graph nodes the LLM converts to text, most relevant first; the others keep their facts "
            "as sentences (the paper converts every node: set it to graph_k). One call per node."
        },
    )
    graph_to_text: GraphToText = field(
        default="llm",
        metadata={"description": "'llm' (the paper: one LLM call per node) or 'template' (facts as sentences)."},
    )
    routing: Routing = field(
        default="llm",
        metadata={"description": "'llm' (TEMPORAL/FACTUAL label by the LLM) or 'rules' (temporal cue → TEMPORAL)."},
    )
    web_k: int = field(default=5, metadata={"description": "Web snippets fetched on the web route (Tavily)."})
    local_min_score: float = field(
        default=0.5,
        metadata={"description": "Best dense score under which, with no linked entity, the local corpus is empty."},
    )
    link_min_score: float = field(
        default=0.8,
        metadata={"description": "Minimum dense score to link an entity without an exact name/alias match."},
    )
    max_query_tokens: int = field(default=40, metadata={"description": "Token limit of the augmented query."})
    context_budget: int = field(
        default=8000,
        metadata={"description": "Characters of whole context texts shown to the dedup filter and the answerer."},
    )
    rerank_query: RerankQuery = field(
        default="augmented",
        metadata={"description": "Query embedded as Qv for the joint rerank: 'augmented' (Q_aug) or 'original'."},
    )
    graph_vectors: GraphVectors = field(
        default="facts",
        metadata={
            "description": "How a graph context is scored in the joint rerank and compared in the dedup: 'facts' "
            "(ours: it scores as its most relevant fact, and its vector is the mean of its facts' "
            "vectors, both from the graph branch) or 'text' (the paper: its converted text encoded, "
            "one long encoding per node)."
        },
    )
    bare_contexts_last: bool = field(
        default=True,
        metadata={
            "description": "Rank contexts that state nothing but their name after the others (false: the paper's "
            "single cosine order)."
        },
    )
    max_iterations: int = field(
        default=3,
        metadata={
            "description": "Decisions per role with the corrective loop (entities, route, answer → re-augment); "
            "1 is the paper's single pass."
        },
    )
    dedup_threshold: float = field(
        default=0.95, metadata={"description": "Cosine at or above which a lower-ranked context is a near-duplicate."}
    )
    llm_dedup: bool = field(default=True, metadata={"description": "Run the LLM redundancy filter too."})
    judge: Judge = field(
        default="auto",
        metadata={
            "description": "Who takes SSRAG's judging and small-model roles: llm (the paper: every role asks the LLM), "
            "rules (decomposition: the question itself; intent: the rule cues; rewrite: the canonicalised "
            "question; route: the temporal-cue rule; graph to text: templates; no LLM filter; entity and "
            "answer replies decoded within the KB's names) or auto (rules for small models: local:* or a "
            "name of at most 3B parameters; else the LLM)."
        },
    )
    chain_walk: bool = field(
        default=True,
        metadata={
            "description": "Under the small-model rules, the graph branch also follows the nearest solved example's "
            "relation chain from the linked entities and the answer rule takes the first entity at its "
            "end (agents/ssrag/chain.py; ours, not the paper's); false: the paper's relevance walk alone."
        },
    )
    answer: bool = field(
        default=True,
        metadata={"description": "Generate the answer with the LLM; false answers with the top context's name."},
    )


CHOICES = {
    "structured_method": StructuredMethod,
    "examples": ExampleSource,
    "graph_to_text": GraphToText,
    "routing": Routing,
    "rerank_query": RerankQuery,
    "fact_scoring": FactScoring,
    "graph_vectors": GraphVectors,
    "judge": Judge,
}  # each choice field and its Literal (JSON schema enums)


def check_choices(settings: SSRAGSettings) -> None:
    """Refuse a choice field outside its Literal, naming the field and the choices."""
    for name, choice in CHOICES.items():
        value = getattr(settings, name)
        if value not in get_args(choice):
            raise ValueError(f"unknown ssrag {name} {value!r}; use {', '.join(get_args(choice))}")
