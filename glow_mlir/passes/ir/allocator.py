"""Static placement of buffers with known lifetimes in one arena, at aligned offsets (offline dynamic storage
allocation: interval coloring where colors are byte ranges).

Each buffer is live over a closed interval of program points and needs ``size`` bytes; two buffers whose intervals
share a point must not share a byte. The problem is NP-hard; as Glow's allocator and TFLite's arena planner do, we
place buffers greedily in some order, each at the best-fitting (or lowest) gap among the buffers already placed that
it meets in time, try a few orders, and keep the smallest arena. When none reaches the lower bound (the most bytes
live at one point), a short local search moves buffers earlier in the best order, keeping moves that do not grow
the arena. Everything is deterministic. No MLIR here: the plan pass (plan_memory.py) feeds it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: bytes: a cache line, and the widest vector load (zmm)
ALIGNMENT = 64
#: placements the local search may try, in all (fewer per step for many buffers: one placement is O(n^2))
SEARCH_BUDGET = 20_000


@dataclass(frozen=True)
class Interval:
    """A buffer to place: live from program point ``start`` to ``end``, both included; ``size`` bytes."""

    start: int
    end: int
    size: int


@dataclass(frozen=True)
class Placement:
    """Where each buffer goes: ``offsets[i]`` for buffer i; the arena spans ``size`` bytes (the highest end)."""

    offsets: tuple[int, ...]
    size: int
    #: which order and fit produced it, for reports
    strategy: str


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def lower_bound(buffers: Sequence[Interval]) -> int:
    """The most bytes live at one program point: no placement can be smaller."""
    events: dict[int, int] = {}
    for b in buffers:
        events[b.start] = events.get(b.start, 0) + b.size
        events[b.end + 1] = events.get(b.end + 1, 0) - b.size
    peak = live = 0
    for point in sorted(events):
        live += events[point]
        peak = max(peak, live)
    return peak


def naive(buffers: Sequence[Interval], alignment: int = ALIGNMENT) -> Placement:
    """Every buffer at its own aligned offset, in order: what no sharing at all takes."""
    offsets, top = [], 0
    for b in buffers:
        offsets.append(align_up(top, alignment) if b.size else 0)
        top = max(top, offsets[-1] + b.size)
    return Placement(tuple(offsets), top, "naive")


def _place(buffers: Sequence[Interval], order: Sequence[int], alignment: int, best_fit: bool) -> list[int]:
    """Place buffers one by one in ``order``: each goes into the gap (between the buffers it meets in time) that
    fits it best (the smallest that is large enough) or first (the lowest), else above them all."""
    n = len(buffers)
    starts = np.array([b.start for b in buffers], dtype=np.int64)
    ends = np.array([b.end for b in buffers], dtype=np.int64)
    sizes = np.array([b.size for b in buffers], dtype=np.int64)
    offsets = np.zeros(n, dtype=np.int64)
    placed = np.zeros(n, dtype=bool)
    for i in order:
        size = int(sizes[i])
        if size == 0:
            placed[i] = True
            continue
        meets = np.flatnonzero(placed & (starts <= ends[i]) & (ends >= starts[i]) & (sizes > 0))
        meets = meets[np.argsort(offsets[meets], kind="stable")]
        best, best_gap, top = -1, None, 0
        for j in meets:
            candidate = align_up(top, alignment)
            gap = int(offsets[j]) - candidate
            if gap >= size and (best_gap is None or (best_fit and gap < best_gap)):
                best, best_gap = candidate, gap
            top = max(top, int(offsets[j] + sizes[j]))
        offsets[i] = best if best >= 0 else align_up(top, alignment)
        placed[i] = True
    return [int(x) for x in offsets]


def _orders(buffers: Sequence[Interval]) -> dict[str, list[int]]:
    """Orders to try: largest first (TFLite's greedy by size); the buffers live at the busiest points first
    (Glow's: the most memory live during their life, then size); largest area (bytes x life); longest life;
    by start (what a malloc at run time sees)."""
    n = range(len(buffers))
    starts = np.array([b.start for b in buffers], dtype=np.int64)
    ends = np.array([b.end for b in buffers], dtype=np.int64)
    sizes = np.array([b.size for b in buffers], dtype=np.int64)
    base = min(0, int(starts.min()))
    live = np.zeros(int(ends.max()) + 2 - base, dtype=np.int64)
    np.add.at(live, starts - base, sizes)
    np.add.at(live, ends + 1 - base, -sizes)
    live = np.cumsum(live)  # bytes live at each program point
    pressure = [int(live[b.start - base: b.end + 1 - base].max()) for b in buffers]

    def length(i: int) -> int:
        return buffers[i].end - buffers[i].start + 1

    by: dict[str, Callable[[int], tuple]] = {
        "size": lambda i: (-buffers[i].size, -length(i), buffers[i].start),
        "pressure": lambda i: (-pressure[i], -buffers[i].size, buffers[i].start),
        "area": lambda i: (-buffers[i].size * length(i), buffers[i].start),
        "length": lambda i: (-length(i), -buffers[i].size, buffers[i].start),
        "start": lambda i: (buffers[i].start, -buffers[i].size),
    }
    return {name: sorted(n, key=key) for name, key in by.items()}


def _arena(buffers: Sequence[Interval], offsets: Sequence[int]) -> int:
    return max((o + b.size for o, b in zip(offsets, buffers)), default=0)


def plan(buffers: Sequence[Interval], alignment: int = ALIGNMENT, search_budget: int = SEARCH_BUDGET) -> Placement:
    """The smallest placement found: the greedy orders first (stopping at the lower bound), then a local search
    from the best of them. Never more than the naive placement (it is the answer when it is smaller)."""
    fallback = naive(buffers, alignment)
    if len(buffers) < 2:
        return fallback
    bound = lower_bound(buffers)
    best: Placement | None = None
    best_order: list[int] = []
    best_fit = True
    for name, order in _orders(buffers).items():
        for fit in (True, False):
            offsets = _place(buffers, order, alignment, fit)
            size = _arena(buffers, offsets)
            if best is None or size < best.size:
                best = Placement(tuple(offsets), size, f"{name}, {'best' if fit else 'first'} fit")
                best_order, best_fit = order, fit
            if best.size <= bound:
                return best
    assert best is not None
    rng = random.Random(len(buffers))  # deterministic: the same program always gets the same plan
    order, moves, greedy = list(best_order), 0, best.strategy
    for _ in range(min(200, search_budget // len(buffers))):
        i, j = sorted(rng.sample(range(len(order)), 2))
        candidate = order[:i] + [order[j]] + order[i:j] + order[j + 1:]  # move one buffer earlier
        offsets = _place(buffers, candidate, alignment, best_fit)
        size = _arena(buffers, offsets)
        if size <= best.size:
            order = candidate
            if size < best.size:
                moves += 1
                best = Placement(tuple(offsets), size, f"{greedy} + {moves} search moves")
            if size <= bound:
                break
    return fallback if fallback.size < best.size else best


def conflicts(buffers: Sequence[Interval], offsets: Sequence[int]) -> list[tuple[int, int]]:
    """Pairs of buffers live at a common point that share a byte: empty for a valid placement."""
    starts = np.array([b.start for b in buffers], dtype=np.int64)
    ends = np.array([b.end for b in buffers], dtype=np.int64)
    sizes = np.array([b.size for b in buffers], dtype=np.int64)
    lows = np.array(offsets, dtype=np.int64)
    out = []
    for i in range(len(buffers)):
        rest = slice(i + 1, None)
        clash = ((starts[rest] <= ends[i]) & (starts[i] <= ends[rest]) & (lows[rest] < lows[i] + sizes[i])
                 & (lows[i] < lows[rest] + sizes[rest]) & (sizes[rest] > 0) & (sizes[i] > 0))
        out.extend((i, i + 1 + int(j)) for j in np.flatnonzero(clash))
    return out
