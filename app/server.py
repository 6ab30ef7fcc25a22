"""LangServe app: every registered method at ``/<method>`` plus ``/health``.

What a client may set is decided by ``app.policy`` under the operator's
``ServerConfig`` (``hybridrag serve`` flags / ``--config``; docs/serving.md). Before a run
starts (so also for ``/stream``) each request is admitted:

1. a ``/batch`` larger than the operator's ``max_batch`` is a 413;
2. a setting a client may not set (in ``settings`` or ``config.configurable``: unknown
   fields, server-side fields such as ``llm_base_url`` or ``few_shot``) is a 400 naming it;
3. malformed input (empty or too long question, wrong types) is a 422 with the field errors;
4. a value out of bounds, an unknown KB or model name, an unknown entity is a 400;
5. the KB is opened and the model loaded (a failure there is the server's: 5xx).

``/health`` is 503 ``warming up`` until the operator's KBs and models are loaded (``app/readiness.py``).
Runs have the operator's wall-clock budget (504) and stop when the client disconnects
(``app/runs.py``); failures map to statuses as ``app/errors.py`` says, with the same
``{"status_code", "message"}`` as the ``error`` event of ``/stream``. ``/stream`` sends
``metadata``, one ``data`` event per node (``{"node", "update"}``), then
``{"node": "__end__", "output"}`` and ``end``.

Pages a person reads (``app/view_routes.py``): ``/<method>/view?question=...`` shows the answer
first, then numbered evidence; ``/graph?entity=NAME`` draws an entity's neighbourhood.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import HTTPException
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from hybridrag.app.errors import UserInputError, install_handlers
from hybridrag.app.readiness import Readiness
from hybridrag.app.runnable import MethodRunnable
from hybridrag.app.runs import CURRENT_REQUEST
from hybridrag.app.schemas import MAX_QUESTION_CHARS  # noqa: F401 - part of this module's API
from hybridrag.app.server_config import ServerConfig

ENDPOINTS = (
    "invoke",
    "batch",
    "stream_log",
    "stream_events",
    "playground",
    "input_schema",
    "output_schema",
    "config_schema",
)  # /stream is ours; no config-hash routes
CONFIG_KEYS = ("configurable", "tags", "metadata")
WORKER_THREADS = 32  # graph nodes and checks run in the loop's default executor


def _payloads(body: Any, batch: bool = False) -> tuple[list[Any], list[Any]]:
    """(inputs, their raw configs) of a body: ``inputs`` of a batch, else ``input`` (what the run runs).

    Raises an HTTPException 422 for a body with both or with a config per input that does not pair up.
    """
    if not isinstance(body, dict):
        return [], []
    if "input" in body and "inputs" in body:
        raise HTTPException(
            status_code=422,
            detail="the body has both 'input' and 'inputs': send 'input' "
            "(invoke, stream) or 'inputs' (batch), not both",
        )
    key = "inputs" if batch else "input"
    if key not in body or (batch and not isinstance(body[key], list)):
        return [], []  # LangServe's (or the /stream route's) 422 names the field
    inputs = body[key] if batch else [body[key]]
    config = body.get("config")
    if isinstance(config, list) and len(config) != len(inputs):
        raise HTTPException(
            status_code=422, detail=f"{len(config)} configs for {len(inputs)} inputs: send one config, or one per input"
        )
    configs = config if isinstance(config, list) else [config] * len(inputs)
    return inputs, [c if isinstance(c, dict) else {} for c in configs]


def _prepared(runnable: MethodRunnable, payload: Any, config: dict) -> tuple[str, Any] | None:
    """(question, context) of one input, None when its fields are malformed (a 422 follows), or a 400."""
    from hybridrag.app.policy import PolicyError, check_name

    configurable = config.get("configurable") if isinstance(config.get("configurable"), dict) else {}
    settings = payload.get("settings") if isinstance(payload, dict) else None
    try:
        for name in [*configurable, *(settings if isinstance(settings, dict) else {})]:
            check_name(runnable.context_cls, name)
        runnable.InputType.model_validate(payload)
        return runnable.prepare(payload, {"configurable": configurable})
    except ValidationError:
        return None  # a 422 with the field errors (LangServe's, or the /stream route's)
    except (UserInputError, PolicyError) as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None


async def admit(runnable: MethodRunnable, body: Any, request: Request | None = None) -> None:
    """Refuse a request before its run starts.

    Raises an HTTPException, RunTimeout / RunStopped when its checks outlast the run budget / its
    client, or a server error from the KB or model.

    ``request`` (default: the one the per-request hook set) tells a ``/batch`` body from the
    others and is watched for a disconnect.
    """
    from hybridrag.app.policy import PolicyError, check_batch

    request = request or CURRENT_REQUEST.get()
    batch = request is not None and request.url.path.rstrip("/").endswith("/batch")
    inputs, configs = _payloads(body, batch)
    try:
        if batch:
            check_batch(len(inputs), runnable.server_config)
    except PolicyError as exc:
        raise HTTPException(status_code=413, detail=str(exc)) from None
    runs = [run for p, c in zip(inputs, configs, strict=True) if (run := _prepared(runnable, p, c)) is not None]
    try:
        await runnable.acheck(runs, request)
    except (UserInputError, PolicyError) as exc:
        raise HTTPException(status_code=400, detail=str(exc)) from None


def _pre_checker(runnable: MethodRunnable):
    """LangServe's per-request hook: remember the request (disconnects) and admit the body."""

    async def check(config: dict, request: Request) -> dict:
        CURRENT_REQUEST.set(request)
        if request.method == "POST" and not getattr(request.state, "admitted", False):
            try:
                body = await request.json()
            except ValueError:
                return config  # LangServe answers 422
            await admit(runnable, body, request)
            request.state.admitted = True  # a batch with a config per input calls this hook per input
        return config

    return check


