"""The OpenAI code path over real HTTP, offline: HybGRAG through ChatOpenAI against a local
OpenAI-compatible server (llama-cpp-python's server with the bundled SmolLM2 on 127.0.0.1).
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx  # noqa: E402
import pytest

from benchmarks.server import stop_group  # noqa: E402

pytestmark = pytest.mark.integration

ALIAS = "smollm2"
START_TIMEOUT = 120


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def openai_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, object]]:
    """Base URL (``.../v1``) of a llama.cpp OpenAI-compatible server, and its log path."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("needs llama-cpp-python[server] (pip install 'hybridrag[local]')")
    from hybridrag.agents.llm.models import bundled_gguf

    port = free_port()
    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(bundled_gguf()),
        "--model_alias",
        ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        str(max(1, min(4, os.cpu_count() or 1))),
        "--verbose",
        "False",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}/v1"
    patch = pytest.MonkeyPatch()
    # a 135M model on a loaded 2-core CPU can take minutes a call: the product's 60 s default is for real servers
    patch.setenv("HYBRIDRAG_LLM_TIMEOUT", "900")
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                tail = log.read_text(errors="replace")[-3000:]
                pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{tail}")
            try:
                r = httpx.get(f"{base}/models", timeout=2)
                if r.status_code == 200 and any(m["id"] == ALIAS for m in r.json()["data"]):
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama_cpp.server not ready after {START_TIMEOUT}s")
            time.sleep(0.5)
        yield base, log
    finally:
        patch.undo()
        stop_group(proc)


def test_chat_openai_is_the_client(openai_server):
    from langchain_openai import ChatOpenAI

    from hybridrag.agents.llm.models import load_chat_model

    base, _ = openai_server
    model = load_chat_model(f"openai:{ALIAS}", base)
    assert isinstance(model, ChatOpenAI)
    reply = model.invoke("Say hello.")
    assert reply.content.strip() and reply.usage_metadata["input_tokens"] > 0


def test_hybgrag_runs_through_the_openai_compatible_server(openai_server):
    from hybridrag.graphs import get_graph
    from hybridrag.graphs.hybgrag import HybGRAGContext

    base, log = openai_server
    ctx = HybGRAGContext(
        kb="sample",
        llm=f"openai:{ALIAS}",
        llm_base_url=base,
        structured_method="function_calling",
        max_iterations=1,
    )
    out = get_graph("hybgrag").invoke({"question": "which movies did Tom Hanks star in"}, context=ctx)
    assert set(out) >= {"answer", "ranked", "evidence", "trace", "usage"}
    assert out["ranked"] and out["answer"]
    usage = out["usage"]
    assert usage["llm_calls"] >= 2, usage  # router + validator at least
    assert usage["input_tokens"] > 0 and usage["by_role"]["router"]["llm_calls"] >= 1
    nodes = [s["node"] for s in out["trace"]]
    assert nodes[0] == "route_question" and "validate_retrieval" in nodes
    # the calls went over HTTP to the local server (its access log), not to a bundled in-process model
    assert log.read_text(errors="replace").count("POST /v1/chat/completions") >= usage["llm_calls"]


def test_constrained_output_over_http_keeps_names_inside_the_kb_lists(openai_server):
    """json_schema (or, where the server refuses it, llama.cpp's schema response_format) with KB enums."""
    from pydantic import BaseModel

    from hybridrag.agents.llm.constrained import constrained_call, question_spans
    from hybridrag.agents.llm.models import load_chat_model

    class Hop(BaseModel):
        relation: str

    class Route(BaseModel):
        entity: str
        hops: list[Hop]

    base, log = openai_server
    model = load_chat_model(f"openai:{ALIAS}", base)
    question = "who directed the movie Forrest Gump"
    relations = ["directed_by", "written_by", "starred_actors", "release_year"]
    choices = {"entity": question_spans(question), "hops.relation": relations}
    out = constrained_call(
        model,
        Route,
        [("system", "Give the topic entity and the relations to follow."), ("human", question)],
        choices,
        method="json_schema",
    )
    assert out["mode"] in {"json_schema", "llama_grammar"}, out
    route = out["parsed"]
    assert route is not None, out["parsing_error"]
    assert route.entity in choices["entity"] and route.hops
    assert all(h.relation in relations for h in route.hops)
