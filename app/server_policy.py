"""The server's run policy, installed into the graph runtime when this module is imported.

Python callers of ``hybridrag.graphs`` are not clients and keep full control. In server mode
(``HYBRIDRAG_SERVER_MODE``, as langgraph.json sets it for the Agent Server) every graph run's
context comes from a remote client: :func:`hybridrag.app.policy.server_context` checks it, a KB
that cannot be opened is named by the operator's name (never its path), and an approval edit and
a question (``graphs.chat``) are bounded by the operator's limits. The JSON schema of every context
lists the allowed choices and, on a server, the operator's KB and model names. ``app/studio.py``
and the LangServe app import this module; the graphs never import ``app``.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from hybridrag.agents.context import Context, add_schema_hook
from hybridrag.app.policy import RULES, server_context, server_mode
from hybridrag.app.server_config import active_config, named_choices
from hybridrag.graphs.runtime import KBUnavailableError, RunPolicy, install_policy
from hybridrag.kb.base import KnowledgeBase, open_kb
from hybridrag.kb.model import KBError


def _context(raw: Any, cls: type) -> Context | None:
    return server_context(raw, cls) if server_mode() else None


def _open_kb(ctx: Context) -> KnowledgeBase | None:
    """In server mode, the KB of a checked context, or :class:`KBUnavailableError` naming it."""
    if not server_mode():
        return None
    try:
        return open_kb(ctx.kb)
    except KBError:
        name = next((n for n, d in active_config().kbs.items() if d == ctx.kb), "requested")
        reason = "not built" if not (Path(ctx.kb) / "manifest.json").is_file() else "unreadable"
        raise KBUnavailableError(
            f"kb: the {name!r} KB cannot be opened on this server ({reason}); "
            f"the operator builds it with `hybridrag ingest`"
        ) from None


def _edit_limit() -> int | None:
    return active_config().max_edit_chars if server_mode() else None


def _question_limit() -> int | None:
    return active_config().max_question_chars if server_mode() else None


def describe_choices(cls: type, schema: dict) -> None:
    """List a choice field's allowed values; on a server, the operator's KB and model names."""
    for f in fields(cls):
        prop = schema.get("properties", {}).get(f.name)
        rule = RULES.get(f.name)
        if prop is None or rule is None:
            continue
        if rule.kind == "choice" and prop.get("type") == "string":
            allowed = {*rule.choices, f.default} - {None}  # a method's own Literal narrows a shared rule
            own = prop.get("enum")
            prop["enum"] = [v for v in own if v in allowed] if own else sorted(allowed)
        elif rule.kind in ("kb", "model") and server_mode():
            names, default = named_choices(rule.kind)
            if names:
                prop.update(enum=names, default=default)


install_policy(RunPolicy(context=_context, open_kb=_open_kb, edit_limit=_edit_limit, question_limit=_question_limit))
add_schema_hook(describe_choices)
