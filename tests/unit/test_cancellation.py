"""Cooperative cancellation: once a run is stopped, its CPU-bound loops end within about a second.

The workloads here run for tens of seconds to minutes when nothing stops them (path search on a
dense random graph); each test stops them after a fraction of a second and asserts, with generous
bounds for a loaded 2-core machine, that they ended within a few seconds.
"""

from __future__ import annotations

import ast
import asyncio
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from langgraph.graph import START, StateGraph
from langgraph.types import Send
from typing_extensions import TypedDict

from hybridrag.agents.hydrarag import kg_paths
from hybridrag.app.errors import RunStopped, RunTimeout
from hybridrag.app.runs import controlled_stream
from hybridrag.kb.cancel import RunCancelled, check_cancelled, current_stop, stop_scope
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Entity, Schema

ROOT = Path(__file__).resolve().parents[2]
STOPPED_WITHIN = 3.0  # seconds from the stop to the loop's end (about 1 s idle; generous under load)


def dense_store(n: int = 2000, m: int = 40000, relations: int = 8) -> InMemoryGraphStore:
    """A random graph of degree ~40: the simple paths of 5 hops from one node number ~40^5."""
    rng = np.random.default_rng(0)
    heads = rng.integers(0, n - 1, m).astype(np.int32)  # the last node stays isolated: no path reaches it
    tails = rng.integers(0, n - 1, m).astype(np.int32)
    rels = rng.integers(0, relations, m).astype(np.int32)
    entities = [Entity(f"e{i}", f"Entity {i}") for i in range(n)]
    return InMemoryGraphStore(entities, heads, rels, tails, [f"r{i}" for i in range(relations)], Schema())


@pytest.fixture(scope="module")
def store() -> InMemoryGraphStore:
    return dense_store()


def endless_paths(store: InMemoryGraphStore) -> list:
    """Every 5-hop simple path towards an unreachable node: about 40 s of CPU."""
    return store.paths(["e0"], [f"e{len(store.entities) - 1}"], max_hops=5, limit=10**9)


def endless_joins(store: InMemoryGraphStore) -> tuple:
    """HydraRAG's path search between two topics, beam 600 wide and 4 deep: over a minute of CPU."""
    score = lambda chains: [(hash(c.edges) % 1000) / 1000 for c in chains]  # noqa: E731 - any cheap order
    return kg_paths.explore(SimpleNamespace(graph=store), ["e0", "e1"], 4, 600, score)


def stopped_after(work, seconds: float = 0.5) -> tuple[float | None, BaseException | None]:
    """Run ``work()`` in a thread under a stop event set after ``seconds``; returns (seconds from the
    stop to the thread's end, or None when it still runs ``STOPPED_WITHIN`` s later; its exception)."""
    stop, box = threading.Event(), {}

    def target() -> None:
        with stop_scope(stop):
            try:
                work()
            except BaseException as exc:  # noqa: BLE001 - inspected by the test
                box["error"] = exc
        box["ended"] = time.monotonic()

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    time.sleep(seconds)
    assert worker.is_alive(), "the workload ended before the stop: it is too small to test anything"
    stop.set()
    stopped = time.monotonic()
    worker.join(STOPPED_WITHIN)
    return (None if worker.is_alive() else box["ended"] - stopped), box.get("error")


def test_the_check_is_a_no_op_outside_a_run():
    assert current_stop() is None
    start = time.perf_counter()
    for _ in range(100_000):
        check_cancelled()
    assert time.perf_counter() - start < 1.0  # ~50 ns a call idle; 1 s is 10 µs a call


def test_the_check_raises_once_the_runs_event_is_set_and_only_inside_its_scope():
    stop = threading.Event()
    with stop_scope(stop):
        check_cancelled()
        stop.set()
        with pytest.raises(RunCancelled):
            check_cancelled()
    check_cancelled()  # outside the scope: no run, nothing to stop
    assert not issubclass(RunCancelled, RuntimeError | ValueError | LookupError)  # not caught by fallbacks


@pytest.mark.parametrize("work", [endless_paths, endless_joins], ids=["memory_store.paths", "hydrarag.explore"])
def test_a_long_graph_loop_stops_soon_after_the_stop_event(store, work):
    took, error = stopped_after(lambda: work(store))
    assert took is not None, f"{work.__name__} still ran {STOPPED_WITHIN} s after its run was stopped"
    assert isinstance(error, RunCancelled)


class State(TypedDict, total=False):
    question: str
    done: int


