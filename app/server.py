"""LangServe app: every registered method at ``/<method>`` plus ``/health``.

Each method is served as a :class:`MethodRunnable`, a thin Runnable around the compiled
graph that turns the request into the graph's ``context=``:

- input: ``{"question": "...", "settings": {...}}``. ``settings`` holds fields of the
  method's Context (``FusionContext``, ``HybGRAGContext``, ...), all optional; unknown
  fields and wrong types are rejected with a 422 and a message.
- config: the same fields may come as ``config["configurable"]`` (e.g. from
  ``RemoteRunnable(...).invoke(x, config={"configurable": {"kb": ...}})``); the input's
  ``settings`` win over it.

The question must be non-empty and at most ``MAX_QUESTION_CHARS`` characters (422
otherwise). Before the run starts (so also for ``/stream``), the context is built, the
KB is opened and the question's explicit entity mentions are checked against it; a
missing KB, an unknown entity or a model that cannot be loaded is a 400 with the message.
A setting only a node can judge (e.g. an unknown fusion ``mode``) is a 400 on ``/invoke``
and ``/batch``, and an ``error`` event on ``/stream`` (whose response has started).

``/invoke`` and ``/batch`` return the common output shape; ``/stream`` sends one chunk
per node, ``{"node": name, "update": {...}}``, then ``{"node": "__end__", "output": {...}}``
with the same output as ``/invoke``.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import HTTPException
from fastapi.responses import JSONResponse
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.utils import ConfigurableFieldSpec
from pydantic import BaseModel, ValidationError

from app.schemas import (  # noqa: F401 - MAX_QUESTION_CHARS and settings_model are part of this module's API
    MAX_QUESTION_CHARS,
    MethodOutput,
    UserInputError,
    _context_fields,
    _output,
    input_model,
    settings_model,
    to_json,
)


class MethodRunnable(Runnable[dict, dict]):
    """A registered method as a Runnable: request settings → the graph's ``context=``."""

    def __init__(self, method: str) -> None:
        from graphs import get_graph

        self.method = method
        self.name = method
        self.graph = get_graph(method)
        self._fields = {f for f, *_ in _context_fields(method)}

    # -- schemas seen by LangServe (request validation, docs, playground) --
    @property
    def InputType(self) -> type[BaseModel]:  # noqa: N802 (LangChain's name)
        return input_model(self.method)

    @property
    def OutputType(self) -> type[BaseModel]:  # noqa: N802
        return MethodOutput

    def get_input_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        return input_model(self.method)

    def get_output_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        return MethodOutput

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        return [
            ConfigurableFieldSpec(id=f, annotation=t | None, name=f, description=desc, default=None)
            for f, t, _, desc in _context_fields(self.method)
        ]

    # -- request → (question, context) --
    def prepare(self, input: Any, config: RunnableConfig | None = None) -> tuple[str, Any]:
        """Validate the input and build the method context from config and settings."""
        from graphs import context_for

        if isinstance(input, str):
            input = {"question": input}
        try:
            parsed = input_model(self.method).model_validate(input)
        except ValidationError as exc:
            raise UserInputError(_validation_message(exc)) from exc
        configurable = ensure_config(config).get("configurable") or {}
        settings = {k: v for k, v in configurable.items() if k in self._fields and v is not None}
        if parsed.settings is not None:
            settings.update(parsed.settings.model_dump(exclude_none=True))
        try:
            ctx = context_for(self.method, **settings)
        except (TypeError, ValueError) as exc:
            raise UserInputError(str(exc)) from exc
        return parsed.question, ctx

    def check(self, question: str, ctx: Any) -> None:
        """Open the KB and check the question's entity mentions (raises UserInputError)."""
        from graphs.common import resolve_kb
        from kb.model import KBError
        from tools.retrieval import check_mentions

        kb = getattr(ctx, "kb", "sample")
        if kb not in ("", "sample") and not Path(kb).is_dir():
            raise UserInputError(f"no KB directory at {kb!r}: build one with `hybridrag ingest`")
        try:
            check_mentions(resolve_kb(ctx), question)
        except (KBError, ValueError) as exc:
            raise UserInputError(str(exc)) from exc
        llm = getattr(ctx, "llm", None)
        if llm is not None:
            from agents.models import ModelConfigError, load_chat_model

            try:
                load_chat_model(llm, getattr(ctx, "llm_base_url", ""))
            except ModelConfigError as exc:
                raise UserInputError(str(exc)) from exc

    # -- running --
    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        question, ctx = self.prepare(input, config)
        return _output(self.graph.invoke({"question": question}, config=config, context=ctx, **kwargs))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        question, ctx = self.prepare(input, config)
        return _output(await self.graph.ainvoke({"question": question}, config=config, context=ctx, **kwargs))

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[dict]:
        question, ctx = self.prepare(input, config)
        final: dict = {}
        for mode, chunk in self.graph.stream(
            {"question": question}, config=config, context=ctx, stream_mode=["updates", "values"]
        ):
            if mode == "values":
                final = chunk
            else:
                yield from _node_chunks(chunk)
        yield {"node": "__end__", "output": _output(final)}

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[dict]:
        question, ctx = self.prepare(input, config)
        final: dict = {}
        async for mode, chunk in self.graph.astream(
            {"question": question}, config=config, context=ctx, stream_mode=["updates", "values"]
        ):
            if mode == "values":
                final = chunk
            else:
                for item in _node_chunks(chunk):
                    yield item
        yield {"node": "__end__", "output": _output(final)}


