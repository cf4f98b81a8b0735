"""Vectors for the linalg ops that are not matmul or convolution kernels: fills, copies, broadcasts, transposes,
elementwise generics, reductions (softmax, layer_norm, reduce_* rows).

Without this, ``convert-linalg-to-loops`` makes scalar loops of them, and LLVM's loop vectorizer gives up on most:
the operands are memref arguments that may alias, and its runtime alias check falls to the scalar loop (objdump of
resnet18 showed the bias broadcast into a 1x112x112x64 buffer as ``vmovss``). Here each op gets explicit vectors:

- a loop nest over every dim but the innermost one (tiles of 1), and the innermost dim in vector tiles
  (:func:`plan`, in the target's lanes: 16 on AVX-512, 8 on AVX2, 4 on NEON): a parallel innermost dim in vectors of
  one register (four when they divide, to give LLVM several independent registers; the whole dim when it is at most
  four registers), a remainder that the lanes do not divide by masked vectorization (``vector.create_mask`` + masked
  loads and stores: one loop, no scalar tail); a reduced innermost dim (a row of softmax or layer_norm) as a whole
  row of vectors reduced once (up to 64 registers), or in masked chunks of 16 registers when longer.

An elementwise generic whose rows are short (NCHW at 14x14 or 7x7) and whose buffers are each one contiguous run of
its elements first runs on ``[E / c, c]`` views of them, rows of whole vectors (:mod:`.flatten`).

What stays scalar (convert-linalg-to-loops later): ops whose body loads from memory (gather), reductions with more
than one output or a combiner that is not one arithmetic op (arg_max), and generics that read through a window
(an index sum such as ``d3 + d4``: grouped convolutions, LRN's window sums).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import transform
from mlir.dialects.transform import structured
from mlir.dialects.transform import vector as transform_vector

from . import flatten
from . import transform as schedule

#: the attribute that carries an op's vector plan from the walk to its schedule
VECTOR_ATTR = "glow.vector"
#: a parallel innermost dim of this many registers or less is one vector (no loop, no mask); one dividing by it
#: takes vectors of this many registers
WIDE_REGISTERS = 4
#: a reduced innermost dim of this many registers or less is reduced as one row of vectors; longer rows in chunks of
#: CHUNK_REGISTERS (AVX-512: 1024 and 256 lanes)
ROW_REGISTERS = 64
CHUNK_REGISTERS = 16
#: the plan of a named op on its way to a generic
GENERALIZE = "generalize"
#: ops that are generalized before planning (their structure is then read from the generic's maps)
NAMED = ("linalg.fill", "linalg.copy", "linalg.broadcast", "linalg.transpose", "linalg.reduce")
#: body ops a vectorized generic may hold (linalg.index becomes a vector of lane indices)
VECTORIZABLE_PREFIXES = ("arith.", "math.", "linalg.yield", "linalg.index")
#: combiners of a vectorizable reduction (vector.multi_reduction kinds)
COMBINERS = ("arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf", "arith.addi", "arith.muli",
             "arith.maxsi", "arith.minsi", "arith.andi", "arith.ori", "arith.xori")


@dataclass(frozen=True)
class VectorPlan:
    """Tiles and vector sizes of one op's loops; with ``split_dim`` >= 0, that (parallel, outer) dim is first cut
    into tasks of ``split_tile`` iterations, an scf.forall that the worker pool runs across the cores."""

    tiles: tuple[int, ...]
    vector: tuple[int, ...]
    split_dim: int = -1
    split_tile: int = 0
    #: the dims whose loop ends in a shorter tile that is peeled off as its own, static, iteration (a transpose's
    #: blocks: :func:`_transposed_input_dim`)
    peel: tuple[int, ...] = ()

    def key(self) -> str:
        text = f"tiles={'x'.join(map(str, self.tiles))} vector={'x'.join(map(str, self.vector))}"
        text += f" split={self.split_dim}x{self.split_tile}" if self.split_dim >= 0 else ""
        return text + (f" peel={'x'.join(map(str, self.peel))}" if self.peel else "")


def parse_key(key: str) -> VectorPlan:
    """The plan that :meth:`VectorPlan.key` printed."""
    parts = {name: tuple(int(x) for x in value.split("x")) for name, value in (p.split("=") for p in key.split())}
    split = parts.get("split", (-1, 0))
    return VectorPlan(parts["tiles"], parts["vector"], split[0], split[1], parts.get("peel", ()))


def split(extents: list[int], reduced: list[bool], threads: int, steps: list[int] | None = None) -> tuple[int, int]:
    """(dim, tile) to cut an op into tasks across ``threads`` cores: the outermost parallel dim, the innermost (the
    vectors') excepted, that gives every thread a task, in tasks of the largest divisor of its extent that does (a
    dividing tile keeps every task's shape static for the vectorizer) and is a whole number of the dim's ``steps``
    (the plan's tile of it: a transpose's vectors span an outer dim too); where no dim has a task for every thread,
    the longest (outermost of equals) that the plan steps by one, in tasks of one step, if it keeps at least half
    the threads busy: a [1, 14, 14, C] op on sixteen threads is 14 tasks, where it ran on the calling thread alone,
    reading what sixteen cores had written from their caches; a [1, 7, 7, C] one stays there: its 7 tasks, it seems,
    only move the data to cores that the next small kernel reads it back from (a 16-core VM, mobilenet_v2 cut into 64
    partitions, one run: 2.01 ms with neither, 1.88 with every dim of two steps split, 1.76 with half the threads);
    (-1, 0) when none does."""
    steps = steps or [1] * len(extents)
    dims = [d for d, r in enumerate(reduced[:-1]) if not r]
    for d in dims:
        whole = [t for t in range(steps[d], extents[d] // threads + 1, steps[d]) if extents[d] % t == 0]
        if whole:
            return d, max(whole)
    stepped = [d for d in dims if steps[d] == 1]
    longest = max(stepped, key=lambda d: (extents[d], -d), default=-1)
    return (longest, 1) if longest >= 0 and extents[longest] >= max(2, threads / 2) else (-1, 0)


def innermost(extent: int, reduced: bool, lanes: int) -> tuple[int, int]:
    """(tile, vector size) for the innermost loop of ``extent`` iterations in vectors of ``lanes``: vector > tile's
    remainder means a mask."""
    if reduced:
        if extent <= ROW_REGISTERS * lanes:
            return extent, extent
        return CHUNK_REGISTERS * lanes, CHUNK_REGISTERS * lanes
    wide = WIDE_REGISTERS * lanes
    if extent <= wide:
        return extent, extent
    if extent % wide == 0:
        return wide, wide
    return lanes, lanes


def plan(extents: list[int], reduced: list[bool], lanes: int) -> VectorPlan:
    """Tiles of 1 on every loop but the innermost, which :func:`innermost` vectorizes in ``lanes``."""
    tile, vector = innermost(extents[-1], reduced[-1], lanes)
    ones = (1,) * (len(extents) - 1)
    return VectorPlan((*ones, tile), (*ones, vector))


def _memref_operands(op: ir.Operation) -> list[ir.MemRefType] | None:
    """The memref types of ``op``'s shaped operands, or None when one is a tensor, not static or empty."""
    types = []
    for v in op.operands:
        if isinstance(v.type, ir.RankedTensorType):
            return None
        if isinstance(v.type, ir.MemRefType):
            m = ir.MemRefType(v.type)
            if not m.has_static_shape or 0 in m.shape:
                return None  # an empty buffer: nothing to compute, and the vectorizer fails on 0-sized dims
            types.append(m)
    return types


def is_candidate(op: ir.Operation) -> bool:
    """A linalg op on static memrefs that this pass may generalize and vectorize (matmuls and convolutions are the
    kernels' business, and are on tensors by now where cpu-tile-kernels took them)."""
    if op.name not in (*NAMED, "linalg.generic"):
        return False
    return _memref_operands(op) is not None


def _body_ops(op: ir.Operation) -> list[ir.Operation]:
    return [o.operation for o in op.regions[0].blocks[0].operations]


def nbytes(op: ir.Operation) -> int:
    """The bytes of the memrefs ``op`` reads and writes (its cost, for a loop bound by memory)."""
    return sum(ir.MemRefType(v.type).element_type.width // 8 * _elements(ir.MemRefType(v.type))
               for v in op.operands if isinstance(v.type, ir.MemRefType))


def _elements(t: ir.MemRefType) -> int:
    n = 1
    for size in t.shape:
        n *= size
    return n


def plan_generic(op: ir.Operation, lanes: int, threads: int = 1, parallel_bytes: int = 0) -> VectorPlan | None:
    """The vector plan of a linalg.generic on memrefs in vectors of ``lanes``, or None when the vectorizer cannot
    take it; on several ``threads``, an op that moves at least ``parallel_bytes`` is cut into tasks (:func:`split`)."""
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    reduced = ["reduction" in it for it in iterators]
    body = _body_ops(op)
    if not all(o.name.startswith(VECTORIZABLE_PREFIXES) for o in body):
        return None
    n_outs = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[1]
    if any(reduced):
        # one output, combined by one recognized op: vector.multi_reduction's kinds
        yielded = body[-1].operands
        if n_outs != 1 or len(yielded) != 1 or not isinstance(yielded[0], ir.OpResult):
            return None
        if yielded[0].owner.name not in COMBINERS:
            return None
    # each operand reads dims or a broadcast constant: a window (pooling-like, grouped convolution, LRN's d3 + d4) is
    # not a projected permutation, which the vectorizer of generics takes only
    if not all(isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)) for m in maps for e in m.results):
        return None
    rank = len(iterators)
    extents: list[int | None] = [None] * rank
    for value, m in zip(op.operands, maps):
        if not isinstance(value.type, ir.MemRefType):
            continue
        shape = ir.MemRefType(value.type).shape
        for size, expr in zip(shape, m.results):
            if isinstance(expr, ir.AffineDimExpr):
                extents[expr.position] = size
    if any(e is None for e in extents) or rank == 0:
        return None
    found = plan(extents, reduced, lanes)
    across = _contiguous_input_dim(op, maps, extents, reduced, lanes)
    if across is not None:  # a transpose onto a short innermost dim: vectors along the input's rows too
        tiles, vector = list(found.tiles), list(found.vector)
        tiles[across] = vector[across] = min(lanes, extents[across])
        tiles[-1] = vector[-1] = 1  # each element of the short dim a loop step: its row read as one vector
        found = VectorPlan(tuple(tiles), tuple(vector))
    square = _transposed_input_dim(op, maps, extents, reduced, lanes)
    if square is not None:  # a transpose of long dims: lanes x lanes blocks, transposed in registers
        tiles, vector = list(found.tiles), list(found.vector)
        tiles[square] = vector[square] = lanes
        tiles[-1] = vector[-1] = lanes
        # the block that the lanes leave over is peeled: in the loop its masks depend on the index, and the block's
        # rows past the end became masked transfers with no lane set, at addresses past the buffer, each a microcode
        # assist where the page there was not present (mapped, never touched: NHWC -> NCHW of [1, 56, 56, 24] took
        # 10 us or 200 us a call by where the output array was); static, those rows fold away
        peel = tuple(d for d in (square, len(extents) - 1) if extents[d] % lanes)
        found = VectorPlan(tuple(tiles), tuple(vector), peel=peel)
    if threads > 1 and nbytes(op) >= parallel_bytes:
        dim, tile = split(extents, reduced, threads, list(found.tiles))
        found = VectorPlan(found.tiles, found.vector, dim, tile, found.peel)
    return found


