"""How the server answers a failure: a status and a one-line message, never a trace or a path.

- the client's mistakes (bad settings, unknown entity, too large a batch or body, a malformed
  body): 4xx with the message; a 422's field errors repeat at most ``ECHO_CHARS`` of an input;
- the language model's server timed out / failed: 504 / 502;
- the graph database (or the KB, the local model) unavailable: 503;
- the run's wall-clock budget exceeded: 504;
- anything else: 500 "internal error" with an error id; the detail goes to the server log.

The same (status, message) pair is the body of an HTTP error and the ``error`` event of
``/stream``.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import HTTPException, RequestValidationError
from fastapi.responses import JSONResponse

log = logging.getLogger("hybridrag.server")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_PATH = re.compile(r"(?<![\w:/.])(?:~|\.{0,2})/[^\s'\",;:)]+")
ECHO_CHARS = 100  # the most of a client's input a 422 repeats back


class UserInputError(ValueError):
    """A request the server refuses with a 4xx: the message is meant for the client."""

    status = 400


class BodyTooLarge(UserInputError):
    """A request body over the operator's ``max_body_bytes`` (refused before it is parsed)."""

    status = 413


class MalformedRequest(UserInputError):
    """A body of the wrong shape (``inputs`` not a list, ``config.configurable`` not an object)."""

    status = 422


class RunTimeout(RuntimeError):
    """A run exceeded the operator's wall-clock budget."""


class RunStopped(RuntimeError):
    """A run was stopped (its client went away or its budget ran out): no further LLM call."""


def scrub(message: str) -> str:
    """One line, with URLs and filesystem paths replaced (client-facing messages)."""
    message = _URL.sub("<url>", " ".join(str(message).split()))
    return _PATH.sub("<path>", message)


def _server_error(status: int, message: str, exc: BaseException) -> tuple[int, str]:
    error_id = uuid.uuid4().hex[:12]
    log.error(
        "error %s (%d %s): %s: %s",
        error_id,
        status,
        message,
        type(exc).__name__,
        exc,
        exc_info=(type(exc), exc, exc.__traceback__),
    )
    return status, f"{message} (error id {error_id})"


def classify(exc: BaseException) -> tuple[int, str]:
    """The HTTP status and client message of an exception (5xx details are logged with an id)."""
    from hybridrag.agents.llm.models import LLMUnavailableError, ModelConfigError
    from hybridrag.app.policy import PolicyError
    from hybridrag.kb.model import GraphUnavailableError, KBError, UnknownEntityError
    from hybridrag.tools.web import WebSearchError

    if isinstance(exc, HTTPException):
        return exc.status_code, scrub(str(exc.detail))
    if isinstance(exc, UserInputError):
        return exc.status, scrub(str(exc))
    if isinstance(exc, PolicyError | UnknownEntityError):
        return 400, scrub(str(exc))
    if isinstance(exc, RunTimeout):
        return 504, str(exc)
    if isinstance(exc, LLMUnavailableError):
        text = str(exc).lower()
        if "timed out" in text or "timeout" in text:
            return _server_error(504, "the language model did not answer in time", exc)
        return _server_error(502, "the language model's server failed or sent an unreadable reply", exc)
    if isinstance(exc, GraphUnavailableError):
        return _server_error(503, "the graph database is unavailable; try again later", exc)
    if isinstance(exc, ModelConfigError):
        return _server_error(503, "the language model is not available on this server", exc)
    if isinstance(exc, KBError):
        return _server_error(503, "the knowledge base is unavailable on this server", exc)
    if isinstance(exc, WebSearchError):
        return _server_error(502, "web search failed", exc)
    if isinstance(exc, RunStopped):
        return 499, "the run was stopped"
    return _server_error(500, "internal error", exc)


def _short(value: Any) -> Any:
    """``value``, or its JSON cut to ``ECHO_CHARS`` when longer (a 422 never echoes a large input)."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return value if len(text) <= ECHO_CHARS else f"{text[:ECHO_CHARS]}... ({len(text)} characters)"


def validation_errors(exc: RequestValidationError) -> list:
    """The field errors of a 422, each ``input`` cut short."""
    errors = [{**e, "input": _short(e["input"])} if isinstance(e, dict) and "input" in e else e for e in exc.errors()]
    return jsonable_encoder(errors)


def install_handlers(app: FastAPI) -> None:
    """Answer every exception a route raises with :func:`classify` (JSON ``{"detail": ...}``).

    A validation error is answered with its field errors, inputs cut short.
    """

    async def handle(request: Request, exc: Exception) -> JSONResponse:
        status, message = classify(exc)
        return JSONResponse(status_code=status, content={"detail": message})

    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": validation_errors(exc)})

    app.add_exception_handler(RequestValidationError, invalid)

    from hybridrag.agents.llm.models import LLMUnavailableError, ModelConfigError
    from hybridrag.kb.model import KBError
    from hybridrag.tools.web import WebSearchError

    for exc_type in (
        UserInputError,
        ValueError,
        KBError,
        ModelConfigError,
        LLMUnavailableError,
        WebSearchError,
        RunTimeout,
        RunStopped,
        Exception,
    ):
        app.add_exception_handler(exc_type, handle)
