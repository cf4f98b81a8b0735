"""Reductions, softmax and log_softmax, layer normalization, batched matmul and arg_max: kernels that need per-row
statistics keep them in scratch buffers of the reduced shape (:data:`SCRATCH`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from math import prod

from mlir import ir
from mlir.dialects import arith, linalg, math

from .common import Body, Lowering, Operands, _arith_op, _constant, _memref

# A reduction is a linalg op over the source's index space whose output map drops the reduced dims; its output starts
# at the reduction's neutral element. Kernels that need per-row statistics (softmax, layer_norm, arg_max) keep them in
# scratch buffers of the reduced shape (:data:`SCRATCH`).

#: reduction kind -> its neutral element, for float and for signed integer elements
_NEUTRAL: dict[str, tuple[float, Callable[[int], int]]] = {
    "sum": (0.0, lambda bits: 0),
    "max": (float("-inf"), lambda bits: -(1 << (bits - 1))),
    "min": (float("inf"), lambda bits: (1 << (bits - 1)) - 1),
    "prod": (1.0, lambda bits: 1),
}


def _neutral(kind: str, element_type: ir.Type) -> ir.Value:
    """The element that ``kind`` leaves unchanged, as a constant of ``element_type``."""
    value, integer = _NEUTRAL[kind]
    if isinstance(element_type, ir.FloatType):
        return _constant(element_type, value)
    return _constant(element_type, integer(ir.IntegerType(element_type).width))


def _projection(rank: int, kept: Sequence[int]) -> ir.AffineMap:
    """(d0, ..., d{rank-1}) -> (the kept dims)."""
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in kept])


def _generic(ins: Sequence[ir.Value], outs: Sequence[ir.Value], maps: Sequence[ir.AffineMap],
             reduced: Sequence[int], body: Callable[..., Sequence[ir.Value]]) -> linalg.GenericOp:
    """A linalg.generic over the index space of ``maps`` (reduction iterators on ``reduced``); ``body`` gets the
    elements of the ins and then of the outs, and returns the elements to store in the outs."""
    rank = maps[0].n_dims
    iterators = [linalg.IteratorType.reduction if d in reduced else linalg.IteratorType.parallel for d in range(rank)]
    op = linalg.GenericOp([], list(ins), list(outs), ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          iterators)
    block = op.regions[0].blocks.append(*(_memref(v).element_type for v in (*ins, *outs)))
    with ir.InsertionPoint(block):
        linalg.YieldOp(list(body(*block.arguments)))
    return op


def _in_place(buffer: ir.Value, fn: Body, ins: Sequence[ir.Value] = (),
              in_maps: Sequence[ir.AffineMap] = ()) -> None:
    """``buffer[i] = fn(*ins[map(i)], buffer[i])``: a parallel generic with ``buffer`` as its only output."""
    identity = ir.AffineMap.get_identity(_memref(buffer).rank)
    _generic(ins, [buffer], [*in_maps, identity], [], lambda *xs: [fn(*xs)])


def _stats_type(src: ir.MemRefType, kept: Sequence[int]) -> ir.MemRefType:
    """A buffer of ``src``'s shape restricted to the ``kept`` dims, for per-row statistics."""
    return ir.MemRefType.get([src.shape[d] for d in kept], src.element_type)


def _row_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """One statistic per row along the op's axis (softmax, log_softmax, arg_max)."""
    src = _memref(op.src)
    return [_stats_type(src, [d for d in range(src.rank) if d != op.axis])]


def _layer_norm_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """The mean and the reciprocal standard deviation of each row (the dims before the axis)."""
    src = _memref(op.src)
    return [_stats_type(src, range(op.axis))] * 2


def _reduce_into(acc: ir.Value, src: ir.Value, reduced: Sequence[int], combine: Callable[..., ir.Value],
                 ins: Sequence[ir.Value] = (), in_maps: Sequence[ir.AffineMap] = ()) -> None:
    """``acc[kept] = combine(src[i], *ins[map(i)], acc[kept])`` over every index i of src, reducing ``reduced``."""
    rank = _memref(src).rank
    kept = [d for d in range(rank) if d not in reduced]
    maps = [ir.AffineMap.get_identity(rank), *in_maps, _projection(rank, kept)]
    _generic([src, *ins], [acc], maps, reduced, lambda *xs: [combine(*xs)])


