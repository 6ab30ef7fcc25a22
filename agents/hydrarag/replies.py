"""HydraRAG's reply schemas: the structured output each LLM role returns (:mod:`agents.hydrarag.roles`).

The bounded variants (:func:`plan_schema`, :func:`topics_schema`) are what a grammar decodes for a
small model.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field, create_model
from pydantic.json_schema import JsonDict

SourceName = Literal["kg", "docs", "web"]


class TopicEntities(BaseModel):
    """Potential topic entities named in a question."""

    entities: list[str] = Field(default_factory=list, description="Names as written in the question.")


@lru_cache(maxsize=16)
def topics_schema(choices: int = 0) -> type[TopicEntities]:
    """:class:`TopicEntities`, its list bounded to ``choices`` names when there are choices.

    The bound (``maxItems``) keeps a small model from repeating the question's names until its token limit.
    """
    if not choices:
        return TopicEntities
    return create_model(
        "TopicEntities",
        __base__=TopicEntities,
        entities=(
            list[str],
            Field(default_factory=list, max_length=choices, description="Names as written in the question."),
        ),
    )


class QuestionAnalysis(BaseModel):
    """Sub-questions and the skyline indicator of a question."""

    split_questions: list[str] = Field(default_factory=list, description="Simple sub-questions.")
    skyline: str = Field(description="Chain 'entity - relation - ... - answer(kind)' separated by ' - '.")


class SkylinePlan(BaseModel):
    """Question analysis as fields a grammar can constrain (small models): the skyline's parts."""

    topic: str = Field(description="The topic entity, as written in the question.")
    relations: list[str] = Field(default_factory=list, description="Relations from the topic to the answer.")
    answer_type: str = Field(description="The kind of the answer.")


@lru_cache(maxsize=16)
def plan_schema(
    hops: tuple[int, int] | None = None, paths: tuple[tuple[str, ...], ...] | None = None
) -> type[SkylinePlan]:
    """:class:`SkylinePlan`, its relations bounded in number and, when given, to one of ``paths``.

    ``hops = (fewest, most)`` bounds the number of relations (``minItems`` / ``maxItems`` in the
    grammar; a reply outside them is unparseable); ``paths`` makes the whole relation list one of
    them (an ``enum`` of lists: the grammar writes one of them, relation for relation; a backend
    without a grammar is not held to it).
    """
    if hops is None and not paths:
        return SkylinePlan
    lo, hi = hops or (0, None)
    extra: JsonDict | None = {"enum": [list(p) for p in paths]} if paths else None
    return create_model(
        "SkylinePlan",
        __base__=SkylinePlan,
        relations=(
            list[str],
            Field(
                default_factory=list,
                min_length=lo,
                max_length=hi,
                json_schema_extra=extra,
                description="Relations from the topic to the answer.",
            ),
        ),
    )


class SourceChoice(BaseModel):
    """The agentic source selector's choice."""

    reasoning: str = Field(description="Time sensitivity, reasoning complexity and domain of the question.")
    sources: list[SourceName] = Field(default_factory=list, description="Sources to search first.")


class TextPath(BaseModel):
    """One knowledge path built from a numbered paragraph."""

    paragraph: int = Field(description="Number of the paragraph the path restates.")
    path: str = Field(description="'entity - relation - entity ...' separated by ' - '.")


class TextPaths(BaseModel):
    """Knowledge paths built from evidence paragraphs."""

    paths: list[TextPath] = Field(default_factory=list)


class SummaryPath(BaseModel):
    """One summarised path and the numbers of the paths it restates."""

    path: str = Field(description="'entity - relation - entity ...' (' - ' separated), cited facts only.")
    sources: list[int] = Field(default_factory=list, description="Numbers of the paths this one restates.")


class PathSummary(BaseModel):
    """Algorithm 2's path summary: the round's document and web paths, merged and trimmed to the skyline."""

    paths: list[SummaryPath] = Field(default_factory=list)


class Choice(BaseModel):
    """A selection of numbered items (web results or candidate paths)."""

    reasoning: str = Field(description="Why these items.")
    selected: list[int] = Field(default_factory=list, description="Numbers of the chosen items.")


class FollowUp(BaseModel):
    """A follow-up question for refined exploration."""

    missing: str = Field(description="The evidence still missing.")
    question: str = Field(description="A follow-up search question aimed at the missing evidence.")
    skyline: str = Field(description="Skyline of the follow-up question, ' - ' separated.")
    topic_entities: list[str] = Field(default_factory=list, description="Named entities of the follow-up.")


class Prediction(BaseModel):
    """One predicted answer with the chain that would connect it to the topic entities."""

    answer: str = Field(description="The predicted answer, named exactly.")
    skyline: str = Field(description="Chain from the topic entities to this answer, ' - ' separated.")


class Predictions(BaseModel):
    """Up to three predicted answers."""

    predictions: list[Prediction] = Field(default_factory=list)


class Refinement(BaseModel):
    """Refined paths: a short chain of reasoning summarised from the selected paths."""

    summary: str = Field(description="Chain of reasoning using only facts from the paths.")


class AnswerCheck(BaseModel):
    """CoT answer check: are the paths sufficient, and if so, the answer."""

    reasoning: str = Field(description="Step-by-step check of each sub-question, then the question.")
    missing: str = Field(default="", description="When not enough: the fact, relation or entity still missing.")
    sufficient: Literal["yes", "no"] = Field(description="'yes' if the evidence answers the question.")
    answer: str = Field(default="", description="The answer when sufficient, else empty.")


class ChosenAnswer(BaseModel):
    """The final answer of a small model: one of the ranked entities (an enum of their names)."""

    answer: str = Field(description="The answer, one of the candidate names.")


class FinalAnswer(BaseModel):
    """The answer generated from the final paths and the model's own knowledge."""

    reasoning: str = Field(description="Brief reasoning.")
    answer: str = Field(description="Short answer.")