def _add_stream_route(app: FastAPI, runnable: MethodRunnable) -> None:
    """Add ``POST /<method>/stream``, ``/stream_log`` and ``/stream_events`` (``app/streams.py``).

    They speak LangServe's event protocol, with our statuses in ``error`` events and the client's
    metadata not echoed.
    """
    from hybridrag.app.streams import add_stream_routes

    add_stream_routes(app, runnable, admit, CONFIG_KEYS)


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=WORKER_THREADS, thread_name_prefix="hybridrag")
    )
    app.state.readiness.start()
    yield


def create_app(methods: list[str] | None = None, config: ServerConfig | None = None) -> FastAPI:
    """The FastAPI app under the operator's ``config`` (default: ``$HYBRIDRAG_SERVER_CONFIG``)."""
    from langserve import add_routes

    from hybridrag.app.limits import BodyGuard
    from hybridrag.app.operator import check_config
    from hybridrag.app.server_config import active_config
    from hybridrag.app.streams import STREAM_ENDPOINTS
    from hybridrag.graphs import REGISTRY, list_graphs

    config = config or active_config()
    check_config(config)
    names = methods or list_graphs()
    app = FastAPI(
        title="hybridrag",
        version="0.1.0",
        description="Hybrid RAG over knowledge graphs and text: one route per method.",
        lifespan=_lifespan,
    )
    install_handlers(app)
    app.add_middleware(BodyGuard, config=config)  # size, JSON and shape checks before any route reads a body

    app.state.readiness = readiness = Readiness(config)

    @app.get("/health")
    def health() -> JSONResponse:
        """200 ``{"status": "ok", "methods"}`` once warm (app/readiness.py); 503 while warming up or failed."""
        status, body = readiness.body()
        return JSONResponse(status_code=status, content={**body, "methods": names})

    endpoints = [e for e in ENDPOINTS if e not in STREAM_ENDPOINTS]  # the stream routes are ours
    runnables = {}
    for name in names:
        runnable = runnables[name] = MethodRunnable(name, config)
        _add_stream_route(app, runnable)
        add_routes(
            app,
            runnable,
            path=f"/{name}",
            config_keys=CONFIG_KEYS,
            per_req_config_modifier=_pre_checker(runnable),
            enabled_endpoints=endpoints,
        )
        app.description += f"\n\n- /{name}: {REGISTRY[name].description}"
    from hybridrag.app.view_routes import add_view_routes

    add_view_routes(app, runnables, config, admit)  # /<method>/view (the answer first) and /graph
    from hybridrag.app.playground_view import add_playground_view

    add_playground_view(app, names)  # the playground shows the answer above its raw chunks
    return app


if __name__ == "__main__":  # pragma: no cover - `hybridrag serve` is the documented entry point
    import uvicorn

    uvicorn.run(
        create_app(),
        host=os.environ.get("HYBRIDRAG_HOST", "127.0.0.1"),
        port=int(os.environ.get("HYBRIDRAG_PORT", "8000")),
    )