def _reduce(kind: str, float_op: Body, int_op: Body) -> Lowering:
    """``dest = fill(neutral); linalg.reduce(src -> dest) over axes``."""

    def lower(op: ir.OpView, new: Operands) -> None:
        combine = _arith_op(op, float_op, int_op)
        linalg.fill(_neutral(kind, _memref(new.dest).element_type), outs=[new.dest])
        reduce = linalg.ReduceOp([], [new.src], [new.dest], op.axes)
        element_type = _memref(new.dest).element_type
        block = reduce.regions[0].blocks.append(element_type, element_type)
        with ir.InsertionPoint(block):
            linalg.YieldOp([combine(*block.arguments)])

    return lower


def _reduce_l2(op: ir.OpView, new: Operands) -> None:
    """dest = 0; dest += src * src over the axes; dest = sqrt(dest)."""
    linalg.fill(_neutral("sum", _memref(new.dest).element_type), outs=[new.dest])
    _reduce_into(new.dest, new.src, op.axes, lambda x, acc: arith.addf(acc, arith.mulf(x, x)))
    _in_place(new.dest, math.sqrt)


def _rows(op: ir.OpView, new: Operands) -> tuple[list[int], ir.AffineMap]:
    """For a kernel along one axis: the kept dims and the map from the source's index space to a row statistic."""
    rank = _memref(new.src).rank
    kept = [d for d in range(rank) if d != op.axis]
    return kept, _projection(rank, kept)


def _row_max(op: ir.OpView, new: Operands) -> tuple[ir.Value, ir.AffineMap]:
    """A scratch buffer holding the max of every row along the axis, and the map that reads it."""
    _, row = _rows(op, new)
    peak = new.scratch[0]
    linalg.fill(_neutral("max", _memref(peak).element_type), outs=[peak])
    _reduce_into(peak, new.src, [op.axis], arith.maximumf)
    return peak, row


def _softmax(op: ir.OpView, new: Operands) -> None:
    """m = max(src); dest = exp(src - m); s = sum(dest); dest = dest / s (s reuses m's buffer)."""
    stat, row = _row_max(op, new)
    identity = ir.AffineMap.get_identity(_memref(new.src).rank)
    _generic([new.src, stat], [new.dest], [identity, row, identity], [],
             lambda x, m, _: [math.exp(arith.subf(x, m))])
    linalg.fill(_neutral("sum", _memref(stat).element_type), outs=[stat])
    _reduce_into(stat, new.dest, [op.axis], arith.addf)
    _in_place(new.dest, lambda s, e: arith.divf(e, s), [stat], [row])


def _log_softmax(op: ir.OpView, new: Operands) -> None:
    """m = max(src); dest = src - m; s = log(sum(exp(dest))); dest = dest - s (s reuses m's buffer)."""
    stat, row = _row_max(op, new)
    _in_place(new.dest, lambda x, m, _: arith.subf(x, m), [new.src, stat],
              [ir.AffineMap.get_identity(_memref(new.src).rank), row])
    linalg.fill(_neutral("sum", _memref(stat).element_type), outs=[stat])
    _reduce_into(stat, new.dest, [op.axis], lambda d, acc: arith.addf(acc, math.exp(d)))
    _in_place(stat, math.log)
    _in_place(new.dest, lambda s, d: arith.subf(d, s), [stat], [row])


