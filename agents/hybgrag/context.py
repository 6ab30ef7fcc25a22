"""HybGRAG's settings (the LangGraph ``context_schema`` of :mod:`graphs.hybgrag`) and its fixed choices.

Each choice field is annotated with its ``Literal`` (the JSON schema lists the values as an enum,
Studio offers them) and an unknown value is refused with a one-line error naming the field; the
``tools`` overrides are checked against HybGRAG's steps (:mod:`agents.hybgrag.tools`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from hybridrag.agents.context import LLMContext, StructuredMethod, setting
from hybridrag.agents.hybgrag.tools import STEPS
from hybridrag.agents.llm.judge import Judge, is_small_model
from hybridrag.kb.base import KnowledgeBase
from hybridrag.tools.steps import check_overrides

Examples = Literal["kb", "bundled"]
Commentor = Literal["llm", "rules"]
CHOICES = {"structured_method": StructuredMethod, "examples": Examples, "commentor": Commentor, "judge": Judge}


@dataclass(kw_only=True)
class HybGRAGContext(LLMContext):
    """HybGRAG settings; each field falls back to ``HYBRIDRAG_<FIELD>``."""

    router_llm: str = setting("", "Router model; empty for `llm`.")
    validator_llm: str = setting("", "Validator model; empty for `llm`.")
    commentor_llm: str = setting("", "Commentor model; empty for `llm`.")
    answer_llm: str = setting("", "Answer model (QA mode); empty for `llm`.")
    radius: int = setting(
        0,
        "Hybrid module hops: 0 follows the router's relation path (as many hops as relations, "
        "one more when the same action was rejected, at most 3); N >= 1 is the paper's "
        "ego-graph of radius N (paper: 2).",
    )
    text_hops: bool = setting(
        True,
        "Hybrid module (radius 0): also follow a relation through passages where the graph lacks the edge "
        "(KBs with passages); on a KB without relation types the only way along the router's relation "
        "phrases (off: text module).",
    )
    router_calls: int = setting(
        1,
        "Router LLM calls per decision: 1 (one structured reply: entities, relations, then the module) "
        "or 2 (the paper's Table 8: the extraction, then the module in a second call).",
    )
    num_references: int = setting(1, "How many top references the validator sees (the paper shows one).")
    examples: Examples = setting(
        "kb",
        "Router and commentor examples: 'kb' (from the KB at hand's solved examples: the router's "
        "nearest by masked question, the six error types made from them) or 'bundled' (the MetaQA "
        "files prompts/examples/hybgrag_router.json and hybgrag_experience.json).",
    )
    few_shot: str = setting("", "Router few-shot JSON file (overrides `examples` for the router); empty for none.")
    num_few_shot: int = setting(10, "Router few-shot examples used.")
    small_model_few_shot: int = setting(
        3,
        "At most this many router examples for a model known to be small (local:*, or a "
        "size of 3B or less in its name): long prompts cost a small model accuracy and time.",
    )
    validator_examples: int = setting(
        2, "Validator examples per entity type, drawn from the KB at hand (paper: 2); 0 for none."
    )
    commentor: Commentor = setting(
        "llm",
        "Who writes the corrective feedback: 'llm' (the paper: the LLM commentor with the experience bank "
        "judges every rejection) or 'rules' (rules where the retrieval shows the error, the LLM commentor "
        "the rest).",
    )
    judge: Judge = setting(
        "auto",
        "Who validates and diagnoses: 'llm' (the paper), 'rules' (the top reference reached along the "
        "router's path with the expected answer type; no LLM call) or 'auto' (rules for small models: "
        "local:* or a name of at most 3B parameters, and for an unparseable reply; else the LLM).",
    )
    router_rules: bool = setting(
        True,
        "Under the judge rules (small models): the path walked is the shown examples' one path when the "
        "router's relations are part of it, and after a rejection a rule re-routes (the next shown example's "
        "path holding the relations, else the same action one hop deeper) instead of a router call "
        "(agents/hybgrag/reroute.py). Off: the router is asked again, as the paper.",
    )
    link_rules: bool = setting(
        True,
        "Entity linking reads the question and the path: a routed name that is part of a longer KB name the "
        "question writes links to that name, and without a candidate of the router's type one whose type "
        "takes the first relation is preferred (agents/hybgrag/linking.py).",
    )
    experience: str = setting("", "Experience bank JSON file (overrides `examples` for the commentor); empty for none.")
    num_experiences: int = setting(30, "Experience-bank examples shown.")
    answer: bool = setting(False, "QA mode: generate a text answer from the accepted references.")
    answer_chars: int = setting(
        4000,
        "QA mode: characters of reference text the answerer reads (about 1000 tokens): the final "
        "references, best first, until this many (at least one; each text cut at 600).",
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
        check_overrides("hybgrag", self.tools, STEPS)
        if self.answer_chars < 1:
            raise ValueError(f"hybgrag answer_chars must be at least 1, not {self.answer_chars!r}")
        if self.router_calls not in (1, 2):
            raise ValueError(f"hybgrag router_calls must be 1 or 2, not {self.router_calls!r}")
        for name, choice in CHOICES.items():
            if getattr(self, name) not in get_args(choice):
                raise ValueError(
                    f"hybgrag {name} must be one of {', '.join(get_args(choice))}, not {getattr(self, name)!r}"
                )

    def qa_mode(self, kb: KnowledgeBase) -> bool:
        """Whether the run ends with the answerer: ``answer``, or ``answer_documents`` on a documents KB.

        A documents KB is one built by ``hybridrag ingest --documents`` (its manifest has a
        ``documents`` section); the model must not be known to be small (:func:`agents.llm.judge.is_small_model`).
        """
        documents = "documents" in kb.manifest and not is_small_model(self.answer_llm or self.llm)
        return self.answer or (self.answer_documents and documents)
