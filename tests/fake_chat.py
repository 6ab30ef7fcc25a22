"""A scripted fake chat model for unit tests: replies come from a script, nothing else.

Each script item answers one call, in order: a pydantic object (returned as the parsed
structured output; its class must be the requested schema), a string (plain text, or JSON
parsed against the schema; unparseable text yields a parse error like a real model), or an
exception instance (raised). A call with the script exhausted raises AssertionError, so an
unexpected LLM call fails the test loudly.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableLambda
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ScriptedChatModel(BaseChatModel):
    """Chat model that replays a script and records every call (messages and schema)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    script: list[Any] = Field(default_factory=list)
    calls: list[dict] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _next(self, messages: list[BaseMessage], schema: type[BaseModel] | None) -> Any:
        self.calls.append({"messages": messages, "schema": schema.__name__ if schema else None})
        if not self.script:
            last = messages[-1].content if messages else ""
            raise AssertionError(
                f"unscripted LLM call #{len(self.calls)} "
                f"(schema={schema.__name__ if schema else None}): {str(last)[:200]!r}"
            )
        item = self.script.pop(0)
        if isinstance(item, BaseException):
            raise item
        return item

    @staticmethod
    def _usage(messages: list[BaseMessage], text: str) -> dict:
        n_in = sum(len(str(m.content).split()) for m in messages)
        n_out = len(text.split())
        return {"input_tokens": n_in, "output_tokens": n_out, "total_tokens": n_in + n_out}

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        item = self._next(messages, None)
        text = item.model_dump_json() if isinstance(item, BaseModel) else str(item)
        msg = AIMessage(content=text, usage_metadata=self._usage(messages, text))
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _structured(self, schema: type[BaseModel], include_raw: bool, value: Any) -> Any:
        messages = self._convert_input(value).to_messages()
        item = self._next(messages, schema)
        if isinstance(item, BaseModel) and not isinstance(item, schema):
            raise AssertionError(f"script gave {type(item).__name__} where {schema.__name__} was asked")
        text = item.model_dump_json() if isinstance(item, BaseModel) else str(item)
        raw = AIMessage(content=text, usage_metadata=self._usage(messages, text))
        parsed, error = item if isinstance(item, BaseModel) else None, None
        if parsed is None:
            try:
                parsed = schema.model_validate(json.loads(text))
            except (ValueError, ValidationError) as exc:
                error = exc
        if not include_raw:
            if error is not None:
                raise error
            return parsed
        return {"raw": raw, "parsed": parsed, "parsing_error": error}

    def with_structured_output(
        self, schema: Any, *, include_raw: bool = False, method: str = "function_calling", **kwargs: Any
    ) -> RunnableLambda:
        """Return a runnable answering with the next script item for ``schema``."""
        if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
            raise AssertionError("the fake model supports pydantic schemas only")
        return RunnableLambda(lambda value: self._structured(schema, include_raw, value))

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        """Tools are accepted and ignored; replies still come from the script."""
        return self


class ChatLlamaCpp(ScriptedChatModel):
    """Scripted, and named like the llama.cpp integration (code that recognises a llama.cpp model by its
    class name treats it as one): records each call's ``response_format``."""

    formats: list[Any] = Field(default_factory=list)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self.formats.append(kwargs.get("response_format"))
        return super()._generate(messages, stop, run_manager, **kwargs)
