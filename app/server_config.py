"""The operator's side of a served run: named KBs and models, limits, server-side settings.

``hybridrag serve`` builds one from its flags and ``--config FILE`` (``app/operator.py``);
the Agent Server deployment reads the JSON file named by ``HYBRIDRAG_SERVER_CONFIG``, else the
one ``langgraph.json`` names by ``HYBRIDRAG_DEFAULT_SERVER_CONFIG``: the shipped
``app/studio_default.json`` (the sample KB, SmolLM2 offline, and the model ``HYBRIDRAG_LLM``
names when it is set) (:func:`active_config`). The file's keys are the fields of :class:`ServerConfig`::

    {"kbs": {"movies": "/srv/kb/movies", "sample": "sample"}, "default_kb": "movies",
     "models": {"smol": {"spec": "local:smollm2"},
                "qwen": {"spec": "openai:qwen2.5", "base_url": "http://10.0.0.5:8000/v1"}},
     "limits": {"max_top_k": 20, "max_iterations": 3}, "bounds": {"beam_width": [1, 50]},
     "settings": {"*": {"structured_method": "json_mode"}, "hybgrag": {"few_shot": "/srv/shots.json"}},
     "run_timeout": 120, "max_batch": 8, "max_edit_chars": 20000,
     "max_body_bytes": 65536, "max_metadata_bytes": 2048, "max_tags": 16, "max_question_chars": 2000,
     "graph_neighbours": 40, "graph_max_hops": 3, "graph_name_chars": 200, "env_model": true}

A relative path is read from the working directory, else from the hybridrag package's folder.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

SERVER_CONFIG_ENV = "HYBRIDRAG_SERVER_CONFIG"
DEFAULT_CONFIG_ENV = "HYBRIDRAG_DEFAULT_SERVER_CONFIG"
"""Set by langgraph.json to the shipped default; HYBRIDRAG_SERVER_CONFIG (the operator's file) wins."""
LLM_ENV, LLM_URL_ENV = "HYBRIDRAG_LLM", "HYBRIDRAG_LLM_BASE_URL"
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
LIMITS: dict[str, float] = {"max_top_k": 50, "max_iterations": 5}
"""Operator limits that bound several fields (``hybridrag serve --max-top-k / --max-iterations``)."""
GRAPH_HOPS = 3  # the most graph_max_hops may be (app.graph_view.MAX_HOPS, which bounds the path search)


@dataclass(frozen=True)
class ModelChoice:
    """A chat model the operator named: its spec and, for OpenAI-compatible servers, a base URL."""

    spec: str
    base_url: str = ""


@dataclass(frozen=True)
class ServerConfig:
    """Named KBs (name → directory or "sample") and models, limits, operator settings, run limits."""

    kbs: Mapping[str, str] = field(default_factory=lambda: {"sample": "sample"})
    default_kb: str = ""
    models: Mapping[str, ModelChoice] = field(default_factory=dict)
    default_model: str = ""
    limits: Mapping[str, float] = field(default_factory=lambda: dict(LIMITS))
    bounds: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    settings: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # "*" or a method → fields
    run_timeout: float = 120.0
    max_batch: int = 8
    max_edit_chars: int = 20_000  # largest edited decision (as JSON) a human's approval may send
    max_body_bytes: int = 65_536  # largest request body; more is a 413 before it is parsed
    max_metadata_bytes: int = 2_048  # largest ``config.metadata`` (as JSON) of a request
    max_tags: int = 16  # most ``config.tags`` of a request
    max_question_chars: int = 2_000  # longest question (or last chat message) of an Agent Server run
    graph_neighbours: int = 40  # neighbours the /graph page draws
    graph_max_hops: int = 3  # longest path behind an answer the pages look for (1 to app.graph_view.MAX_HOPS)
    graph_name_chars: int = 200  # longest entity or answer name /graph accepts
    env_model: bool = False  # also offer the model HYBRIDRAG_LLM names (with HYBRIDRAG_LLM_BASE_URL), as the default

    def __post_init__(self) -> None:
        for kind, names in (("KB", self.kbs), ("model", self.models)):
            bad = [n for n in names if not NAME.match(str(n))]
            if bad:
                raise ValueError(f"{kind} name {bad[0]!r}: use letters, digits, '_', '.', '-' (at most 64)")
        if not self.kbs:
            raise ValueError("no KB: name at least one (--kb NAME=DIR)")
        for kind, default, names in (("KB", self.default_kb, self.kbs), ("model", self.default_model, self.models)):
            if default and default not in names:
                raise ValueError(f"default {kind} {default!r} is not one of the named {kind}s: {', '.join(names)}")
        unknown = sorted(set(self.limits) - set(LIMITS))
        if unknown:
            raise ValueError(f"unknown limit(s) {', '.join(unknown)}; known: {', '.join(LIMITS)}")
        low = sorted(k for k, v in self.limits.items() if not v >= 1)
        if low:
            raise ValueError(f"limit {low[0]} must be at least 1, not {self.limits[low[0]]!r}")
        if not self.run_timeout > 0 or not self.max_batch >= 1 or not self.max_edit_chars >= 1:
            raise ValueError("run_timeout must be > 0, max_batch and max_edit_chars >= 1")
        for name, floor in (
            ("max_body_bytes", 1024),
            ("max_metadata_bytes", 0),
            ("max_tags", 0),
            ("max_question_chars", 1),
            ("graph_neighbours", 1),
            ("graph_max_hops", 1),
            ("graph_name_chars", 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < floor:
                raise ValueError(f"{name} must be an integer of at least {floor}, not {value!r}")
        if self.graph_max_hops > GRAPH_HOPS:
            raise ValueError(f"graph_max_hops must be at most {GRAPH_HOPS}, not {self.graph_max_hops!r}")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> ServerConfig:
        """Parse the config file's JSON object; unknown keys and malformed values raise ValueError."""
        if not isinstance(data, Mapping):
            raise ValueError("the server config must be a JSON object")
        known = {f.name for f in fields(cls)}
        extra = sorted(set(data) - known)
        if extra:
            raise ValueError(f"unknown server config key(s) {', '.join(extra)}; known: {', '.join(sorted(known))}")
        values = dict(data)
        try:
            if "models" in values:
                values["models"] = {
                    n: ModelChoice(**m) if isinstance(m, Mapping) else ModelChoice(str(m))
                    for n, m in values["models"].items()
                }
            if "limits" in values:
                values["limits"] = {**LIMITS, **values["limits"]}
            if "bounds" in values:
                values["bounds"] = {k: (float(lo), float(hi)) for k, (lo, hi) in values["bounds"].items()}
        except (TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"malformed server config: {exc}") from None
        return cls(**values).with_env_model()

    def with_env_model(self) -> ServerConfig:
        """With ``env_model`` and ``HYBRIDRAG_LLM`` set, that model offered first (the default), named by its spec.

        The name is the spec with every character a name may not hold as '-' (``openai:gpt-4o-mini``
        → ``openai-gpt-4o-mini``); a model already offered with the same spec and URL is made the default.
        """
        spec = os.environ.get(LLM_ENV, "").strip()
        if not self.env_model or not spec:
            return self
        choice = ModelChoice(spec, os.environ.get(LLM_URL_ENV, "").strip())
        same = next((n for n, m in self.models.items() if m == choice), None)
        if same is not None:
            return replace(self, default_model=same)
        name = re.sub(r"[^A-Za-z0-9_.-]", "-", spec).lstrip("_.-")[:64] or "env"
        return replace(self, models={name: choice, **self.models}, default_model=name)

    def kb_name(self) -> str:
        """The KB a run uses when the client names none."""
        return self.default_kb or next(iter(self.kbs))

    def model_name(self) -> str:
        """The model a run uses when the client names none ('' when the operator named none)."""
        return self.default_model or next(iter(self.models), "")


def config_path(path: str) -> Path:
    """A config file's path: as given, or a relative one not found here from the hybridrag package's folder."""
    given = Path(path)
    if given.is_absolute() or given.exists() or not (PACKAGE_ROOT / given).exists():
        return given
    return PACKAGE_ROOT / given


@cache
def _config_from(variable: str, path: str, model: tuple[str, str]) -> ServerConfig:
    """The config file ``path`` (named by ``variable``), with the model of HYBRIDRAG_LLM when it asks for it.

    ``model`` (HYBRIDRAG_LLM and its base URL) is part of the cache key only.
    """
    if not path:
        return ServerConfig()
    try:
        with open(config_path(path), encoding="utf-8") as f:
            return ServerConfig.from_mapping(json.load(f))
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"server config {variable}: {exc}") from None


def active_config() -> ServerConfig:
    """The config read from the JSON file named by ``HYBRIDRAG_SERVER_CONFIG``.

    Without it, the file ``HYBRIDRAG_DEFAULT_SERVER_CONFIG`` names (langgraph.json: the shipped
    default), else the defaults.
    """
    variable = SERVER_CONFIG_ENV if os.environ.get(SERVER_CONFIG_ENV) else DEFAULT_CONFIG_ENV
    model = (os.environ.get(LLM_ENV, ""), os.environ.get(LLM_URL_ENV, ""))
    return _config_from(variable, os.environ.get(variable, ""), model)


def named_choices(kind: str) -> tuple[list[str], str]:
    """The names a client picks a KB (``kind="kb"``) or a model (``"model"``) by, and the default one.

    The default is the one a run gets when it names none.
    """
    config = active_config()
    if kind == "kb":
        return list(config.kbs), config.kb_name()
    return list(config.models), config.model_name()


def warm_up(config: ServerConfig) -> None:
    """Load what a served run needs before the first question: every named KB and every named chat model.

    For a KB one dense search loads its vector index and embedding model, one example lookup builds
    its solved-example bank. A KB or model that fails does not stop the others from loading; the
    first failure is raised at the end (a KB's names it, never its directory).
    """
    from hybridrag.agents.shots import bank_for
    from hybridrag.graphs.runtime import resolve_kb

    failures: list[Exception] = []
    for directory in dict.fromkeys(config.kbs.values()):
        try:
            kb = resolve_kb(SimpleNamespace(kb=directory))
            kb.dense_search("warm-up", k=1)
            bank_for(kb).nearest("warm-up", 1)
        except Exception as exc:  # noqa: BLE001 - raised below, after the rest has loaded
            failures.append(exc)
    if config.models:
        from hybridrag.agents.llm.models import load_chat_model

        for model in config.models.values():
            try:
                load_chat_model(model.spec, model.base_url)
            except Exception as exc:  # noqa: BLE001 - as above
                failures.append(exc)
    if failures:
        raise failures[0]
