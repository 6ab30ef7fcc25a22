"""What HydraRAG's node bodies read off the state and write to it: prompt values, probes, trace entries.

Every node body takes the graph state, the run context (:class:`agents.hydrarag.context.HydraRAGContext`),
the opened KB and the chat model, and returns the state update with one trace entry (:func:`traced`)
and its LLM usage; the graph node adds the seconds.
"""

from __future__ import annotations

from typing import Any

from hybridrag.agents.hydrarag import shots
from hybridrag.agents.hydrarag.pruning import numbered, path_blocks
from hybridrag.agents.llm.judge import use_rules
from hybridrag.prompts.data_block import data_block, data_list


def traced(node: str, decision: str, **details: Any) -> dict:
    """One trace entry, the shape ``graphs.runtime.traced`` writes (agents do not import graphs)."""
    return {"node": node, "decision": decision, **details}


def topic_names(state: dict) -> str:
    """The topic entities' names as a quoted data list."""
    return data_list(t["name"] for t in state.get("topics", []))


def quoted(state: dict) -> dict:
    """Prompt values every later role shares: the question, and the skyline and sub-questions as quoted data.

    The skyline and sub-questions are model output written from KB names (and, later, paths), so
    they are data blocks; the question is the user's own text.
    """
    splits = data_list(state.get("split_questions") or [state["question"]])
    return {"question": state["question"], "skyline": data_block(state["skyline"]), "splits": splits}


def shown(state: dict, ctx: Any, probe: dict) -> dict:
    """``probe`` with the paragraph → path example lines its text exploration shows, and ``follow``.

    ``follow`` (the judge's rules) makes the KG beam keep the paths along the skyline first
    (:func:`agents.hydrarag.kg.follow_bonus`).
    """
    return {
        **probe,
        "examples": shots.lines(state.get("shots", []), "text_paths", ctx.examples, ctx.num_examples),
        "follow": use_rules(ctx.judge, ctx.llm),
    }


def evidence(state: dict) -> str:
    """The refined summary (model notes on the paths) or, when there is none, the selected paths."""
    selected = state.get("selected", [])
    summary = state.get("summary", "")
    if not summary or summary == numbered(selected):
        return path_blocks(selected)
    return data_block([("summary", summary)], source="refined")


def best_entity(state: dict) -> str:
    """The name of the best ranked entity ('' when none is ranked)."""
    best = [r["name"] for r in state.get("ranked", []) if r["kind"] == "entity"]
    return best[0] if best else ""


def render_trace(trace: list[dict]) -> str:
    """The refinement path, one line per step: ``[phase] node: decision``."""
    return "\n".join(
        f"[{s['phase']}] {s['node']}: {s['decision']}" if s.get("phase") else f"{s['node']}: {s['decision']}"
        for s in trace
    )
