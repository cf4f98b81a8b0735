"""Det: the determinants of a batch of square matrices, by Gaussian elimination in the graph."""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from ...dialects import glowgraph as gg
from ...dialects.optable import mlir_type
from ..builder import NodeContext, Tensor, onnx_op, shape_of
from ..model import fmt_shape
from .core import _expand, _reshape, _splat, matmul_of
from .datamove import _box


@onnx_op("Det", since=11, inputs=(1, 1))
def det(ctx: NodeContext) -> Tensor:
    """The determinants of the [..., n, n] input's matrices: Gaussian elimination with partial pivoting, as LAPACK's
    LU (numpy's det) does, unrolled over the n columns of a static n, every matrix of the batch at once. Column k:
    the row at or below k with the largest magnitude there (arg_max) is swapped with row k as a rank-one update
    (negating the determinant when it moves), the pivot multiplies the determinant, and the rows below lose their
    multiple of row k. A zero pivot (a singular matrix) leaves the determinant 0 and eliminates nothing."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", (np.dtype(np.float32),))
    shape = shape_of(x)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ctx.error(f"the input must be [..., n, n], got {fmt_shape(shape)}")
    n, batch = shape[-1], math.prod(shape[:-2])
    a = ctx.value(_reshape(ctx, x, [batch, n, n]))
    rows = np.arange(n)

    def const(values: np.ndarray, name: str) -> ir.Value:
        return ctx.value(ctx.const(np.ascontiguousarray(values), name=f"{ctx.label}.{name}"))

    result = None
    for k in range(n):
        column = _reshape(ctx, _box(ctx, a, [0, 0, k], [batch, n, 1]), [batch, n])
        below = _expand(ctx, const((rows >= k)[None], f"below{k}"), [batch, n])
        candidates = gg.select(below, gg.abs_(ctx.value(column)), _splat(ctx.value(column), -1.0))
        pivot_row = _expand(ctx, _reshape(ctx, gg.arg_max(candidates, axis=1, select_last=0), [batch, 1]),
                            [batch, n])
        chosen = gg.cast(gg.cmp_eq(_expand(ctx, const(rows[None].astype(np.int64), f"rows{k}"), [batch, n]),
                                   pivot_row), to=mlir_type(np.dtype(np.float32)))  # [B, n], one-hot
        row_k = _box(ctx, a, [0, k, 0], [batch, 1, n])
        row_p = matmul_of(ctx, _reshape(ctx, chosen, [batch, 1, n]), a)  # [B, 1, n]
        move = gg.sub(_expand(ctx, const((rows == k).astype(np.float32)[None], f"at{k}"), [batch, n]), chosen)
        a = gg.add(a, gg.mul(_expand(ctx, _reshape(ctx, move, [batch, n, 1]), [batch, n, n]),
                             _expand(ctx, gg.sub(ctx.value(row_p), ctx.value(row_k)), [batch, n, n])))
        stayed = _reshape(ctx, _box(ctx, chosen, [0, k], [batch, 1]), [batch])  # 1 where row k was the pivot's
        sign = gg.sub(gg.mul(stayed, _splat(stayed, 2.0)), _splat(stayed, 1.0))
        top = _box(ctx, a, [0, k, 0], [batch, 1, n])
        pivot = _reshape(ctx, _box(ctx, a, [0, k, k], [batch, 1, 1]), [batch])
        step = gg.mul(ctx.value(pivot), sign)
        result = step if result is None else gg.mul(result, step)
        if k == n - 1:
            break
        singular = gg.cmp_eq(ctx.value(pivot), _splat(ctx.value(pivot), 0.0))
        divisor = gg.select(singular, _splat(ctx.value(pivot), 1.0), ctx.value(pivot))
        column = _reshape(ctx, _box(ctx, a, [0, 0, k], [batch, n, 1]), [batch, n])
        factors = gg.mul(gg.div(ctx.value(column), _expand(ctx, _reshape(ctx, divisor, [batch, 1]), [batch, n])),
                         _expand(ctx, const((rows > k).astype(np.float32)[None], f"after{k}"), [batch, n]))
        a = gg.sub(a, gg.mul(_expand(ctx, _reshape(ctx, factors, [batch, n, 1]), [batch, n, n]),
                             _expand(ctx, top, [batch, n, n])))
    return _reshape(ctx, result, shape[:-2])
