"""HydraRAG paper-fidelity and corrective-loop settings on the scripted fake model (issues 9 and 10)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridrag.agents.hydrarag import analysis as analysis
from hybridrag.agents.hydrarag import kg as kg
from hybridrag.agents.hydrarag import kg_paths as kg_paths
from hybridrag.agents.hydrarag import roles as R
from hybridrag.agents.hydrarag.pruning import PruneSettings, beam_cross_scores
from hybridrag.graphs.hydrarag import HydraRAGContext, graph
from hybridrag.graphs.runtime import resolve_kb
from tests.fake_chat import ScriptedChatModel

Q = "which movies did Tom Hanks star in"
TOPICS = R.TopicEntities(entities=["Tom Hanks"])
ANALYSIS = R.QuestionAnalysis(split_questions=[Q], skyline="Tom Hanks - starred in - answer(movie)")
REFINED = R.Refinement(summary="Tom Hanks starred in Big.")
YES = R.AnswerCheck(reasoning="named", sufficient="yes", answer="Big")
NO = R.AnswerCheck(reasoning="not named", sufficient="no", answer="", missing="the films of Tom Hanks")
DOC_PATHS = R.TextPaths(paths=[R.TextPath(paragraph=1, path="Big - is a - comedy")])


class WarmScripted(ScriptedChatModel):
    """A scripted model with a temperature field; each call records the temperature it ran at."""

    temperature: float = 0.0

    def _next(self, messages, schema):  # type: ignore[no-untyped-def]
        self.calls.append({"temperature": self.temperature, "schema": schema.__name__ if schema else None})
        return super()._next(messages, schema)


def run(kb: str, question: str = Q, **kw) -> dict:
    ctx = HydraRAGContext(kb=kb, llm="fake:test", use_web=False, **kw)
    return graph.invoke({"question": question}, context=ctx)


def nodes(out: dict, name: str) -> list[dict]:
    return [s for s in out["trace"] if s["node"] == name]


def test_exploration_roles_run_at_temperature_04_and_the_rest_at_0(tiny_kb):
    from hybridrag.agents.llm.models import forget_model, register_model

    model = WarmScripted(
        script=[
            TOPICS,
            ANALYSIS,
            R.SourceChoice(reasoning="r", sources=["kg"]),
            REFINED,
            NO,
            R.FollowUp(missing="m", question=Q, skyline=ANALYSIS.skyline),
            DOC_PATHS,
            R.Choice(reasoning="r", selected=[1]),
            REFINED,
            YES,
        ]
    )
    register_model("fake:test", model)
    try:
        out = run(tiny_kb, max_iterations=2)
    finally:
        forget_model("fake:test")
    temps = [(c["schema"], c["temperature"]) for c in model.calls if c.get("schema") and "temperature" in c]
    warm = {s for s, t in temps if t == 0.4}
    assert warm == {"FollowUp", "TextPaths"}  # the exploration roles of the run
    assert {s for s, t in temps if t == 0.0} == {
        "TopicEntities",
        "QuestionAnalysis",
        "SourceChoice",
        "Refinement",
        "AnswerCheck",
        "Choice",
    }
    assert model.temperature == 0.0 and out["answer"] == "Big"
    assert R.at_temperature(model, 0.4) is R.at_temperature(model, 0.4)  # one cached copy
    plain = ScriptedChatModel()
    assert R.at_temperature(plain, 0.4) is plain and R.at_temperature(model, None) is model


def test_length_floor_keeps_paths_of_the_predicted_depth_only(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    topics = [{"mention": "Tom Hanks", "id": "Tom Hanks", "name": "Tom Hanks"}]
    chain = analysis.chain(topics, "Tom Hanks - starred in - movie - directed by - answer(director)", "q", [])
    lengths = {}
    for floor in (True, False):
        probe = analysis.probe("initial", 1, ["kg"], 2, [chain], floor=floor)
        cands, _ = kg.explore_kg(kb, "q", probe, ["id:Tom Hanks"], PruneSettings())
        lengths[floor] = {len(c["path"]) - 1 for c in cands}
    assert lengths[True] == {2} and lengths[False] == {1, 2}
    chain = kg_paths.Chain((frozenset("a"),) * 4, ((("r",), False),) * 3)
    assert [c.length for c in kg_paths.within([chain], 2, 2, True)] == [3]  # two topics at depth 2: 2 < length <= 4


def test_beam_cross_score_rewards_document_corroboration(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    s = PruneSettings()
    rel = np.array([0.5, 0.5], dtype=np.float32)
    texts = ["Tom Hanks starred in Big", "Amelie is in French"]
    alone = beam_cross_scores(kb, rel, texts, [], s)
    expected = 0.7 * 0.5 + 0.3 * (1 / 3 * 1.0 + 1 / 3 * (1 / 3) + 1 / 3 * 1.0)
    assert np.allclose(alone, [expected, expected])
    backed = beam_cross_scores(kb, rel, texts, ["Tom Hanks starred in Big."], s)
    assert backed[0] > backed[1] and np.isclose(backed[1], expected)


def test_beam_score_and_variant_choices_are_checked():
    with pytest.raises(ValueError, match="beam_score must be one of cross, relevance, not 'bm25'"):
        HydraRAGContext(beam_score="bm25")
    with pytest.raises(ValueError, match="variant must be one of"):
        HydraRAGContext(variant="hydra")
    ctx = HydraRAGContext()
    assert (ctx.exploration_temperature, ctx.beam_score, ctx.length_floor, ctx.follow_up_topics) == (
        0.4,
        "cross",
        True,
        False,
    )


def test_no_states_what_is_missing_and_the_follow_up_sees_it(tiny_kb, fake_llm):
    fake = fake_llm(
        TOPICS,
        ANALYSIS,
        R.SourceChoice(reasoning="text", sources=["docs"]),
        DOC_PATHS,
        REFINED,
        NO,
        R.FollowUp(missing="m", question=Q, skyline=ANALYSIS.skyline, topic_entities=["Tom Hanks"]),
        DOC_PATHS,
        R.Choice(reasoning="r", selected=[1]),
        REFINED,
        YES,
    )
    out = run(tiny_kb, max_iterations=2, doc_pool=1)
    [check_no, _] = nodes(out, "check_answer")
    fb = check_no["shortfall"]
    assert fb["missing"] == "the films of Tom Hanks" and fb["searched"] == ["docs"]
    assert fb["not_searched"] == ["kg"] and fb["unnamed_topics"] == ["Tom Hanks"]
    prompt = fake.calls[6]["messages"][-1].content
    assert "Why the last answer check said no (quoted data):" in prompt
    assert "not_searched: kg" in prompt and "topics_in_no_path: Tom Hanks" in prompt
    assert "missing: the films of Tom Hanks" in prompt


def test_follow_up_topics_add_a_chain_from_the_entities_it_names(tiny_kb, fake_llm):
    wrong = R.TopicEntities(entities=["Tremors"])  # a wrong first topic
    follow = R.FollowUp(missing="m", question=Q, skyline=ANALYSIS.skyline, topic_entities=["Tom Hanks"])
    fake_llm(wrong, ANALYSIS, REFINED, NO, follow, R.Choice(reasoning="r", selected=[1]), REFINED, YES)
    out = run(tiny_kb, max_iterations=2, source_selector=False, doc_pool=0, follow_up_topics=True)
    [plan] = nodes(out, "plan_refined_exploration")
    assert plan["follow_up_chain"] == ["Tom Hanks"]
    assert any(e["text"].startswith("{Tom Hanks}") for e in out["evidence"])  # the refined round's pool
    fake_llm(
        wrong,
        ANALYSIS,
        REFINED,
        NO,
        follow,
        R.Choice(reasoning="r", selected=[1]),
        REFINED,
        NO,
        REFINED,
        R.FinalAnswer(reasoning="r", answer="I do not know"),
    )
    paper = run(tiny_kb, max_iterations=2, source_selector=False, doc_pool=0, follow_up_topics=False)
    refined = [s for s in nodes(paper, "prune_evidence") if s["phase"] == "refined"][0]
    assert not any(t.startswith("{Tom Hanks}") for t in refined["selected"])
