"""The bank's schema paths stay bounded on a KB with hundreds of relations (an extracted graph)."""

from __future__ import annotations

from types import SimpleNamespace

from hybridrag.agents.shots import synth


class ManyRelations:
    """A walker over one entity type with ``n`` relations, each usable in both directions."""

    def __init__(self, n: int) -> None:
        self.schema = SimpleNamespace(entity_types={"entity"})
        self._steps = [((f"rel_{i}", d), ["entity"]) for i in range(n) for d in ("out", "in")]

    def steps_from(self, at: str) -> list:
        return self._steps

    def mean_degree(self, step: tuple) -> float:
        return 1.0


def test_a_schema_of_hundreds_of_relations_is_enumerated_within_the_bound():
    walker = ManyRelations(100)  # 200 steps: 40,000 two-step and 8 million three-step paths
    paths = synth.schema_paths(walker, max_hops=3)
    by_length = [sum(len(s) == h for _, s in paths) for h in (1, 2, 3)]
    assert by_length[:2] == [200, 200 * 200]  # every 1- and 2-step path
    assert 0 < by_length[2] <= synth.MAX_PREFIXES * 200  # 3-step paths grow from a sample of the 2-step ones
    assert paths == synth.schema_paths(walker, max_hops=3)  # seeded: the same paths every time


def test_a_small_schema_keeps_every_path_in_order():
    walker = ManyRelations(2)
    paths = synth.schema_paths(walker, max_hops=2)
    assert [s for _, s in paths][:4] == [((("rel_0", "out"), "entity"),), ((("rel_0", "in"), "entity"),)] + [
        ((("rel_1", "out"), "entity"),),
        ((("rel_1", "in"), "entity"),),
    ]
    assert sum(len(s) == 2 for _, s in paths) == 4 * 4  # below the bound: every path
