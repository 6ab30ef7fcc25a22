"""Unit-test fixtures: a tiny KB (built once per session) and a scripted fake chat model.

No unit test reaches a real model: loading the bundled local model raises, the OpenAI key is
removed, and a fake model answers only what its script says.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ holds fake_chat.py

from fake_chat import ChatLlamaCpp, ScriptedChatModel  # noqa: E402
from kb_fixtures import movie_kb

TRIPLES = """\
Big|directed_by|Penny Marshall
Big|starred_actors|Tom Hanks
Big|release_year|1988
Big|has_genre|Comedy
A League of Their Own|directed_by|Penny Marshall
A League of Their Own|starred_actors|Tom Hanks
A League of Their Own|starred_actors|Geena Davis
A League of Their Own|release_year|1992
Apollo 13|directed_by|Ron Howard
Apollo 13|starred_actors|Tom Hanks
Apollo 13|starred_actors|Kevin Bacon
Apollo 13|release_year|1995
Amelie|in_language|French
Amelie|directed_by|Jean-Pierre Jeunet
Amelie|has_genre|Romance
Tremors|starred_actors|Kevin Bacon
Tremors|has_tags|giant worms
"""

PASSAGES = [
    {"id": "p:Big", "entity_id": "Big", "text": "Big is a comedy about a boy who wakes up as an adult."},
    {"id": "p:Apollo 13", "entity_id": "Apollo 13", "text": "Apollo 13 follows astronauts on a failing moon mission."},
    {"id": "p:Amelie", "entity_id": "Amelie", "text": "Amelie is a whimsical Paris romance about a shy waitress."},
    {"id": "p:note", "text": "Film critics often rank baseball movies among the most sentimental genres."},
]


@pytest.fixture(scope="session")
def tiny_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Directory of a tiny movie KB built with the real ingest (local MiniLM embeddings)."""
    return movie_kb(tmp_path_factory, "tiny", TRIPLES, PASSAGES)


@pytest.fixture(autouse=True)
def no_real_models(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any attempt to load the bundled local model; hide any real OpenAI key."""
    import hybridrag.agents.llm.models as models

    def refuse(name: str):
        raise AssertionError(f"unit tests must not load the local model {name!r}")

    monkeypatch.setattr(models, "_local_model", refuse)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("HYBRIDRAG_LLM", raising=False)


def _registered(spec: str, cls: type):
    """Fixture body: a factory ``make(*script)`` registering a scripted ``cls`` model as ``spec``;
    at teardown the spec is forgotten and every script must have been used up."""
    from hybridrag.agents.llm.models import forget_model, register_model

    made: list[ScriptedChatModel] = []

    def make(*script) -> ScriptedChatModel:
        model = cls(script=list(script))
        register_model(spec, model)
        made.append(model)
        return model

    yield make
    forget_model(spec)
    for model in made:
        assert not model.script, f"script items left unused: {model.script}"


@pytest.fixture
def fake_llm():
    """Factory: ``fake_llm(*script)`` registers a scripted model as ``fake:test`` and returns it."""
    yield from _registered("fake:test", ScriptedChatModel)


@pytest.fixture
def tiny_llama():
    """Factory: a scripted llama.cpp-like model registered as ``local:tiny`` (a small model)."""
    yield from _registered("local:tiny", ChatLlamaCpp)
