"""Schema-constrained output: enums from the KB and the question, and how each backend is asked."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, ConfigDict, Field

from hybridrag.agents.llm.constrained import (
    ConstraintError,
    check_choices,
    constrained_call,
    kb_choices,
    question_spans,
    with_choices,
)
from hybridrag.agents.llm.structured import call_structured


class Hop(BaseModel):
    relation: str


class Route(BaseModel):
    entity: str | None = None
    hops: list[Hop]


CHOICES = {"entity": ["Lake Baikal", "Baikal"], "hops.relation": ["flows_into", "located_in"]}


def test_question_spans_are_runs_of_words_longest_first():
    spans = question_spans("which river flows into Lake Baikal?", max_words=2)
    assert spans[0].count(" ") == 1 and "Lake Baikal" in spans and "Baikal" in spans
    assert "Baikal?" not in spans and "river flows into" not in spans


def test_with_choices_puts_enums_through_arrays_refs_and_optionals():
    schema = with_choices(Route, CHOICES)
    assert schema["properties"]["entity"]["anyOf"][0]["enum"] == ["Lake Baikal", "Baikal"]
    assert schema["$defs"]["Hop"]["properties"]["relation"]["enum"] == ["flows_into", "located_in"]
    assert "enum" not in Route.model_json_schema()["$defs"]["Hop"]["properties"]["relation"]  # a copy
    with pytest.raises(ConstraintError, match="no field 'kind'"):
        with_choices(Route, {"hops.kind": ["x"]})


def test_check_choices_rejects_a_name_outside_the_list():
    check_choices({"entity": "Baikal", "hops": [{"relation": "flows_into"}]}, CHOICES)
    with pytest.raises(ConstraintError, match="hops.relation = 'drains'"):
        check_choices({"entity": "Baikal", "hops": [{"relation": "drains"}]}, CHOICES)


def test_kb_choices_come_from_the_schema_of_a_non_movie_kb():
    schema = type(
        "Schema",
        (),
        {"relation_types": {"located_in": 0, "flows_into": 0}, "entity_types": {"river": 0, "lake": 0, "country": 0}},
    )()
    graph = type("Graph", (), {"schema": lambda self: schema})()
    kb = type("KB", (), {"graph": graph})()
    assert kb_choices(kb) == {"relation": ["flows_into", "located_in"], "type": ["country", "lake", "river"]}


class ChatLlamaCpp(BaseChatModel):
    """Named like the llama.cpp integration: takes response_format and records it."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    reply: str = ""
    seen: list[Any] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "fake-llama"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self.seen.append(kwargs.get("response_format"))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.reply))])


def test_llama_cpp_is_asked_with_a_grammar_schema_holding_the_enums():
    model = ChatLlamaCpp(reply='{"entity": "Lake Baikal", "hops": [{"relation": "flows_into"}]}')
    out = constrained_call(
        model, Route, [("human", "which river flows into Lake Baikal")], CHOICES, method="function_calling"
    )
    assert out["mode"] == "llama_grammar" and out["parsed"].hops[0].relation == "flows_into"
    fmt = model.seen[0]
    assert fmt["type"] == "json_object" and fmt["schema"]["$defs"]["Hop"]["properties"]["relation"]["enum"]


def test_a_reply_outside_the_lists_is_unparseable_and_the_caller_falls_back():
    model = ChatLlamaCpp(reply='{"entity": "Lake Baikal", "hops": [{"relation": "drains"}]}')
    obj, usage = call_structured(model, Route, [("human", "q")], role="router", choices=CHOICES)
    assert obj is None and usage["fallbacks"] == 1 and usage["llm_calls"] == 2


class Rejecting(BaseChatModel):
    """An OpenAI-compatible server that refuses json_schema but takes the llama.cpp response_format."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    seen: list[Any] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "fake-server"

    def with_structured_output(self, schema, *, method="json_schema", include_raw=False, **kw):  # type: ignore[no-untyped-def]
        class BadRequestError(Exception):
            status_code = 500

        raise BadRequestError("json_schema not supported")

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[no-untyped-def]
        self.seen.append(kwargs.get("response_format"))
        return ChatResult(
            generations=[
                ChatGeneration(message=AIMessage('{"entity": "Baikal", "hops": [{"relation": "located_in"}]}'))
            ]
        )


def test_a_server_refusing_json_schema_is_asked_with_the_llama_format():
    model = Rejecting()
    out = constrained_call(model, Route, [("human", "where is Baikal")], CHOICES, method="json_schema")
    assert out["mode"] == "llama_grammar" and out["parsed"].entity == "Baikal"
    assert model.seen[0]["schema"]["properties"]["entity"]["anyOf"][0]["enum"] == ["Lake Baikal", "Baikal"]


def test_document_extraction_on_a_llama_cpp_model_is_constrained_to_the_chunk_and_schema():
    from hybridrag.agents.extraction.extractor import _ask, extraction_choices
    from hybridrag.kb.documents import Chunk
    from hybridrag.kb.extract_schema import GraphSchema

    chunk = Chunk("lakes.txt#0", "lakes.txt", "The Selenga flows into Lake Baikal.")
    schema = GraphSchema(entity_types=("river", "lake"), relations={"flows_into": (None, None)})
    choices = extraction_choices(chunk, schema)
    assert "Lake Baikal" in choices["relations.tail"] and choices["relations.relation"] == ["flows_into"]
    model = ChatLlamaCpp(
        reply='{"entities": [{"name": "Selenga", "type": "river"}, {"name": "Lake Baikal", '
        '"type": "lake"}], "relations": [{"head": "Selenga", "relation": "flows_into", '
        '"tail": "Lake Baikal"}]}'
    )
    found, usage = _ask(model, chunk, schema, "function_calling")
    assert found.relations[0].tail == "Lake Baikal" and usage["llm_calls"] == 1
    enums = model.seen[0]["schema"]["$defs"]
    assert enums["ExtractedRelation"]["properties"]["relation"]["enum"] == ["flows_into"]


def test_router_and_planner_choices_name_only_the_kb_and_the_question():
    from hybridrag.agents.hybgrag.roles import RouterAction, router_choices
    from hybridrag.agents.mor.plan import Plan
    from hybridrag.agents.mor.roles import plan_choices

    schema = type("Schema", (), {"entity_types": {"river": 0, "lake": 0}, "relation_types": {"flows_into": 0}})()
    route = with_choices(RouterAction, router_choices(schema, "which river flows into Lake Baikal"))
    assert route["properties"]["relations"]["items"]["enum"] == ["flows_into"]
    assert "Lake Baikal" in route["$defs"]["TopicEntity"]["properties"]["name"]["enum"]
    plan = with_choices(Plan, plan_choices(schema, "which river flows into Lake Baikal", "paths"))
    node = plan["$defs"]["PlanNode"]["properties"]
    assert node["relation"]["enum"] == ["", "flows_into"] and node["type"]["enum"] == ["lake", "river"]
    assert "" in node["restriction"]["enum"] and "Lake Baikal" in node["restriction"]["enum"]
    no_relations = type("Schema", (), {"entity_types": {"river": 0}, "relation_types": {}})()
    assert "relations" not in router_choices(no_relations, "q")  # relation phrases stay free
