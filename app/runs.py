"""One served run under control: a wall-clock budget, and a stop when its client goes away.

:func:`controlled_stream` drives the graph's ``astream`` in its own task and hands its
chunks over a queue, so the caller can give up at the deadline (:class:`RunTimeout`) or
when the client disconnects. Stopping sets an event that

- ends the run between node steps (the pump stops and closes the graph's stream), and
- refuses any further LLM call (:class:`StopGuard`, a callback every chat model of the run
  inherits through LangGraph's config), so the model's server gets nothing more;
- ends the CPU work of a node under way: the event is the run's :mod:`kb.cancel` stop event,
  which the long loops (path search, ego graphs, graph walks, encodes) check, raising
  :class:`kb.cancel.RunCancelled` (reported as :class:`RunStopped`).

A node already inside an LLM call finishes that call (bounded by ``HYBRIDRAG_LLM_TIMEOUT``).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import aclosing
from contextvars import ContextVar
from typing import Any

from fastapi import Request
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import merge_configs

from hybridrag.app.errors import RunStopped, RunTimeout
from hybridrag.kb.base import same_kb_build
from hybridrag.kb.cancel import RunCancelled, stop_scope

CURRENT_REQUEST: ContextVar[Request | None] = ContextVar("hybridrag_request", default=None)
"""The HTTP request being served (set by the app's per-request hook), to notice a disconnect."""
POLL_SECONDS = 0.25
_DONE = object()


class StopGuard(BaseCallbackHandler):
    """Refuses to start an LLM call once its run is stopped (raises :class:`RunStopped`)."""

    raise_error = True
    run_inline = True

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop

    def _check(self) -> None:
        if self.stop.is_set():
            raise RunStopped("the run was stopped; no further LLM call")

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        """Refuse a chat model call of a stopped run."""
        self._check()

    def on_llm_start(self, serialized: Any, prompts: Any, **kwargs: Any) -> None:
        """Refuse an LLM call of a stopped run."""
        self._check()


async def _watch_disconnect(request: Request, stop: threading.Event, queue: asyncio.Queue) -> None:
    while not stop.is_set():
        if await request.is_disconnected():
            stop.set()
            queue.put_nowait(RunStopped("the client disconnected; the run was stopped"))
            return
        await asyncio.sleep(POLL_SECONDS)


async def controlled_stream(
    graph: Any, question: str, ctx: Any, config: RunnableConfig | None, budget: float, request: Request | None = None
) -> AsyncIterator[tuple[str, Any]]:
    """``(mode, chunk)`` pairs of ``graph.astream`` (updates and values) within ``budget`` seconds.

    Raises :class:`RunTimeout` at the deadline and :class:`RunStopped` when ``request``'s client
    disconnects; in both cases (and when the caller stops iterating) the run is stopped.
    """
    stop = threading.Event()
    queue: asyncio.Queue = asyncio.Queue()
    run_config = merge_configs(config, {"callbacks": [StopGuard(stop)]})

    async def pump() -> None:
        try:
            stream = graph.astream(
                {"question": question}, config=run_config, context=ctx, stream_mode=["updates", "values"]
            )
            # every node reads one KB build, even across a re-ingest; its loops see the run's stop
            with same_kb_build(), stop_scope(stop):
                async with aclosing(stream):
                    async for item in stream:
                        if stop.is_set():
                            return
                        queue.put_nowait(item)
            queue.put_nowait(_DONE)
        except asyncio.CancelledError:
            raise
        except RunCancelled as exc:  # a node's loop saw the stop: the same answer as any stopped run
            queue.put_nowait(RunStopped(str(exc)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
            queue.put_nowait(exc)

    loop = asyncio.get_running_loop()
    deadline = loop.time() + budget
    task = asyncio.create_task(pump())
    watcher = asyncio.create_task(_watch_disconnect(request, stop, queue)) if request is not None else None
    try:
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise RunTimeout(f"the run exceeded its {budget:g} s budget and was stopped") from None
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        for t in (task, watcher):
            if t is not None and not t.done():
                t.cancel()


def current_request() -> Request | None:
    """The request set by the per-request hook of this task, if any."""
    return CURRENT_REQUEST.get()
