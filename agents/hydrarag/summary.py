"""HydraRAG's path summary (paper Algorithm 2, line 11): the round's document and web paths, summarised.

Once documents and web pages have been read into paths (:mod:`agents.hydrarag.text`), one call asks
the LLM to restate the round's text paths that bear on the skyline: paths that chain are joined,
repeats dropped, and each summarised path cites the numbered paths it restates. A summarised path
takes the place of the paths it cites in the pool the pruning ranks (its keys and answers are
theirs, its source and document those of the first one cited); paths it cites none of stay as they
were built (ours: the summary never takes evidence away from the pruning). KG paths are not
summarised: the algorithm summarises Paths_Wiki and Paths_Web.

Only built paths are summarised (a sentence kept as it is, when no path could be built from it,
is not a path). No call when the round built fewer than two text paths (ours: one path has nothing to join or
merge), with ``path_summary=false``, or under the judge's rules (small models: the paths as
built); an unusable reply keeps the paths as built, with a note.
"""

from __future__ import annotations

from typing import Any

from hybridrag.agents.hydrarag import shots
from hybridrag.agents.hydrarag.pruning import path_blocks
from hybridrag.agents.hydrarag.replies import PathSummary
from hybridrag.agents.hydrarag.views import quoted
from hybridrag.agents.llm.judge import use_rules
from hybridrag.agents.llm.structured import call_structured
from hybridrag.prompts import hydrarag as P

TEXT_SOURCES = ("doc", "web")


def _is_text_path(c: dict) -> bool:
    """A path built from document or web text (a sentence kept as it is when no path was built is not one)."""
    return c["source"] in TEXT_SOURCES and len(c.get("path") or []) >= 3


def _merged(text: list[dict], path: str, cited: list[int], k: int) -> dict:
    """The candidate of one summarised path (``cited``: 1-based numbers into ``text``)."""
    parts = [text[n - 1] for n in cited]
    tokens = [t.strip() for t in path.split(" - ") if t.strip()]
    first = {key: v for key, v in parts[0].items() if key != "embedded"}
    return {
        **first,
        "id": f"{parts[0]['id']}:summary:{k}",
        "text": " → ".join(tokens),
        "path": tokens,
        "keys": list(dict.fromkeys(key for c in parts for key in c["keys"])),
        "answers": list(dict.fromkeys(a for c in parts for a in c["answers"])),
        "summarises": [c["id"] for c in parts],
    }


def _ask(state: dict, ctx: Any, model: Any, text: list[dict]) -> tuple[PathSummary | None, dict]:
    examples = shots.lines(state.get("shots", []), "path_summary", ctx.examples, ctx.num_examples)
    values = quoted(state)
    human = P.PATH_SUMMARY.format(question=values["question"], skyline=values["skyline"], paths=path_blocks(text))
    messages = [("system", P.PATH_SUMMARY_SYSTEM.format(examples=examples).rstrip()), ("human", human)]
    return call_structured(model, PathSummary, messages, role="path_summary", method=ctx.structured_method)


def summarise(state: dict, ctx: Any, model: Any, cands: list[dict]) -> tuple[list[dict], dict, str | None]:
    """``(candidates, usage, note)``: the round's candidates with its text paths summarised."""
    text = [c for c in cands if _is_text_path(c)]
    if len(text) < 2 or not ctx.path_summary:  # one path: nothing to join or merge (ours)
        return cands, {}, None
    if use_rules(ctx.judge, ctx.llm):
        return cands, {}, "judge rules (small model): text paths as built"
    reply, calls = _ask(state, ctx, model, text)
    items = [
        (p.path.strip(), [n for n in dict.fromkeys(p.sources) if 1 <= n <= len(text)])
        for p in (reply.paths if reply is not None else [])
    ]
    items = [(path, cited) for path, cited in items if " - " in path and cited]
    if not items:
        return cands, calls, "unusable path summary: text paths as built"
    merged = [_merged(text, path, cited, k) for k, (path, cited) in enumerate(items)]
    used = {n for _, cited in items for n in cited}
    rest = [c for n, c in enumerate(text, 1) if n not in used]
    kept = [c for c in cands if not _is_text_path(c)] + merged + rest
    return kept, calls, f"{len(text)} text paths → {len(merged)} summarised, {len(rest)} as built"
