"""A registered method as a LangServe Runnable: a client's request → a checked context → a controlled run.

- input: ``{"question": "...", "settings": {...}}``; ``settings`` (or ``config["configurable"]``,
  the input's settings win) may hold only what ``app.policy`` lets a client set: a KB or a
  model by the NAME the operator gave it, bounded numbers, fixed choices. The context is the
  operator's values (``ServerConfig``) plus those settings.
- before the run, the KB is opened and the question's explicit entity mentions checked
  (an unknown entity is a 400), and the model loaded.
- every run has the operator's wall-clock budget and stops when its client disconnects
  (``app/runs.py``).
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langchain_core.runnables.utils import ConfigurableFieldSpec
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

import hybridrag.app.server_policy  # noqa: F401 - installs the server's run policy
from hybridrag.app.errors import RunStopped, RunTimeout, UserInputError
from hybridrag.app.runs import POLL_SECONDS, controlled_stream, current_request
from hybridrag.app.schemas import (
    THREAD_ONLY,
    MethodOutput,
    _output,
    client_fields,
    input_model,
    plain,
    settings_fields_model,
    to_json,
)
from hybridrag.app.server_config import ServerConfig


def validation_message(exc: ValidationError) -> str:
    """Pydantic errors as one line: ``loc: message; ...``."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts)


def _no_nulls(schema: dict) -> None:
    """The config's schema: ``configurable`` starts empty in the playground, not as a dict of nulls."""
    schema.get("properties", {}).get("configurable", {}).pop("default", None)


