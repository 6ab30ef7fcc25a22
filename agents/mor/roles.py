"""MoR's LLM roles: the planner (reasoning paths, or triplets merged into paths) and the answerer.

The planner generates the whole planning graph in one structured call (MoR §3.1: one shot, no
step-by-step prompting). The paper fine-tunes Llama 3.2-3B on plans synthesised by a larger LLM
with the entity-type list and in-context examples (§4.1, App. B.2); here any chat model is
prompted with the schema and few-shot examples. ``None`` from a role means its reply could not
be parsed after one retry; the caller then takes the paper's fallback, textual matching.

The answerer (QA mode) reads the retrieved entities as quoted data blocks
(:func:`agents.mor.output.references_text`); its reply is kept only when they support it
(:func:`prompts.grounding.check_answer`, strict), else it is ``None`` and the caller answers with
the top entity; the usage counts it under ``unsupported_answers``. The planner sees no
retrieved text: the question, the schema, its examples and the plan's problems.
"""

from __future__ import annotations

import json

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, Field

from hybridrag.agents.llm.constrained import is_llama_cpp, question_spans
from hybridrag.agents.llm.grounded import answer_decision as grounded_decision
from hybridrag.agents.llm.grounded import grounded_answer
from hybridrag.agents.llm.judge import few_shot_count, is_small_model
from hybridrag.agents.llm.structured import call_structured
from hybridrag.agents.mor.context import MoRContext
from hybridrag.agents.mor.examples import planner_shots
from hybridrag.agents.mor.grounding import ground_plan, ruled_plan
from hybridrag.agents.mor.output import ANSWER_CHARS, is_own, offered_choice, references_text
from hybridrag.agents.mor.plan import Plan, TripletPlan, plan_from_triplets, validate_plan
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.model import Schema
from hybridrag.prompts import mor as P
from hybridrag.tools.answer_span import names_passage

UNSUPPORTED = "answer not supported by the retrieved entities"
UNPARSEABLE = "unparseable planner output"


class Answer(BaseModel):
    """A short answer grounded in the retrieved entities (QA mode, App. E)."""

    reasoning: str = Field(description="One or two sentences of reasoning over the retrieved entities.")
    answer: str = Field(description="The short answer.")


def schema_parts(schema: Schema) -> tuple[str, str]:
    """Entity types and relation types (head → tail types) as prompt text."""
    ents = ", ".join(schema.entity_types)
    rels = ", ".join(
        f"{r.name} ({'|'.join(r.head_types)} → {'|'.join(r.tail_types)})" for r in schema.relation_types.values()
    )
    return ents, rels


def _compact(obj: dict | list) -> str:
    """JSON without spaces.

    The model writes its plan the way the examples are written, and each space is a token more to
    evaluate in the prompt and to generate in the reply.
    """
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def schema_shown(setting: str, llm: object, constrained: bool, n_examples: int) -> bool:
    """Whether the planner prompt lists the KB schema (``planner_schema``).

    ``auto`` leaves it out only for a model known to be small (:func:`agents.llm.judge.is_small_model`)
    whose reply is decoded within the KB's types and relations (``constrained``: the grammar holds
    the schema) and that is shown examples (they show the form).
    """
    if setting == "auto":
        return not (constrained and n_examples > 0 and is_small_model(llm))
    return setting == "full"


