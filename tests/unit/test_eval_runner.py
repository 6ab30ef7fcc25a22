"""The eval runner on a fake graph: records, resume, errors, and a hand recomputation of the summary."""

import json
import math
import threading
from argparse import ArgumentParser

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from hybridrag.evals.datasets import Question
from hybridrag.evals.relevance import Judge
from hybridrag.evals.runner import run_questions
from hybridrag.kb.build import assemble
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Triple

TRIPLES = [
    Triple("Heat", "directed_by", "Michael Mann"),
    Triple("Ali", "directed_by", "Michael Mann"),
    Triple("Heat", "starred_actors", "Al Pacino"),
    Triple("Ali", "release_year", "2001"),
]
QUESTIONS = [
    Question("q1", "who directed Heat", ("Michael Mann",), qtype="movie_to_director", topic="Heat", hops=1),
    Question("q2", "who starred in Heat", ("Al Pacino",), qtype="movie_to_actor", topic="Heat", hops=1),
    Question("q3", "when was Ali released", ("2001",), qtype="movie_to_year", topic="Ali", hops=1),
    Question("q4", "boom", ("x",), qtype="movie_to_year", topic="Ali", hops=1),
    Question(
        "q5", "films by the director of Heat", ("Ali", "Heat"), qtype="movie_to_director_to_movie", topic="Heat", hops=2
    ),
]


class FakeGraph:
    """Scripted answers per question; 'boom' raises; counts calls."""

    def __init__(self):
        self.calls, self.lock = [], threading.Lock()

    def invoke(self, input, context=None):
        q = input["question"]
        with self.lock:
            self.calls.append(q)
        if q == "boom":
            raise RuntimeError("kaboom")
        ranked = {
            "who directed Heat": [("Michael Mann", "entity", "")],
            "who starred in Heat": [
                ("Michael Mann", "entity", ""),
                ("p:Heat", "passage", ""),
                ("Al Pacino", "entity", ""),
            ],
            "when was Ali released": [("Heat", "entity", "")],
            "films by the director of Heat": [
                ("t1", "triple", "Ali → directed by → Michael Mann"),
                ("Ali", "entity", ""),
                ("Michael Mann", "entity", ""),
            ],
        }[q]
        items = [
            {"id": i, "kind": k, "name": n or i, "score": 1.0 / r, "source": "test"}
            for r, (i, k, n) in enumerate(ranked, 1)
        ]
        return {
            "answer": items[0]["name"],
            "ranked": items,
            "evidence": [],
            "trace": [{"node": "fake"}],
            "usage": {"llm_calls": 2, "input_tokens": 100, "output_tokens": 10, "stages": {"retrieve": 0.01 * len(q)}},
        }


@pytest.fixture
def judge():
    ents, heads, rels, tails, names, schema = assemble(TRIPLES, {})
    store = InMemoryGraphStore(ents, heads, rels, tails, names, schema)
    return Judge(store, {"p:Heat": "Al Pacino starred in Heat."})