def _layer_norm(op: ir.OpView, new: Operands) -> None:
    """mean = sum(src) / n; r = 1 / sqrt(sum((src - mean)^2) / n + epsilon); dest = (src - mean) * r * scale + bias,
    the statistics over the dims from axis on (n elements) kept in two scratch buffers."""
    src = _memref(new.src)
    rank, axis, et = src.rank, op.axis, src.element_type
    kept, normalized = list(range(axis)), list(range(axis, rank))
    row, per_element = _projection(rank, kept), _projection(rank, normalized)
    identity = ir.AffineMap.get_identity(rank)
    n = _constant(et, float(prod(src.shape[axis:])))
    mean, rstd = new.scratch
    for stat in (mean, rstd):
        linalg.fill(_neutral("sum", et), outs=[stat])
    _reduce_into(mean, new.src, normalized, arith.addf)
    _in_place(mean, lambda s: arith.divf(s, n))

    def square(x: ir.Value, mu: ir.Value, acc: ir.Value) -> ir.Value:
        d = arith.subf(x, mu)
        return arith.addf(acc, arith.mulf(d, d))

    _reduce_into(rstd, new.src, normalized, square, [mean], [row])
    epsilon = _constant(et, op.epsilon)
    one = _constant(et, 1.0)
    _in_place(rstd, lambda v: arith.divf(one, math.sqrt(arith.addf(arith.divf(v, n), epsilon))))

    def normalize(x: ir.Value, mu: ir.Value, r: ir.Value, g: ir.Value, b: ir.Value, _: ir.Value) -> list[ir.Value]:
        return [arith.addf(arith.mulf(arith.mulf(arith.subf(x, mu), r), g), b)]

    _generic([new.src, mean, rstd, new.scale, new.bias], [new.dest],
             [identity, row, row, per_element, per_element, identity], [], normalize)


def _batch_matmul(op: ir.OpView, new: Operands) -> None:
    linalg.fill(_constant(_memref(new.dest).element_type, 0.0), outs=[new.dest])
    linalg.batch_matmul(new.lhs, new.rhs, outs=[new.dest])


def _arg_max(op: ir.OpView, new: Operands) -> None:
    """One reduction with two outputs, the running max (a scratch buffer) and its index (dest). NaN wins as in
    numpy: the first one, or the last with select_last."""
    src = _memref(new.src)
    _, row = _rows(op, new)
    peak = new.scratch[0]
    linalg.fill(_neutral("max", src.element_type), outs=[peak])
    linalg.fill(_constant(_memref(new.dest).element_type, 0), outs=[new.dest])
    is_float = isinstance(src.element_type, ir.FloatType)
    last = bool(op.select_last)

    def better(x: ir.Value, best: ir.Value) -> ir.Value:
        if not is_float:
            return arith.cmpi(arith.CmpIPredicate.sge if last else arith.CmpIPredicate.sgt, x, best)
        greater = arith.cmpf(arith.CmpFPredicate.OGE if last else arith.CmpFPredicate.OGT, x, best)
        nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
        if not last:  # the first NaN stays: a later one does not replace it
            nan = arith.andi(nan, arith.cmpf(arith.CmpFPredicate.ORD, best, best))
        return arith.ori(greater, nan)

    def body(x: ir.Value, best: ir.Value, index: ir.Value) -> list[ir.Value]:
        here = arith.index_cast(_memref(new.dest).element_type, linalg.IndexOp(op.axis).result)
        take = better(x, best)
        return [arith.select(take, x, best), arith.select(take, here, index)]

    _generic([new.src], [peak, new.dest], [ir.AffineMap.get_identity(src.rank), row, row], [op.axis], body)


#: this family's rows of the lowering table (:data:`.program.LOWERINGS`)
LOWERINGS: dict[str, Lowering] = {
    "reduce_sum": _reduce("sum", arith.addf, arith.addi),
    "reduce_max": _reduce("max", arith.maximumf, arith.maxsi),
    "reduce_min": _reduce("min", arith.minimumf, arith.minsi),
    "reduce_prod": _reduce("prod", arith.mulf, arith.muli),
    "reduce_l2": _reduce_l2,
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "layer_norm": _layer_norm,
    "batch_matmul": _batch_matmul,
    "arg_max": _arg_max,
}


#: the scratch buffers of this family's kernels (:data:`.program.SCRATCH`)
SCRATCH: dict[str, Callable[[ir.OpView], list[ir.MemRefType]]] = {
    "softmax": _row_scratch,
    "log_softmax": _row_scratch,
    "layer_norm": _layer_norm_scratch,
    "arg_max": _row_scratch,
}