def _contiguous_input_dim(op: ir.Operation, maps: list[ir.AffineMap], extents: list[int], reduced: list[bool],
                          lanes: int) -> int | None:
    """For an op whose output's innermost dim is shorter than the lanes and not reduced (NCHW -> NHWC of 3
    channels), the parallel dim along which an input is contiguous (that input's innermost), if another: vectors
    along it read whole rows of the input, where vectors along the short dim read it element by element."""
    rank = len(extents)
    if reduced[-1] or extents[-1] >= lanes:
        return None
    for value, m in zip(list(op.operands)[:-1], maps[:-1]):
        if not isinstance(value.type, ir.MemRefType) or not m.results:
            continue
        last = m.results[len(m.results) - 1]
        if isinstance(last, ir.AffineDimExpr) and last.position != rank - 1 and not reduced[last.position] \
                and extents[last.position] > 1 and ir.MemRefType(value.type).get_strides_and_offset()[0][-1] == 1:
            return last.position
    return None


def _transposed_input_dim(op: ir.Operation, maps: list[ir.AffineMap], extents: list[int], reduced: list[bool],
                          lanes: int) -> int | None:
    """For a copy whose output's innermost dim is another dim of an input's (NCHW -> NHWC of 64 channels), both at
    least a vector long: the dim along which that input is contiguous. Blocks of ``lanes`` x ``lanes`` along the two
    (the last ones masked where the lanes do not divide) then read and write whole vectors, transposed in registers;
    vectors along the output's innermost dim alone read the input element by element, a cache line apart (NCHW ->
    NHWC of [1, 64, 112, 112]: 34x onnxruntime's time; of [1, 64, 14, 14], masked blocks: 0.113 -> 0.019 ms). One of
    the two dims must be whole vectors: blocks masked along both wrote wrong elements in some layouts ([2, 6, 28, 18]
    by (1, 3, 0, 2), [3, 17, 5, 20] by (2, 0, 3, 1): lanes of the last block of rows read as stale registers). A
    masked block must also read the input's last two dims: with a dim between them ([2, 8, 3, 12] by (2, 0, 3, 1) on
    AVX2, [1, 16, 6, 20] by the same on AVX-512) the read's mask came out along the other dim of the block, so that
    elements of the rows that exist were read as unset values."""
    rank = len(extents)
    if any(reduced) or extents[-1] < lanes or len(list(op.operands)) != 2:
        return None
    value, m = op.operands[0], maps[0]
    if not isinstance(value.type, ir.MemRefType) or not m.results:
        return None
    results = list(m.results)
    last = results[-1]
    if isinstance(last, ir.AffineDimExpr) and last.position != rank - 1 and extents[last.position] >= lanes \
            and ir.MemRefType(value.type).get_strides_and_offset()[0][-1] == 1 \
            and not (extents[last.position] % lanes and extents[-1] % lanes):
        masked = extents[last.position] % lanes or extents[-1] % lanes
        reads_innermost = [k for k, e in enumerate(results)
                           if isinstance(e, ir.AffineDimExpr) and e.position == rank - 1]
        if masked and reads_innermost != [len(results) - 2]:
            return None
        return last.position
    return None


