"""HybGRAG's LLM roles: router, validator, commentor and answerer (input → pydantic output).

Each role is one structured call (see :mod:`agents.llm.structured`): the router extracts topic
entities and useful relations *before* choosing the module, as the paper stresses, in a
single call; critics give their reasoning before the verdict. ``None`` means the reply could
not be parsed after one retry, and the caller takes the fallback.

Retrieved references reach the validator and the answerer as quoted data blocks
(:func:`agents.hybgrag.report.format_references`), and the answerer's reply is kept only when
the references support it (:func:`prompts.grounding.check_answer`, strict: a QA answer names
retrieved entities or values); otherwise it is ``None`` too, so the caller answers with the top
reference, and the usage counts it under ``unsupported_answers``. The router and the commentor
see no retrieved text: the question, the schema, the router's own extraction and the
experience bank. ``router_calls=2`` splits the router as the paper's Table 8 (extraction, then the
module in a second call of the same conversation: :func:`agents.hybgrag.router.route_in_two_calls`).
The messages themselves are built in :mod:`agents.hybgrag.prompting`.
"""

from __future__ import annotations

from typing import Literal

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from hybridrag.agents.hybgrag.prompting import (
    action_json,
    entity_list,
    render_experience,
    render_validations,
    router_first_messages,
    router_reflect_messages,
    schema_prompt_parts,
)
from hybridrag.agents.llm.constrained import question_spans
from hybridrag.agents.llm.grounded import answer_decision as grounded_decision
from hybridrag.agents.llm.grounded import grounded_answer
from hybridrag.agents.llm.structured import call_structured
from hybridrag.kb.model import Schema
from hybridrag.prompts import hybgrag as P

__all__ = [  # the prompt builders live in agents.hybgrag.prompting and are re-exported here
    "ERROR_TYPES",
    "UNSUPPORTED",
    "Answer",
    "Critique",
    "ErrorType",
    "RouterAction",
    "RouterExtraction",
    "RouterModule",
    "TopicEntity",
    "Validation",
    "action_json",
    "answer",
    "answer_decision",
    "check_action",
    "comment",
    "entity_list",
    "render_experience",
    "render_validations",
    "route",
    "router_choices",
    "router_first_messages",
    "router_reflect_messages",
    "schema_prompt_parts",
    "validate",
]

ErrorType = Literal[
    "incorrect_entity_relation",
    "missing_entity",
    "no_entity",
    "no_intersection",
    "incorrect_intersection",
    "incorrect_retrieval_module",
]
ERROR_TYPES: tuple[str, ...] = ErrorType.__args__  # type: ignore[attr-defined]
UNSUPPORTED = "answer not supported by the references"


class TopicEntity(BaseModel):
    """A topic entity named in the question, with exactly one entity type."""

    name: str = Field(description="The entity as named in the question.")
    type: str = Field(description="Exactly one entity type from the given entity types.")


class RouterAction(BaseModel):
    """The router's extraction, then its choice of retrieval module."""

    entities: list[TopicEntity] = Field(default_factory=list, description="Topic entities of the question.")
    relations: list[str] = Field(default_factory=list, description="Useful relations, from the relation types.")
    module: Literal["hybrid", "text"] = Field(
        description="'hybrid' if the entities and relations narrow down the knowledge graph, else 'text'."
    )


class RouterExtraction(BaseModel):
    """The router's first call under ``router_calls=2`` (Table 8): the extraction alone."""

    entities: list[TopicEntity] = Field(default_factory=list, description="Topic entities of the question.")
    relations: list[str] = Field(default_factory=list, description="Useful relations, from the relation types.")


class RouterModule(BaseModel):
    """The router's second call under ``router_calls=2``: the module, given its own extraction."""

    module: Literal["hybrid", "text"] = Field(
        description="'hybrid' if the entities and relations narrow down the knowledge graph, else 'text'."
    )


class Validation(BaseModel):
    """The validator's judgement of the top references."""

    reasoning: str = Field(description="One short sentence: do the references fit the question?")
    verdict: Literal["yes", "no"] = Field(description="'yes' to accept the references, 'no' to reject.")


class Critique(BaseModel):
    """The commentor's diagnosis of a rejected action."""

    reasoning: str = Field(description="One short sentence on what went wrong.")
    error_type: ErrorType = Field(description="The most likely error type.")
    wrong_entities: list[str] = Field(default_factory=list, description="Extracted entities that are wrong.")
    wrong_relations: list[str] = Field(default_factory=list, description="Extracted relations that are wrong.")


