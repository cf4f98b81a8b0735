"""Data movement: boxes extracted from and inserted into a tensor, gather and scatter_nd."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, linalg, memref, scf

from .common import Lowering, Operands, _memref, elementwise


def _subview(source: ir.Value, offsets: Sequence[int], sizes: Sequence[int], steps: Sequence[int]) -> ir.Value:
    """The strided box of ``source`` (any strided memref) at ``offsets``; negative steps walk backwards."""
    src = _memref(source)
    strides, offset = src.get_strides_and_offset()
    start = offset + sum(o * s for o, s in zip(offsets, strides))
    layout = ir.StridedLayoutAttr.get(start, [s * k for s, k in zip(strides, steps)])
    return memref.subview(source, list(offsets), list(sizes), list(steps),
                          result_type=ir.MemRefType.get(list(sizes), src.element_type, layout=layout))


def _extract_tensor(op: ir.OpView, new: Operands) -> None:
    shape = _memref(new.dest).shape
    steps = op.steps or [1] * len(shape)
    box = _subview(new.src, op.offsets, shape, steps)
    if all(k == 1 for k in steps):
        # an elementwise copy: linalg-fuse-elementwise can then fold it into the op that reads dest (a gate's
        # activation reads its columns of the gates where they are)
        elementwise(new.dest, [box], lambda x: x)
        return
    linalg.copy(box, outs=[new.dest])


def _insert_tensor(op: ir.OpView, new: Operands) -> None:
    shape = _memref(new.src).shape
    linalg.copy(new.src, outs=[_subview(new.dest, op.offsets, shape, [1] * len(shape))])


def _step(source: ir.Value, index: ir.Value) -> ir.Value:
    """``source[index]`` along dim 0 as a rank-reduced view, the 0-d i64 ``index`` clamped into the dim."""
    src = _memref(source)
    i64, index_type = ir.IntegerType.get_signless(64), ir.IndexType.get()
    at = memref.load(index, [])
    at = arith.maxsi(arith.minsi(at, arith.constant(i64, src.shape[0] - 1)), arith.constant(i64, 0))
    strides, _ = src.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(ir.ShapedType.get_dynamic_stride_or_offset(), strides[1:])
    return memref.subview(source, [arith.index_cast(index_type, at), *([0] * (src.rank - 1))], [1, *src.shape[1:]],
                          [1] * src.rank,
                          result_type=ir.MemRefType.get(src.shape[1:], src.element_type, layout=layout))


def _step_slice(op: ir.OpView, new: Operands) -> None:
    linalg.copy(_step(new.src, new.index), outs=[new.dest])


def _step_insert(op: ir.OpView, new: Operands) -> None:
    linalg.copy(new.src, outs=[_step(new.dest, new.index)])


def _gather(op: ir.OpView, new: Operands) -> None:
    data, indices, dest = _memref(new.data), _memref(new.indices), _memref(new.dest)
    axis, q = op.axis, indices.rank
    # indices[j..] sits at dims axis .. axis + q - 1 of dest
    idx_map = ir.AffineMap.get(dest.rank, 0, [ir.AffineDimExpr.get(axis + j) for j in range(q)])

    def body(i: ir.Value) -> ir.Value:
        index = ir.IndexType.get()
        n, zero, last = (arith.constant(index, v) for v in (data.shape[axis], 0, data.shape[axis] - 1))
        i = arith.index_cast(index, i)
        i = arith.select(arith.cmpi(arith.CmpIPredicate.slt, i, zero), arith.addi(i, n), i)
        # an index out of [-n, n) is an error in ONNX; without a way to trap, it is clamped so no load leaves data
        i = arith.minsi(arith.maxsi(i, zero), last)
        dims = [linalg.IndexOp(d).result for d in range(dest.rank)]
        return memref.load(new.data, dims[:axis] + [i] + dims[axis + q:])

    elementwise(new.dest, [new.indices], body, [idx_map])


def _loops(bounds: Sequence[int], body: Callable[[list[ir.Value]], None]) -> None:
    """``body(ivs)`` in a nest of scf.for loops over 0 <= ivs[d] < bounds[d], outermost first (no loop: once)."""
    if not bounds:
        body([])
        return
    index = ir.IndexType.get()
    loop = scf.ForOp(arith.constant(index, 0), arith.constant(index, bounds[0]), arith.constant(index, 1))
    with ir.InsertionPoint(loop.body):
        _loops(bounds[1:], lambda ivs: body([loop.induction_variable, *ivs]))
        scf.YieldOp([])


def _combine(reduction: str, float_type: bool) -> Callable[[ir.Value, ir.Value], ir.Value]:
    """How scatter_nd merges an update ``new`` into the element ``old`` it lands on."""
    if reduction == "none":
        return lambda old, new: new
    ops = {"add": (arith.addf, arith.addi), "mul": (arith.mulf, arith.muli), "max": (arith.maximumf, arith.maxsi),
           "min": (arith.minimumf, arith.minsi)}[reduction]
    return ops[0] if float_type else ops[1]


def _scatter_nd(op: ir.OpView, new: Operands) -> None:
    """dest = data; then, in order, for each index tuple of k entries that lies in data's first k dims (negative
    ones counted from the end), the slice of updates at that position stored (or combined) into dest. Loops, not a
    linalg op: two updates may land on one element, so the iterations are neither parallel nor reorderable."""
    linalg.copy(new.data, outs=[new.dest])
    dest, indices = _memref(new.dest), _memref(new.indices)
    k, outer = indices.shape[-1], list(indices.shape[:-1])
    combine = _combine(ir.StringAttr(op.attributes["reduction"]).value,
                       isinstance(_memref(op.dest).element_type, ir.FloatType))
    index = ir.IndexType.get()

    def scatter(js: list[ir.Value]) -> None:
        zero = arith.constant(index, 0)
        at, inside = [], arith.constant(ir.IntegerType.get_signless(1), 1)
        for c in range(k):
            n = arith.constant(index, dest.shape[c])
            i = arith.index_cast(index, memref.load(new.indices, [*js, arith.constant(index, c)]))
            i = arith.select(arith.cmpi(arith.CmpIPredicate.slt, i, zero), arith.addi(i, n), i)
            # 0 <= i < n in one unsigned comparison: a negative i is a huge unsigned one
            inside = arith.andi(inside, arith.cmpi(arith.CmpIPredicate.ult, i, n))
            at.append(i)
        guard = scf.IfOp(inside)
        with ir.InsertionPoint(guard.then_block):
            def store(rest: list[ir.Value]) -> None:
                place = [*at, *rest]
                value = combine(memref.load(new.dest, place), memref.load(new.updates, [*js, *rest]))
                memref.store(value, new.dest, place)

            _loops(dest.shape[k:], store)
            scf.YieldOp([])

    _loops(outer, scatter)


#: this family's rows of the lowering table (:data:`.program.LOWERINGS`)
LOWERINGS: dict[str, Lowering] = {
    "extract_tensor": _extract_tensor,
    "insert_tensor": _insert_tensor,
    "step_slice": _step_slice,
    "step_insert": _step_insert,
    "gather": _gather,
    "scatter_nd": _scatter_nd,
}
