"""The Agent Server's run input checked before the run is created: bad input is a 422, not a failed run.

langgraph.json names :data:`app` as the server's ``http.app``; the Agent Server (``langgraph
dev``, langgraph-api) then runs :class:`RunInputGuard` on its own routes. For a POST that
creates runs (``/runs``, ``/runs/stream``, ``/runs/wait``, ``/runs/batch`` and the same under
``/threads/{id}``) it reads the body, at most the operator's ``max_body_bytes``
(:func:`app.server_config.active_config`; more is a 413), and checks each run's ``input`` the
way the graphs' first router does (:func:`graphs.chat.check_question`): an object whose keys
are the method's input keys, with a non-empty ``question`` or a ``messages`` list whose last
user message asks one. A run that fails is answered ``422 {"detail": "<field>: <problem>"}``
and never created. Runs without ``input`` (a resume ``command``), and every other request,
pass through with their bytes as sent.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping
from functools import cache
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from hybridrag.app.errors import MalformedRequest, UserInputError
from hybridrag.app.limits import BodyGuard, _replay, parse_json
from hybridrag.app.server_config import active_config
from hybridrag.graphs.chat import EXAMPLE, InputError, check_question

log = logging.getLogger("hybridrag.server")
RUN_PATH = re.compile(r"^(?:/threads/[^/]+)?/runs(?:/stream|/wait|/batch)?/?$")
GRAPH_NAMESPACE = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
"""The namespace the Agent Server names a graph's default assistant in (uuid5 of the graph id)."""
USER_ROLES = frozenset({"user", "human"})


@cache
def input_keys(method: str | None) -> frozenset[str]:
    """The keys a run's input may have: the method's input schema, or every method's when not known."""
    from hybridrag.app.studio import served_graph
    from hybridrag.graphs import list_graphs

    methods = [method] if method in list_graphs() else list_graphs()
    return frozenset(k for m in methods for k in served_graph(m).get_input_jsonschema().get("properties", {}))


@cache
def method_of(assistant_id: str) -> str | None:
    """The graph an assistant id names: a graph's name or its default assistant's id (else None)."""
    from hybridrag.graphs import list_graphs

    by_id = {str(uuid.uuid5(GRAPH_NAMESPACE, m)): m for m in list_graphs()}
    return assistant_id if assistant_id in list_graphs() else by_id.get(assistant_id)


def _text(content: Any) -> Any:
    """A message's content as text when it is content blocks; anything else as it is."""
    if isinstance(content, list):
        return " ".join(b.get("text", "") if isinstance(b, Mapping) else str(b) for b in content)
    return content


def check_messages(messages: Any) -> None:
    """The last message, when it is the user's, asks a question (InputError naming ``messages``)."""
    if not isinstance(messages, list):
        raise InputError(f"messages: a list of messages, not {type(messages).__name__}; {EXAMPLE}")
    last = messages[-1] if messages else None
    if isinstance(last, Mapping) and (last.get("role") or last.get("type")) in USER_ROLES:
        check_question("messages", _text(last.get("content")))


def check_input(run: Any, where: str = "") -> None:
    """One run request's ``input`` as the graphs check it; MalformedRequest (422) naming the field."""
    if not isinstance(run, Mapping) or run.get("input") is None:
        return  # not a run body the guard knows, or a resume: the server decides
    data = run["input"]
    try:
        if not isinstance(data, Mapping):
            raise InputError(f"input: an object, not {type(data).__name__}; {EXAMPLE}")
        method = method_of(str(run.get("assistant_id", "")))
        known = input_keys(method)
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise InputError(
                f"input.{unknown[0]}: unknown key; {method or 'a method'} takes {', '.join(sorted(known))}"
            )
        if data.get("messages"):
            check_messages(data["messages"])
        elif data.get("question") is None:
            raise InputError(f"input: no `question` and no `messages` (the user's last message); {EXAMPLE}")
        else:
            check_question("question", data["question"])
    except InputError as exc:
        raise MalformedRequest(f"{where}{'' if str(exc).startswith('input') else 'input.'}{exc}") from None


class RunInputGuard:
    """ASGI middleware: a run-creating POST whose input the graphs would refuse is a 422 before the run."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.body = BodyGuard(app, active_config())  # its bounded body reader (the operator's max_body_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check a run-creating POST's body, then hand the same bytes on; other requests pass untouched."""
        if scope["type"] != "http" or scope["method"] != "POST" or not RUN_PATH.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        try:
            raw = await self.body._read(scope, receive)
            body = parse_json(raw)
            if scope["path"].rstrip("/").endswith("/batch") and isinstance(body, list):
                for n, run in enumerate(body):
                    check_input(run, f"[{n}].")
            else:
                check_input(body)
        except UserInputError as exc:
            log.warning("refused %s %s: %d %s", scope["method"], scope["path"], exc.status, str(exc)[:200])
            await JSONResponse({"detail": str(exc)}, status_code=exc.status)(scope, receive, send)
            return
        await self.app(scope, _replay(raw, receive), send)


app = Starlette(middleware=[Middleware(RunInputGuard)])
"""The Agent Server's ``http.app`` (langgraph.json): no routes of its own, the guard as middleware."""
