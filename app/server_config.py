"""The operator's side of a served run: named KBs and models, limits, server-side settings.

``hybridrag serve`` builds one from its flags and ``--config FILE`` (``app/operator.py``);
the Agent Server deployment reads the JSON file named by ``HYBRIDRAG_SERVER_CONFIG``
(:func:`active_config`). The file's keys are the fields of :class:`ServerConfig`::

    {"kbs": {"movies": "/srv/kb/movies", "sample": "sample"}, "default_kb": "movies",
     "models": {"smol": {"spec": "local:smollm2"},
                "qwen": {"spec": "openai:qwen2.5", "base_url": "http://10.0.0.5:8000/v1"}},
     "limits": {"max_top_k": 20, "max_iterations": 3}, "bounds": {"beam_width": [1, 50]},
     "settings": {"*": {"structured_method": "json_mode"}, "hybgrag": {"few_shot": "/srv/shots.json"}},
     "run_timeout": 120, "max_batch": 8, "max_edit_chars": 20000,
     "max_body_bytes": 65536, "max_metadata_bytes": 2048, "max_tags": 16}
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from types import SimpleNamespace
from typing import Any

SERVER_CONFIG_ENV = "HYBRIDRAG_SERVER_CONFIG"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
LIMITS: dict[str, float] = {"max_top_k": 50, "max_iterations": 5}
"""Operator limits that bound several fields (``hybridrag serve --max-top-k / --max-iterations``)."""


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
        for name, floor in (("max_body_bytes", 1024), ("max_metadata_bytes", 0), ("max_tags", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < floor:
                raise ValueError(f"{name} must be an integer of at least {floor}, not {value!r}")

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
        return cls(**values)

    def kb_name(self) -> str:
        """The KB a run uses when the client names none."""
        return self.default_kb or next(iter(self.kbs))

    def model_name(self) -> str:
        """The model a run uses when the client names none ('' when the operator named none)."""
        return self.default_model or next(iter(self.models), "")


@cache
def _config_from(path: str) -> ServerConfig:
    if not path:
        return ServerConfig()
    try:
        with open(path, encoding="utf-8") as f:
            return ServerConfig.from_mapping(json.load(f))
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"server config {SERVER_CONFIG_ENV}: {exc}") from None


def active_config() -> ServerConfig:
    """The server config named by ``HYBRIDRAG_SERVER_CONFIG`` (a JSON file), else the defaults."""
    return _config_from(os.environ.get(SERVER_CONFIG_ENV, ""))


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