#: ops whose bodies may hold the linalg ops of a lowered program or kernel (at their top level)
CONTAINERS = ("builtin.module", "func.func")


def walk_top_level(module: ir.Operation, visit: Callable[[ir.Operation], None]) -> None:
    """``visit`` every function of ``module`` and every op at the top level of one, without entering loops or
    kernels' vector code: linalg ops on memrefs sit there (lowered programs and outlined kernels), and a walk of
    every op of the vectorized convolutions took most of this pass's time."""
    def one(op: ir.Operation) -> ir.WalkResult:
        if op.name != "builtin.module":
            visit(op)
        return ir.WalkResult.ADVANCE if op.name in CONTAINERS else ir.WalkResult.SKIP

    module.walk(one, ir.WalkOrder.PRE_ORDER)


def tag(module: ir.Operation, lanes: int, threads: int = 1, parallel_bytes: int = 0) -> list[str]:
    """Give every vectorizable generic its plan (:data:`VECTOR_ATTR`; cut into tasks as :func:`plan_generic` says),
    the elementwise ones on short rows first rewritten as rows of whole vectors (:mod:`.flatten`), and mark the
    function around it (the vector lowering then runs on those functions only: on every kernel it cost more than the
    vectorization); return the distinct keys."""
    keys: list[str] = []
    short: list[tuple[ir.Operation, int]] = []

    def rows(op: ir.Operation) -> None:  # elementwise ops on short rows, as rows of whole vectors (flatten.py)
        if op.name == "linalg.generic" and _memref_operands(op) is not None:
            c = flatten.row_length(op, lanes, WIDE_REGISTERS)
            if c:
                short.append((op, c))

    walk_top_level(module, rows)
    for op, c in short:
        flatten.flatten(op, c)

    def visit(op: ir.Operation) -> None:
        found = None
        if op.name == "linalg.generic" and _memref_operands(op) is not None:
            found = plan_generic(op, lanes, threads, parallel_bytes)
        if found is not None:
            op.attributes[VECTOR_ATTR] = ir.StringAttr.get(found.key())
            op.parent.attributes[VECTOR_ATTR] = ir.UnitAttr.get()
            if found.key() not in keys:
                keys.append(found.key())

    walk_top_level(module, visit)
    return keys


