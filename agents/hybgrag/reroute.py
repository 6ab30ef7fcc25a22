"""HybGRAG's router decisions made by rule under the small-model rules (no LLM here).

Under the ``judge`` rules (a small model: :mod:`agents.llm.judge`) and the ``router_rules`` setting
(on by default), two router decisions read the solved examples the router was shown (the bank's
nearest, :func:`agents.hybgrag.shots.router_shots`, each with its whole relation path):

- **the examples' path**: when every shown example follows one path and the router's relations are
  part of it, the hybrid module walks that path. A router lists each relation once, so "films
  starred by the actors of X" (``starred_actors`` twice, then ``directed_by``) came back as two
  relations, walked two hops, found nothing, and needed a second router call to go one hop deeper;
  SmolLM2 also drops a hop the examples all have;
- **the re-route after a rejection**, with no router call: SmolLM2 answers the feedback with its
  previous routing word for word (333 of 333 re-asks in this repository's SmolLM2 HybGRAG records),
  so the rule takes the same action (the retrieval goes one hop deeper,
  :func:`agents.hybgrag.paths.next_hops`) as far as it goes; then, when that found nothing, a shown
  path that adds a relation to the router's (:func:`rerouted`). A retrieval that found references is
  kept: trying other paths after it cost the stand-in 0.08-0.17 Hit@1 at 3 hops with ten examples
  shown, as the loop then ended with nothing (docs/benchmarks_hybgrag.md, "Issues 31 and 26").

With a model the rules do not judge, the router is asked again as the paper does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hybridrag.agents.hybgrag.paths import MAX_HOPS
from hybridrag.agents.hybgrag.shots import examples_for
from hybridrag.agents.llm.judge import few_shot_count, use_rules


def rules_route(ctx: Any) -> bool:
    """Whether the rules of this module decide: ``router_rules`` on and the rules judging (``judge``)."""
    return bool(ctx.router_rules) and use_rules(ctx.judge, ctx.commentor_llm or ctx.llm)


def shown_paths(kb: Any, ctx: Any, question: str) -> list[tuple[str, ...]]:
    """The whole relation paths of the router's shown examples, nearest first (none for file examples)."""
    if ctx.examples != "kb" or ctx.few_shot:
        return []
    n = few_shot_count(ctx.num_few_shot, ctx.small_model_few_shot, ctx.llm)  # as the prompt's
    return [tuple(ex["path"]) for ex in examples_for(kb, "router", question, "kb", n) if ex.get("path")]


def _holds(path: tuple[str, ...], relations: list[str]) -> bool:
    return bool(relations) and set(relations) <= set(path) and tuple(relations) != path


def examples_path(relations: list[str], paths: list[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The one path every shown example follows, when the router's relations are part of it (else None)."""
    if not paths or len(set(paths)) != 1 or not _holds(paths[0], relations):
        return None
    return paths[0]


def with_examples_path(action: dict, paths: list[tuple[str, ...]]) -> dict:
    """The router's action, walking the examples' path where :func:`examples_path` finds one."""
    path = examples_path(action["relations"], paths) if action["module"] == "hybrid" else None
    if path is None:
        return action
    rule = f"rule: the shown examples' path {' → '.join(path)} (the router named {', '.join(action['relations'])})"
    return {**action, "path": list(path), "rule": rule}


def walked_path(action: Mapping[str, Any]) -> list[str]:
    """The relations an action walks: the examples' path when a rule set one, else the router's."""
    return list(action.get("path") or action.get("relations") or [])


def _adds_to(path: tuple[str, ...], relations: list[str]) -> bool:
    """Whether ``path`` has a relation more than ``relations``, which it holds in their order."""
    rest = iter(path)
    return bool(relations) and set(path) > set(relations) and all(r in rest for r in relations)


def rerouted(previous: Mapping[str, Any], paths: list[tuple[str, ...]], found: bool = False) -> dict:
    """The next action after a rejection, by rule, without a router call.

    In this order: the same action one hop deeper (every order of repeated relations, up to
    :data:`agents.hybgrag.paths.MAX_HOPS`, as a re-asked router that repeats itself gets); when the
    last retrieval ``found`` nothing, a shown path that adds a relation to the router's, in their
    order (the router dropped a hop), nearest first; else the same action again. A retrieval that
    found references is kept: the loop ends with the last one, and an unaccepted answer beats none.
    """
    walked = [*previous.get("walked", []), walked_path(previous)]
    deeper = previous.get("deeper", 0)
    if len(walked_path(previous)) + deeper < MAX_HOPS:
        rule = "rule re-route: the same action one hop deeper, no router call"
        return {**previous, "walked": walked, "deeper": deeper + 1, "rule": rule}
    fresh = [p for p in dict.fromkeys(paths) if _adds_to(p, previous["relations"]) and list(p) not in walked]
    fresh = [] if found else fresh
    if fresh:
        rule = f"rule re-route: the shown example's path {' → '.join(fresh[0])}, no router call"
        return {**previous, "path": list(fresh[0]), "walked": walked, "deeper": 0, "rule": rule}
    rule = "rule re-route: the same action, no router call"
    return {**previous, "walked": walked, "rule": rule}
