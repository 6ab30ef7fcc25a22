"""The request boundary of the server: body size, safe JSON, and the shape of a run request.

:class:`BodyGuard` (ASGI middleware) reads each request body before any route does:

- a ``Content-Length`` over the operator's ``max_body_bytes`` is a 413 before anything is read;
  a body without one is counted as it arrives and refused (413) once over the limit;
- the body of a POST is parsed once by :func:`parse_json`: strict UTF-8, no NaN / Infinity /
  out-of-range numbers, integers of at most ``MAX_INT_DIGITS`` digits, nesting at most
  ``MAX_DEPTH`` deep, no lone surrogate; a body that fails is a 400 naming the problem;
- a run request (``/<method>/invoke``, ``batch``, ``stream``, ``stream_log``, ``stream_events``)
  must have the shape :func:`check_request` asks, with ``config.metadata`` and ``config.tags``
  within the operator's bounds (422 / 400).

A refusal is a short ``{"detail": "<where>: <problem>"}`` and one log line; the routes then
read the same bytes (and the parsed body, :func:`parsed_body`).
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hybridrag.app.errors import BodyTooLarge, MalformedRequest, UserInputError
from hybridrag.app.server_config import ServerConfig

log = logging.getLogger("hybridrag.server")
MAX_DEPTH = 32  # a run request nests a few levels; LangServe's configs a few more
MAX_INT_DIGITS = 100
MAX_TAG_CHARS = 128
RUN_ENDPOINTS = ("invoke", "batch", "stream", "stream_log", "stream_events")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")
_STATE_KEY = "hybridrag_body"


def _depth_ok(text: str) -> bool:
    """Whether the JSON ``text`` nests at most ``MAX_DEPTH`` deep (strings skipped)."""
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_DEPTH:
            return False
    return True


def _refuse_constant(name: str) -> Any:
    raise UserInputError(f"body: {name} is not a JSON number; send a finite number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise UserInputError(f"body: the number {text[:20]} is out of range")
    return value


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise UserInputError(f"body: an integer of {len(text.lstrip('-'))} digits; at most {MAX_INT_DIGITS}")
    return int(text)


def parse_json(raw: bytes) -> Any:
    """The JSON value of a request body (UserInputError, a 400, naming what is wrong with it)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserInputError(f"body: not UTF-8 text (byte {exc.start})") from None
    if not _depth_ok(text):
        raise UserInputError(f"body: JSON nested more than {MAX_DEPTH} deep")
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite, parse_int=_integer)
    except json.JSONDecodeError as exc:
        raise UserInputError(f"body: not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise UserInputError("body: a string holds a lone surrogate (\\ud800-\\udfff): not Unicode text") from None
    return value


def _kind(value: Any) -> str:
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}
    return kinds.get(type(value), "a number")


def check_config(config: Any, where: str, limits: ServerConfig) -> None:
    """Refuse a request's ``config`` of the wrong shape (422) or over the operator's bounds (400)."""
    if config is None:
        return
    if not isinstance(config, dict):
        raise MalformedRequest(f"{where}: must be an object, not {_kind(config)}")
    for key, kind in (("configurable", dict), ("metadata", dict), ("tags", list)):
        value = config.get(key)
        if value is not None and not isinstance(value, kind):
            raise MalformedRequest(f"{where}.{key}: must be {_kind(kind())}, not {_kind(value)}")
    tags = config.get("tags") or []
    if len(tags) > limits.max_tags:
        raise UserInputError(f"{where}.tags: at most {limits.max_tags} tags, not {len(tags)}")
    if any(not isinstance(t, str) or len(t) > MAX_TAG_CHARS for t in tags):
        raise UserInputError(f"{where}.tags: each tag is a string of at most {MAX_TAG_CHARS} characters")
    size = len(json.dumps(config.get("metadata") or {}, ensure_ascii=False).encode("utf-8"))
    if size > limits.max_metadata_bytes:
        raise UserInputError(f"{where}.metadata: at most {limits.max_metadata_bytes} bytes as JSON, not {size}")


def check_request(endpoint: str, body: Any, limits: ServerConfig) -> None:
    """Refuse a run request of the wrong shape.

    That is a body that is not an object, a ``/batch`` whose ``inputs`` is not a list, and a
    ``config`` (or one of a batch's configs) :func:`check_config` refuses.
    """
    if not isinstance(body, dict):
        raise MalformedRequest(f"body: must be a JSON object, not {_kind(body)}")
    config = body.get("config")
    if endpoint == "batch":
        if not isinstance(body.get("inputs"), list):
            got = _kind(body["inputs"]) if "inputs" in body else "missing"
            raise MalformedRequest(f"inputs: must be a list of inputs, not {got}")
        configs = config if isinstance(config, list) else [config]
        for i, one in enumerate(configs):
            check_config(one, f"config[{i}]" if isinstance(config, list) else "config", limits)
        return
    check_config(config, "config", limits)


async def parsed_body(request: Request) -> Any:
    """The body :class:`BodyGuard` parsed for this request (parsed here, as safely, when it did not)."""
    state = request.scope.get("state") or {}
    if _STATE_KEY in state:
        return state[_STATE_KEY]
    return parse_json(await request.body())


class BodyGuard:
    """ASGI middleware: the size limit, the JSON checks and the run-request shape of every request."""

    def __init__(self, app: ASGIApp, config: ServerConfig) -> None:
        self.app = app
        self.config = config

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an HTTP request on to the app once its body passes the checks; answer it with the error if not."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            raw = await self._read(scope, receive)
            if scope["method"] == "POST":
                body = parse_json(raw)
                endpoint = scope["path"].rstrip("/").rsplit("/", 1)[-1]
                if endpoint in RUN_ENDPOINTS:
                    check_request(endpoint, body, self.config)
                scope.setdefault("state", {})[_STATE_KEY] = body
        except UserInputError as exc:
            log.warning("refused %s %s: %d %s", scope["method"], scope["path"], exc.status, str(exc)[:200])
            await JSONResponse({"detail": str(exc)}, status_code=exc.status)(scope, receive, send)
            return
        await self.app(scope, _replay(raw, receive), send)

    async def _read(self, scope: Scope, receive: Receive) -> bytes:
        """The whole body, refused (BodyTooLarge) as soon as it is known to be over the limit."""
        limit = self.config.max_body_bytes
        too_large = BodyTooLarge(f"body: at most {limit} bytes")
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None:
            if not length.isdigit():
                raise UserInputError("body: Content-Length is not a number")
            if int(length) > limit:
                raise too_large
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _replay(raw: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands over ``raw`` once, then the client's own messages (disconnects)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()

    return replay
