"""HydraRAG's LLM roles: each is one structured call returning a pydantic object (or None).

Roles, in the order a run meets them (paper §4, App. E): topic-entity extraction, question
analysis (sub-questions + skyline), agentic source selector, paragraph → knowledge paths,
web result selection, follow-up question (refined exploration), answer prediction
(predicted exploration), LLM-aware path selection, path refinement, CoT answer check and
final answer generation. With a small model (:func:`constrained`) the question analysis is
asked as :class:`SkylinePlan` fields instead (topic entity, relations, answer kind) and every
name it may write is an ``enum`` of the KB at hand or a span of the question
(:mod:`agents.llm.constrained`); topic extraction and final generation decode within the
question's spans and the ranked entities the same way. ``None`` means the reply could not be parsed after one retry
(:func:`agents.llm.structured.call_structured`); the caller then takes its fallback.

Temperature (paper App. C, after ToG-2 and PoG): the exploration roles (paragraph → paths,
web result selection, follow-up question, predictions) run at ``exploration_temperature``
(0.4) for diversity; every other role keeps the model's own setting (0 for the project's
models: pruning and answering stay reproducible). :func:`at_temperature` makes the copy.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel

from hybridrag.agents.hydrarag.replies import (  # noqa: F401  (the role replies, re-exported)
    AnswerCheck,
    Choice,
    ChosenAnswer,
    FinalAnswer,
    FollowUp,
    PathSummary,
    Prediction,
    Predictions,
    QuestionAnalysis,
    Refinement,
    SkylinePlan,
    SourceChoice,
    SourceName,
    SummaryPath,
    TextPath,
    TextPaths,
    TopicEntities,
    plan_schema,
    topics_schema,
)
from hybridrag.agents.llm.constrained import is_llama_cpp
from hybridrag.agents.llm.judge import use_rules
from hybridrag.agents.llm.structured import call_structured
from hybridrag.prompts import Prompt
from hybridrag.prompts import hydrarag as P

T = TypeVar("T", bound=BaseModel)
_WARM: dict[tuple[int, float], tuple[BaseChatModel, BaseChatModel]] = {}
_WARM_LOCK = threading.Lock()


def at_temperature(model: BaseChatModel, temperature: float | None) -> BaseChatModel:
    """``model`` sampling at ``temperature``: a cached shallow copy sharing the client.

    ``model`` itself is returned when the temperature is None, already set, or the model has no
    temperature field.
    """
    if temperature is None or "temperature" not in type(model).model_fields:
        return model
    if getattr(model, "temperature", None) == temperature:
        return model
    key = (id(model), float(temperature))
    with _WARM_LOCK:
        if key not in _WARM or _WARM[key][0] is not model:  # keep the original: its id stays unique
            _WARM[key] = (model, model.model_copy(update={"temperature": float(temperature)}))
        return _WARM[key][1]


def constrained(ctx: Any, model: BaseChatModel) -> bool:
    """Whether the roles decode within the KB's names and the question's spans.

    They do for a llama.cpp model (it takes a grammar), or a small model under the judge's rules
    (``judge=auto``, :mod:`agents.llm.judge`).
    """
    return is_llama_cpp(model) or use_rules(ctx.judge, ctx.llm)


def _ask(
    model: BaseChatModel,
    schema: type[T],
    system: Prompt,
    human: Prompt,
    role: str,
    method: str,
    values: dict[str, str],
    *,
    examples: str = "",
    choices: dict | None = None,
    fixed: dict[str, str] | None = None,
) -> tuple[T | None, dict]:
    """One structured call; ``fixed``: the system prompt's values other than its examples."""
    text = (
        system.format(examples=examples, **(fixed or {})).rstrip() if "examples" in system.inputs else system.template
    )
    messages = [("system", text), ("human", human.format(**values))]
    return call_structured(model, schema, messages, role=role, method=method, choices=choices)


def extract_topics(
    model: BaseChatModel, question: str, method: str, examples: str = "", choices: dict | None = None
) -> tuple[TopicEntities | None, dict]:
    """Available-evidence detection, step 1: potential topic entities of the question.

    ``choices``: ``{"entities": spans of the question}`` for a constrained model, whose list then
    holds at most as many names as there are choices (:func:`topics_schema`).
    """
    schema = topics_schema(len((choices or {}).get("entities") or []))
    return _ask(
        model,
        schema,
        P.TOPICS_SYSTEM,
        P.TOPICS,
        "topics",
        method,
        {"question": question},
        examples=examples,
        choices=choices,
    )