class MethodRunnable(Runnable[dict, dict]):
    """A registered method served to remote clients under the operator's ``ServerConfig``."""

    def __init__(self, method: str, config: ServerConfig) -> None:
        from hybridrag.graphs import context_class, get_graph

        self.method = method
        self.name = method
        self.graph = get_graph(method)
        self.context_cls = context_class(method)
        self.server_config = config
        self._input_model = input_model(method, config)
        self._fields = set(self.context_cls.__dataclass_fields__)

    # -- schemas seen by LangServe (request validation, docs, playground) --
    @property
    def InputType(self) -> type[BaseModel]:  # noqa: N802 (LangChain's name)
        """The request's ``input``: the question and the method's client settings."""
        return self._input_model

    @property
    def OutputType(self) -> type[BaseModel]:  # noqa: N802
        """The run's output: ranked results, answer, trace and usage."""
        return MethodOutput

    def get_input_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        """The input model, whatever the config."""
        return self._input_model

    def get_output_schema(self, config: RunnableConfig | None = None) -> type[BaseModel]:
        """The output model, whatever the config."""
        return MethodOutput

    def config_schema(self, *, include: Sequence[str] | None = None) -> type[BaseModel]:
        """The request's ``config``: the client settings, then ``tags`` / ``metadata`` when included.

        The settings have no null type and no null default, so the playground's form starts empty
        and valid.
        """
        configurable = settings_fields_model("Configurable", client_fields(self.method, self.server_config))
        fields: dict[str, Any] = {"configurable": (configurable, Field(configurable()))}
        if include and "tags" in include:
            fields["tags"] = (list[str], Field([]))
        if include and "metadata" in include:
            fields["metadata"] = (dict[str, Any], Field({}))
        return create_model(
            f"{self.method.capitalize()}Config", __config__=ConfigDict(json_schema_extra=_no_nulls), **fields
        )

    def with_config(self, config: RunnableConfig | None = None, **kwargs: Any) -> Runnable[dict, dict]:
        """Bound to ``config``, keeping this runnable's config schema.

        LangServe's playground and ``/config_schema`` read the schema through ``with_config``.
        """
        return _Bound(bound=self, config={**(config or {}), **kwargs}, kwargs={})

    @property
    def config_specs(self) -> list[ConfigurableFieldSpec]:
        """One spec per client setting, default None (the method's own default applies)."""
        return [
            ConfigurableFieldSpec(id=f, annotation=plain(t), name=f, description=desc, default=None)
            for f, t, desc in client_fields(self.method, self.server_config)
        ]

    # -- request → (question, context) --
    def settings_of(self, input: Any, config: RunnableConfig | None) -> tuple[str, dict]:
        """The question and the client's settings (configurable, then the input's settings)."""
        if isinstance(input, str):
            input = {"question": input}
        elif isinstance(input, BaseModel):  # LangServe hands over its parsed input: unset settings are None
            input = input.model_dump(exclude_none=True)
        elif isinstance(input, dict) and isinstance(input.get("settings"), dict | None):
            settings = {k: v for k, v in (input.get("settings") or {}).items() if v is not None}
            input = {**input, "settings": settings}
        try:
            parsed = self._input_model.model_validate(input)
        except ValidationError as exc:
            raise UserInputError(validation_message(exc)) from exc
        configurable = ensure_config(config).get("configurable") or {}
        settings = {k: v for k, v in configurable.items() if k in self._fields and v is not None}
        if parsed.settings is not None:
            settings.update(parsed.settings.model_dump(exclude_none=True))
        return parsed.question, settings

    def prepare(self, input: Any, config: RunnableConfig | None = None) -> tuple[str, Any]:
        """Validate the input; build the context from the operator's values and the client's settings."""
        from hybridrag.app.policy import build_context

        question, settings = self.settings_of(input, config)
        pausing = sorted(k for k in THREAD_ONLY if settings.get(k))
        if pausing:
            raise UserInputError(
                f"{pausing[0]}: needs a checkpointed thread (LangGraph Studio / the Agent Server, "
                f"langgraph.json); a hybridrag serve run cannot pause"
            )
        return question, build_context(self.context_cls, settings, self.server_config)

    def check(self, question: str, ctx: Any) -> None:
        """Open the KB, check the question's entity mentions (UserInputError), load the model."""
        from hybridrag.graphs.runtime import resolve_kb
        from hybridrag.kb.model import UnknownEntityError
        from hybridrag.tools.retrieval import check_mentions

        kb = resolve_kb(ctx)  # KBError here is the server's (503)
        try:
            check_mentions(kb, question)
        except UnknownEntityError as exc:  # its message names the KB directory: name the KB instead
            name = next((n for n, d in self.server_config.kbs.items() if d == ctx.kb), "requested")
            raise UserInputError(
                f"{str(exc).split(' is not in the knowledge base')[0]} is not in the {name!r} KB"
            ) from None
        except ValueError as exc:
            raise UserInputError(str(exc)) from None
        if getattr(ctx, "llm", None):
            from hybridrag.agents.llm.models import load_chat_model

            load_chat_model(ctx.llm, getattr(ctx, "llm_base_url", ""))

    async def acheck(self, runs: list[tuple[str, Any]], request: Any = None) -> None:
        """:meth:`check` each ``(question, context)`` in a worker thread, within the operator's run budget.

        Past the budget it raises :class:`RunTimeout`; it is given up when ``request``'s client
        disconnects (:class:`RunStopped`).
        """
        if not runs:
            return
        budget = self.server_config.run_timeout
        work = asyncio.ensure_future(asyncio.to_thread(lambda: [self.check(q, ctx) for q, ctx in runs]))
        loop = asyncio.get_running_loop()
        deadline = loop.time() + budget
        try:
            while not work.done():
                await asyncio.wait({work}, timeout=max(0.0, min(POLL_SECONDS, deadline - loop.time())))
                if work.done():
                    break
                if loop.time() >= deadline:
                    raise RunTimeout(f"the question's checks exceeded the {budget:g} s run budget")
                if request is not None and await request.is_disconnected():
                    raise RunStopped("the client disconnected; the question's checks were stopped")
            work.result()
        finally:
            work.cancel()  # a check still running in its thread finishes its bounded work unawaited

    # -- running --
    async def _chunks(self, input: Any, config: RunnableConfig | None, updates: bool) -> AsyncIterator[dict]:
        question, ctx = self.prepare(input, config)
        final: dict = {}
        async for mode, chunk in controlled_stream(
            self.graph, question, ctx, config, self.server_config.run_timeout, current_request()
        ):
            if mode == "values":
                final = chunk
            elif updates:
                for node, values in (chunk or {}).items():
                    yield {"node": node, "update": to_json(values or {})}
        yield {"node": "__end__", "output": _output(final)}

    async def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[dict]:
        """One chunk per node, ``{"node", "update"}``, then ``{"node": "__end__", "output"}``."""
        async for chunk in self._chunks(input, config, updates=True):
            yield chunk

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        """The common output shape."""
        output: dict = {}
        async for chunk in self._chunks(input, config, updates=False):
            output = chunk["output"]
        return output

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[dict]:
        """Synchronous :meth:`astream` (its own event loop in a helper thread)."""
        items: queue.Queue = queue.Queue()
        done = object()

        async def pump() -> None:
            try:
                async for chunk in self.astream(input, config):
                    items.put(chunk)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                items.put(exc)
            items.put(done)

        threading.Thread(target=lambda: asyncio.run(pump()), daemon=True, name=f"{self.method}-run").start()
        while (item := items.get()) is not done:
            if isinstance(item, BaseException):
                raise item
            yield item

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict:
        """Run one question to its end; return the last output the stream gave."""
        output: dict = {}
        for chunk in self.stream(input, config):
            output = chunk.get("output", output)
        return output


class _Bound(RunnableBinding):
    """A :class:`MethodRunnable` bound to a config, with the method's own config schema."""

    def config_schema(self, *, include: Sequence[str] | None = None) -> type[BaseModel]:
        return self.bound.config_schema(include=include)
