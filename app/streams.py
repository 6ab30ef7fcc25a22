"""The streaming routes of a served method: ``/stream``, ``/stream_log`` and ``/stream_events``.

They speak LangServe's event protocol (``data`` events, then ``end``; RemoteRunnable and the
playground read them), with two differences from LangServe's own routes:

- a run that fails after the response started ends with an ``error`` event carrying the status
  and message ``/invoke`` would answer (``app/errors.py``: 502, 504, 400, ...), and the body
  is closed properly (LangServe sent a generic 500 and then broke the response off);
- the client's ``config.metadata`` and ``tags`` go into the run (tracing, ``include_tags``) but
  are not repeated in every event: each run of a graph inherits them, so a request's metadata
  would come back once per node and callback.

``/stream`` sends ``metadata`` (the run id), one ``data`` event per node (``{"node", "update"}``),
then ``{"node": "__end__", "output"}`` and ``end``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from hybridrag.app.errors import classify
from hybridrag.app.limits import parsed_body
from hybridrag.app.runs import CURRENT_REQUEST

STREAM_ENDPOINTS = ("stream", "stream_log", "stream_events")
Admit = Callable[..., Awaitable[None]]


class _Echo:
    """What the client put into the run's config, to leave out of the events sent back."""

    def __init__(self, config: dict) -> None:
        self.metadata = config.get("metadata") or {}
        self.tags = set(config.get("tags") or [])

    def metadata_of(self, metadata: Any) -> Any:
        if not isinstance(metadata, dict):
            return metadata
        return {
            k: v
            for k, v in metadata.items()
            if not k.startswith("__") and not (k in self.metadata and self.metadata[k] == v)
        }

    def tags_of(self, tags: Any) -> Any:
        return [t for t in tags if t not in self.tags] if isinstance(tags, list) else tags

    def event(self, event: dict) -> dict:
        """A ``stream_events`` event without the client's metadata and tags."""
        return {**event, "metadata": self.metadata_of(event.get("metadata")), "tags": self.tags_of(event.get("tags"))}

    def op(self, op: dict) -> dict:
        """A ``stream_log`` patch op; the op that adds a run's log entry loses the client's metadata and tags."""
        value = op.get("value")
        if op.get("op") != "add" or not str(op.get("path", "")).startswith("/logs/") or not isinstance(value, dict):
            return op
        if "metadata" not in value:
            return op
        return {
            **op,
            "value": {
                **value,
                "metadata": self.metadata_of(value["metadata"]),
                "tags": self.tags_of(value.get("tags")),
            },
        }


async def _events(chunks: AsyncIterator[bytes], first: dict | None = None) -> AsyncIterator[dict]:
    """SSE events of serialized chunks: ``data`` each, then ``end``; a failure ends them with ``error``."""
    if first is not None:
        yield first
    try:
        async for data in chunks:
            yield {"event": "data", "data": data.decode("utf-8")}
    except Exception as exc:  # noqa: BLE001 - every failure becomes a typed error event
        status, message = classify(exc)
        yield {"event": "error", "data": json.dumps({"status_code": status, "message": message})}
        return
    yield {"event": "end"}


def _params(body: dict, model: type[BaseModel] | None) -> dict:
    """The ``include_*`` / ``exclude_*`` filters of a stream_log / stream_events request."""
    if model is None:
        return {}
    try:
        return model.model_validate({k: body[k] for k in model.model_fields if k in body}).model_dump()
    except ValidationError as exc:
        raise RequestValidationError(exc.errors()) from None


def add_stream_routes(app: FastAPI, runnable: Any, admit: Admit, config_keys: tuple[str, ...]) -> None:
    """Add ``/<method>/stream``, ``/stream_log`` and ``/stream_events``; LangServe's are left disabled.

    ``admit`` refuses a request before its run starts; the run's config is the request's ``config_keys``.
    """
    from langserve.serialization import WellKnownLCSerializer
    from langserve.validation import StreamEventsParameters, StreamLogParameters
    from sse_starlette import EventSourceResponse

    serializer, base = WellKnownLCSerializer(), f"/{runnable.method}"

    async def start(request: Request, model: type[BaseModel] | None) -> tuple[Any, dict, dict]:
        body = await parsed_body(request)
        if not isinstance(body, dict) or "input" not in body:
            raise RequestValidationError([{"loc": ("body", "input"), "msg": "Field required", "type": "missing"}])
        CURRENT_REQUEST.set(request)  # admit's checks and the run stop when this client disconnects
        await admit(runnable, body)
        try:
            runnable.InputType.model_validate(body["input"])
        except ValidationError as exc:
            raise RequestValidationError(exc.errors()) from None
        raw = body.get("config") if isinstance(body.get("config"), dict) else {}
        config = {k: raw[k] for k in config_keys if raw.get(k) is not None}
        return body["input"], {**config, "run_name": base}, _params(body, model)

    @app.post(f"{base}/stream", include_in_schema=False)
    async def stream(request: Request) -> EventSourceResponse:
        input, config, _ = await start(request, None)

        async def chunks() -> AsyncIterator[bytes]:
            async for chunk in runnable.astream(input, config):
                yield serializer.dumps(chunk)

        run = {"event": "metadata", "data": json.dumps({"run_id": str(uuid.uuid4())})}
        return EventSourceResponse(_events(chunks(), run))

    @app.post(f"{base}/stream_log", include_in_schema=False)
    async def stream_log(request: Request) -> EventSourceResponse:
        input, config, params = await start(request, StreamLogParameters)
        echo = _Echo(config)

        async def chunks() -> AsyncIterator[bytes]:
            async for patch in runnable.astream_log(input, config, diff=True, **params):
                yield serializer.dumps({"ops": [echo.op(op) for op in patch.ops]})

        return EventSourceResponse(_events(chunks()))

    @app.post(f"{base}/stream_events", include_in_schema=False)
    async def stream_events(request: Request) -> EventSourceResponse:
        input, config, params = await start(request, StreamEventsParameters)
        echo = _Echo(config)

        async def chunks() -> AsyncIterator[bytes]:
            async for event in runnable.astream_events(input, config, version="v2", **params):
                yield serializer.dumps(echo.event(event))

        return EventSourceResponse(_events(chunks()))