def generalize(root: ir.Value, names: list[str]) -> None:
    """Named ops on memrefs become linalg.generic: one planner reads them all from their maps."""
    marked = structured.MatchOp(schedule.any_op(), root, ops=names,
                                op_attrs=ir.DictAttr.get({VECTOR_ATTR: ir.StringAttr.get(GENERALIZE)})).result
    structured.GeneralizeOp(marked)


def schedule_vectors(root: ir.Value, key: str) -> None:
    """Tile (into tasks first, when the plan says) and vectorize the generics tagged ``key``."""
    p = parse_key(key)
    ops = structured.MatchOp(schedule.any_op(), root, ops=["linalg.generic"],
                             op_attrs=ir.DictAttr.get({VECTOR_ATTR: ir.StringAttr.get(key)})).result
    if p.split_dim >= 0:  # the tasks first: an scf.forall over the split dim, the vector loops inside each task
        across = [p.split_tile if d == p.split_dim else 0 for d in range(len(p.tiles))]
        ops = structured.TileUsingForallOp(schedule.any_op(), schedule.any_op(), ops, tile_sizes=across).tiled_op
    order = list(range(len(p.tiles)))
    square = [d for d in order[:-1] if p.vector[d] > 1]
    if square and p.vector[-1] > 1:
        # vectors along two dims: a transpose in blocks (:func:`_transposed_input_dim`); the loop over the output's
        # innermost dim outside the one along the input's rows, so that a block's lanes input rows are read on
        # along them, a stream each (NCHW -> NHWC of [1, 64, 112, 112]: 0.137 -> 0.094 ms)
        order[square[0]], order[-1] = order[-1], order[square[0]]
    tiling = structured.TileUsingForOp(ops, sizes=list(p.tiles), interchange=order)
    if not p.peel:
        structured.VectorizeOp(tiling.tiled_linalg_op, vector_sizes=list(p.vector))
        return
    loops = tiling.loops  # one per dim (every tile is at least 1), outermost first: the dims in ``order``
    for d in p.peel:
        schedule.peel_remainder(loops[order.index(d)])
    # the tiled ops again, the peeled iterations' copies too
    ops = structured.MatchOp(schedule.any_op(), root, ops=["linalg.generic"],
                             op_attrs=ir.DictAttr.get({VECTOR_ATTR: ir.StringAttr.get(key)})).result
    structured.VectorizeOp(ops, vector_sizes=list(p.vector))