def plan(
    model: BaseChatModel,
    question: str,
    topics: str,
    kb_names: dict[str, list[str]],
    method: str,
    examples: str = "",
    spans: Sequence[str] = (),
    hops: tuple[int, int] | None = None,
    paths: tuple[tuple[str, ...], ...] | None = None,
) -> tuple[SkylinePlan | None, dict]:
    """Question analysis for a small model: topic (a span of the question), relations and answer kind.

    The relations and kinds are the KB's relation names and entity types (``kb_names`` as
    :func:`agents.llm.constrained.kb_choices`); ``hops``: the fewest and most relations the reply
    may name, ``paths``: the relation lists it may write (:func:`plan_schema`).
    """
    choices = {"topic": list(spans), "relations": kb_names["relation"], "answer_type": kb_names["type"]}
    return _ask(
        model,
        plan_schema(hops, paths),
        P.PLAN_SYSTEM,
        P.PLAN,
        "analysis",
        method,
        {"question": question, "topics": topics},
        examples=examples,
        choices=choices,
        fixed={k: ", ".join(kb_names[n]) or "(any)" for k, n in (("relations", "relation"), ("kinds", "type"))},
    )


def analyse(
    model: BaseChatModel, question: str, topics: str, method: str, examples: str = ""
) -> tuple[QuestionAnalysis | None, dict]:
    """Question analysis: sub-questions and the skyline indicator in one call."""
    return _ask(
        model,
        QuestionAnalysis,
        P.ANALYSIS_SYSTEM,
        P.ANALYSIS,
        "analysis",
        method,
        {"question": question, "topics": topics},
        examples=examples,
    )


def choose_sources(
    model: BaseChatModel, question: str, available: str, analysis: str, method: str, examples: str = ""
) -> tuple[SourceChoice | None, dict]:
    """Agentic source selector over the available sources."""
    return _ask(
        model,
        SourceChoice,
        P.SELECTOR_SYSTEM,
        P.SELECTOR,
        "selector",
        method,
        {"question": question, "available": available, "analysis": analysis},
        examples=examples,
    )


def paths_from_text(
    model: BaseChatModel, question: str, topics: str, skyline: str, paragraphs: str, method: str, examples: str = ""
) -> tuple[TextPaths | None, dict]:
    """Paragraph → knowledge path construction (documents and web)."""
    return _ask(
        model,
        TextPaths,
        P.TEXT_PATHS_SYSTEM,
        P.TEXT_PATHS,
        "text_paths",
        method,
        {"question": question, "topics": topics, "skyline": skyline, "paragraphs": paragraphs},
        examples=examples,
    )


def select_web(
    model: BaseChatModel, question: str, skyline: str, results: str, width: int, method: str
) -> tuple[Choice | None, dict]:
    """Pick the top web results to read."""
    return _ask(
        model,
        Choice,
        P.WEB_SELECT_SYSTEM,
        P.WEB_SELECT,
        "web_select",
        method,
        {"question": question, "skyline": skyline, "results": results, "width": str(width)},
    )


def follow_up(model: BaseChatModel, method: str, examples: str = "", **values: str) -> tuple[FollowUp | None, dict]:
    """Refined exploration: follow-up question, new skyline and its entities."""
    return _ask(model, FollowUp, P.FOLLOW_UP_SYSTEM, P.FOLLOW_UP, "follow_up", method, values, examples=examples)


def predict(model: BaseChatModel, method: str, examples: str = "", **values: str) -> tuple[Predictions | None, dict]:
    """Predicted exploration: up to three predicted answers with their skylines."""
    return _ask(model, Predictions, P.PREDICT_SYSTEM, P.PREDICT, "predict", method, values, examples=examples)


def select_paths(model: BaseChatModel, method: str, examples: str = "", **values: str) -> tuple[Choice | None, dict]:
    """LLM-aware selection of the top W_max paths."""
    return _ask(model, Choice, P.SELECT_PATHS_SYSTEM, P.SELECT_PATHS, "path_select", method, values, examples=examples)


def refine(model: BaseChatModel, method: str, examples: str = "", **values: str) -> tuple[Refinement | None, dict]:
    """Path refinement: summarise the selected paths."""
    return _ask(model, Refinement, P.REFINE_SYSTEM, P.REFINE, "refine", method, values, examples=examples)


def check(model: BaseChatModel, method: str, examples: str = "", **values: str) -> tuple[AnswerCheck | None, dict]:
    """CoT answering evaluation: {Yes} with the answer, or {No}."""
    return _ask(model, AnswerCheck, P.CHECK_SYSTEM, P.CHECK, "check", method, values, examples=examples)


def generate(model: BaseChatModel, method: str, examples: str = "", **values: str) -> tuple[FinalAnswer | None, dict]:
    """CoT answer generation from the final paths and the model's own knowledge."""
    return _ask(model, FinalAnswer, P.GENERATE_SYSTEM, P.GENERATE, "generate", method, values, examples=examples)


def choose_answer(
    model: BaseChatModel, method: str, names: list[str], examples: str = "", **values: str
) -> tuple[ChosenAnswer | None, dict]:
    """Answer generation for a small model: one of ``names`` (the ranked entities), decoded within them."""
    return _ask(
        model,
        ChosenAnswer,
        P.GENERATE_SYSTEM,
        P.GENERATE,
        "generate",
        method,
        values,
        examples=examples,
        choices={"answer": names},
    )