def planner_messages(
    question: str, schema: Schema, examples: list[dict], mode: str = "paths", show_schema: bool = True
) -> list:
    """The planner conversation: instructions, examples, schema, question.

    The examples come before the schema: see :data:`prompts.mor.PLANNER`.

    Args:
        question: the user question.
        schema: the KB schema (the paper's "Entity Type List", plus relation types).
        examples: few-shot items ``{"question", "plan"}`` (paths) or ``{"question", "triplets"}``.
        mode: ``paths`` (§3.1) or ``triplets`` (the PRIME variant of §4.1).
        show_schema: list the schema (:func:`schema_shown`).
    """
    ents, rels = schema_parts(schema)
    block = P.SCHEMA.format(entity_types=ents, relation_types=rels) if show_schema else ""
    if mode == "triplets":
        system, user = P.TRIPLETS_SYSTEM, P.TRIPLETS
        shots = [
            P.TRIPLET_EXAMPLE.format(question=ex["question"], triplets=_compact(ex["triplets"])) for ex in examples
        ]
    else:
        system, user = P.PLANNER_SYSTEM, P.PLANNER
        shots = [P.PLANNER_EXAMPLE.format(question=ex["question"], plan=_compact(ex["plan"])) for ex in examples]
    text = user.format(examples="\n\n".join(shots) or "(none)", schema=block, question=question)
    return [{"role": "system", "content": system.template}, {"role": "user", "content": text}]


def replan_messages(history: list, plan: dict, problems: list[str], question: str) -> list:
    """Continue the planner chat: its last plan as the assistant turn, then what was wrong."""
    said = _compact(plan)
    listed = "\n".join(f"- {p}" for p in problems) or "- no usable route"
    ask = P.REPLAN.format(problems=listed, question=question)
    return [*history, {"role": "assistant", "content": said}, {"role": "user", "content": ask}]


def plan_choices(schema: Schema, question: str, mode: str) -> dict[str, list[str]]:
    """What a constrained planner may write (llama.cpp models): the KB's types and relations, question spans.

    Restrictions are spans of the question or empty (:mod:`agents.llm.constrained`).
    """
    types, rels = sorted(schema.entity_types), ["", *sorted(schema.relation_types)]
    spans = ["", *question_spans(question)]
    if mode == "triplets":
        return {
            "triplets.head.type": types,
            "triplets.tail.type": types,
            "triplets.relation": rels,
            "triplets.head.restriction": spans,
            "triplets.tail.restriction": spans,
            "target": types,
        }
    return {"routes.nodes.type": types, "routes.nodes.relation": rels, "routes.nodes.restriction": spans}


def plan(
    model: BaseChatModel, messages: list, mode: str, method: str, choices: dict | None = None
) -> tuple[Plan | None, dict | None, dict]:
    """Planner: one structured call.

    Returns:
        (the plan as reasoning paths or None, the raw reply as a dict for the trace, usage).
    """
    schema_cls = TripletPlan if mode == "triplets" else Plan
    reply, usage = call_structured(model, schema_cls, messages, role="planner", method=method, choices=choices)
    if reply is None:
        return None, None, usage
    raw = reply.model_dump(exclude_defaults=True)
    return (plan_from_triplets(reply) if isinstance(reply, TripletPlan) else reply), raw, usage


def planner_turn(
    kb: KnowledgeBase, ctx: MoRContext, model: BaseChatModel, question: str, iteration: int, earlier: dict
) -> tuple[list, list[dict]]:
    """The planner's conversation for turn ``iteration`` and the examples it shows.

    The first turn holds the instructions, the examples, the schema and the question; a later turn
    continues ``earlier["planner_messages"]`` with its ``raw_plan`` and the problems in ``feedback``
    (it shows no new examples).
    """
    if iteration > 1:
        turn = replan_messages(
            earlier["planner_messages"], earlier.get("raw_plan") or {}, earlier.get("feedback", []), question
        )
        return turn, []
    n = few_shot_count(ctx.num_few_shot, ctx.small_model_few_shot, ctx.llm)
    shots = planner_shots(kb, question, ctx.examples, n, ctx.planner, ctx.few_shot, ctx.plan_relations)
    show = schema_shown(ctx.planner_schema, model, is_llama_cpp(model), len(shots))
    messages = planner_messages(question, kb.graph.schema(), shots, ctx.planner, show)
    return messages, shots


