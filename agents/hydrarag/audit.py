"""HydraRAG's audit of a round: what the method itself can see is wrong with the question analysis.

The answer check (an LLM, or under the ``judge`` setting's rules
:func:`agents.hydrarag.answering.rule_check`, which uses this audit) judges whether the selected
paths answer the question; the LLM cannot tell an answer reached *despite* a faulty analysis from
one reached *through* it. The audit
compares the analysis with what the round found, without any LLM call, and names each
disagreement so the refined exploration (follow-up question, new skyline, topic entities)
can correct it (paper §4.2.2: the refined round is asked for the missing evidence; the
audit says which part of the analysis the evidence contradicts):

- topic problems: the topic extraction named no entity, named one that is not in the KB,
  or named one aligned (by similarity) to an entity the question does not name;
- path problems: the skyline names no relation; no selected KG path carries every relation of
  the skyline (verification of the analysis against the paths found); the selected KG paths take more
  hops than the skyline has relations; nothing was selected and the KG search found no path.

A relation of the skyline matches a path relation when they share a content word (``starred
in`` / ``starred_actors``; stop words such as "by" or "has" do not count) or their embeddings
are within ``relation_match`` cosine of each other.
"""

from __future__ import annotations

import re

from hybridrag.agents.hydrarag.analysis import split_chain
from hybridrag.agents.hydrarag.documents import naming
from hybridrag.agents.hydrarag.pruning import embed_texts
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts.grounding import STOP

MAX_PROBLEMS = 6  # problems named per round (each is one line of the follow-up prompt)
MAX_LISTED = 5  # relations or names listed inside one problem
_WORDS = re.compile(r"[^\W_]+")


def words(text: str) -> str:
    """Lower-cased words of a relation or name, single-spaced (``directed_by`` → ``directed by``)."""
    return " ".join(_WORDS.findall(text.casefold()))


def path_relations(c: dict) -> list[list[str]]:
    """Per hop, the relations of a candidate path (a clustered KG edge has several)."""
    if c["source"] == "kg":
        return [list(step["relations"]) for step in c.get("path") or [] if "relations" in step]
    tokens = c.get("path") or []
    return [[r] for r in tokens[1::2]] if isinstance(tokens, list) else []


def skyline_relations(skyline: str) -> list[str]:
    """The relations a ``entity - relation - entity ...`` skyline names, in order."""
    return [r for r in split_chain(skyline)[1::2] if words(r) and "answer(" not in r.casefold()]


def content(text: str) -> set[str]:
    """Content words of a relation (no stop words): ``starred_actors`` → {starred, actors}."""
    return {x for x in words(text).split() if x not in STOP}


def _matched(kb: KnowledgeBase, wanted: list[str], found: list[str], threshold: float) -> list[bool]:
    """For each wanted relation, whether some found relation matches it.

    A match is a content word in common (``starred in`` / ``starred_actors``), else embeddings
    within ``threshold`` cosine.
    """
    w, f = [words(x) for x in wanted], [words(x) for x in dict.fromkeys(found)]
    out = [bool(content(a)) and any(content(a) & content(b) for b in f) for a in w]
    rest = [i for i, ok in enumerate(out) if not ok]
    if rest and f:
        sims = embed_texts(kb, [w[i] for i in rest]) @ embed_texts(kb, f).T
        for i, row in zip(rest, sims, strict=True):
            out[i] = bool(row.max() >= threshold)
    return out


def topic_problems(state: dict, question: str, kb: KnowledgeBase | None = None) -> list[str]:
    """What is wrong with the topic entities the extraction named.

    A name no KB entity aligns to is a problem only when no passage of ``kb`` names it either (given
    a KB): the documents know what a KB of documents is about.
    """
    mentions, topics = state.get("mentions", []), state.get("topics", [])
    low = f" {words(question)} "
    out = []
    if not mentions:
        found = ", ".join(t["name"] for t in topics[:MAX_LISTED]) or "none"
        out.append(f"the topic extraction named no entity (names found in the question instead: {found})")
    unknown = [m for m in state.get("unlinked", []) if kb is None or not naming(kb, m, 1)]
    for m in unknown[:MAX_LISTED]:
        out.append(f"extracted topic entity '{m}' is not an entity of the knowledge base")
    for t in topics:
        if t["mention"] in mentions and f" {words(t['name'])} " not in low and words(t["mention"]) != words(t["name"]):
            out.append(
                f"extracted topic entity '{t['mention']}' was aligned to '{t['name']}', "
                "which the question does not name"
            )
    return out


