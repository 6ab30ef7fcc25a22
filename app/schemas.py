"""Request and response schemas of the LangServe app, derived from each method's Context."""

from __future__ import annotations

import dataclasses
import json
import typing
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

MAX_QUESTION_CHARS = 2000
OUTPUT_KEYS = ("answer", "ranked", "evidence", "trace", "usage")


class MethodOutput(BaseModel):
    """The common output shape of every method."""

    answer: str = Field(default="", description="The answer (an entity name or generated text).")
    ranked: list[dict] = Field(
        default_factory=list, description="Ranked items {id, kind, name, score, source}."
    )
    evidence: list[dict] = Field(
        default_factory=list, description="Evidence {source, id, text, score, path}."
    )
    trace: list[dict] = Field(
        default_factory=list, description="One entry per node step: {node, decision, ...}."
    )
    usage: dict = Field(default_factory=dict, description="LLM calls, tokens and seconds per stage.")


class UserInputError(ValueError):
    """A request the server refuses with a 4xx: the message is meant for the client."""


def _context_fields(name: str) -> list[tuple[str, type, Any, str]]:
    """(field, type, default, description) of a method's Context dataclass."""
    from graphs import context_class

    cls = context_class(name)
    hints = typing.get_type_hints(cls)
    return [
        (f.name, hints.get(f.name, Any), f.default, f.metadata.get("description", ""))
        for f in dataclasses.fields(cls)
    ]


def _question_ok(value: str) -> str:
    if not value.strip():
        raise ValueError("empty question: ask something, e.g. 'who directed Forrest Gump'")
    return value


@cache
def settings_model(name: str) -> type[BaseModel]:
    """Pydantic model of a method's settings: every Context field, optional, extras forbidden."""
    fields = {
        f: (t | None, Field(default=None, description=f"{desc} (default: {default!r})"))
        for f, t, default, desc in _context_fields(name)
    }
    cls_name = "".join(p.capitalize() for p in name.split("_")) + "Settings"
    return create_model(cls_name, __config__=ConfigDict(extra="forbid"), **fields)


@cache
def input_model(name: str) -> type[BaseModel]:
    """Pydantic input model of a method: a required question and optional settings."""
    cls_name = "".join(p.capitalize() for p in name.split("_")) + "Input"
    return create_model(
        cls_name,
        __config__=ConfigDict(extra="forbid"),
        __validators__={"question_not_blank": field_validator("question")(_question_ok)},
        question=(
            str,
            Field(
                ...,
                min_length=1,
                max_length=MAX_QUESTION_CHARS,
                description=f"The question (1 to {MAX_QUESTION_CHARS} characters).",
            ),
        ),
        settings=(
            settings_model(name) | None,
            Field(default=None, description=f"Optional {name} context fields; see the method's Context."),
        ),
    )


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, set | tuple):
        return list(value)
    return str(value)


def to_json(value: Any) -> Any:
    """A JSON-ready copy (dataclasses, pydantic objects and numpy scalars converted)."""
    return json.loads(json.dumps(value, default=_jsonable, ensure_ascii=False))


def _output(values: dict | None) -> dict:
    values = values or {}
    return to_json({k: values[k] for k in OUTPUT_KEYS if k in values})