def checked_plan(
    kb: KnowledgeBase,
    ctx: MoRContext,
    model: BaseChatModel,
    question: str,
    messages: list,
    shown: list[dict] | None = None,
) -> tuple[dict, dict | None, dict]:
    """Ask the planner and validate its plan against the KB schema (:func:`agents.mor.plan.validate_plan`).

    ``shown``: the examples this turn's messages show (:func:`planner_turn`), found again when not given.

    Returns:
        (the validated plan, or an invalid one naming an unparseable reply; the raw reply; usage).
    """
    schema = kb.graph.schema()
    shots = None
    if grounds_plan(ctx.ground_plan, model, ctx.planner):
        n = few_shot_count(ctx.num_few_shot, ctx.small_model_few_shot, ctx.llm)
        shots = shown or planner_shots(kb, question, ctx.examples, n, ctx.planner, ctx.few_shot, ctx.plan_relations)
        ruled = ruled_plan(kb, question, shots)
        if ruled is not None:  # the examples leave nothing to choose: no call (agents/mor/grounding.py)
            return validate_plan(ruled, schema, ctx.targets(), ctx.max_hops), {"rule": RULED}, {}
    choices = plan_choices(schema, question, ctx.planner) if is_llama_cpp(model) else None
    reply, raw, calls = plan(model, messages, ctx.planner, ctx.structured_method, choices)
    if reply is None:
        return {"valid": False, "target": None, "routes": [], "shown": [], "problems": [UNPARSEABLE]}, raw, calls
    if shots is not None:
        reply = ground_plan(kb, question, reply, shots)
    return validate_plan(reply, schema, ctx.targets(), ctx.max_hops), raw, calls


RULED = "the shown examples share one route and the question names one KB entity of its start type"


def grounds_plan(setting: str, llm: object, mode: str) -> bool:
    """Whether the plan is grounded (``ground_plan``; :mod:`agents.mor.grounding`): ``auto``, a small model's."""
    return mode == "paths" and (setting == "on" or (setting == "auto" and is_small_model(llm)))


def answer(model: BaseChatModel, question: str, references: str, method: str) -> tuple[Answer | None, dict]:
    """Answerer (QA mode): a short answer from the top retrieved entities, or None.

    None when the reply is unparseable or when the retrieved entities (the data blocks of
    ``references``) do not support it; the latter adds ``unsupported_answers`` to the usage.
    """
    messages = [
        ("system", P.ANSWER_SYSTEM.template),
        ("human", P.ANSWER.format(question=question, references=references)),
    ]
    return grounded_answer(model, Answer, messages, question, references, method, "mor answerer")


def answer_decision(reply: Answer | None, usage: dict) -> str:
    """The trace decision of the answer step: answered, or which fallback and why."""
    return grounded_decision(reply, usage, "top entity", UNSUPPORTED)


def qa_answer(
    model: BaseChatModel, question: str, top: dict, topic_names: list[str], method: str, chars: int = ANSWER_CHARS
) -> tuple[str, str, dict]:
    """QA mode: a short answer from the top entities of ``top`` (``ranked``, ``evidence``, ``answer``).

    The answerer reads the ranked entities, best first, up to ``chars`` characters of their paths
    and texts (:func:`agents.mor.output.references_text`). A reply naming the question's own entity
    (a topic entity, or a phrase of the question) or a passage by its id is not kept, unless it is
    one side of an "X or Y" the question offers (:func:`agents.mor.output.offered_choice`); nor is
    an unparseable or unsupported one: the retrieval's answer (``top["answer"]``: the top entity's
    name, or the passages' span) stands instead.

    Returns:
        (the answer, the trace decision, usage).
    """
    refs = references_text(top.get("ranked", []), top.get("evidence", []), chars)
    reply, calls = answer(model, question, refs, method)
    chosen = reply is not None and offered_choice(reply.answer, question)
    own = reply is not None and not chosen and is_own(reply.answer, question, topic_names)
    an_id = reply is not None and names_passage(reply.answer.split("#", 1)[0], top.get("ranked", []))  # any chunk
    text = reply.answer if reply and not own and not an_id else top.get("answer", "")
    if own:
        decision = "the reply names the question's own entity: top entity"
    elif an_id:
        decision = "the reply names a passage by its id: the passages' span"
    else:
        decision = answer_decision(reply, calls)
    return text, decision, calls
