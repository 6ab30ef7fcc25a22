"""HydraRAG's settings (the LangGraph ``context_schema`` of :mod:`graphs.hydrarag`): paper App. C defaults, and ours.

Choice settings are ``Literal`` types, so the context's JSON schema (Studio, the Agent Server)
lists their values; an unknown value, or a ``tools`` override that is not one of HydraRAG's steps
(:mod:`agents.hydrarag.tools`), is refused in one line naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from hybridrag.agents.context import LLMContext, StructuredMethod, setting
from hybridrag.agents.hydrarag.pruning import PruneSettings
from hybridrag.agents.hydrarag.text import TextSettings
from hybridrag.agents.hydrarag.tools import STEPS
from hybridrag.agents.llm.judge import Judge, use_rules
from hybridrag.tools.steps import check_overrides

PHASES = ("initial", "refined", "predicted")
Variant = Literal["hydrarag", "hydrarag-e"]
BeamScore = Literal["cross", "relevance"]
BeamText = Literal["relations", "path"]
PruneText = Literal["relations", "path"]
Examples = Literal["kb", "bundled"]
CHOICES = {
    "structured_method": StructuredMethod,
    "variant": Variant,
    "beam_score": BeamScore,
    "beam_text": BeamText,
    "prune_text": PruneText,
    "examples": Examples,
    "judge": Judge,
}  # each choice field and its Literal


@dataclass(kw_only=True)
class HydraRAGContext(LLMContext):
    """HydraRAG settings (paper App. C defaults); each falls back to ``HYBRIDRAG_<FIELD>``."""

    max_iterations: int = setting(3, "Exploration rounds: 1 initial, 2 + refined, 3 + predicted (the most).")
    max_depth: int = setting(3, "D_max: deepest KG path search (hops).")
    max_width: int = setting(3, "W_max: paths kept by the LLM selection.")
    beam_width: int = setting(100, "W1: paths kept by relevance (in the beam and in pruning).")
    cross_width: int = setting(20, "W2: paths kept by cross-score for the LLM selection.")
    lambda_sem: float = setting(0.7, "λ_sem: weight of semantic similarity in relevance (rest: overlap).")
    alpha_cross: float = setting(0.7, "α_cross: weight of relevance in the cross-score.")
    rho_kg: float = setting(1.0, "ρ_KG: source prior of KG paths.")
    rho_docs: float = setting(0.8, "ρ_Wiki: source prior of document paths.")
    rho_web: float = setting(0.7, "ρ_Web: source prior of web paths.")
    alpha_source: float = setting(1 / 3, "α1: weight of the source prior f1.")
    alpha_agreement: float = setting(1 / 3, "α2: weight of cross-source corroboration f2.")
    alpha_alignment: float = setting(1 / 3, "α3: weight of entity-path alignment f3.")
    gamma: float = setting(0.7, "γ: cosine at which two paths corroborate each other (ours).")
    link_threshold: float = setting(0.75, "Cosine at which a name aligns to a KB entity (ours).")
    num_sentences: int = setting(
        6,
        "Sentences kept per source and chain by the dense model (paper: W_max = 3; ours 6: with 3 the "
        "sentence stating the fact was often ranked 4th).",
    )
    doc_pool: int = setting(5, "Corpus passages added by dense search to the topics' documents (ours).")
    web_results: int = setting(5, "Search results the LLM picks W_max from.")
    use_web: bool = setting(True, "Offer web search (needs TAVILY_API_KEY).")
    source_selector: bool = setting(True, "Agentic source selector; false: every available source.")
    path_refinement: bool = setting(True, "Summarise the selected paths; false: show them raw (ablation).")
    path_summary: bool = setting(
        True, "Summarise each round's document and web paths (Algorithm 2's path summary); false: as built."
    )
    variant: Variant = setting("hydrarag", "hydrarag, or hydrarag-e: one random relation per clustered edge.")
    exploration_temperature: float = setting(
        0.4, "Sampling temperature of the exploration roles (paper App. C: 0.4); pruning and answering stay at 0."
    )
    beam_score: BeamScore = setting(
        "cross",
        "KG beam ranking: cross (relevance + verification against the retrieved document sentences, "
        "§4.2.1) or relevance (Algorithm 1's Relevant_Pruning).",
    )
    follow_up_topics: bool = setting(
        False,
        "false: the refined round explores the KG from Topic(q) only (Algorithm 3 line 10, the paper); true: "
        "also from the follow-up question's own topic entities (ours; no better on 300 questions, "
        "docs/benchmarks_hydrarag.md section 10).",
    )
    beam_text: BeamText = setting(
        "relations",
        "What the KG beam's semantic score embeds: relations (the path's relation signature, ours: "
        "shared across questions, far cheaper) or path (the whole verbalised path, the paper).",
    )
    prune_text: PruneText = setting(
        "relations",
        "What evidence pruning's relevance embeds for a KG path: relations (its relation signature, "
        "ours: shared across questions, no per-path encode) or path (the path with two names per set). "
        "Cross-source corroboration always reads the path with its names.",
    )
    examples: Examples = setting(
        "kb",
        "Few-shot examples: kb (the KB's solved-example bank, nearest by masked question) or bundled "
        "(the project's movie examples).",
    )
    num_examples: int = setting(2, "Few-shot examples per role (topics, analysis, paragraph → paths, check); 0: none.")
    audit: bool = setting(
        True,
        "Audit each round's analysis against its paths (ours): a {Yes} whose topic entities or skyline the "
        "paths contradict goes to the next round with the problems named; false: the paper's answer check alone.",
    )
    judge: Judge = setting(
        "auto",
        "Who decides the answer check: llm (the paper), rules (a selected KG path, or a text path built by "
        "rule, follows the skyline's relations and reaches an entity, the audit finds nothing wrong; no LLM call) "
        "or auto (rules for small models: local:* or a name of at most 3B parameters, and for an unparseable reply; "
        "else the LLM).",
    )
    relation_match: float = setting(
        0.8, "Cosine at which a skyline relation matches a path relation when their words differ (audit)."
    )
    length_floor: bool = setting(
        True, "Initial round keeps KG paths with |Topic|·(D-1) < length ≤ |Topic|·D (Algorithm 1); false: ≤ only."
    )

    def __post_init__(self) -> None:
        """Environment overrides, then one-line refusals of unknown choices and unknown steps."""
        super().__post_init__()
        for name, choice in CHOICES.items():
            if getattr(self, name) not in get_args(choice):
                raise ValueError(f"{name} must be one of {', '.join(get_args(choice))}, not {getattr(self, name)!r}")
        check_overrides("hydrarag", self.tools, STEPS)

    def pruning(self) -> PruneSettings:
        """Evidence-pruning settings."""
        priors = {"kg": self.rho_kg, "doc": self.rho_docs, "web": self.rho_web}
        alphas = (self.alpha_source, self.alpha_agreement, self.alpha_alignment)
        return PruneSettings(
            self.beam_width,
            self.cross_width,
            self.max_width,
            self.lambda_sem,
            self.alpha_cross,
            priors,
            alphas,
            self.gamma,
            self.prune_text,
        )

    def text(self) -> TextSettings:
        """Unstructured-retrieval settings."""
        return TextSettings(
            self.num_sentences,
            self.doc_pool,
            self.web_results,
            self.max_width,
            self.link_threshold,
            self.structured_method,
            use_rules(self.judge, self.llm),
        )

    def rounds(self) -> int:
        """Exploration rounds actually run (1..3)."""
        return max(1, min(self.max_iterations, len(PHASES)))