def _node_chunks(update: dict) -> Iterator[dict]:
    for node, values in (update or {}).items():
        yield {"node": node, "update": to_json(values or {})}


def _validation_message(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts)


def _payloads(body: Any) -> list[Any]:
    if not isinstance(body, dict):
        return []
    if "inputs" in body and isinstance(body["inputs"], list):
        return body["inputs"]
    return [body["input"]] if "input" in body else []


def _pre_checker(runnable: MethodRunnable):
    """LangServe per-request hook: validate settings and check the KB/entities before the run.

    It runs before the response starts, so a bad request is a 4xx even for ``/stream``.
    Inputs that fail schema validation are left to LangServe (422 with the field errors).
    """

    async def check(config: dict, request: Request) -> dict:
        if request.method != "POST":
            return config
        try:
            body = await request.json()
        except ValueError:
            return config
        for payload in _payloads(body):
            try:
                input_model(runnable.method).model_validate(payload)
            except ValidationError:
                continue  # LangServe answers 422 with the details
            try:
                question, ctx = runnable.prepare(payload, config)
                await asyncio.to_thread(runnable.check, question, ctx)
            except UserInputError as exc:
                raise HTTPException(status_code=400, detail=str(exc)) from exc
        return config

    return check


def create_app(methods: list[str] | None = None) -> FastAPI:
    """The FastAPI app: ``/health`` and LangServe routes for each registered method."""
    from langserve import add_routes

    from graphs import REGISTRY, list_graphs

    names = methods or list_graphs()
    app = FastAPI(
        title="hybridrag",
        version="0.1.0",
        description="Hybrid RAG over knowledge graphs and text: one route per method.",
    )

    @app.get("/health")
    def health() -> dict:
        return {"status": "ok", "methods": names}

    async def client_error(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(status_code=400, content={"detail": str(exc)})

    # errors a run raises from bad settings (e.g. an unknown fusion mode) are the client's:
    # 400 with the message on /invoke and /batch (on /stream the response has already started)
    from agents.models import ModelConfigError
    from kb.model import KBError

    for exc_type in (UserInputError, KBError, ModelConfigError, ValueError):
        app.add_exception_handler(exc_type, client_error)

    for name in names:
        runnable = MethodRunnable(name)
        add_routes(
            app,
            runnable,
            path=f"/{name}",
            config_keys=("configurable", "tags", "metadata"),
            per_req_config_modifier=_pre_checker(runnable),
            enabled_endpoints=None,
        )
        app.description += f"\n\n- /{name}: {REGISTRY[name].description}"
    return app


if __name__ == "__main__":  # pragma: no cover - `hybridrag serve` is the documented entry point
    import uvicorn

    uvicorn.run(
        create_app(),
        host=os.environ.get("HYBRIDRAG_HOST", "127.0.0.1"),
        port=int(os.environ.get("HYBRIDRAG_PORT", "8000")),
    )
