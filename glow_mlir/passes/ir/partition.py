"""glowir-partition: split a planned glowir program into partitions, contiguous ranges of its instructions.

Each partition becomes a glowir program of its own, ``@<program>_p<k>``, that runs its range of instructions on the
same three regions as the whole program did: the memory plan is global and stays as it is, so every buffer keeps
its offset, and a tensor one partition writes and a later one reads lives in the shared activations region between
them. Running the partitions in order is running the program. Each partition keeps every weight var (the inputs
and outputs are its contract), and of the activations and views only those its instructions touch; it frees the
buffers whose last use is one of its instructions.

Two ways to cut, one option each:

- ``partitions=N``: N partitions balanced by FLOPs (the largest partition as small as it can be). The cost of an
  instruction (:func:`instruction_flops`) is 2 * MACs for the contractions (fully_connected, matmul, batch_matmul,
  conv2d) and one per element of its largest operand for everything else;
- ``memory-budget=B``: as few partitions as possible, each one's activation bytes at most B. A partition's
  activation bytes (:func:`activation_bytes`) are the sizes of the activations whose allocation interval meets its
  range (its own tensors and those alive across its boundaries) and of its kernels' scratch buffers, each counted
  whole, as Glow's partitioner counts a partition's memory: what it needs with memory of its own. (In a bundle the
  partitions share the one activations region the plan sized for the whole program.) Adding an instruction never
  lowers that figure, so cutting greedily gives the fewest partitions; a budget below what one instruction needs
  cannot be met.

Each partition carries ``glowir.partition`` (its index), ``glowir.partition_flops`` and
``glowir.partition_activation_bytes``; :func:`read_partitions` gives them back. Run it after glowir-plan-memory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from mlir import ir

from ..conversion.ir_program import memory_layout, size_in_bytes
from ..conversion.ir_to_linalg import scratch_types
from ..registry import Pass, PassError
from ..utils import body_ops
from .liveness import Liveness, byte_size, numel, programs

PARTITION_ATTR = "glowir.partition"
FLOPS_ATTR = "glowir.partition_flops"
ACTIVATION_BYTES_ATTR = "glowir.partition_activation_bytes"


def _contraction(k: Callable[[ir.OpView], int]) -> Callable[[ir.OpView], int]:
    """2 * MACs: every element of dest sums ``k(op)`` products."""
    return lambda op: 2 * numel(op.dest.type) * k(op)


def _last_dim(operand: str) -> Callable[[ir.OpView], int]:
    return lambda op: ir.ShapedType(getattr(op, operand).type).shape[-1]


#: glowir instruction -> its FLOPs, for the contractions; every other instruction counts one per element
CONTRACTIONS: dict[str, Callable[[ir.OpView], int]] = {
    "glowir.fully_connected": _contraction(_last_dim("src")),
    "glowir.matmul": _contraction(_last_dim("lhs")),
    "glowir.batch_matmul": _contraction(_last_dim("lhs")),
    # each output element sums KH * KW * C/group products: of an HWCF filter the dims before F, of a filter packed
    # in blocks of output channels, [F / B, KH, KW, C, B] or [F / B, C / Cc, KH, KW, Cc, B], those between the two
    "glowir.conv2d": _contraction(lambda op: _filter_products(ir.ShapedType(op.filter.type).shape)),
}


def _filter_products(shape: list[int]) -> int:
    return prod(shape[1:-1]) if len(shape) in (5, 6) else prod(shape[:-1])


def instruction_flops(op: ir.Operation) -> int:
    """The cost of one instruction: 2 * MACs for a contraction, else one per element of its largest operand; a
    loop's, its body's times its trip count (its most: a condition may end it sooner); an if's, its costlier branch's."""
    branches = [sum(instruction_flops(inner.operation) for inner in list(r.blocks[0].operations)[:-1])
                for r in op.regions]
    if op.name == "glowir.loop":
        return ir.IntegerAttr(op.attributes["max_trip"]).value * branches[0]
    if op.name == "glowir.if":
        return max(branches)
    contraction = CONTRACTIONS.get(op.name)
    if contraction is not None:
        return contraction(op.opview)
    return max((numel(v.type) for v in op.operands), default=1)


def activation_bytes(lv: Liveness, first: int, last: int) -> int:
    """The activation bytes of instructions ``first`` to ``last`` (indices into ``lv.instructions``): the sizes of
    the activations whose allocation interval meets them, those alive across the range included, and of their
    kernels' scratch buffers, each counted whole (what they would need with memory of their own, before any sharing
    of bytes)."""
    lo, hi = lv.position[lv.instructions[first]], lv.position[lv.instructions[last]]
    total = 0
    for root in lv.activations():
        start, end = lv.interval(root)
        if start <= hi and end >= lo:
            total += byte_size(root.type)
    return total + sum(size_in_bytes(t) for op in lv.instructions[first: last + 1] for t in scratch_types(op))


def balanced_ranges(costs: Sequence[int], n: int) -> list[tuple[int, int]]:
    """``n`` contiguous non-empty ranges (first, last) of ``costs`` whose largest sum is as small as it can be."""
    if not 1 <= n <= len(costs):
        raise ValueError(f"cannot cut {len(costs)} instructions into {n} partitions")

    def greedy(bound: int) -> list[tuple[int, int]]:
        ranges, start, total = [], 0, 0
        for i, c in enumerate(costs):
            if total + c > bound and i > start:
                ranges.append((start, i - 1))
                start, total = i, 0
            total += c
        return ranges + [(start, len(costs) - 1)]

    lo, hi = max(costs), sum(costs)
    while lo < hi:  # the smallest bound that greedy meets with at most n ranges
        mid = (lo + hi) // 2
        if len(greedy(mid)) <= n:
            hi = mid
        else:
            lo = mid + 1
    ranges = greedy(lo)
    while len(ranges) < n:  # cutting a range in two never raises the largest sum
        k = next(i for i, (a, b) in enumerate(ranges) if b > a)
        a, b = ranges[k]
        ranges[k: k + 1] = [(a, a), (a + 1, b)]
    return ranges


@dataclass(frozen=True)
class BudgetFloor:
    """The smallest memory budget a program can be partitioned within: the live activations of its hungriest
    instruction."""

    bytes: int
    #: that instruction, and its index among the program's instructions
    op: ir.Operation
    index: int

    def describe(self) -> str:
        """``instruction #2 'glowir.fully_connected' (/fc2/Gemm)``, for messages."""
        loc = self.op.location
        label = f" ({loc.name_str})" if loc.is_a_name() and loc.name_str else ""
        return f"instruction #{self.index} '{self.op.name}'{label}"


