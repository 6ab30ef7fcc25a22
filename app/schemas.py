"""Request and response schemas of the LangServe app: each method's client settings (``app.policy``)."""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from hybridrag.app.server_config import ServerConfig

MAX_QUESTION_CHARS = 2000
OUTPUT_KEYS = ("answer", "ranked", "evidence", "trace", "usage")
THREAD_ONLY = frozenset({"approve"})
"""Settings that need a checkpointed thread (the Agent Server's): the LangServe app lists them, marked
as refused there (its runs are single requests, nothing to pause and resume), and refuses them set."""


class MethodOutput(BaseModel):
    """The common output shape of every method."""

    answer: str = Field(default="", description="The answer (an entity name or generated text).")
    ranked: list[dict] = Field(default_factory=list, description="Ranked items {id, kind, name, score, source}.")
    evidence: list[dict] = Field(default_factory=list, description="Evidence {source, id, text, score, path}.")
    trace: list[dict] = Field(default_factory=list, description="One entry per node step: {node, decision, ...}.")
    usage: dict = Field(default_factory=dict, description="LLM calls, tokens and seconds per stage.")


def _context_fields(name: str) -> list[tuple[str, type, Any, str]]:
    """(field, type, default, description) of a method's Context dataclass."""
    from hybridrag.graphs import context_class

    cls = context_class(name)
    hints = typing.get_type_hints(cls)
    return [
        (f.name, hints.get(f.name, Any), f.default, f.metadata.get("description", "")) for f in dataclasses.fields(cls)
    ]


def client_fields(name: str, config: ServerConfig) -> list[tuple[str, type, str]]:
    """(field, type, description) of the settings a client may send to a method (``app.policy``)."""
    from hybridrag.app.policy import RULES, bounds

    out = []
    for f, t, default, desc in _context_fields(name):
        rule = RULES.get(f)
        if rule is None:
            continue
        if rule.kind == "kb":
            t = choices(config.kbs)
            allowed = f"one of this server's KBs: {', '.join(config.kbs)} (default {config.kb_name()})"
        elif rule.kind == "model":
            t = choices(config.models)
            allowed = (
                f"one of this server's models: {', '.join(config.models)} (default {config.model_name()})"
                if config.models
                else "set by the operator"
            )
        elif rule.kind in ("int", "float"):
            lo, hi = bounds(f, rule, config)
            allowed = f"{lo:g} to {hi:g}; default {default!r}"
        elif rule.kind in ("choice", "subset"):
            t = choices(rule.choices) if rule.kind == "choice" else t
            many = "comma-separated subset of" if rule.kind == "subset" else "one of"
            allowed = f"{many} {', '.join(rule.choices)}; default {default!r}"
        else:
            allowed = f"default {default!r}"
        if f in THREAD_ONLY:
            allowed = "LangGraph Studio / Agent Server threads only; refused by this server, whose runs cannot pause"
        out.append((f, t, f"{desc} ({allowed})"))
    return out


class Choices(str):
    """A string field whose JSON schema lists its values, which the playground and /docs offer.

    The value is checked by ``app.policy`` (a 400 naming the field), not by the schema.
    """

    values: tuple[str, ...] = ()


def choices(names: Any) -> Any:
    """A ``Choices`` type listing ``names`` (plain ``str`` when there are none)."""
    names = tuple(names)
    return type("Choices", (Choices,), {"values": names}) if names else str


def plain(t: Any) -> Any:
    """The Python type a field is validated as (``str`` for a ``Choices`` type)."""
    return str if isinstance(t, type) and issubclass(t, Choices) else t


def optional(t: Any, description: str) -> tuple[Any, Any]:
    """A field a client may leave out, typed ``t``.

    Not ``t | None``: the JSON schema gets no null type, which LangServe's playground cannot render.
    """
    return plain(t), Field(default=None, description=description)


def settings_fields_model(title: str, fields: list[tuple[str, Any, str]], **config: Any) -> type[BaseModel]:
    """A model of optional client settings for the playground's form.

    Its JSON schema has no ``"default": null`` (the form starts empty: an unset setting is left out)
    and lists a ``Choices`` field's values as ``enum``.

    The schema is fixed at the model level (``json_schema_extra`` of its config), which survives
    LangServe's copy of the config model (it keeps field types and defaults, not field extras).
    """
    enums = {f: list(t.values) for f, t, _ in fields if isinstance(t, type) and issubclass(t, Choices)}

    def extra(schema: dict) -> None:
        for name, prop in schema.get("properties", {}).items():
            if prop.get("default", 0) is None:
                del prop["default"]
            if name in enums:
                prop["enum"] = enums[name]

    return create_model(
        title,
        __config__=ConfigDict(json_schema_extra=extra, **config),
        **{f: optional(t, desc) for f, t, desc in fields},
    )


def _no_default(schema: dict) -> None:
    schema.pop("default", None)


def _question_ok(value: str) -> str:
    if not value.strip():
        raise ValueError("empty question: ask something, e.g. 'who directed Forrest Gump'")
    return value


def _title(name: str, suffix: str) -> str:
    return "".join(p.capitalize() for p in name.split("_")) + suffix


def settings_model(name: str, config: ServerConfig) -> type[BaseModel]:
    """Pydantic model of the settings a client may send: the allowed Context fields, optional, strict.

    ``true`` or ``"1"`` is no number and ``1`` no boolean: a 422 names the field, nothing is coerced.
    """
    return settings_fields_model(_title(name, "Settings"), client_fields(name, config), extra="forbid", strict=True)


def input_model(name: str, config: ServerConfig) -> type[BaseModel]:
    """Pydantic input model of a method: a required question and optional settings."""
    return create_model(
        _title(name, "Input"),
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
            settings_model(name, config),
            Field(
                default=None,
                json_schema_extra=_no_default,
                description=f"Optional {name} settings a client may choose (docs/serving.md).",
            ),
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
