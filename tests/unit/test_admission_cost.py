"""Admission's entity check costs O(question length): bounded spans, exact lookups first, one
embedding call and one vector search, under the run budget, given up when the client leaves."""

from __future__ import annotations

import asyncio
import time

import pytest

from hybridrag.kb.embeddings import LocalSentenceEmbeddings
from hybridrag.kb.model import UnknownEntityError
from hybridrag.tools.retrieval import check_mentions, explicit_mentions


def adversarial(chars: int = 2000) -> str:
    """``who directed Q0 z Q1 z ...``: one capitalised run per two words, ``chars`` long."""
    words, i = ["who directed"], 0
    while len(" ".join(words)) < chars:
        words += [f"Q{i}", "z"]
        i += 1
    return " ".join(words)[:chars].strip()


class Counted:
    """Counts the embedding calls and vector searches of one KB; fails at the ``limit``-th + 1."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, kb, limit: int = 1) -> None:
        self.embeds = self.searches = 0
        self.limit = limit
        real_encode, index = LocalSentenceEmbeddings.encode, kb.dense.index
        counter = self

        def encode(emb, texts, progress=False):
            counter.embeds += 1
            assert counter.embeds <= limit, f"more than {limit} embedding call(s) for one question"
            return real_encode(emb, texts, progress)

        class Index:
            def __getattr__(self, name):
                return getattr(index, name)

            def search(self, *args, **kwargs):
                counter.searches += 1
                assert counter.searches <= limit, f"more than {limit} vector search(es) for one question"
                return index.search(*args, **kwargs)

        monkeypatch.setattr(LocalSentenceEmbeddings, "encode", encode)
        monkeypatch.setattr(kb.dense, "index", Index())


@pytest.fixture
def kb(tiny_kb):
    from hybridrag.kb.base import open_kb

    return open_kb(tiny_kb)


def test_a_long_question_has_a_number_of_spans_linear_in_its_runs():
    question = adversarial(2000)
    runs = question.count("Q")
    spans = explicit_mentions(question)
    assert len(spans) <= 5 * runs, f"{len(spans)} spans for {runs} capitalised runs"
    assert max(len(s) for s in spans) <= 120


def test_a_long_unknown_question_costs_one_embedding_call_and_one_search(kb, monkeypatch):
    counted = Counted(monkeypatch, kb)
    start = time.process_time()
    with pytest.raises(UnknownEntityError) as info:
        check_mentions(kb, adversarial(2000))
    assert (counted.embeds, counted.searches) == (1, 1)
    assert time.process_time() - start < 20, "admission must not cost minutes of CPU"
    message = str(info.value)
    assert "'Q0', 'Q1', 'Q2' and 29 more" in message and len(message) < 300 + len(str(kb.directory)), message


def test_an_exact_name_links_without_any_dense_call(kb, monkeypatch):
    counted = Counted(monkeypatch, kb, limit=0)
    check_mentions(kb, "who starred in A League of Their Own")  # runs 'A League', 'Their Own', then joined
    check_mentions(kb, "did Tom Hanks and Kevin Bacon star in Apollo 13")
    assert (counted.embeds, counted.searches) == (0, 0)


def test_titles_whose_runs_are_far_apart_are_still_mentions():
    assert "It's a Mad, Mad, Mad, Mad World" in explicit_mentions("who directed It's a Mad, Mad, Mad, Mad World")
    assert "Went to Coney Island on a Mission from God... Be Back by Five" in explicit_mentions(
        "who wrote Went to Coney Island on a Mission from God... Be Back by Five?"
    )


@pytest.mark.parametrize("k", [1, 3])
def test_the_batched_dense_link_matches_linking_one_by_one(kb, k):
    mentions = ["tom hank", "Apollo Thirteen", "Geena Davies", "Zzyzx Qwerty", "giant worm movie"]
    one_by_one = [[e.id for e in kb.link(m, k=k, min_score=0.3)] for m in mentions]
    batched = [[e.id for e in found] for found in kb.dense_link_many(mentions, k=k, min_score=0.3)]
    assert batched == one_by_one and any(one_by_one)


def runnable_with(monkeypatch, run_timeout: float, check_seconds: float):
    from hybridrag.app.runnable import MethodRunnable
    from hybridrag.app.server_config import ServerConfig

    runnable = MethodRunnable("fusion", ServerConfig(run_timeout=run_timeout))
    monkeypatch.setattr(runnable, "check", lambda question, ctx: time.sleep(check_seconds))
    return runnable


async def seconds_to_refuse(checks, error: type[Exception], match: str) -> float:
    """Seconds until ``checks`` raised ``error`` (the sleeping check's thread is not waited for)."""
    start = time.monotonic()
    with pytest.raises(error, match=match):
        await checks
    return time.monotonic() - start


def test_checks_over_the_run_budget_are_a_run_timeout(monkeypatch):
    from hybridrag.app.errors import RunTimeout

    runnable = runnable_with(monkeypatch, run_timeout=0.3, check_seconds=3)
    assert (
        asyncio.run(seconds_to_refuse(runnable.acheck([("who directed Big", None)]), RunTimeout, "0.3 s run budget"))
        < 2
    )


def test_checks_stop_when_the_client_disconnects(monkeypatch):
    from hybridrag.app.errors import RunStopped

    class Gone:
        async def is_disconnected(self) -> bool:
            return True

    runnable = runnable_with(monkeypatch, run_timeout=60, check_seconds=3)
    assert (
        asyncio.run(
            seconds_to_refuse(runnable.acheck([("who directed Big", None)], Gone()), RunStopped, "disconnected")
        )
        < 2
    )


def test_the_servers_refusal_of_a_long_question_is_short(monkeypatch):
    from fastapi.testclient import TestClient

    from hybridrag.app.server import MAX_QUESTION_CHARS, create_app
    from hybridrag.app.server_config import ServerConfig
    from hybridrag.graphs.runtime import resolve_kb

    counted = Counted(monkeypatch, resolve_kb(type("Ctx", (), {"kb": "sample"})()))
    client = TestClient(create_app(methods=["fusion"], config=ServerConfig()))
    body = {"input": {"question": adversarial(MAX_QUESTION_CHARS)}}
    r = client.post("/fusion/invoke", json=body)
    assert r.status_code == 400 and len(r.text) < 300, r.text[:500]
    assert r.json()["detail"].startswith("unknown entity: 'Q0', 'Q1', 'Q2' and 29 more is not in the 'sample' KB")
    assert (counted.embeds, counted.searches) == (1, 1)
