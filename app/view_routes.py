"""The routes of the pages a person reads: ``GET /<method>/view`` and ``GET /graph`` (:mod:`app.graph_page`).

What a client chooses is bounded by the operator (:class:`~app.server_config.ServerConfig`,
``hybridrag serve`` flags or ``--config``): the KB by a name the operator gave it (never a path),
the question as ``/invoke``'s (admitted, run under the operator's run budget), the entity and
answer names' length (``graph_name_chars``), the neighbours shown (``graph_neighbours``) and the
hops of a path (1 to ``graph_max_hops``; :data:`DEFAULT_HOPS` when the client names none).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import HTTPException
from fastapi.responses import HTMLResponse

from hybridrag.app.errors import UserInputError
from hybridrag.app.graph_page import answer_body, error_body, graph_body, page, path_svg
from hybridrag.app.graph_view import answer_path, entity_view
from hybridrag.app.server_config import ServerConfig
from hybridrag.kb.model import KBError, UnknownEntityError

DEFAULT_HOPS = 2  # the path looked for when the client names no hops (never over the operator's graph_max_hops)


def _kb_dir(name: str, config: ServerConfig) -> tuple[str, Any]:
    """(the KB's name, its opened KB) for a client's KB name; unknown names are a 400 listing the known."""
    from hybridrag.kb.base import open_kb
    from hybridrag.kb.sample import sample_kb_dir

    name = name or config.default_kb or next(iter(config.kbs))
    if name not in config.kbs:
        raise HTTPException(400, f"kb: unknown KB {name!r}; this server offers: {', '.join(config.kbs)}")
    where = config.kbs[name]
    return name, open_kb(sample_kb_dir() if where in ("", "sample") else where)


def _html(title: str, body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(page(title, body), status_code=status)


def _path_of(kb: Any, question: str, answer: str, hops: int) -> tuple[str, set[str]]:
    """The path SVG from the question's first entity to ``answer`` ('' when none is within ``hops``)."""
    from hybridrag.tools.list_answer import split
    from hybridrag.tools.retrieval import mentions_in

    topics = mentions_in(kb, question)
    first = split(answer)[0] if answer else ""
    if not topics or not first or not kb.graph.lookup(first):
        return "", set()
    start = kb.graph.get(topics[0])
    path = answer_path(kb, start.name if start else topics[0], first, hops)
    ids = {start.id if start else topics[0]} | {x for t in path for x in (t.head, t.tail)}
    return (path_svg(path, kb.names(ids), topics[0]), ids) if path else ("", set())


def add_view_routes(app: FastAPI, runnables: dict[str, Any], config: ServerConfig, admit: Any) -> None:
    """Add ``GET /graph`` and ``GET /<method>/view`` for the served ``runnables`` (method → MethodRunnable)."""

    @app.get("/graph", response_class=HTMLResponse, include_in_schema=False)
    def graph(entity: str = "", kb: str = "", answer: str = "", hops: int | None = None) -> HTMLResponse:
        """An entity's neighbourhood, and the path to ``answer``; an unknown name offers the closest."""
        most = config.graph_max_hops
        hops = min(DEFAULT_HOPS, most) if hops is None else hops
        if not entity.strip():
            return _html("graph", error_body("entity: give an entity's name, e.g. /graph?entity=Forrest+Gump"), 400)
        if len(entity) > config.graph_name_chars or len(answer) > config.graph_name_chars:
            return _html("graph", error_body(f"entity and answer: at most {config.graph_name_chars} characters"), 400)
        if not 1 <= hops <= most:
            return _html("graph", error_body(f"hops: 1 to {most}, not {hops}"), 400)
        try:
            name, opened = _kb_dir(kb, config)
            view = entity_view(opened, entity, config.graph_neighbours)
            svg, ids = "", set()
            if answer:
                path = answer_path(opened, view.name, answer, hops)
                ids = {x for t in path for x in (t.head, t.tail)}
                svg = path_svg(path, opened.names(ids), view.id) if path else ""
        except HTTPException as exc:
            return _html("graph", error_body(exc.detail), exc.status_code)
        except UnknownEntityError as exc:
            return _html("graph", error_body(exc), 404)
        except KBError as exc:
            return _html("graph", error_body(f"the KB could not be opened: {exc}"), 503)
        return _html(f"{view.name}: graph", graph_body(view, name, answer, svg, ids))

    for method, runnable in runnables.items():
        _add_view(app, method, runnable, admit, min(DEFAULT_HOPS, config.graph_max_hops))


def _add_view(app: FastAPI, method: str, runnable: Any, admit: Any, hops: int) -> None:
    @app.get(f"/{method}/view", response_class=HTMLResponse, include_in_schema=False)
    async def view(request: Request, question: str = "", kb: str = "") -> HTMLResponse:
        """The answer first, then numbered evidence, then the path behind the answer."""
        from hybridrag.graphs.runtime import resolve_kb

        if not question.strip():
            body = answer_body(method, "", {}, kb).replace("(no answer)", "ask a question above")
            return _html(f"{method}: ask", body)
        input_ = {"question": question, **({"settings": {"kb": kb}} if kb else {})}
        try:
            await admit(runnable, {"input": input_}, request)
            out = await runnable.ainvoke(input_, {})
            _, ctx = runnable.prepare(input_)
            opened = await asyncio.to_thread(resolve_kb, ctx)
            svg, _ = await asyncio.to_thread(_path_of, opened, question, out.get("answer", ""), hops)
        except HTTPException as exc:
            return _html(f"{method}: error", error_body(exc.detail), exc.status_code)
        except UserInputError as exc:
            return _html(f"{method}: error", error_body(exc), 400)
        return _html(f"{method}: {question}", answer_body(method, question, out, kb, svg))