def _search_graph(store: InMemoryGraphStore, fan_out: int, record: dict):
    """A graph whose sync node(s) run :func:`endless_paths`; each records its thread and CPU times."""

    def search(state: dict) -> dict:
        me = {"ident": threading.get_ident(), "cpu0": time.thread_time()}
        record.setdefault("nodes", []).append(me)
        try:
            endless_paths(store)
        finally:
            me["cpu1"], me["ended"] = time.thread_time(), time.monotonic()
        return {"done": 1}

    def route(state: dict) -> Any:
        return [Send("search", {"question": state["question"]}) for _ in range(fan_out)] if fan_out else "search"

    builder = StateGraph(State)
    builder.add_node("search", search)
    builder.add_conditional_edges(START, route, ["search"])
    return builder.compile()


def _thread_cpu(ident: int) -> float:
    return time.clock_gettime(time.pthread_getcpuclockid(ident))


async def _run_until_stopped(graph, budget: float, request: Any, record: dict) -> BaseException:
    """Drive ``graph`` under :func:`controlled_stream`; at its failure note every node thread's CPU."""
    try:
        async for _ in controlled_stream(graph, "q", None, None, budget, request):
            pass
    except (RunTimeout, RunStopped) as exc:
        record["stopped"] = time.monotonic()
        record["cpu_at_stop"] = [_thread_cpu(n["ident"]) for n in record.get("nodes", [])]
        end = time.monotonic() + STOPPED_WITHIN
        while time.monotonic() < end and not all("ended" in n for n in record["nodes"]):
            await asyncio.sleep(0.05)
        return exc
    raise AssertionError("the run ended without a timeout or a stop")


def _assert_nodes_stopped(record: dict, count: int) -> None:
    nodes = record["nodes"]
    assert len(nodes) == count
    for node, cpu_at_stop in zip(nodes, record["cpu_at_stop"], strict=True):
        assert "ended" in node, f"a node still computed {STOPPED_WITHIN} s after the run was stopped"
        assert node["cpu1"] - cpu_at_stop < 1.5, "the node burnt CPU long after the stop"
        assert node["cpu1"] - node["cpu0"] < 15  # it did not run its whole minute


@pytest.mark.parametrize("fan_out", [0, 2], ids=["one sync node", "Send fan-out of two"])
def test_a_timeout_stops_the_cpu_of_the_graphs_sync_nodes(store, fan_out):
    record: dict = {}
    exc = asyncio.run(_run_until_stopped(_search_graph(store, fan_out, record), 0.5, None, record))
    assert isinstance(exc, RunTimeout)
    _assert_nodes_stopped(record, max(fan_out, 1))


class _LeavingClient:
    """A request whose client disconnects after ``after`` seconds."""

    def __init__(self, after: float) -> None:
        self.at = time.monotonic() + after

    async def is_disconnected(self) -> bool:
        return time.monotonic() >= self.at


def test_a_disconnect_stops_the_cpu_of_the_running_node(store):
    record: dict = {}
    exc = asyncio.run(_run_until_stopped(_search_graph(store, 0, record), 60, _LeavingClient(0.5), record))
    assert isinstance(exc, RunStopped) and "disconnected" in str(exc)
    _assert_nodes_stopped(record, 1)


def test_a_long_encode_stops_between_the_models_layers():
    from hybridrag.kb.embeddings import get_embeddings

    emb = get_embeddings()
    emb.encode(["warm up", "the model"])  # loaded before the clock starts
    texts = [f"film number {i} directed by someone in year {1900 + i % 120}" for i in range(20_000)]
    took, error = stopped_after(lambda: emb.encode(texts), 1.0)
    assert took is not None, f"the encode still ran {STOPPED_WITHIN} s after its run was stopped"
    assert isinstance(error, RunCancelled)


def _swallowing_handlers(path: Path) -> list[str]:
    """``except Exception`` / ``BaseException`` / bare handlers of ``path`` that never re-raise."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ExceptHandler):
            continue
        names = [n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)] if node.type else ["bare"]
        broad = {"Exception", "BaseException", "bare"} & set(names)
        if broad and not any(isinstance(n, ast.Raise) for b in node.body for n in ast.walk(b)):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_no_broad_except_in_a_methods_code_swallows_the_cancellation():
    outside_runs = {"app/studio.py", "app/server_config.py"}  # warm-up and config loading, not a run's nodes
    files = [
        p
        for layer in ("agents", "graphs")
        for p in (ROOT / layer).rglob("*.py")
        if str(p.relative_to(ROOT)) not in outside_runs
    ]
    assert not [h for p in files for h in _swallowing_handlers(p)]
