"""What a remote client may set in a run's context, and within which limits.

A served run's settings have two owners. The OPERATOR (``hybridrag serve`` flags, a JSON
config file, the environment) decides everything that touches the server: KB
directories, model specs and base URLs, credentials, file paths, backends. A CLIENT (an
HTTP request's ``settings`` / ``configurable``, a Studio run's ``context``) may only

- pick a KB or a model among those the operator NAMED (``kb``, ``llm``: a name, never a
  path, URL or spec),
- tune the numeric settings listed in :data:`RULES`, within their bounds,
- pick fixed-choice strings (fusion ``mode``, ``structured_method``, ...) among their values.

Default deny: a Context field without a rule in :data:`app.policy_rules.RULES` is
server-only; this module checks a client's settings against those rules.

Python callers of ``graphs.get_graph(...)`` / ``context_for(...)`` are not clients: the
policy applies only where a server applies it (``app/``, or ``graphs.runtime.context_of``
when ``HYBRIDRAG_SERVER_MODE`` is on, as in the Agent Server deployment of langgraph.json).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from hybridrag.agents.context import env_flag
from hybridrag.app.policy_rules import FLAG, PYTHON_ONLY, RULES, STRUCTURED, Rule, choice, count, ratio, subset
from hybridrag.app.server_config import LIMITS, ServerConfig, active_config

SERVER_MODE_ENV = "HYBRIDRAG_SERVER_MODE"
__all__ = [  # the rules are re-exported: callers import them from here
    "FLAG",
    "PYTHON_ONLY",
    "RULES",
    "STRUCTURED",
    "PolicyError",
    "Rule",
    "build_context",
    "check_batch",
    "check_name",
    "check_settings",
    "choice",
    "client_fields",
    "count",
    "ratio",
    "server_context",
    "server_mode",
    "subset",
]


class PolicyError(ValueError):
    """A setting the server refuses; the message starts with the field's name."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.field = name


def client_fields(cls: type) -> list[str]:
    """Fields of a Context class a client may set."""
    return [f.name for f in fields(cls) if f.name in RULES]


def bounds(name: str, rule: Rule, config: ServerConfig) -> tuple[float, float]:
    """Inclusive bounds of a numeric field: the operator's override, else the rule's (a limit by name)."""
    if name in config.bounds:
        return config.bounds[name]
    hi = config.limits.get(rule.hi, LIMITS.get(rule.hi, 0)) if isinstance(rule.hi, str) else rule.hi
    return rule.lo, hi


def _number(name: str, value: Any, rule: Rule, config: ServerConfig) -> Any:
    lo, hi = bounds(name, rule, config)
    kind = "an integer" if rule.kind == "int" else "a number"
    ok_type = isinstance(value, int) if rule.kind == "int" else isinstance(value, int | float)
    if isinstance(value, bool) or not ok_type or not math.isfinite(value) or not lo <= value <= hi:
        lo_s, hi_s = (int(lo), int(hi)) if rule.kind == "int" else (lo, hi)
        raise PolicyError(name, f"must be {kind} from {lo_s} to {hi_s}, not {value!r}")
    return value


def _value(name: str, value: Any, rule: Rule, config: ServerConfig) -> dict[str, Any]:
    """The context values one allowed client setting becomes (raises PolicyError)."""
    if rule.kind in ("int", "float"):
        return {name: _number(name, value, rule, config)}
    if rule.kind == "bool":
        if not isinstance(value, bool):
            raise PolicyError(name, f"must be true or false, not {value!r}")
        return {name: value}
    if not isinstance(value, str):
        raise PolicyError(name, f"must be a string, not {value!r}")
    if rule.kind == "kb":
        if value not in config.kbs:
            raise PolicyError(name, f"unknown KB {value!r}; this server offers: {', '.join(config.kbs)}")
        return {name: config.kbs[value]}
    if rule.kind == "model":
        if value not in config.models:
            offered = ", ".join(config.models) or "none (the operator chose the model)"
            by_spec = [n for n, m in config.models.items() if m.spec == value]
            hint = f" (a model is picked by its name: {by_spec[0]!r} runs {value})" if by_spec else ""
            raise PolicyError(name, f"unknown model {value!r}; this server offers: {offered}{hint}")
        model = config.models[value]
        return {name: model.spec, "llm_base_url": model.base_url}
    items = [v.strip() for v in value.split(",")] if rule.kind == "subset" else [value]
    if not items or any(v not in rule.choices for v in items):
        many = "a comma-separated subset of" if rule.kind == "subset" else "one of"
        raise PolicyError(name, f"must be {many} {', '.join(rule.choices)}, not {value!r}")
    return {name: value}


