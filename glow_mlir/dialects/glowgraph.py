"""glowgraph: the high-level graph. Tensor values, strongly typed; a graph is a
``func.func`` whose arguments are the placeholders and whose results are the saved outputs.

One row per node. ``instr`` names the glowir instruction the node becomes.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import shapes as S
from .optable import Attr, Dialect, OpDef, Operand, numpy_dtype

#: argument/result attribute of a graph function holding the model's name for that input/output
NAME_ATTR = "glowgraph.name"

_X = (Operand("input"),)
_BIN = (Operand("lhs", group="t"), Operand("rhs", group="t"))
_PURE = frozenset({"pure"})
_EW = frozenset({"pure", "elementwise"})


def _np(fn: Callable[..., Any]) -> Callable[[list[np.ndarray], dict, list], list[np.ndarray]]:
    """Numpy semantics of a single-result node: fn(*operands, **attrs), cast to the result type."""

    def evaluate(args: list[np.ndarray], attrs: dict, result_types: list) -> list[np.ndarray]:
        out = np.asarray(fn(*args, **attrs))
        return [out.astype(numpy_dtype(result_types[0].element_type), copy=False)]

    return evaluate


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":  # ONNX integer Div truncates toward zero, like C
        return np.trunc(a / b).astype(a.dtype)
    return a / b


def _binary(name: str, doc: str, fn: Callable[..., Any]) -> OpDef:
    return OpDef(name, doc, _BIN, infer=S.same_as_first, result_group="t", instr="element_" + name,
                 evaluate=_np(fn), traits=_EW)


def _unary(name: str, doc: str, fn: Callable[..., Any]) -> OpDef:
    return OpDef(name, doc, (Operand("input", group="t"),), infer=S.float_unary, result_group="t", instr=name,
                 evaluate=_np(fn), traits=_EW)


def _slice(x: np.ndarray, starts: list[int], sizes: list[int], steps: list[int] | None = None) -> np.ndarray:
    steps = steps or [1] * x.ndim
    return x[np.ix_(*(s + k * np.arange(n) for s, n, k in zip(starts, sizes, steps)))] if x.ndim else x


def _gather(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    n = data.shape[axis]
    if np.any((indices < -n) | (indices >= n)):
        raise ValueError(f"an index is out of range for axis {axis} of size {n}")
    return np.take(data, indices, axis=axis)


OPS: list[OpDef] = [
    OpDef("constant", "A constant tensor (weights, biases, folded values).", (),
          (Attr("value", "elements"),), infer=S.constant, traits=frozenset({"pure", "constant"})),
    OpDef("splat", "A tensor of the result type filled with one value (typed like its elements).", (),
          (Attr("value", "scalar"),), infer=None, check=S.splat, instr="splat", traits=_PURE,
          evaluate=lambda args, attrs, rt: [np.full(list(rt[0].shape), attrs["value"], numpy_dtype(rt[0].element_type))]),
    OpDef("fully_connected", "FullyConnected(X[N,K], W[K,M], B[M]) = X * W + B.",
          (Operand("input"), Operand("weights"), Operand("bias")), infer=S.fully_connected,
          instr="fully_connected", traits=_PURE, evaluate=_np(lambda x, w, b: x @ w + b)),
    OpDef("matmul", "MatMul(A[M,K], B[K,N]) = A * B.", (Operand("lhs"), Operand("rhs")), infer=S.matmul,
          instr="matmul", traits=_PURE, evaluate=_np(np.matmul)),
    OpDef("batched_add", "BatchedAdd(batch[N,...], slice[...]): slice added to each batch entry.",
          (Operand("batch"), Operand("slice")), infer=S.batched_add, instr="batched_add", traits=_PURE,
          evaluate=_np(np.add)),
    _binary("add", "Elementwise lhs + rhs (operands of one type; broadcasts are explicit).", np.add),
    _binary("sub", "Elementwise lhs - rhs.", np.subtract),
    _binary("mul", "Elementwise lhs * rhs.", np.multiply),
    _binary("div", "Elementwise lhs / rhs (integers truncate toward zero).", _int_div),
    _binary("max", "Elementwise max(lhs, rhs).", np.maximum),
    _binary("min", "Elementwise min(lhs, rhs).", np.minimum),
    _unary("relu", "max(x, 0).", lambda x: np.maximum(x, 0)),
    _unary("sigmoid", "1 / (1 + exp(-x)).", lambda x: 1 / (1 + np.exp(-x))),
    _unary("tanh", "Hyperbolic tangent.", np.tanh),
    OpDef("reshape", "The same elements under a new shape.", _X, (Attr("shape", "i64s"),), infer=S.reshape,
          traits=_PURE, evaluate=_np(lambda x, shape: x.reshape(shape))),
    OpDef("transpose", "result[i0..in] = input[permuted]: result dim i is input dim shuffle[i].", _X,
          (Attr("shuffle", "i64s"),), infer=S.transpose, instr="transpose", traits=_PURE,
          evaluate=_np(lambda x, shuffle: np.transpose(x, shuffle))),
    OpDef("broadcast", "Numpy broadcasting of the input to a larger shape.", _X, (Attr("shape", "i64s"),),
          infer=S.broadcast, instr="broadcast", traits=_PURE,
          evaluate=_np(lambda x, shape: np.broadcast_to(x, shape))),

    # --- convolution, pooling and normalization (NHWC) ---

    # --- elementwise math, activations, comparisons and casts ---

    # --- data movement and shapes ---
    # Binary, not variadic: IRDL binds one type to every operand of a variadic group, and the inputs of a concat
    # differ along the axis. A chain of concats becomes one buffer in bufferization (one insert_tensor per leaf).
    OpDef("concat", "lhs and rhs joined along `axis`; their other dims agree.", (Operand("lhs"), Operand("rhs")),
          (Attr("axis", "i64"),), infer=S.concat, instr="insert_tensor", traits=_PURE,
          evaluate=_np(lambda a, b, axis: np.concatenate([a, b], axis=axis))),
    OpDef("slice", "result[i] = input[starts + i * steps] for 0 <= i < sizes: a strided box (steps default to 1).",
          _X, (Attr("starts", "i64s"), Attr("sizes", "i64s"), Attr("steps", "i64s", optional=True)),
          infer=S.slice_, instr="extract_tensor", traits=_PURE, evaluate=_np(_slice)),
    OpDef("gather", "result[a.., j.., b..] = data[a.., indices[j..], b..], the index on dim `axis`; a negative "
          "index counts from the end.", (Operand("data"), Operand("indices")), (Attr("axis", "i64"),),
          infer=S.gather, instr="gather", traits=_PURE, evaluate=_np(_gather)),

    # --- reductions, softmax, normalization and batched matmul ---
]

DIALECT = Dialect("glowgraph", "tensor", OPS, __doc__ or "")
DIALECT.register_python(globals())
