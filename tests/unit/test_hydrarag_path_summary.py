"""Algorithm 2's path summary (issue 29): the round's document and web paths restated before pruning.

A summarised path replaces the paths it cites (their keys and answers kept), the others stay as
built; no call for fewer than two built text paths, with ``path_summary=false`` or under the judge's
rules; an unusable reply keeps the paths as built. The stand-in plays the role as a perfect model:
the paths bearing on the question, verbatim, a repeated path cited once with both numbers.
"""

from __future__ import annotations

from types import SimpleNamespace

from hybridrag.agents.hydrarag import roles as R
from hybridrag.agents.hydrarag.summary import _ask, summarise
from hybridrag.evals.datasets import Question
from hybridrag.evals.oracle import GoldSet, build_oracle

BIG = "who directed Big"
STATE = {"question": BIG, "skyline": "Big - directed by - answer(person)", "split_questions": [BIG], "shots": []}


def _ctx(**over):
    base = {"path_summary": True, "judge": "llm", "llm": "fake:test", "examples": "bundled", "num_examples": 2}
    return SimpleNamespace(**{**base, "structured_method": "function_calling", **over})


def _text(n: int, tokens: list[str], ids: list[str], source: str = "doc") -> dict:
    return {
        "id": f"{source}:initial:{n}",
        "source": source,
        "phase": "initial",
        "text": " → ".join(tokens),
        "keys": [f"id:{i}" for i in ids],
        "answers": ids[1:],
        "doc_id": f"p:{n}",
        "doc_name": "Big",
        "path": tokens,
    }


KG = {
    "id": "kg:initial:0",
    "source": "kg",
    "phase": "initial",
    "text": "{Big} → directed_by → {Penny Marshall}",
    "keys": ["id:Big", "id:Penny Marshall"],
    "answers": ["Penny Marshall"],
    "path": [],
}
A = _text(0, ["Big", "directed by", "Penny Marshall"], ["Big", "Penny Marshall"])
B = _text(1, ["Big", "directed by", "Penny Marshall"], ["Big", "Penny Marshall"], "web")
C = _text(2, ["Big", "release year", "1988"], ["Big", "1988"])
SENTENCE = {**_text(3, ["Big is a 1988 comedy."], ["Big"]), "path": ["Big is a 1988 comedy."]}


def test_a_summarised_path_replaces_the_ones_it_cites(fake_llm):
    model = fake_llm(R.PathSummary(paths=[R.SummaryPath(path="Big - directed by - Penny Marshall", sources=[1, 2])]))
    out, usage, note = summarise(STATE, _ctx(), model, [KG, A, B, C, SENTENCE])
    assert [c["id"] for c in out] == ["kg:initial:0", "doc:initial:3", "doc:initial:0:summary:0", "doc:initial:2"]
    merged = out[2]
    assert merged["text"] == "Big → directed by → Penny Marshall" and merged["summarises"] == [A["id"], B["id"]]
    assert merged["keys"] == ["id:Big", "id:Penny Marshall"] and merged["answers"] == ["Penny Marshall"]
    assert note == "3 text paths → 1 summarised, 1 as built" and usage["llm_calls"] == 1
    [call] = model.calls
    assert "Example: " in call["messages"][0].content and 'n="3"' in call["messages"][1].content


def test_no_call_and_the_paths_as_built(fake_llm):
    model = fake_llm(R.PathSummary(paths=[R.SummaryPath(path="Big", sources=[1])]))
    assert summarise(STATE, _ctx(), model, [KG, A, SENTENCE]) == ([KG, A, SENTENCE], {}, None)  # one built path
    assert summarise(STATE, _ctx(path_summary=False), model, [A, C]) == ([A, C], {}, None)
    rules = summarise(STATE, _ctx(judge="rules"), model, [A, C])
    assert rules == ([A, C], {}, "judge rules (small model): text paths as built")
    out, _, note = summarise(STATE, _ctx(), model, [A, C])  # "Big" is no path: unusable
    assert out == [A, C] and note == "unusable path summary: text paths as built"


def test_the_stand_in_keeps_the_bearing_paths_and_merges_repeats():
    gold = GoldSet.from_questions(
        [Question("big", BIG, ("Penny Marshall",), qtype="movie_to_director", topic="Big", hops=1)], ("kg",)
    )
    reply, _ = _ask(STATE, _ctx(num_examples=0), build_oracle("oracle", gold), [A, C, B])
    assert [(p.path, p.sources) for p in reply.paths] == [("Big - directed by - Penny Marshall", [1, 3])]