def _records(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_records_errors_and_resume(tmp_path, judge):
    graph = FakeGraph()
    summary = run_questions(graph, None, QUESTIONS, tmp_path, judge, workers=2, progress=False, meta={"method": "fake"})
    recs = {r["id"]: r for r in _records(tmp_path / "records.jsonl")}
    assert set(recs) == {"q1", "q2", "q3", "q4", "q5"}
    assert recs["q4"]["error"] == "RuntimeError: kaboom" and recs["q4"]["ranked"] == []
    assert recs["q2"]["relevant"] == [[], ["Al Pacino"], ["Al Pacino"]]
    assert recs["q5"]["relevant"] == [["Ali"], ["Ali"], []]
    assert recs["q1"]["reachable"] == ["Michael Mann"] and recs["q5"]["reachable"] == ["Ali", "Heat"]
    assert {"question", "gold", "ranked", "answer", "trace", "usage", "seconds"} <= set(recs["q1"])
    assert summary["n"] == 5 and summary["errors"] == 1
    for name in ("summary.json", "summary.md", "summary.png"):
        assert (tmp_path / name).stat().st_size > 0
    # resume: finished ids are skipped, the failed one is retried
    again = FakeGraph()
    run_questions(again, None, QUESTIONS, tmp_path, judge, progress=False)
    assert again.calls == ["boom"]


def test_summary_matches_a_hand_recomputation_from_the_records(tmp_path, judge):
    run_questions(FakeGraph(), None, QUESTIONS, tmp_path, judge, workers=2, progress=False)
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    recs = _records(tmp_path / "records.jsonl")

    def first_rank(r):
        return next((i for i, cov in enumerate(r["relevant"], 1) if cov), None)

    n = len(recs)
    hit1 = sum(1 for r in recs if r["relevant"][:1] and r["relevant"][0]) / n
    mrr = sum(1 / first_rank(r) for r in recs if first_rank(r)) / n
    recall20 = sum(len({k for cov in r["relevant"][:20] for k in cov}) / len(r["gold"]["keys"]) for r in recs) / n

    def ndcg(r):
        gains = [1 if cov else 0 for cov in r["relevant"]]
        ideal_n = min(10, max(len(r["gold"]["keys"]), sum(gains)))
        dcg = sum(g / math.log2(i + 1) for i, g in enumerate(gains[:10], 1))
        return dcg / sum(1 / math.log2(i + 1) for i in range(1, ideal_n + 1))

    m = summary["metrics"]
    assert m["hit@1"] == pytest.approx(hit1) == pytest.approx(2 / 5)  # q1, q5
    assert m["mrr"] == pytest.approx(mrr) == pytest.approx((1 + 0.5 + 1) / 5)
    assert m["recall@20"] == pytest.approx(recall20) == pytest.approx((1 + 1 + 0.5) / 5)
    assert m["recall_any@10"] == pytest.approx(3 / 5)
    assert m["ndcg@10"] == pytest.approx(sum(ndcg(r) for r in recs) / n)
    assert m["answer_em"] == pytest.approx(1 / 5)  # q1 answers "Michael Mann"
    # every answer but q4's "x" (not in the KB) lies within the hop count of its topic
    assert summary["ceiling"] == {"n": 5, "hit": pytest.approx(4 / 5), "recall": pytest.approx(4 / 5)}
    assert summary["by_qtype"]["movie_to_year"]["n"] == 2
    u = summary["usage"]
    assert u["llm_calls_per_question"] == pytest.approx(8 / 5)  # the failed question made no calls
    assert u["input_tokens_per_question"] == pytest.approx(400 / 5)
    stage = sorted(r["usage"]["stages"]["retrieve"] for r in recs if r["usage"])
    assert u["latency_seconds"]["stages"]["retrieve"]["p50"] == pytest.approx((stage[1] + stage[2]) / 2)
    assert u["latency_seconds"]["total"]["n"] == 5


def test_run_eval_end_to_end_with_a_fake_method(tmp_path, monkeypatch, judge):
    from hybridrag import graphs
    from hybridrag.evals.cli import add_eval_arguments, run_eval

    qfile = tmp_path / "qs.jsonl"
    qfile.write_text('{"id": "a", "question": "who directed Heat", "answers": ["Michael Mann"]}\n', encoding="utf-8")
    store_dir = tmp_path / "kb"
    monkeypatch.setattr("hybridrag.kb.ingest.get_embeddings", lambda spec: DeterministicFakeEmbedding(size=8))
    lines = "".join(f"{t.head}|{t.type}|{t.tail}\n" for t in TRIPLES)
    (tmp_path / "t.txt").write_text(lines, encoding="utf-8")
    from hybridrag.kb.ingest import ingest

    ingest(store_dir, [tmp_path / "t.txt"], progress=False)

    class Ctx:
        __dataclass_fields__ = {"kb": None, "top_k": None}

    seen = {}
    monkeypatch.setattr(graphs, "get_graph", lambda name: FakeGraph())
    monkeypatch.setattr(graphs, "context_class", lambda name: Ctx)
    monkeypatch.setattr(graphs, "context_for", lambda name, **kw: seen.update(kw) or kw)
    parser = ArgumentParser()
    add_eval_arguments(parser)
    out = tmp_path / "out"
    args = parser.parse_args(
        [
            "--method",
            "fake",
            "--questions",
            str(qfile),
            "--kb",
            str(store_dir),
            "--out",
            str(out),
            "--no-progress",
            "--top-k",
            "5",
        ]
    )
    assert run_eval(args) == 0
    assert seen == {"kb": str(store_dir), "top_k": 5}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["metrics"]["hit@1"] == 1.0
    assert summary["command"].startswith("hybridrag eval --method fake")
    args = parser.parse_args(
        [
            "--method",
            "fake",
            "--questions",
            str(qfile),
            "--kb",
            str(store_dir),
            "--out",
            str(out),
            "--no-progress",
            "--set",
            "mode=vector",
        ]
    )
    with pytest.raises(ValueError, match="other settings"):
        run_eval(args)


@pytest.mark.parametrize(
    "tail", [b'{"id": "q3", "question": "when was Ali rel', b"\x00\x00\x00\x00", b'{"id": "q3", "quest\xe9']
)
def test_resume_after_a_torn_last_record_redoes_it_with_a_warning(tmp_path, judge, caplog, tail):
    run_questions(FakeGraph(), None, QUESTIONS[:3], tmp_path, judge, progress=False)
    path = tmp_path / "records.jsonl"
    whole = path.read_bytes().splitlines(keepends=True)
    q3 = next(i for i, line in enumerate(whole) if b'"id": "q3"' in line)
    path.write_bytes(b"".join(whole[:q3] + whole[q3 + 1 :]) + tail)  # q3's write cut short
    again = FakeGraph()
    with caplog.at_level("WARNING"):
        summary = run_questions(again, None, QUESTIONS[:4], tmp_path, judge, progress=False)
    assert sorted(again.calls) == ["boom", "when was Ali released"]  # q3 redone, q4 new
    assert "dropped 1 torn or unreadable record line(s) (line 3)" in caplog.text
    assert summary["n"] == 4 and sorted(r["id"] for r in map(json.loads, path.read_bytes().splitlines())) == [
        "q1",
        "q2",
        "q3",
        "q4",
    ]
    assert (tmp_path / "records.jsonl.dropped").read_bytes() == tail + b"\n"


def test_a_whole_last_record_without_its_newline_is_kept(tmp_path, judge):
    run_questions(FakeGraph(), None, QUESTIONS[:2], tmp_path, judge, progress=False)
    path = tmp_path / "records.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    again = FakeGraph()
    run_questions(again, None, QUESTIONS[:3], tmp_path, judge, progress=False)
    assert again.calls == ["when was Ali released"]
    assert len(path.read_bytes().splitlines()) == 3
