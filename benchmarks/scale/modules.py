"""Per-question callers of every retrieval module, with the decisions an LLM would make taken from gold.

The four LLM methods' modules are :mod:`benchmarks.speed.modules_methods`' (``PREPARE``: each module
as its graph node runs it, fed the gold record of the question: topic entity, relation path,
skyline), here with the record's question and topic renamed to the question's copy. Added
here: the query embedding alone (the floor), dense and BM25 search, fusion end-to-end
(``graph.invoke``), and the two graph reads the methods make (neighbours, ego graph).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks.scale.synth import copy_name
from hybridrag.evals.oracle.gold import GoldRecord
from hybridrag.evals.timing import stats

METHODS = ("hybgrag", "mor", "hydrarag", "ssrag")


@dataclass(frozen=True)
class Case:
    """One question asked about one copy: text, gold record, topic id in that copy."""

    question: str
    rec: GoldRecord
    topic: str

    @property
    def relations(self) -> list[str]:
        """The gold relation path."""
        return list(self.rec.relations)


def callers(kb, kb_dir: Path) -> dict[str, Callable[[Case], object]]:
    """Single-call modules: name → a function of one case, bound to ``kb``."""
    from hybridrag.graphs import context_for, get_graph

    fusion, f_ctx = get_graph("fusion"), context_for("fusion", kb=str(kb_dir))
    return {
        "query embedding (floor)": lambda c: kb.embed(c.question),
        "dense search (k=10)": lambda c: kb.dense_search(c.question, 10),
        "BM25 search (k=10)": lambda c: kb.lexical_search(c.question, 10),
        "fusion end-to-end (graph.invoke)": lambda c: fusion.invoke({"question": c.question}, context=f_ctx),
        "graph: neighbours of topic": lambda c: kb.graph.neighbors([c.topic]),
        "graph: ego graph (gold hops, relations)": lambda c: kb.graph.ego_graph(
            [c.topic], radius=c.rec.hops, relations=list(dict.fromkeys(c.relations))
        ),
    }


def pipeline(kb, c: Case, method: str) -> list[tuple[str, Callable[[], object]]]:
    """The retrieval modules of ``method`` for one case, in pipeline order (:mod:`benchmarks.speed.modules_methods`)."""
    from benchmarks.speed.modules_methods import PREPARE

    return [(f"{method}: {name}", call) for name, call in PREPARE[method](kb, c.rec)]


def time_cases(
    kbs: dict,
    qs: dict,
    simple: list[str] | None = None,
    methods: tuple[str, ...] = METHODS,
    warm: int = 2,
    outputs: dict | None = None,
    whole: dict | None = None,
) -> dict:
    """p50/p95 per module and key of ``kbs`` ({key: (kb, kb_dir)}; ``qs`` {key: cases}, equally many).

    The keys (factors, or memory vs server) are interleaved question by question, so a change in
    the machine's load hits them alike, and the order of the keys rotates from one question to the
    next, so no key always runs first (and pays for the caches the others then find warm).
    Single-call modules first, one module at a time; then each
    method's pipeline per question (prepared untimed; every module pays its own query embedding).
    ``outputs``, when given, receives each pipeline module's timed results: {key: {module: [result
    per question]}} (the JSON-ready summaries of :mod:`benchmarks.speed.modules_methods`).
    ``whole`` ({key: cases}, other questions than ``qs``'): each method's modules chained as a
    question runs them (:func:`whole_questions`), timed as one row per method, after the modules.
    """
    from benchmarks.speed.modules_methods import forget_queries

    times: dict = {key: {} for key in kbs}
    calls = {key: callers(kb, kb_dir) for key, (kb, kb_dir) in kbs.items()}
    n = min(len(v) for v in qs.values())
    names = list(next(iter(calls.values()))) if simple is None else simple
    for name in names:
        for i in range(-warm, n):
            for key in _rotated(list(kbs), i):
                c = qs[key][i % n]
                t = time.perf_counter()
                calls[key][name](c)
                if i >= 0:
                    times[key].setdefault(name, []).append((time.perf_counter() - t) * 1000)
    for method in methods:
        for i in range(-warm, n):
            for key in _rotated(list(kbs), i):
                kb = kbs[key][0]
                c = qs[key][i % n]
                for name, call in pipeline(kb, c, method):
                    forget_queries([c.question, c.rec.skyline()])
                    t = time.perf_counter()
                    got = call()
                    if i >= 0:
                        times[key].setdefault(name, []).append((time.perf_counter() - t) * 1000)
                        if outputs is not None:
                            outputs.setdefault(key, {}).setdefault(name, []).append(got)
    if whole is not None:
        whole_questions(kbs, whole, methods, warm, times, outputs)
    return {key: {name: percentiles(ms) for name, ms in per.items()} for key, per in times.items()}


def whole_questions(
    kbs: dict, qs: dict, methods: tuple[str, ...], warm: int, times: dict, outputs: dict | None
) -> None:
    """Each method's modules chained per question, into ``times`` as ``<method>: whole question``.

    The question's cached vectors are dropped once, before its first module (a question run embeds
    its question once and shares it), then the modules run in pipeline order, the stores
    interleaved and rotated per question as above; the row is the sum of the modules' times (their
    preparation, the LLM decisions taken from gold, untimed). ``outputs`` gets every module's result.
    """
    from benchmarks.speed.modules_methods import forget_queries

    n = min(len(v) for v in qs.values())
    for method in methods:
        name = f"{method}: whole question"
        for i in range(-warm, n):
            for key in _rotated(list(kbs), i):
                c = qs[key][i % n]
                steps = pipeline(kbs[key][0], c, method)
                forget_queries([c.question, c.rec.skyline()])
                took, got = 0.0, []
                for _, call in steps:
                    t = time.perf_counter()
                    got.append(call())
                    took += time.perf_counter() - t
                if i >= 0:
                    times[key].setdefault(name, []).append(took * 1000)
                    if outputs is not None:
                        outputs.setdefault(key, {}).setdefault(name, []).append(got)


def _rotated(keys: list, i: int) -> list:
    """``keys`` starting at the ``i``-th (mod their number)."""
    k = i % len(keys)
    return keys[k:] + keys[:k]


def percentiles(ms: list[float]) -> dict:
    """p50, p95, mean (ms) and count."""
    return stats(ms, suffix="_ms")


def cases(datasets: Path, per_hop: int, factor: int, seed: int = 0) -> list[Case]:
    """``per_hop`` dev questions of each hop count (seeded sample), each about a random copy of its topic."""
    from benchmarks.scale.synth import random_copies
    from hybridrag.evals.datasets import load_metaqa, sample
    from hybridrag.evals.oracle.gold import record_for

    out: list[Case] = []
    for hops in (1, 2, 3):
        qs = sample(load_metaqa(datasets / "metaqa" / f"dev_{hops}hop.txt"), per_hop, seed=seed)
        for q, c in zip(qs, random_copies(len(qs), factor, seed + hops), strict=True):
            topic = copy_name(q.topic, c)
            text = q.question.replace(q.topic, topic, 1)
            rec = record_for(q)
            out.append(Case(text, replace(rec, question=text, topic=topic), topic))
    return out
