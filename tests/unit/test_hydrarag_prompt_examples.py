"""Every HydraRAG prompt the paper's appendix gives in-context examples shows them (issue 29).

The nine appendix templates (question analysis, source selector, paragraph → path, refined and
predicted exploration, path selection, path refinement, answer evaluation and generation) each carry
examples: the project's movie examples under ``examples=bundled``, lines rendered from the KB's
solved-example bank under ``examples=kb`` (none under ``num_examples=0``); each role's call puts
them in its system message.
"""

from __future__ import annotations

import pytest

from hybridrag.agents.hydrarag import roles as R
from hybridrag.agents.hydrarag import shots
from hybridrag.agents.shots import SolvedExample
from hybridrag.prompts import hydrarag as P

APPENDIX = {  # example role → (system prompt, role call with its reply, args)
    "analysis": P.ANALYSIS_SYSTEM,
    "selector": P.SELECTOR_SYSTEM,
    "text_paths": P.TEXT_PATHS_SYSTEM,
    "follow_up": P.FOLLOW_UP_SYSTEM,
    "predict": P.PREDICT_SYSTEM,
    "select_paths": P.SELECT_PATHS_SYSTEM,
    "refine": P.REFINE_SYSTEM,
    "check": P.CHECK_SYSTEM,
    "generate": P.GENERATE_SYSTEM,
}
EX = SolvedExample(
    question="which city is the founder of Initech born in",
    masked="which city is the founder of <E> born in",
    topic=("Initech",),
    topic_types=("company",),
    relations=("founded_by", "born_in"),
    answer_type="city",
    answers=("Austin",),
    source="schema",
)
ONE_HOP = SolvedExample(
    question="which city is Initech headquartered in",
    masked="which city is <E> headquartered in",
    topic=("Initech",),
    topic_types=("company",),
    relations=("headquartered_in",),
    answer_type="city",
    answers=("Austin",),
    source="schema",
)
AFTER_NO = {"question": "q", "topics": "t", "skyline": "s", "splits": "x", "paths": "p", "feedback": "f"}
CALLS = {  # role → (call taking (model, examples), the scripted reply)
    "selector": (
        lambda m, e: R.choose_sources(m, "q", "kg, docs", "a", "function_calling", e),
        R.SourceChoice(reasoning="r", sources=["kg"]),
    ),
    "follow_up": (
        lambda m, e: R.follow_up(m, "function_calling", e, **AFTER_NO),
        R.FollowUp(missing="m", question="q", skyline="s"),
    ),
    "predict": (lambda m, e: R.predict(m, "function_calling", e, **AFTER_NO), R.Predictions(predictions=[])),
    "select_paths": (
        lambda m, e: R.select_paths(
            m, "function_calling", e, question="q", skyline="s", splits="x", paths="p", width="3"
        ),
        R.Choice(reasoning="r", selected=[1]),
    ),
    "refine": (
        lambda m, e: R.refine(m, "function_calling", e, question="q", skyline="s", splits="x", paths="p"),
        R.Refinement(summary="s"),
    ),
    "generate": (
        lambda m, e: R.generate(m, "function_calling", e, question="q", skyline="s", splits="x", evidence="e"),
        R.FinalAnswer(reasoning="r", answer="a"),
    ),
}


@pytest.mark.parametrize("role", list(APPENDIX))
def test_every_appendix_prompt_takes_examples_and_has_them_both_ways(role):
    assert "examples" in APPENDIX[role].inputs
    bundled = shots.lines([], role, "bundled", 2)
    assert bundled.count("Example: ") == 2 and "<" not in bundled  # no tag can open in a system prompt
    bank = shots.to_state([EX, ONE_HOP])  # paragraph → path is shown from a 1-hop example only
    from_bank = shots.lines(bank, role, "kb", 2)
    assert from_bank.startswith("Example: ") and "Initech" in from_bank
    assert shots.lines(bank, role, "kb", 0) == ""
    shown = APPENDIX[role].format(examples=from_bank)
    assert from_bank in shown


def test_bank_lines_read_the_example_in_each_role_form():
    state = shots.to_state([EX])
    line = lambda role: shots.lines(state, role, "kb", 2)  # noqa: E731
    assert '"{Initech} → founded by → {...}"' in line("follow_up")
    assert 'skyline "Initech - founded by - entity - born in - Austin"' in line("predict")
    assert '"{Initech} → founded by → born in → {Austin}" → path 1 follows the skyline: [1]' in line("select_paths")
    assert '"Initech leads by founded by then born in to Austin."' in line("refine")
    assert line("generate").endswith('→ answer "Austin"')
    assert line("selector").endswith(": kg")


@pytest.mark.parametrize("role", list(CALLS))
def test_each_role_call_puts_its_examples_in_the_system_message(role, fake_llm):
    call, reply = CALLS[role]
    model = fake_llm(reply)
    examples = shots.lines(shots.to_state([EX]), role, "kb", 2)
    got, _ = call(model, examples)
    assert got == reply
    [sent] = model.calls
    assert examples in sent["messages"][0].content and examples not in sent["messages"][1].content
