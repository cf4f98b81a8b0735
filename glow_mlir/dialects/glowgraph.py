"""glowgraph: the high-level graph. Tensor values, strongly typed; a graph is a
``func.func`` whose arguments are the placeholders and whose results are the saved outputs.

One row per node. ``instr`` names the glowir instruction the node becomes.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import cnn_numpy
from . import shapes as S
from .optable import Attr, Dialect, OpDef, Operand, numpy_dtype

#: argument/result attribute of a graph function holding the model's name for that input/output
NAME_ATTR = "glowgraph.name"

_X = (Operand("input"),)
_BIN = (Operand("lhs", group="t"), Operand("rhs", group="t"))
_PURE = frozenset({"pure"})
_EW = frozenset({"pure", "elementwise"})
#: a windowed op's geometry: strides [H, W], pads [top, left, bottom, right], dilations [H, W]
_WINDOW = (Attr("strides", "i64s"), Attr("pads", "i64s"), Attr("dilations", "i64s"))


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
    OpDef("conv2d", "2-D convolution, NHWC: input[N,H,W,C], filter[KH,KW,C/group,F] (output channels innermost), "
          "bias[F]; pads are [top, left, bottom, right]; group splits C and F into that many independent convolutions.",
          (Operand("input"), Operand("filter"), Operand("bias")), _WINDOW + (Attr("group", "i64"),),
          infer=S.conv2d, instr="conv2d", traits=_PURE, evaluate=_np(cnn_numpy.conv2d)),
    OpDef("max_pool", "Max pooling, NHWC: the maximum of each window; padding never wins.", _X,
          (Attr("kernels", "i64s"), *_WINDOW, Attr("ceil_mode", "i64", doc="1: a last, partial window is kept")),
          infer=S.max_pool, instr="max_pool", traits=_PURE, evaluate=_np(cnn_numpy.max_pool)),
    OpDef("avg_pool", "Average pooling, NHWC: each window's sum over the elements it covers (pads included with "
          "count_include_pad, never the ceil_mode overhang).", _X,
          (Attr("kernels", "i64s"), *_WINDOW, Attr("ceil_mode", "i64", doc="1: a last, partial window is kept"),
           Attr("count_include_pad", "i64", doc="1: pad elements count in the divisor")),
          infer=S.avg_pool, instr="avg_pool", traits=_PURE, evaluate=_np(cnn_numpy.avg_pool)),
    OpDef("batch_norm", "Inference batch normalization: (x - mean) / sqrt(var + epsilon) * scale + bias along "
          "channel_axis (3 for NHWC). Node lowering turns it into one multiply and one add.",
          (Operand("input"), Operand("scale"), Operand("bias"), Operand("mean"), Operand("var")),
          (Attr("epsilon", "f32"), Attr("channel_axis", "i64")), infer=S.batch_norm, traits=_PURE,
          evaluate=_np(cnn_numpy.batch_norm)),
    OpDef("local_response_norm", "Local response normalization across channels, NHWC: x / (bias + alpha / size * "
          "sum of squares over a window of size channels) ^ beta.", _X,
          (Attr("size", "i64"), Attr("alpha", "f32"), Attr("beta", "f32"), Attr("bias", "f32")),
          infer=S.local_response_norm, instr="local_response_norm", traits=_PURE,
          evaluate=_np(cnn_numpy.local_response_norm)),
    OpDef("pad", "Constant padding: each dim grown by pads[i] before and pads[rank + i] after (negative crops), "
          "filled with value.", _X, (Attr("pads", "i64s"), Attr("value", "scalar")), infer=S.pad, instr="pad",
          traits=_PURE, evaluate=_np(cnn_numpy.pad)),
    OpDef("clip", "min(max(x, min), max). Node lowering turns it into max and min with splats.",
          (Operand("input", group="t"),), (Attr("min", "f32"), Attr("max", "f32")), infer=S.clip, result_group="t",
          traits=_EW, evaluate=_np(cnn_numpy.clip)),

    # --- elementwise math, activations, comparisons and casts ---

    # --- data movement and shapes ---

    # --- reductions, softmax, normalization and batched matmul ---
]

DIALECT = Dialect("glowgraph", "tensor", OPS, __doc__ or "")
DIALECT.register_python(globals())
