"""MoR's settings (the LangGraph ``context_schema`` of :mod:`graphs.mor`) and its fixed choices.

Each choice field is annotated with its ``Literal`` (the JSON schema lists the values as an enum,
Studio offers them) and an unknown value is refused with a one-line error naming the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from hybridrag.agents.context import LLMContext, StructuredMethod, setting
from hybridrag.agents.llm.judge import is_small_model
from hybridrag.agents.mor.tools import STEPS
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.steps import check_overrides

Planner = Literal["paths", "triplets"]
Examples = Literal["kb", "bundled"]
PlannerSchema = Literal["auto", "full", "off"]
Retrieval = Literal["mixed", "structural", "textual"]
TextMatcher = Literal["bm25", "dense"]
LayerMatch = Literal["always", "restricted"]
Ranking = Literal["graph_first", "paper"]
Reranker = Literal["neural", "structure", "none"]
GroundPlan = Literal["auto", "on", "off"]
PlanRelations = Literal["needed", "all"]
CHOICES = {
    "structured_method": StructuredMethod,
    "planner": Planner,
    "examples": Examples,
    "retrieval": Retrieval,
    "text_matcher": TextMatcher,
    "layer_match": LayerMatch,
    "ranking": Ranking,
    "reranker": Reranker,
    "planner_schema": PlannerSchema,
    "ground_plan": GroundPlan,
    "plan_relations": PlanRelations,
}  # each choice field and its Literal


@dataclass(kw_only=True)
class MoRContext(LLMContext):
    """MoR settings (paper defaults where it gives them); each falls back to ``HYBRIDRAG_<FIELD>``."""

    max_iterations: int = setting(
        3,
        "Plans per question: a plan whose traversal shows a problem is re-planned "
        "with the problem named (ours); 1: the paper's single pass.",
    )
    planner: Planner = setting("paths", "paths (reasoning paths, §3.1) or triplets (merged, PRIME §4.1).")
    examples: Examples = setting(
        "kb",
        "Planner examples: kb (the KB's solved examples nearest to the question) "
        "or bundled (the movie JSON files, for MetaQA).",
    )
    few_shot: str = setting("", "Planner few-shot JSON file (overrides examples); empty: none.")
    num_few_shot: int = setting(10, "Planner few-shot examples used.")
    planner_schema: PlannerSchema = setting(
        "auto",
        "The KB schema in the planner prompt: full, off, or auto (off for a model known to be small that "
        "decodes within the KB's names and is shown examples; full otherwise).",
    )
    small_model_few_shot: int = setting(
        3,
        "At most this many planner examples for a model known to be small "
        "(local:*, or 3B or less by name): long prompts cost it accuracy and time.",
    )
    small_model_iterations: int = setting(
        1,
        "At most this many plans per question for a model known to be small (local:*, or 3B or less by "
        "name): SmolLM2 wrote the same plan again on 32 of 34 re-plans (issue 26 paraphrase set).",
    )
    ground_plan: GroundPlan = setting(
        "auto",
        "Ground each route of the plan (ours, agents/mor/grounding.py): its anchor in the KB names the "
        "question writes (one typo allowed), its path in the shown examples' routes when it is none of "
        "them; auto: for a model known to be small; on; off.",
    )
    plan_relations: PlanRelations = setting(
        "needed",
        "Relations the planner examples name: needed (only where more than one relation links two "
        "types: fewer tokens to read and write) or all.",
    )
    target_types: str = setting("", "Comma-separated answer categories (STaRK-MAG: paper); empty: any.")
    max_hops: int = setting(3, "Longest route kept, in hops; longer routes keep their last hops.")
    retrieval: Retrieval = setting("mixed", "mixed (MoR), or the ablations structural / textual (§4.3.1).")
    text_matcher: TextMatcher = setting("bm25", "Textual matching: bm25 (paper, Amazon/MAG) or dense.")
    seed_k: int = setting(5, "Textual seeds of a route's first layer (§4.1: 5).")
    layer_k: int = setting(10, "Textual matches added at each later layer (§4.1: 10).")
    layer_match: LayerMatch = setting("always", "Text matches at every layer (paper) or 'restricted' nodes only.")
    text_edges: bool = setting(
        True,
        "When a hop reaches nothing along edges, entities linked to the previous "
        "node by texts (its texts name them, or theirs name it) become neighbours "
        "(ours: facts held as passages); False: the paper.",
    )
    max_frontier: int = setting(5000, "Most candidates one layer keeps (ours; bounds hubs).")
    num_candidates: int = setting(
        100,
        "Candidates kept for reranking, by semantic score; also the most texts "
        "naming one node that a textual edge reads (ours).",
    )
    fill_with_text: bool = setting(True, "Top up lists shorter than top_k with text matches, ranked last.")
    ranking: Ranking = setting(
        "graph_first",
        "graph_first (ours): the route's topic entity is never a candidate "
        "and structurally reached candidates rank above text-only matches; paper: one pool.",
    )
    reranker: Reranker = setting(
        "neural", "neural (trained network, §3.3), structure (linear, training-free) or none (semantic only)."
    )
    reranker_weights: str = setting(
        "",
        "Reranker weights: .npz (neural) or .json (structure); empty: the "
        "shipped MetaQA-dev network / the training-free linear weights.",
    )
    fingerprint_length: int = setting(3, "Trajectory positions featurised (App. B.2: 3; 1: node-based).")
    reranker_features: str = setting("tf,sf,ti", "Reranker feature groups (Table 2 ablation): tf, sf, ti.")
    answer: bool = setting(False, "QA mode: generate an answer from the top entities (App. E).")
    answer_chars: int = setting(
        4000,
        "QA mode: characters of retrieved text the answerer reads (about 1000 tokens): the ranked "
        "entities, best first, until this many (at least one; each path or text cut at 500).",
    )
    answer_documents: bool = setting(
        True,
        "QA mode on a KB built from documents even when `answer` is off, unless the model is known to be "
        "small (local:*, at most 3B): there the answer is in the passages, which retrieval alone only points "
        "at; a small model's replies are rarely grounded, so the passage span rule answers for it.",
    )

    def __post_init__(self) -> None:
        """Environment overrides, then one-line refusals of unknown choices."""
        super().__post_init__()
        check_overrides("mor", self.tools, STEPS)
        if self.answer_chars < 1:
            raise ValueError(f"mor answer_chars must be at least 1, not {self.answer_chars!r}")
        for name, choice in CHOICES.items():
            if getattr(self, name) not in get_args(choice):
                raise ValueError(f"{name} must be one of {', '.join(get_args(choice))}, not {getattr(self, name)!r}")
        if self.small_model_iterations < 1:
            raise ValueError(f"mor small_model_iterations must be at least 1, not {self.small_model_iterations!r}")

    def plans(self) -> int:
        """Plans per question: ``max_iterations``, at most ``small_model_iterations`` for a model known to be small."""
        return (
            min(self.max_iterations, self.small_model_iterations) if is_small_model(self.llm) else self.max_iterations
        )

    def qa_mode(self, kb: KnowledgeBase) -> bool:
        """Whether the run ends with the answerer: ``answer``, or ``answer_documents`` on a documents KB.

        A documents KB is one built by ``hybridrag ingest --documents`` (its manifest has a
        ``documents`` section); the model must not be known to be small (:func:`agents.llm.judge.is_small_model`).
        """
        documents = "documents" in kb.manifest and not is_small_model(self.llm)
        return self.answer or (self.answer_documents and documents)

    def targets(self) -> list[str]:
        """The configured answer categories."""
        return [t.strip() for t in self.target_types.split(",") if t.strip()]
