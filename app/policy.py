"""What a remote client may set in a run's context, and within which limits.

A served run's settings have two owners. The OPERATOR (``hybridrag serve`` flags, a JSON
config file, the environment) decides everything that touches the server: KB
directories, model specs and base URLs, credentials, file paths, backends. A CLIENT (an
HTTP request's ``settings`` / ``configurable``, a Studio run's ``context``) may only

- pick a KB or a model among those the operator NAMED (``kb``, ``llm``: a name, never a
  path, URL or spec),
- tune the numeric settings listed in :data:`RULES`, within their bounds,
- pick fixed-choice strings (fusion ``mode``, ``structured_method``, ...) among their values.

Default deny: a Context field without a rule here is server-only. Adding a client choice
is one line in :data:`RULES` (e.g. ``"scoring": choice("dice", "cosine")``).

Python callers of ``graphs.get_graph(...)`` / ``context_for(...)`` are not clients: the
policy applies only where a server applies it (``app/``, or ``graphs.runtime.context_of``
when ``HYBRIDRAG_SERVER_MODE`` is on, as in the Agent Server deployment of langgraph.json).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from hybridrag.agents.context import env_flag
from hybridrag.app.server_config import LIMITS, ServerConfig, active_config

SERVER_MODE_ENV = "HYBRIDRAG_SERVER_MODE"


class PolicyError(ValueError):
    """A setting the server refuses; the message starts with the field's name."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"{name}: {problem}")
        self.field = name


@dataclass(frozen=True)
class Rule:
    """How a client may set one field: kind, numeric bounds (a number or a LIMITS name), choices."""

    kind: str  # kb | model | int | float | bool | choice | subset
    lo: float = 0
    hi: float | str = 0
    choices: tuple[str, ...] = ()


def count(hi: float | str, lo: int = 1) -> Rule:
    """An integer in ``lo..hi``."""
    return Rule("int", lo, hi)


def ratio(lo: float = 0.0, hi: float = 1.0) -> Rule:
    """A finite number in ``lo..hi``."""
    return Rule("float", lo, hi)


def choice(*values: str) -> Rule:
    """One of ``values``."""
    return Rule("choice", choices=values)


def subset(*values: str) -> Rule:
    """A comma-separated, non-empty subset of ``values``."""
    return Rule("subset", choices=values)


FLAG = Rule("bool")
STRUCTURED = choice("function_calling", "json_schema", "json_mode")

RULES: dict[str, Rule] = {
    # every method
    "kb": Rule("kb"),
    "llm": Rule("model"),
    "top_k": count("max_top_k"),
    "max_iterations": count("max_iterations"),
    "structured_method": STRUCTURED,
    "answer": FLAG,
    "approve": FLAG,
    # fusion
    "mode": choice("hybrid", "vector", "graph", "bm25"),
    "k1": count("max_top_k"),
    "epsilon": ratio(),
    "tokenizer": choice("bigram", "word"),
    "scoring": choice("evidence", "paper", "normalised", "rrf"),
    "hops": count(3),
    "seed_passages": count(1000, lo=0),
    "text_rrf_k": count(1000, lo=0),
    "corroborate": FLAG,
    # hybgrag
    "radius": count(3, lo=0),
    "num_references": count(10),
    "num_few_shot": count(20, lo=0),
    "small_model_few_shot": count(20, lo=0),
    "validator_examples": count(10, lo=0),
    "examples": choice("kb", "bundled", "none"),
    "num_experiences": count(50, lo=0),
    "commentor": choice("llm", "rules"),
    "judge": choice("auto", "llm", "rules"),  # who judges; small-model rules (hybgrag, hydrarag, ssrag)
    "text_hops": FLAG,
    # mor
    "planner": choice("paths", "triplets"),
    "max_hops": count(5),
    "ranking": choice("graph_first", "paper"),
    "retrieval": choice("mixed", "structural", "textual"),
    "text_matcher": choice("bm25", "dense"),
    "seed_k": count("max_top_k"),
    "layer_k": count("max_top_k"),
    "layer_match": choice("always", "restricted"),
    "max_frontier": count(10000),
    "num_candidates": count(500),
    "fill_with_text": FLAG,
    "reranker": choice("neural", "structure", "none"),
    "fingerprint_length": count(5),
    "reranker_features": subset("tf", "sf", "ti"),
    # hydrarag
    "max_depth": count(5),
    "max_width": count(10),
    "beam_width": count(200),
    "cross_width": count(50),
    "lambda_sem": ratio(),
    "alpha_cross": ratio(),
    "rho_kg": ratio(),
    "rho_docs": ratio(),
    "rho_web": ratio(),
    "alpha_source": ratio(),
    "alpha_agreement": ratio(),
    "alpha_alignment": ratio(),
    "gamma": ratio(),
    "link_threshold": ratio(),
    "num_sentences": count(10),
    "doc_pool": count(20, lo=0),
    "web_results": count(10),
    "source_selector": FLAG,
    "path_refinement": FLAG,
    "variant": choice("hydrarag", "hydrarag-e"),
    "exploration_temperature": ratio(0.0, 2.0),
    "beam_score": choice("cross", "relevance"),
    "follow_up_topics": FLAG,
    "path_summary": FLAG,
    "length_floor": FLAG,
    "beam_text": choice("relations", "path"),
    "num_examples": count(5, lo=0),
    # ssrag
    "vector_k": count("max_top_k"),
    "graph_k": count("max_top_k"),
    "llm_nodes": count("max_top_k", lo=0),
    "graph_hops": count(3),
    "max_node_facts": count(100),
    "graph_to_text": choice("llm", "template"),
    "routing": choice("llm", "rules"),
    "web_k": count(10),
    "local_min_score": ratio(),
    "link_min_score": ratio(),
    "max_query_tokens": count(200, lo=5),
    "rerank_query": choice("augmented", "original"),
    "dedup_threshold": ratio(),
    "llm_dedup": FLAG,
    "context_budget": count(20000, lo=100),
    "text_edges": FLAG,
    "n_examples": count(10, lo=0),
    "bare_contexts_last": FLAG,
    "fact_scoring": choice("parts", "sentence"),
    "graph_vectors": choice("facts", "text"),
    "joint_rerank": choice("interleave", "paper"),
    "audit": FLAG,
    "relation_match": ratio(),
    "prune_text": choice("relations", "path"),
}


PYTHON_ONLY = frozenset({"tools"})
"""Fields that hold Python objects (a method's retrieval-step tools): never from a client, never in a schema."""


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
