"""Cold start: /health says ok only once the operator's KBs and models are loaded."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient

from hybridrag.app.server_config import ModelChoice, ServerConfig


def test_health_is_503_warming_up_until_the_kb_is_loaded(monkeypatch):
    import hybridrag.app.readiness as readiness
    from hybridrag.app.server import create_app

    gate, seen = threading.Event(), []
    real = readiness.warm_up  # app.server_config.warm_up, as app/readiness.py uses it

    def slow_warm_up(config):
        gate.wait(30)
        real(config)
        seen.append(config)

    monkeypatch.setattr(readiness, "warm_up", slow_warm_up)
    app = create_app(methods=["fusion"])
    with TestClient(app) as client:  # the lifespan starts the warm-up
        r = client.get("/health")
        assert r.status_code == 503 and r.json() == {"status": "warming up", "methods": ["fusion"]}
        gate.set()
        assert app.state.readiness.wait(120)
        r = client.get("/health")
        assert r.status_code == 200 and r.json()["status"] == "ok", r.text
    assert seen, "the warm-up ran"


def test_warm_up_opens_each_kb_and_loads_the_embedding_model():
    from hybridrag.app.readiness import warm_up
    from hybridrag.graphs.runtime import resolve_kb

    warm_up(ServerConfig())
    kb = resolve_kb(type("Ctx", (), {"kb": "sample"})())
    assert kb.dense_search("Forrest Gump", k=1), "the sample KB answers a dense search"


def test_a_failed_warm_up_keeps_health_at_503_with_one_line(tmp_path):
    from hybridrag.app.readiness import Readiness

    gone = tmp_path / "gone"
    config = ServerConfig(kbs={"movies": str(gone)}, models={"smol": ModelChoice("local:nope")})
    ready = Readiness(config)
    status, body = ready.body()
    assert ready.wait(60) and status == 503
    status, body = ready.body()
    assert status == 503 and body["status"] == "failed" and "\n" not in body["error"], body
    assert str(tmp_path) not in body["error"], "the health body names no server path"


def test_warm_up_loads_the_named_models():
    from hybridrag.agents.llm.models import ModelConfigError
    from hybridrag.app.readiness import warm_up

    with pytest.raises(ModelConfigError, match="unknown local model 'nope'"):
        warm_up(ServerConfig(models={"x": ModelChoice("local:nope")}))


def test_one_kb_that_fails_does_not_stop_the_rest_from_warming(monkeypatch):
    import hybridrag.agents.llm.models as models
    import hybridrag.graphs.runtime as common
    from hybridrag.app.readiness import warm_up

    opened, loaded, real = [], [], common.resolve_kb

    def resolve(ctx):
        opened.append(ctx.kb)
        return real(ctx)

    monkeypatch.setattr(common, "resolve_kb", resolve)
    monkeypatch.setattr(models, "load_chat_model", lambda spec, base_url="": loaded.append(spec))
    config = ServerConfig(
        kbs={"gone": "/nonexistent/kb", "sample": "sample"}, models={"m": ModelChoice("openai:some-model")}
    )
    with pytest.raises(Exception, match="nonexistent|gone"):
        warm_up(config)
    assert opened == ["/nonexistent/kb", "sample"] and loaded == ["openai:some-model"]