class Answer(BaseModel):
    """A short answer grounded in the references."""

    reasoning: str = Field(description="One or two sentences of reasoning over the references.")
    answer: str = Field(description="The short answer.")


def _norm(text: str) -> str:
    return text.strip().lower().replace(" ", "_").replace("-", "_")


def check_action(action: RouterAction, schema: Schema) -> dict:
    """Validate an action against the KB schema: unknown relations and types are dropped.

    A KB whose schema has no relation types (every fact only in text) has nothing to check
    relations against: the router's relations are kept as phrases (lower case, words joined
    by ``_``), for the text hops to follow (:mod:`tools.text_hops`).

    Returns ``{"module", "entities": [{"name","type"}], "relations", "dropped_relations",
    "dropped_types"}``; an entity whose type is unknown keeps its name with type None.
    """
    types = {_norm(t): t for t in schema.entity_types}
    rel_names = {_norm(r): r for r in schema.relation_types}
    relations, dropped_rel = [], []
    for r in action.relations:
        if not schema.relation_types and _norm(r).strip("_"):
            relations.append(_norm(r).strip("_"))
        else:
            (relations if _norm(r) in rel_names else dropped_rel).append(rel_names.get(_norm(r), r))
    entities, dropped_types, seen = [], [], set()
    for e in action.entities:
        if not e.name.strip() or e.name.strip().lower() in seen:
            continue
        seen.add(e.name.strip().lower())
        etype = types.get(_norm(e.type))
        if etype is None:
            dropped_types.append(f"{e.name} ({e.type})")
        entities.append({"name": e.name.strip(), "type": etype})
    return {
        "module": action.module,
        "entities": entities,
        "relations": list(dict.fromkeys(relations)),
        "dropped_relations": dropped_rel,
        "dropped_types": dropped_types,
    }


def router_choices(schema: Schema, question: str) -> dict[str, list[str]]:
    """What a constrained router may name: spans of the question, the KB's types and relations.

    Used for llama.cpp models, which decode within them (:mod:`agents.llm.constrained`).
    """
    choices = {"entities.name": question_spans(question), "entities.type": sorted(schema.entity_types)}
    if schema.relation_types:  # a KB without relation types takes relation phrases (free text)
        choices["relations"] = sorted(schema.relation_types)
    return choices


def route(
    model: BaseChatModel, messages: list[dict], method: str, choices: dict | None = None
) -> tuple[RouterAction | None, dict]:
    """Router: one structured call returning entities, relations, then the module."""
    return call_structured(model, RouterAction, messages, role="router", method=method, choices=choices)


def validate(
    model: BaseChatModel, question: str, references: str, method: str, examples: list[dict] | None = None
) -> tuple[Validation | None, dict]:
    """Validator: yes/no on the top references with their reasoning paths, after the examples."""
    user = P.VALIDATOR.format(examples=render_validations(examples or []), question=question, references=references)
    messages = [("system", P.VALIDATOR_SYSTEM.template), ("human", user)]
    return call_structured(model, Validation, messages, role="validator", method=method)


def comment(
    model: BaseChatModel, question: str, action: dict, bank: list[dict], method: str
) -> tuple[Critique | None, dict]:
    """Commentor: diagnose a rejected action from the question and the action only."""
    user = P.COMMENTOR.format(
        examples=render_experience(bank),
        question=question,
        module=action["module"],
        entities=entity_list(action["entities"]),
        relations=", ".join(action["relations"]) or "(none)",
    )
    messages = [("system", P.COMMENTOR_SYSTEM.template), ("human", user)]
    return call_structured(model, Critique, messages, role="commentor", method=method)


def answer(model: BaseChatModel, question: str, references: str, method: str) -> tuple[Answer | None, dict]:
    """Answerer (QA mode): a short answer from the accepted references, or None.

    None when the reply is unparseable or when the references (the data blocks of
    ``references``) do not support it; the latter adds ``unsupported_answers`` to the usage.
    """
    messages = [
        ("system", P.ANSWER_SYSTEM.template),
        ("human", P.ANSWER.format(question=question, references=references)),
    ]
    return grounded_answer(model, Answer, messages, question, references, method, "hybgrag answerer")


def answer_decision(reply: Answer | None, usage: dict) -> str:
    """The trace decision of the answer step: answered, or which fallback and why."""
    return grounded_decision(reply, usage, "top reference", UNSUPPORTED)
