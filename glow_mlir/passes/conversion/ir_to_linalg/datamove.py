"""Data movement: boxes extracted from and inserted into a tensor, and gather."""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, linalg, memref

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
    box = _subview(new.src, op.offsets, shape, op.steps or [1] * len(shape))
    linalg.copy(box, outs=[new.dest])


def _insert_tensor(op: ir.OpView, new: Operands) -> None:
    shape = _memref(new.src).shape
    linalg.copy(new.src, outs=[_subview(new.dest, op.offsets, shape, [1] * len(shape))])


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


#: this family's rows of the lowering table (:data:`.program.LOWERINGS`)
LOWERINGS: dict[str, Lowering] = {
    "extract_tensor": _extract_tensor,
    "insert_tensor": _insert_tensor,
    "gather": _gather,
}