def check_name(cls: type, name: str) -> Rule:
    """The rule of a field a client may set; PolicyError for an unknown or server-side field."""
    if name not in {f.name for f in fields(cls)}:
        raise PolicyError(name, f"unknown setting; a client may set: {', '.join(client_fields(cls))}")
    if name in PYTHON_ONLY:
        raise PolicyError(name, "server-side setting: Python objects (LangChain tools), never set by a client")
    if name not in RULES:
        raise PolicyError(name, "server-side setting, chosen by the operator, not by a client")
    return RULES[name]


def check_settings(cls: type, settings: Mapping[str, Any], config: ServerConfig) -> dict[str, Any]:
    """Client settings → context values; any field not allowed, or out of bounds, raises PolicyError."""
    known = {f.name for f in fields(cls)}
    out: dict[str, Any] = {}
    for name, value in settings.items():
        values = _value(name, value, check_name(cls, name), config)
        out.update({k: v for k, v in values.items() if k in known})
    return out


def operator_values(cls: type, config: ServerConfig) -> dict[str, Any]:
    """The operator's values for a method's context: settings ("*" then the method's), KB, model."""
    known = {f.name for f in fields(cls)}
    values = {k: v for k, v in config.settings.get("*", {}).items() if k in known}
    from hybridrag.graphs import method_of

    values.update(config.settings.get(method_of(cls), {}))
    values["kb"] = config.kbs[config.kb_name()]
    if "llm" in known and config.model_name():
        model = config.models[config.model_name()]
        values.update(llm=model.spec, llm_base_url=model.base_url)
    return values


def build_context(cls: type, settings: Mapping[str, Any], config: ServerConfig) -> Any:
    """A context from the operator's values and the client's checked settings (marked as checked)."""
    ctx = cls(**{**operator_values(cls, config), **check_settings(cls, settings, config)})
    object.__setattr__(ctx, "_policy_checked", True)
    return ctx


def check_batch(size: int, config: ServerConfig) -> None:
    """Refuse a batch larger than the operator's ``max_batch``."""
    if size > config.max_batch:
        raise PolicyError("inputs", f"a batch holds at most {config.max_batch} inputs, not {size}")


def server_mode() -> bool:
    """Whether graph nodes must apply the policy to the run context (``HYBRIDRAG_SERVER_MODE``)."""
    return env_flag(SERVER_MODE_ENV)  # a misspelt value is an error naming it, never "off"


def server_context(ctx: Any, cls: type) -> Any:
    """The run context a server may use: a client's dict or dataclass checked against the policy."""
    if ctx is not None and getattr(ctx, "_policy_checked", False):
        return ctx
    if ctx is None:
        settings: Mapping[str, Any] = {}
    elif isinstance(ctx, Mapping):
        settings = ctx
    else:  # LangGraph built the dataclass from the client's dict: fields that differ, or that it named
        default, named = cls(), _named_in_run_config()
        settings = {
            f.name: getattr(ctx, f.name)
            for f in fields(cls)
            if f.name in named or getattr(ctx, f.name) != getattr(default, f.name)
        }
    return build_context(cls, settings, active_config())


def _named_in_run_config() -> set[str]:
    """Keys of the run's ``configurable`` (the Agent Server mirrors the client's context there)."""
    try:
        from langgraph.config import get_config

        return set(get_config().get("configurable") or {})
    except RuntimeError:  # not inside a run
        return set()
