"""MoR's graph as users see it: choice settings as enums in the context schema, and every branch
drawn as a labelled edge, the corrective edge included."""

from __future__ import annotations

from typing import get_args

import pytest

from hybridrag.agents.mor.context import CHOICES, MoRContext
from hybridrag.graphs.mor import INTERSECT_ROUTES, PLAN_ROUTES, RERANK_ROUTES, graph


@pytest.mark.parametrize(("name", "choice"), sorted(CHOICES.items()))
def test_choice_settings_are_enums_in_the_context_schema(name, choice):
    prop = graph.get_context_jsonschema()["properties"][name]
    assert set(prop["enum"]) == set(get_args(choice)) and prop["description"]


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_an_unknown_choice_is_refused_naming_the_field(name):
    with pytest.raises(ValueError, match=name):
        MoRContext(**{name: "nonsense"})


def test_every_branch_is_a_labelled_edge_in_the_drawing():
    edges = {(e.source, e.target, e.data) for e in graph.get_graph().edges}
    for source, routes in (
        ("plan_question", PLAN_ROUTES),
        ("intersect_routes", INTERSECT_ROUTES),
        ("rerank_trajectories", RERANK_ROUTES),
    ):
        for label, target in routes.items():
            assert (source, target, label) in edges
        assert {t for s, t, _ in edges if s == source} == set(routes.values())
    assert ("intersect_routes", "plan_question", "problems named: re-plan") in edges  # the corrective edge
