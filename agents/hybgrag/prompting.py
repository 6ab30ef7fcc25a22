"""HybGRAG's prompt messages: the router's conversation and the critics' examples as text (no LLM here).

The router's first turn puts the part fixed for a KB (instructions, entity and relation types)
before the examples and the question, so llama.cpp evaluates that prefix once for consecutive
questions; later turns continue the conversation with the router's last action and the feedback.
Examples and references are quoted data blocks (:func:`prompts.data_block.data_block`).
"""

from __future__ import annotations

import json

from hybridrag.kb.model import Schema
from hybridrag.prompts import hybgrag as P
from hybridrag.prompts.data_block import data_block


def schema_prompt_parts(schema: Schema) -> tuple[str, str]:
    """Entity types and relation types (with head → tail types) as prompt text."""
    ents = ", ".join(schema.entity_types)
    rels = ", ".join(
        f"{r.name} ({'|'.join(r.head_types)} → {'|'.join(r.tail_types)})" for r in schema.relation_types.values()
    )
    return ents, rels


def action_json(entities: list[dict], relations: list[str], module: str) -> str:
    """An action as compact JSON (no spaces: fewer tokens to read in examples and to write back)."""
    return json.dumps(
        {"entities": entities, "relations": relations, "module": module}, ensure_ascii=False, separators=(",", ":")
    )


def router_first_messages(question: str, schema: Schema, examples: list[dict]) -> list[dict]:
    """The opening router conversation: instructions, types, then the few-shot examples and the question.

    The part fixed for a KB (system prompt, entity and relation types, the task) comes first, so
    consecutive questions share that prefix and llama.cpp evaluates it once.
    """
    shots = "\n".join(
        P.ROUTER_EXAMPLE.format(
            block=data_block(
                [("question", ex["question"]), ("answer", action_json(ex["entities"], ex["relations"], ex["module"]))],
                example=i,
            )
        )
        for i, ex in enumerate(examples, 1)
    )
    ents, rels = schema_prompt_parts(schema)
    user = P.ROUTER_FIRST.format(
        examples=shots or "(none)", entity_types=ents, relation_types=rels or P.NO_RELATION_TYPES, question=question
    )
    return [{"role": "system", "content": P.ROUTER_SYSTEM.template}, {"role": "user", "content": user}]


def router_reflect_messages(history: list[dict], last: dict, feedback: str, question: str) -> list[dict]:
    """Continue the router chat: its last action as the assistant turn, then the feedback."""
    said = action_json(last.get("entities", []), last.get("relations", []), last.get("module", "text"))
    return [
        *history,
        {"role": "assistant", "content": said},
        {"role": "user", "content": P.ROUTER_REFLECT.format(feedback=feedback, question=question)},
    ]


def render_validations(shots: list[dict]) -> str:
    """Validator examples (``question, name, path, verdict``) with each reference as quoted data."""
    return (
        "\n\n".join(
            P.VALIDATOR_EXAMPLE.format(
                question=ex["question"],
                verdict=ex["verdict"],
                reference=data_block([("name", ex["name"]), ("path", ex["path"])], example=i),
            )
            for i, ex in enumerate(shots, 1)
        )
        or "(none)"
    )


def render_experience(bank: list[dict]) -> str:
    """Format experience-bank entries as commentor in-context examples."""
    out = []
    for i, ex in enumerate(bank, 1):
        critique = {k: ex.get(k, []) for k in ("wrong_entities", "wrong_relations")}
        critique = {"reasoning": ex.get("reasoning", ""), "error_type": ex["error_type"], **critique}
        fields = [
            ("question", ex["question"]),
            ("retrieval module", ex["module"]),
            ("topic entities", entity_list(ex.get("entities", []))),
            ("useful relations", ", ".join(ex.get("relations", [])) or "(none)"),
            ("critique", json.dumps(critique, ensure_ascii=False)),
        ]
        out.append(P.COMMENTOR_EXAMPLE.format(n=i, block=data_block(fields, example=i)))
    return "\n\n".join(out) or "(none)"


def entity_list(entities: list[dict]) -> str:
    """``name (type), ...`` as in the paper's figures."""
    return ", ".join(f"{e['name']} ({e.get('type') or 'unknown'})" for e in entities) or "(none)"