def path_problems(kb: KnowledgeBase, state: dict, threshold: float) -> list[str]:
    """Where the skyline disagrees with the round's selected KG paths, or nothing was found in a KG search.

    Text paths are left out (their relations are the model's own words), except those built by rule
    that carry a skyline relation (``follows``, :mod:`agents.hydrarag.text_rules`).
    """
    probe, selected = state.get("probe") or {}, state.get("selected", [])
    if not selected:
        if "kg" not in probe.get("sources", []):
            return []
        starts = ", ".join(dict.fromkeys(n for ch in probe.get("chains", []) for n in ch["names"])) or "none"
        return [f"the knowledge-graph search from {starts} at depth {probe.get('depth')} found no path"]
    hops = [path_relations(c) for c in selected if c["source"] == "kg" or c.get("follows")]
    hops = [h for h in hops if h]
    if not hops:
        return []
    wanted = skyline_relations(state.get("skyline", ""))
    if not wanted:
        return ["the skyline names no relation between the topic entity and the answer"]
    out = []
    covered = [_matched(kb, wanted, [r for step in h for r in step], threshold) for h in hops]
    best = max(range(len(hops)), key=lambda i: sum(covered[i]))  # the selected path closest to the skyline
    missing = [r for r, ok in zip(wanted, covered[best], strict=True) if not ok]
    if missing:
        seen = ", ".join(list(dict.fromkeys(r for step in hops[best] for r in step))[:MAX_LISTED])
        out.append(
            "no selected path follows the skyline: "
            + ", ".join(f"'{r}'" for r in missing[:MAX_LISTED])
            + f" missing (the closest path follows: {seen})"
        )
    if min(len(h) for h in hops) > len(wanted):
        out.append(
            f"the selected knowledge-graph paths take {min(len(h) for h in hops)} hop(s), "
            f"the skyline names {len(wanted)} relation(s)"
        )
    return out


def wanted_relations(skyline: str) -> list[str]:
    """The skyline's relations, each as :func:`words`."""
    return [words(r) for r in skyline_relations(skyline)]


def hops_follow(hops: list, wanted: list[str], prefix: bool = False) -> bool:
    """Whether each hop (its relations) carries the ``wanted`` relation of that hop.

    There must be as many hops as ``wanted`` names (``prefix``: at most as many, a path still on its way).
    """
    return (
        bool(wanted)
        and (len(hops) <= len(wanted) if prefix else len(hops) == len(wanted))
        and all(w in {words(r) for r in hop} for w, hop in zip(wanted, hops, strict=False))
    )


def follows_skyline(c: dict, skyline: str) -> bool:
    """Whether a path follows the skyline hop by hop (:func:`hops_follow` on the skyline's relations).

    Only KG paths, and text paths built by rule along a skyline relation, can follow it.
    """
    hops = path_relations(c) if c["source"] == "kg" or c.get("follows") else []
    return hops_follow(hops, wanted_relations(skyline))


def reached_along_skyline(state: dict) -> list[str]:
    """The ranked entities (names, in rank order) a selected path that follows the skyline reaches."""
    reached = {
        a
        for c in state.get("selected", [])
        if follows_skyline(c, state.get("skyline", ""))
        for a in c.get("answers", [])
    }
    names = [r["name"] for r in state.get("ranked", []) if r["kind"] == "entity" and r["id"] in reached]
    return list(dict.fromkeys(names))


def along_skyline(state: dict) -> str:
    """The best ranked entity a selected path that follows the skyline reaches ('' when none does)."""
    reached = reached_along_skyline(state)
    return reached[0] if reached else ""


def skyline_first(pool: list[dict], skyline: str) -> list[dict]:
    """``pool`` with the paths that follow the skyline (:func:`follows_skyline`) first, each part in its own order.

    This is the path selection of the judge's rules, where a small model's analysis is the plan to follow.
    """
    marks = [follows_skyline(c, skyline) for c in pool]
    return [c for c, m in zip(pool, marks, strict=True) if m] + [c for c, m in zip(pool, marks, strict=True) if not m]


def problems(kb: KnowledgeBase, state: dict, threshold: float) -> dict[str, list[str]]:
    """Topic and path problems of the round (each list bounded by ``MAX_PROBLEMS``)."""
    return {
        "topic": topic_problems(state, state["question"], kb)[:MAX_PROBLEMS],
        "path": path_problems(kb, state, threshold)[:MAX_PROBLEMS],
    }


def new_problems(found: dict[str, list[str]], shortfall: dict | None) -> list[str]:
    """Problems not already handed to an earlier refinement (each is reported once)."""
    told = set((shortfall or {}).get("topic_problems", [])) | set((shortfall or {}).get("path_problems", []))
    return [p for p in [*found["topic"], *found["path"]] if p not in told]