def budget_floor(lv: Liveness) -> BudgetFloor:
    """The smallest budget :func:`budget_ranges` can meet for the program of ``lv`` (it has instructions)."""
    single = [activation_bytes(lv, i, i) for i in range(len(lv.instructions))]
    worst = max(range(len(single)), key=single.__getitem__)
    return BudgetFloor(single[worst], lv.instructions[worst], worst)


def budget_ranges(lv: Liveness, budget: int, where: str) -> list[tuple[int, int]]:
    """The fewest contiguous ranges of instructions whose activation bytes are each at most ``budget``."""
    floor = budget_floor(lv)
    if floor.bytes > budget:
        raise PassError(f"{where}: memory budget of {budget} bytes cannot be met: {floor.describe()} needs "
                        f"{floor.bytes} bytes of live activations", floor.op.location)
    ranges, start = [], 0
    for i in range(1, len(lv.instructions)):
        if activation_bytes(lv, start, i) > budget:
            ranges.append((start, i - 1))
            start = i
    return ranges + [(start, len(lv.instructions) - 1)]


@dataclass(frozen=True)
class PartitionInfo:
    """One partition of a program, as the partition pass recorded it."""

    #: the partition's function
    name: str
    index: int
    flops: int
    activation_bytes: int


def _set_i64(op: ir.Operation, name: str, value: int) -> None:
    op.attributes[name] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def _keep_range(func: ir.Operation, first: int, last: int) -> None:
    """Reduce a clone of a program to its instructions ``first`` to ``last``, the buffers they touch, and the
    deallocs of the buffers whose last access before the dealloc is one of them."""
    lv = Liveness(func)
    instructions = {id(op) for op in lv.instructions}
    keep = {id(op) for op in lv.instructions[first: last + 1]}
    for op in reversed(lv.ops):
        if op.name == "glowir.dealloc_activation":
            here = lv.position[op]
            before = [a for a in lv.accesses_of(lv.regions[op.operands[0]].root) if a.position < here]
            if not before or id(before[-1].op) not in keep:
                op.erase()
        elif id(op) in instructions and id(op) not in keep:
            op.erase()
    # declarations nothing uses any more go too; a view before its source, so walk backwards
    for op in reversed(body_ops(func)):
        if op.name in ("glowir.tensor_view", "glowir.alloc_activation") and not any(True for _ in op.results[0].uses):
            op.erase()


