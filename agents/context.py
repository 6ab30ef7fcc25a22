"""Run-scoped settings every method shares: the base :class:`Context` and :class:`LLMContext`.

Each method's settings subclass one of them in ``agents/<method>/context.py``; the method's graph
uses that class as its LangGraph ``context_schema``. Every field carries a description and falls
back to the ``HYBRIDRAG_<FIELD>`` environment variable, validated as the field's type by pydantic
(:func:`parse_env`: a misspelt boolean or a value outside a field's choices is an error naming the
variable, never a silent default).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any, Literal, get_args, get_origin, get_type_hints

from pydantic import TypeAdapter, ValidationError

from hybridrag.agents.llm.models import DEFAULT_LLM

SchemaHook = Callable[[type, dict], None]
"""Called with (context class, JSON schema) after the schema is built (a server lists its choices)."""
_SCHEMA_HOOKS: list[SchemaHook] = []

StructuredMethod = Literal["function_calling", "json_schema", "json_mode"]
"""How a role asks for structured output: a choice field to annotate as this Literal (Studio lists it)."""


def add_schema_hook(hook: SchemaHook) -> None:
    """Register ``hook`` to adjust every context's JSON schema (once per hook)."""
    if hook not in _SCHEMA_HOOKS:
        _SCHEMA_HOOKS.append(hook)


class EnvSettingError(ValueError):
    """An environment variable whose value does not fit its setting; the message names the variable."""


BOOL_SPELLINGS = "true/false, 1/0, yes/no, on/off, t/f, y/n (any case)"
"""What a boolean environment value may be (pydantic's lax bool parsing); anything else is refused."""


def _env(name: str) -> str | None:
    return os.environ.get(f"HYBRIDRAG_{name.upper()}")


def _expected(annotation: Any) -> str:
    """What a value of ``annotation`` looks like, for an error message."""
    if annotation is bool:
        return f"a boolean: {BOOL_SPELLINGS}"
    if get_origin(annotation) is Literal:
        return "one of " + ", ".join(str(a) for a in get_args(annotation))
    if annotation is int:
        return "a whole number"
    if annotation is float:
        return "a number"
    return f"a value of type {getattr(annotation, '__name__', annotation)}"


@lru_cache(maxsize=256)
def _adapter(annotation: Any) -> TypeAdapter:
    return TypeAdapter(annotation)


def parse_env(variable: str, raw: str, annotation: Any) -> Any:
    """``raw`` (the value of environment ``variable``) validated as ``annotation`` by pydantic.

    A misspelt boolean (``ture``), a word for a number or a value outside a ``Literal``'s choices
    raises :class:`EnvSettingError` naming the variable and what it may be; nothing falls back to a
    default silently.
    """
    try:
        return _adapter(annotation).validate_python(raw.strip())
    except ValidationError:
        raise EnvSettingError(f"{variable}={raw!r}: expected {_expected(annotation)}") from None


def env_flag(variable: str, default: bool = False) -> bool:
    """Boolean environment ``variable`` (unset or empty: ``default``); a misspelling raises :class:`EnvSettingError`."""
    raw = os.environ.get(variable, "")
    return default if not raw.strip() else parse_env(variable, raw, bool)


@lru_cache(maxsize=64)
def field_types(cls: type) -> dict[str, Any]:
    """Each field's annotation, resolved (a field whose annotation cannot be resolved: its default's type)."""
    try:
        hints = get_type_hints(cls)
    except (NameError, TypeError):
        hints = {}
    return {f.name: hints.get(f.name, type(f.default)) for f in fields(cls)}


def setting(default: Any, description: str, **metadata: Any) -> Any:
    """A context field with its description (``metadata`` adds flags such as ``python_only``)."""
    return field(default=default, metadata={"description": description, **metadata})


@dataclass(kw_only=True)
class Context:
    """Run-scoped settings; each field falls back to the ``HYBRIDRAG_<FIELD>`` env var."""

    kb: str = setting("sample", "KB directory built by `hybridrag ingest`, or 'sample' for the bundled sample KB.")
    top_k: int = setting(10, "Number of ranked results returned.")
    max_iterations: int = setting(4, "Upper bound on corrective feedback loops (LLM methods).")
    approve: bool = setting(
        False,
        "Pause before retrieval for a human to approve or edit the method's decision (hybgrag: the "
        "router's action; mor: the plan; hydrarag: the sources; ssrag: the route); resume with true "
        "or {key: edited value}. Needs a checkpointed thread (Studio, or graphs.get_builder(name) "
        "compiled with a checkpointer).",
    )
    spelling: bool = setting(
        True, "Respell the question's typo'd or lower-case KB names as the KB spells them first (tools/spelling.py)."
    )
    tools: dict[str, Any] | None = setting(
        None,
        "Python only: replace retrieval steps of the method by your own LangChain tools, {step name: tool} "
        "(hybridrag.tools.steps; e.g. {'dense_search': retriever.as_tool()}); never settable by a client.",
        python_only=True,
    )

    def __post_init__(self) -> None:
        """Apply ``HYBRIDRAG_*`` environment overrides to fields left at their default (not to ``tools``)."""
        for f in fields(self):
            raw = None if f.metadata.get("python_only") else _env(f.name)
            if raw is None or getattr(self, f.name) != f.default:
                continue
            setattr(self, f.name, parse_env(f"HYBRIDRAG_{f.name.upper()}", raw, field_types(type(self))[f.name]))

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: Any, handler: Any) -> dict:
        """The JSON schema Studio renders: each field's description; Python-only fields left out."""
        schema = handler(core_schema)
        target = handler.resolve_ref_schema(schema)
        for f in fields(cls):
            if f.metadata.get("python_only"):  # objects from Python (tools): never offered to a client
                target.get("properties", {}).pop(f.name, None)
                if f.name in target.get("required", []):
                    target["required"].remove(f.name)
                continue
            prop = target.get("properties", {}).get(f.name)
            if prop is not None and f.metadata.get("description"):
                prop.setdefault("description", f.metadata["description"])
        for hook in _SCHEMA_HOOKS:
            hook(cls, target)
        return schema


@dataclass(kw_only=True)
class LLMContext(Context):
    """The settings of a method with LLM roles: which model, where, and how it answers in a schema."""

    llm: str = setting(
        DEFAULT_LLM, "Chat model of every role, 'provider:model' (e.g. openai:gpt-4o-mini, local:smollm2)."
    )
    llm_base_url: str = setting(
        "", "Base URL of an OpenAI-compatible server (vLLM, Ollama, llama.cpp); empty for none."
    )
    structured_method: StructuredMethod = setting(
        "function_calling", "Structured output method: function_calling, json_schema or json_mode."
    )
