"""The operator's configuration of ``hybridrag serve``: flags, a JSON file, startup checks.

Everything server-side comes from here, never from a request: KB directories and model
specs (each under a NAME a client may pick), base URLs, file paths and other server-side
settings, the limits of client settings, the run budget, the batch size and the request limits
(body size, ``config.metadata`` size, number of tags), the graph pages' bounds (neighbours, path
hops, name length). Flags win over
the file (``--config``, default ``$HYBRIDRAG_SERVER_CONFIG``); the file's format is
:class:`app.server_config.ServerConfig` (docs/serving.md). :func:`check_config` refuses,
in one line, a KB directory that does not exist or a named model that cannot be loaded, so
a misconfigured server does not start.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from hybridrag.app.server_config import SERVER_CONFIG_ENV, ServerConfig


def _pair(flag: str, raw: str) -> tuple[str, str]:
    name, sep, value = raw.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise ValueError(f"{flag} {raw!r}: expected NAME=VALUE")
    return name.strip(), value.strip()


def add_operator_arguments(p: argparse.ArgumentParser) -> None:
    """The ``serve`` flags that configure what clients may use."""
    p.add_argument(
        "--config",
        type=Path,
        default=os.environ.get(SERVER_CONFIG_ENV) or None,
        help=f"JSON server config (default: ${SERVER_CONFIG_ENV}); flags win over it",
    )
    p.add_argument(
        "--kb",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="a KB clients may pick by NAME ('sample' as DIR: the bundled sample); repeatable",
    )
    p.add_argument("--default-kb", metavar="NAME", help="KB of requests that name none (default: the first)")
    p.add_argument(
        "--llm",
        action="append",
        default=[],
        metavar="NAME=SPEC[@BASE_URL]",
        help="a chat model clients may pick by NAME, e.g. smol=local:smollm2 or "
        "vllm=openai:qwen@http://10.0.0.5:8000/v1; repeatable",
    )
    p.add_argument("--default-llm", metavar="NAME", help="model of requests that name none (default: the first)")
    p.add_argument("--max-top-k", type=int, help="largest top_k (and k1, vector_k, ...) a client may ask (50)")
    p.add_argument("--max-iterations", type=int, help="largest max_iterations a client may ask (5)")
    p.add_argument("--max-batch", type=int, help="most inputs of one /batch request (8)")
    p.add_argument("--run-timeout", type=float, help="wall-clock seconds one run may take (120)")
    p.add_argument("--max-body-bytes", type=int, help="largest request body; more is a 413 (65536)")
    p.add_argument("--max-metadata-bytes", type=int, help="largest config.metadata of a request, as JSON (2048)")
    p.add_argument("--max-tags", type=int, help="most config.tags of a request (16)")
    p.add_argument("--graph-neighbours", type=int, help="neighbours the /graph page draws (40)")
    p.add_argument("--graph-max-hops", type=int, help="longest answer path /graph and /<method>/view look for, 1-3 (3)")
    p.add_argument("--graph-name-chars", type=int, help="longest entity or answer name /graph accepts (200)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="[METHOD.]FIELD=VALUE",
        help="an operator setting of every method having FIELD, or of METHOD only, e.g. "
        "--set structured_method=json_mode --set hybgrag.few_shot=/srv/shots.json; repeatable",
    )
    p.add_argument(
        "--bound",
        action="append",
        default=[],
        metavar="FIELD=LO:HI",
        help="bounds of a numeric client setting, e.g. --bound beam_width=1:50; repeatable",
    )


def _bound(raw: str) -> tuple[str, list[float]]:
    name, value = _pair("--bound", raw)
    lo, sep, hi = value.partition(":")
    try:
        if not sep:
            raise ValueError
        return name, [float(lo), float(hi)]
    except ValueError:
        raise ValueError(f"--bound {raw!r}: expected FIELD=LO:HI, e.g. beam_width=1:50") from None


def _read_file(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"--config {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"--config {path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"--config {path}: expected a JSON object")
    return data


def operator_config(args: argparse.Namespace) -> ServerConfig:
    """The server config from ``--config`` and the flags (flags win)."""
    data = _read_file(getattr(args, "config", None))
    kbs = dict(_pair("--kb", raw) for raw in args.kb)
    if kbs:
        data["kbs"] = {**data.get("kbs", {}), **kbs}
    models = {}
    for raw in args.llm:
        name, value = _pair("--llm", raw)
        spec, _, url = value.partition("@")
        models[name] = {"spec": spec, "base_url": url}
    if models:
        data["models"] = {**data.get("models", {}), **models}
    for flag, key in (
        ("default_kb", "default_kb"),
        ("default_llm", "default_model"),
        ("max_batch", "max_batch"),
        ("run_timeout", "run_timeout"),
        ("max_body_bytes", "max_body_bytes"),
        ("max_metadata_bytes", "max_metadata_bytes"),
        ("max_tags", "max_tags"),
        ("graph_neighbours", "graph_neighbours"),
        ("graph_max_hops", "graph_max_hops"),
        ("graph_name_chars", "graph_name_chars"),
    ):
        if getattr(args, flag, None) is not None:
            data[key] = getattr(args, flag)
    from hybridrag.app.setting_args import operator_settings

    for scope, values in operator_settings(getattr(args, "set", [])).items():
        data.setdefault("settings", {})
        data["settings"] = {**data["settings"], scope: {**data["settings"].get(scope, {}), **values}}
    bounds = dict(_bound(raw) for raw in getattr(args, "bound", []))
    if bounds:
        data["bounds"] = {**data.get("bounds", {}), **bounds}
    limits = {k: getattr(args, k) for k in ("max_top_k", "max_iterations") if getattr(args, k, None) is not None}
    if limits:
        data["limits"] = {**data.get("limits", {}), **limits}
    return ServerConfig.from_mapping(data)


def check_config(config: ServerConfig, load_models: bool = True) -> None:
    """Refuse a config the server cannot serve: no KB, unknown settings, a bad environment setting, no model."""
    from hybridrag.graphs import context_class, list_graphs

    for name, directory in config.kbs.items():
        if directory != "sample" and not (Path(directory) / "manifest.json").is_file():
            raise ValueError(f"KB {name!r}: no KB at {directory} (build one with `hybridrag ingest`)")
    for method in list_graphs():
        context_class(method)()  # a misspelt HYBRIDRAG_<FIELD> refuses the start, naming the variable
    known = {f for m in list_graphs() for f in context_class(m).__dataclass_fields__}
    for scope, values in config.settings.items():
        if scope != "*" and scope not in list_graphs():
            raise ValueError(f"settings: unknown method {scope!r}; use '*' or one of {', '.join(list_graphs())}")
        fields = known if scope == "*" else set(context_class(scope).__dataclass_fields__)
        bad = sorted(set(values) - fields)
        if bad:
            raise ValueError(f"settings[{scope!r}]: unknown setting(s) {', '.join(bad)}")
    if load_models:
        from hybridrag.agents.llm.models import ModelConfigError, load_chat_model

        for name, model in config.models.items():
            try:
                load_chat_model(model.spec, model.base_url)
            except ModelConfigError as exc:
                raise ValueError(f"model {name!r}: {exc}") from None


def describe(config: ServerConfig) -> str:
    """One line for the server log: what clients may pick."""
    kbs = ", ".join(f"{n}{'*' if n == config.kb_name() else ''}" for n in config.kbs)
    models = ", ".join(f"{n}{'*' if n == config.model_name() else ''}" for n in config.models) or "(operator default)"
    return (
        f"KBs: {kbs}; models: {models}; run budget {config.run_timeout:g}s; batch <= {config.max_batch}; "
        f"body <= {config.max_body_bytes} bytes; limits {dict(config.limits)}; graph view <= "
        f"{config.graph_neighbours} neighbours, {config.graph_max_hops} hops"
    )
