"""`langgraph dev` (the Agent Server behind LangGraph Studio) serves every registered graph.

The server runs offline on a free loopback port from a scratch folder that links the
project's files (so it reads the project's own ./langgraph.json while its working files,
.langgraph_api/, and its log stay out of the project), with --no-reload and --no-browser.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx  # noqa: E402
import pytest
from http_ready import wait_until_ready  # noqa: E402

from benchmarks.server import stop_group as stop  # noqa: E402
from hybridrag.graphs import REGISTRY, context_class, list_graphs  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
OUTPUT_KEYS = {"answer", "ranked", "evidence", "trace", "usage"}
START_TIMEOUT, RUN_TIMEOUT = 180, 300
QUESTION = "who directed Forrest Gump"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def langgraph_cli() -> str:
    exe = Path(sys.executable).with_name("langgraph")
    if exe.exists():
        return str(exe)
    found = shutil.which("langgraph")
    if not found:
        pytest.skip("langgraph-cli[inmem] is not installed (pip install 'hybridrag[studio]')")
    return found


def start_dev(work: Path, env_extra: dict | None = None, budget: str | None = None) -> Iterator[str]:
    """`langgraph dev` in ``work`` (the project's files linked); ``budget`` overrides BG_JOB_TIMEOUT_SECS."""
    if importlib.util.find_spec("langgraph_runtime_inmem") is None:  # importing it writes .langgraph_api/ here
        pytest.skip("langgraph-cli[inmem] is not installed (pip install 'hybridrag[studio]')")
    stray = ROOT / ".langgraph_api"
    existed = stray.exists()
    for entry in ROOT.iterdir():
        if not entry.name.startswith(".") and not (budget and entry.name == "langgraph.json"):
            (work / entry.name).symlink_to(entry)
    if budget:
        cfg = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
        cfg["env"]["BG_JOB_TIMEOUT_SECS"] = budget
        (work / "langgraph.json").write_text(json.dumps(cfg), encoding="utf-8")
    port = free_port()
    log = work.parent / f"{work.name}.log"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "PYTHONUNBUFFERED": "1",
        **(env_extra or {}),
    }
    env.pop("OPENAI_API_KEY", None)
    cmd = [langgraph_cli(), "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port)]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_ready(proc, f"{url}/ok", log, START_TIMEOUT, "langgraph dev")
        yield url
    finally:
        stop(proc)
    assert existed or not stray.exists(), "langgraph dev wrote its working files into the project"


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The dev server with an operator config: the sample KB, a KB never built ("missing") and a
    model ("fast", a loopback fake that answers every call with "I cannot tell.")."""
    from benchmarks.reliability.server import FakeLLM

    fake = FakeLLM().start()
    work = tmp_path_factory.mktemp("langgraph-dev")
    config = work.parent / "dev-server.json"
    config.write_text(
        json.dumps(
            {
                "kbs": {"sample": "sample", "missing": str(work.parent / "never-built")},
                "models": {"fast": {"spec": "openai:fake", "base_url": fake.url("fast")}},
            }
        ),
        encoding="utf-8",
    )
    try:
        yield from start_dev(work, {"HYBRIDRAG_SERVER_CONFIG": str(config)})
    finally:
        fake.close()


def run_on_thread(url: str, thread: str, body: dict) -> dict:
    r = httpx.post(f"{url}/threads/{thread}/runs/wait", json=body, timeout=RUN_TIMEOUT)
    assert r.status_code == 200, r.text
    return r.json()


def new_thread(url: str) -> str:
    return httpx.post(f"{url}/threads", json={}, timeout=30).json()["thread_id"]


def test_a_thread_asked_twice_reports_only_the_second_question(dev_server):
    thread = new_thread(dev_server)
    body = {"assistant_id": "fusion", "context": {"kb": "sample"}}
    first = run_on_thread(dev_server, thread, {**body, "input": {"question": QUESTION}})
    second = run_on_thread(dev_server, thread, {**body, "input": {"question": "who directed Big"}})
    fresh = run_on_thread(dev_server, new_thread(dev_server), {**body, "input": {"question": "who directed Big"}})
    assert first["answer"] == "Robert Zemeckis" and second["answer"] == fresh["answer"]
    assert second["trace"] == fresh["trace"], "the reused thread ran the question as a new thread does"
    assert [s["node"] for s in second["trace"]] == ["retrieve_vectors", "expand_seeds", "fuse_results"]
    state = httpx.get(f"{dev_server}/threads/{thread}/state", timeout=30).json()
    assert state["values"]["trace"] == second["trace"]


def test_approve_pauses_before_retrieval_and_resumes_with_the_edit(dev_server):
    thread = new_thread(dev_server)
    ctx = {"llm": "fast", "max_iterations": 1, "approve": True}
    run_on_thread(dev_server, thread, {"assistant_id": "hybgrag", "input": {"question": QUESTION}, "context": ctx})
    state = httpx.get(f"{dev_server}/threads/{thread}/state", timeout=30).json()
    assert state["next"] == ["approve_action"], state
    (pause,) = [i for task in state["tasks"] for i in task["interrupts"]]
    assert pause["value"]["proposal"]["action"]["module"] == "text"  # the fake's reply: the router's fallback
    out = run_on_thread(
        dev_server,
        thread,
        {"assistant_id": "hybgrag", "context": ctx, "command": {"resume": {"action": {"relations": ["directed_by"]}}}},
    )
    nodes = [s["node"] for s in out["trace"]]
    assert nodes[:3] == ["route_question", "approve_action", "retrieve_text"], nodes
    assert out["trace"][1]["decision"] == "edited action" and out["trace"][1]["action"]["relations"] == ["directed_by"]


def test_readme_sdk_snippet(dev_server, capsys):
    """The README's Agent Server snippet (a question, then a chat), run as written against this server."""
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "langgraph dev --port 2025 --no-browser" in readme  # the offline command to copy
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    (code,) = [b for b in blocks if "get_sync_client(" in b]
    assert 'url="http://127.0.0.1:2025"' in code
    exec(compile(code.replace("http://127.0.0.1:2025", dev_server), "README:Agent Server", "exec"), {})
    out = capsys.readouterr().out
    assert out == (
        "Robert Zemeckis ['retrieve_vectors', 'expand_seeds', 'fuse_results']\n"
        "Penny Marshall | who directed Big?\n"
        "Gary Ross | who wrote Big?\n"
    ), out


def test_a_thread_is_forked_at_the_validator(dev_server):
    """Studio's "fork": update a past state as a node; the node's conditional edge runs outside a run."""
    thread = new_thread(dev_server)
    run_on_thread(
        dev_server,
        thread,
        {"assistant_id": "hybgrag", "input": {"question": QUESTION}, "context": {"llm": "fast", "max_iterations": 1}},
    )
    history = httpx.post(f"{dev_server}/threads/{thread}/history", json={"limit": 50}, timeout=30).json()
    validated = next(h for h in history if h["next"] == ["validate_retrieval"])
    r = httpx.post(
        f"{dev_server}/threads/{thread}/state",
        timeout=30,
        json={"values": {"verdict": "no"}, "as_node": "validate_retrieval", "checkpoint": validated["checkpoint"]},
    )
    assert r.status_code == 200, r.text
    forked = httpx.get(f"{dev_server}/threads/{thread}/state", timeout=30).json()
    assert forked["next"] == ["comment_on_routing"], forked["next"]


def test_a_kb_that_is_not_built_is_named_not_an_internal_error(dev_server):
    body = {"assistant_id": "fusion", "input": {"question": QUESTION}, "context": {"kb": "missing"}}
    out = httpx.post(f"{dev_server}/runs/wait", json=body, timeout=RUN_TIMEOUT).json()
    error = json.dumps(out)
    assert "kb: the 'missing' KB cannot be opened on this server (not built)" in error, out
    assert "internal error" not in error.lower() and "never-built" not in error, "no server path, no blank error"


def test_every_registered_graph_is_an_assistant_with_its_description(dev_server):
    r = httpx.post(f"{dev_server}/assistants/search", json={"limit": 100}, timeout=30)
    assert r.status_code == 200, r.text
    assistants = {a["graph_id"]: a for a in r.json()}
    assert set(assistants) == set(list_graphs())
    for name, a in assistants.items():
        assert a["description"] == REGISTRY[name].description
        schemas = httpx.get(f"{dev_server}/assistants/{a['assistant_id']}/schemas", timeout=30).json()
        assert "required" not in schemas["input_schema"], "a question or a chat (graphs/chat.py checks one is sent)"
        assert set(schemas["input_schema"]["properties"]) == {"question", "messages"}  # Studio's chat view
        assert set(schemas["output_schema"]["properties"]) == OUTPUT_KEYS | {"messages"}
        ctx = schemas["context_schema"]["properties"]
        from hybridrag.app.policy import PYTHON_ONLY  # Python objects (tools): never offered to a client

        assert set(ctx) == set(context_class(name).__dataclass_fields__) - PYTHON_ONLY
        assert all(p.get("description") for p in ctx.values()), "Studio shows these descriptions"


def test_studio_offers_the_operators_kbs_and_models(dev_server):
    assistants = httpx.post(f"{dev_server}/assistants/search", json={"limit": 100}, timeout=30).json()
    for a in assistants:
        method = a["graph_id"]
        schemas = httpx.get(f"{dev_server}/assistants/{a['assistant_id']}/schemas", timeout=30).json()
        props = schemas["context_schema"]["properties"]
        assert props["kb"]["enum"] == ["sample", "missing"] and props["kb"]["default"] == "sample", method
        if "llm" in props:
            assert props["llm"]["enum"] == ["fast"] and props["llm"]["default"] == "fast", method


def test_the_server_draws_each_method_with_labelled_branches(dev_server):
    """/assistants/{id}/graph is the graph app/studio.py serves: every edge, each branch labelled."""
    from hybridrag.app.studio import served_graph

    for method in list_graphs():
        drawn = httpx.get(f"{dev_server}/assistants/{method}/graph", timeout=30).json()
        edges = {(e["source"], e["target"]): e for e in drawn["edges"]}
        expected = served_graph(method).get_graph().edges
        assert set(edges) == {(e.source, e.target) for e in expected}, method
        for e in expected:
            if e.conditional:
                assert edges[(e.source, e.target)].get("data") == e.data and e.data, (method, e)


def test_runs_wait_fusion_on_the_sample_kb(dev_server):
    body = {
        "assistant_id": "fusion",
        "input": {"question": QUESTION},
        "context": {"kb": "sample", "top_k": 10},
    }
    r = httpx.post(f"{dev_server}/runs/wait", json=body, timeout=RUN_TIMEOUT)
    assert r.status_code == 200, r.text
    out = r.json()
    assert set(out) == OUTPUT_KEYS
    assert out["answer"] == "Robert Zemeckis"
    assert len(out["ranked"]) == 10
    assert [s["node"] for s in out["trace"]] == ["retrieve_vectors", "expand_seeds", "fuse_results"]
    # the context reaches the nodes: a baseline mode through the same run API
    body["context"] = {"mode": "vector", "top_k": 3}
    out = httpx.post(f"{dev_server}/runs/wait", json=body, timeout=RUN_TIMEOUT).json()
    assert len(out["ranked"]) == 3 and {r["source"] for r in out["ranked"]} == {"doc"}
    assert out["trace"][0]["mode"] == "vector"


def test_streamed_run_sends_node_updates(dev_server):
    body = {
        "assistant_id": "fusion",
        "input": {"question": QUESTION},
        "context": {"kb": "sample"},
        "stream_mode": ["updates", "values"],
    }
    nodes, values, errors = [], None, []
    with httpx.stream("POST", f"{dev_server}/runs/stream", json=body, timeout=RUN_TIMEOUT) as r:
        assert r.status_code == 200
        event = None
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event:
                data = json.loads(line.split(":", 1)[1])
                if event == "updates":
                    nodes.extend(data)
                elif event == "values":
                    values = data
                elif event == "error":
                    errors.append(data)
    assert not errors, errors
    assert nodes == ["start_question", "retrieve_vectors", "expand_seeds", "fuse_results"]  # a thread's new question
    assert values and values["answer"] == "Robert Zemeckis"


@pytest.mark.parametrize(
    ("graph", "context", "field"),
    [
        ("hybgrag", {"llm_base_url": "http://127.0.0.1:9/v1"}, "llm_base_url"),
        ("hybgrag", {"few_shot": "/etc/passwd"}, "few_shot"),
        ("mor", {"reranker_weights": "/etc/passwd"}, "reranker_weights"),
        ("ssrag", {"llm": "openai:gpt-4o-mini"}, "llm"),
        ("ssrag", {"llm": "local:smollm2"}, "llm"),
        ("fusion", {"kb": "/tmp"}, "kb"),
        ("fusion", {"top_k": 100000}, "top_k"),
        ("fusion", {"k1": -5}, "k1"),
        ("fusion", {"top_k": 3, "topk": 3}, "topk"),  # a misspelt setting: refused by app/studio.py, not dropped
        ("mor", {"planer": "paths"}, "planer"),
    ],
)
@pytest.mark.parametrize("where", ["context", "configurable"])
def test_a_context_a_client_may_not_set_is_refused(dev_server, graph, context, field, where):
    """langgraph.json puts the Agent Server in server mode: app.policy checks every run's context."""
    body = {"assistant_id": graph, "input": {"question": QUESTION}}
    if where == "context":
        body["context"] = context
    else:  # the Agent Server turns a run's configurable into its context
        body["config"] = {"configurable": context}
    r = httpx.post(f"{dev_server}/runs/wait", json=body, timeout=RUN_TIMEOUT)
    out = r.json()
    assert "answer" not in out or not out.get("answer"), out
    error = json.dumps(out)
    assert "PolicyError" in error and f"{field}: " in error, out


def test_operator_named_models_and_the_run_budget(tmp_path_factory):
    """The operator's config (HYBRIDRAG_SERVER_CONFIG) names a model a Studio user picks by name;
    a run over BG_JOB_TIMEOUT_SECS is stopped and the model gets no further node's calls."""
    from benchmarks.reliability.server import FakeLLM

    fake = FakeLLM(slow_reply=0.5).start()
    work = tmp_path_factory.mktemp("langgraph-dev-budget")
    config = work.parent / "server.json"
    models = {
        "slow": {"spec": "openai:fake", "base_url": fake.url("slow")},
        "fast": {"spec": "openai:fake", "base_url": fake.url("fast")},
    }
    config.write_text(json.dumps({"models": models}), encoding="utf-8")
    try:
        for url in start_dev(work, {"HYBRIDRAG_SERVER_CONFIG": str(config)}, budget="4"):
            # warm: the KB, its embedding model and its solved-example bank load on first use (the
            # server warms them in the background); the budget below is for the run, not for a cold start
            warm = {
                "assistant_id": "hybgrag",
                "input": {"question": QUESTION},
                "context": {"llm": "fast", "max_iterations": 1},
            }
            deadline = time.monotonic() + 240
            while True:
                t = httpx.post(f"{url}/threads", json={}, timeout=30).json()["thread_id"]
                httpx.post(f"{url}/threads/{t}/runs/wait", json=warm, timeout=RUN_TIMEOUT)
                status = httpx.get(f"{url}/threads/{t}/runs", timeout=30).json()[0]["status"]
                if status == "success" or time.monotonic() > deadline:
                    break
                time.sleep(2)
            assert status == "success", f"the server never finished a warm-up run ({status})"
            body = {
                "assistant_id": "hybgrag",
                "input": {"question": QUESTION},
                "context": {"llm": "slow", "max_iterations": 5},
            }
            thread = httpx.post(f"{url}/threads", json={}, timeout=30).json()["thread_id"]
            t0 = time.monotonic()
            out = httpx.post(f"{url}/threads/{thread}/runs/wait", json=body, timeout=RUN_TIMEOUT).json()
            answered = time.monotonic()
            runs = httpx.get(f"{url}/threads/{thread}/runs", timeout=30).json()
            assert [r["status"] for r in runs] == ["timeout"], (out, runs)
            # runs/wait returns the state as it stood when the budget ran out; the run's status says it stopped
            assert answered - t0 < 4 + 10, answered - t0
            assert fake.times("slow"), "the named model was not used"
            time.sleep(3)
            late = [t - answered for t in fake.times("slow") if t > answered + 1.5]
            assert late == [], f"model called {len(late)} time(s) after the run was stopped"
    finally:
        fake.close()


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_a_chat_thread_reads_the_follow_up_through_the_previous_answer(dev_server):
    """Studio's chat view and Agent Chat UI send ``messages`` on a thread and read the AI replies."""
    thread = new_thread(dev_server)
    body = {"assistant_id": "fusion", "context": {"kb": "sample"}}
    first = run_on_thread(dev_server, thread, {**body, "input": {"messages": [user("who directed Big?")]}})
    second = run_on_thread(dev_server, thread, {**body, "input": {"messages": [user("and who wrote it?")]}})
    assert second["trace"][0] == {
        "node": "read_messages",
        "decision": "follow-up read through the previous turn",
        "question": "who wrote Big?",
    }
    state = httpx.get(f"{dev_server}/threads/{thread}/state", timeout=30).json()["values"]
    assert [m["type"] for m in state["messages"]] == ["human", "ai", "human", "ai"]
    first_reply, second_reply = state["messages"][1]["content"], state["messages"][3]["content"]
    assert first_reply.split("\n")[0] == first["answer"] == "Penny Marshall"
    assert second_reply.split("\n")[0] == second["answer"] and "\nEvidence:\n[1] " in second_reply
    assert second_reply.endswith("(Read as: who wrote Big?)")


@pytest.mark.parametrize(
    ("path", "given", "message"),
    [
        ("/runs/wait", {"q": "who directed Big"}, "input.q: unknown key; fusion takes messages, question"),
        ("/runs/wait", {}, "input: no `question` and no `messages`"),
        ("/runs/wait", {"question": ""}, "input.question: empty; ask a question"),
        ("/runs/stream", {"question": "   "}, "input.question: empty; ask a question"),
        ("/threads/{thread}/runs", {"messages": [user("")]}, "input.messages: empty; ask a question"),
        ("/threads/{thread}/runs/wait", {"question": 7}, "input.question: must be a string, not int"),
    ],
)
def test_an_input_that_asks_nothing_is_a_422_before_any_run(dev_server, path, given, message):
    """app/run_input_guard.py (langgraph.json's http.app) answers before the server creates a run."""
    thread = new_thread(dev_server)
    url = dev_server + path.format(thread=thread)
    r = httpx.post(url, json={"assistant_id": "fusion", "input": given}, timeout=RUN_TIMEOUT)
    assert r.status_code == 422 and r.json()["detail"].startswith(message), r.text
    assert "KeyError" not in r.text and "Traceback" not in r.text
    runs = httpx.get(f"{dev_server}/threads/{thread}/runs", timeout=30).json()
    assert runs == [], "no run was created"


def test_a_valid_input_passes_the_guard_and_runs(dev_server):
    """The default assistant's id (not the graph name) and a chat input: the run is created and answers."""
    assistants = httpx.post(f"{dev_server}/assistants/search", json={"limit": 100}, timeout=30).json()
    (fusion,) = [a["assistant_id"] for a in assistants if a["graph_id"] == "fusion"]
    thread = new_thread(dev_server)
    body = {"assistant_id": fusion, "input": {"messages": [user("who directed Big?")]}, "context": {"kb": "sample"}}
    assert run_on_thread(dev_server, thread, body)["answer"] == "Penny Marshall"
    bad = httpx.post(
        f"{dev_server}/runs/wait", json={"assistant_id": fusion, "input": {"question": " "}}, timeout=RUN_TIMEOUT
    )
    assert bad.status_code == 422 and bad.json()["detail"].startswith("input.question: empty")


@pytest.fixture(scope="module")
def default_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`langgraph dev` as a user starts it: no operator file, no key; langgraph.json's shipped default."""
    set_here = [k for k in ("HYBRIDRAG_SERVER_CONFIG", "HYBRIDRAG_LLM", "OPENAI_API_KEY") if os.environ.get(k)]
    if set_here:
        pytest.skip(f"this test runs the server as a new user would; unset {', '.join(set_here)}")
    yield from start_dev(tmp_path_factory.mktemp("langgraph-dev-default"))


@pytest.mark.parametrize("method", list_graphs())
def test_the_shipped_default_runs_every_method_offline(default_server, method):
    """SmolLM2 is offered and is the default: every method answers with no API key (one iteration)."""
    body = {"assistant_id": method, "input": {"question": QUESTION}, "context": {"max_iterations": 1}}
    r = httpx.post(f"{default_server}/runs/wait", json=body, timeout=RUN_TIMEOUT)
    out = r.json()
    assert r.status_code == 200 and set(out) == OUTPUT_KEYS, out
    assert out["trace"] and isinstance(out["answer"], str)
    if method == "ssrag":  # SmolLM2 is a small model: SSRAG's rules stand in for its judge calls
        assert any("(small model)" in str(step.get("fallback")) for step in out["trace"]), out["trace"]
    elif method == "hydrarag":  # SmolLM2 is asked, or the bank's examples left its plan nothing to choose
        ruled = any(str(step.get("plan", "")).startswith("rule:") for step in out["trace"])
        assert ruled or out["usage"]["llm_calls"] >= 1, out["trace"]
    elif method == "mor":  # SmolLM2 is asked, or the bank's examples left its plan nothing to choose
        plans = [step for step in out["trace"] if step["node"] == "plan_question"]
        assert any("rule" in (p.get("raw") or {}) for p in plans) or out["usage"]["llm_calls"] >= 1, out["trace"]
    elif method != "fusion":
        assert out["usage"]["llm_calls"] >= 1, "the offered model (SmolLM2) answered the LLM roles"
    assistants = httpx.post(f"{default_server}/assistants/search", json={"limit": 100}, timeout=30).json()
    (assistant,) = [a["assistant_id"] for a in assistants if a["graph_id"] == method]
    schemas = httpx.get(f"{default_server}/assistants/{assistant}/schemas", timeout=30).json()
    props = schemas["context_schema"]["properties"]
    assert props["kb"]["enum"] == ["sample"]
    if "llm" in props:
        assert props["llm"]["enum"] == ["smollm2"] and props["llm"]["default"] == "smollm2"


def test_the_shipped_default_names_the_setting_of_an_unknown_model(default_server):
    body = {"assistant_id": "hybgrag", "input": {"question": QUESTION}, "context": {"llm": "local:smollm2"}}
    out = httpx.post(f"{default_server}/runs/wait", json=body, timeout=RUN_TIMEOUT).json()
    error = json.dumps(out)
    assert "llm: unknown model 'local:smollm2'; this server offers: smollm2 (a model is picked by its name" in error
    assert "--llm" not in error