def partition_program(func: ir.Operation, ranges: list[tuple[int, int]]) -> list[PartitionInfo]:
    """Replace ``func`` by one program per range of its instructions, inserted where it was."""
    name = ir.StringAttr(func.attributes["sym_name"]).value
    lv = Liveness(func)
    flops = [instruction_flops(op) for op in lv.instructions]
    infos = []
    for k, (first, last) in enumerate(ranges):
        part = func.clone(ir.InsertionPoint(func))
        info = PartitionInfo(f"{name}_p{k}", k, sum(flops[first: last + 1]), activation_bytes(lv, first, last))
        part.attributes["sym_name"] = ir.StringAttr.get(info.name)
        _set_i64(part, PARTITION_ATTR, k)
        _set_i64(part, FLOPS_ATTR, info.flops)
        _set_i64(part, ACTIVATION_BYTES_ATTR, info.activation_bytes)
        _keep_range(part, first, last)
        infos.append(info)
    func.erase()
    return infos


def read_partitions(module: ir.Operation) -> list[PartitionInfo]:
    """The partitions of a module's program, in run order. A program the pass did not cut is one partition, its
    figures computed here."""
    infos = []
    for func in programs(module):
        attrs = func.attributes
        name = ir.StringAttr(attrs["sym_name"]).value
        if PARTITION_ATTR in attrs:
            infos.append(PartitionInfo(name, ir.IntegerAttr(attrs[PARTITION_ATTR]).value,
                                       ir.IntegerAttr(attrs[FLOPS_ATTR]).value,
                                       ir.IntegerAttr(attrs[ACTIVATION_BYTES_ATTR]).value))
        else:
            lv = Liveness(func)
            last = len(lv.instructions) - 1
            infos.append(PartitionInfo(name, len(infos), sum(instruction_flops(op) for op in lv.instructions),
                                       activation_bytes(lv, 0, last) if last >= 0 else 0))
    if [p.index for p in infos] != list(range(len(infos))):
        raise ValueError(f"the programs of the module are not the partitions of one program in order: "
                         f"{[p.name for p in infos]}")
    return infos


@dataclass(frozen=True)
class Partition(Pass):
    """Program -> partitions, contiguous ranges of its instructions, on the same memory plan."""

    name = "glowir-partition"
    summary = "split each planned program into partitions balanced by FLOPs (partitions=N) or fitting a memory " \
              "budget (memory-budget=BYTES)"

    partitions: int = 0
    memory_budget: int = 0

    def run(self, module: ir.Operation) -> None:
        if (self.partitions > 0) == (self.memory_budget > 0) or self.partitions < 0 or self.memory_budget < 0:
            raise PassError(f"{self.name} takes one of partitions=N or memory-budget=BYTES, both positive "
                            f"(got partitions={self.partitions}, memory-budget={self.memory_budget})")
        with module.context, module.location:  # the scratch buffers' types are built for their sizes
            for func in programs(module):
                where = f"@{ir.StringAttr(func.attributes['sym_name']).value}"
                if memory_layout(func) is None:
                    raise PassError(f"{where}: its memory is not planned (run glowir-plan-memory first): partitions "
                                    "share the program's memory plan", func.location)
                if PARTITION_ATTR in func.attributes:
                    raise PassError(f"{where} is already a partition", func.location)
                lv = Liveness(func)
                if not lv.instructions:
                    raise PassError(f"{where} has no instructions to partition", func.location)
                if self.partitions:
                    if self.partitions > len(lv.instructions):
                        raise PassError(f"{where}: cannot cut {len(lv.instructions)} instructions into "
                                        f"{self.partitions} partitions", func.location)
                    ranges = balanced_ranges([instruction_flops(op) for op in lv.instructions], self.partitions)
                else:
                    ranges = budget_ranges(lv, self.memory_budget, where)
                partition_program(func, ranges)