def marked_functions(root: ir.Value) -> ir.Value:
    """A handle to the functions :func:`tag` marked."""
    return structured.MatchOp(schedule.any_op(), root, ops=["func.func"],
                              op_attrs=ir.DictAttr.get({VECTOR_ATTR: ir.UnitAttr.get()})).result


def unmark(module: ir.Operation) -> None:
    """Remove the marks :func:`tag` left on functions and ops that stayed generics."""
    def visit(op: ir.Operation) -> None:
        if VECTOR_ATTR in op.attributes:
            del op.attributes[VECTOR_ATTR]

    walk_top_level(module, visit)


def lower(funcs: ir.Value) -> None:
    """The vectorized ops down to what convert-vector-to-llvm maps onto the target's registers: unit dims dropped, reductions to
    vector.reduction / elementwise ops, masked transfers to masked loads and stores, transfers to 1-D."""
    def one(func: ir.Value) -> None:
        # first the masks into the transfers they guard: the patterns below do not look inside vector.mask
        masks = transform.ApplyPatternsOp(func)
        with ir.InsertionPoint(masks.patterns):
            transform_vector.ApplyLowerMaskedTransfersPatternsOp()
        # then reductions over unit dims (a pooling window tiled to one position) become the combiner alone, before
        # the multi-reduction lowering below would take them lane by lane
        units = transform.ApplyPatternsOp(func)
        with ir.InsertionPoint(units.patterns):
            transform.ApplyCanonicalizationPatternsOp()
        patterns = transform.ApplyPatternsOp(func)
        with ir.InsertionPoint(patterns.patterns):
            transform_vector.ApplyLowerMultiReductionPatternsOp(
                lowering_strategy=transform_vector.VectorMultiReductionLowering.InnerReduction)
            transform_vector.ApplyCastAwayVectorLeadingOneDimPatternsOp()
            transform_vector.ApplyTransferPermutationPatternsOp()
            # a 16 x 16 block of a transpose (AVX-512) as two-source shuffles: element by element it took twice the
            # time (NHWC -> NCHW of [1, 112, 112, 64]: 0.276 -> 0.141 ms); other shapes as before
            transform_vector.ApplyLowerTransposePatternsOp(
                lowering_strategy=transform_vector.VectorTransposeLowering.Shuffle16x16)
            transform_vector.ApplyLowerMasksPatternsOp()
            transform_vector.ApplyLowerTransferPatternsOp(max_transfer_rank=1)
            transform.ApplyCanonicalizationPatternsOp()
        transform.ApplyCommonSubexpressionEliminationOp(func)

    schedule.for_each(funcs, one)
