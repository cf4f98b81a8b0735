"""glowgraph: the high-level graph. Tensor values, strongly typed; a graph is a
``func.func`` whose arguments are the placeholders and whose results are the saved outputs.

One row per node. ``instr`` names the glowir instruction the node becomes.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import cnn_numpy, control
from . import quantized as Q
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


ACTIVATION = S.ACTIVATION


def _activated(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The numpy semantics ``fn`` of a node followed by its fused activation."""

    def apply(*args: np.ndarray, activation: str = "none", activation_min: float = 0.0, activation_max: float = 0.0,
              **attrs: Any) -> np.ndarray:
        y = fn(*args, **attrs)
        if activation == "relu":
            return np.maximum(y, 0)
        if activation == "clip":
            return np.minimum(np.maximum(y, activation_min), activation_max)
        return y

    return apply


def _np(fn: Callable[..., Any]) -> Callable[[list[np.ndarray], dict, list], list[np.ndarray]]:
    """Numpy semantics of a single-result node: fn(*operands, **attrs), cast to the result type."""

    def evaluate(args: list[np.ndarray], attrs: dict, result_types: list) -> list[np.ndarray]:
        out = np.asarray(fn(*args, **attrs))
        return [out.astype(numpy_dtype(result_types[0].element_type), copy=False)]

    return evaluate


def _step_insert(dest: np.ndarray, x: np.ndarray, i: np.ndarray) -> np.ndarray:
    out = dest.copy()
    out[int(i)] = x
    return out


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


# --- elementwise math, activations, comparisons and casts: helpers ---

_T = (Operand("input", group="t"),)


def _same(name: str, doc: str, fn: Callable[..., Any], rule: S.Rule, operands: tuple[Operand, ...] = _T,
          attrs: tuple[Attr, ...] = (), instr: str | None = None) -> OpDef:
    """An elementwise node whose result has its operands' type. ``instr`` None: node lowering expands it."""
    return OpDef(name, doc, operands, attrs, infer=rule, result_group="t", instr=instr, evaluate=_np(fn), traits=_EW)


def _compare(name: str, doc: str, fn: Callable[..., Any], rule: S.Rule) -> OpDef:
    """A comparison: operands of one type, an i1 result."""
    return OpDef(name, doc, _BIN, infer=rule, instr="element_" + name, evaluate=_np(fn), traits=_EW)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def _mod(a: np.ndarray, b: np.ndarray, fmod: int) -> np.ndarray:
    return np.fmod(a, b) if fmod else np.mod(a, b)


def _shift(x: np.ndarray, y: np.ndarray, left: bool) -> np.ndarray:
    """ONNX BitShift on signed integers: a shift by a negative amount or by the width or more leaves only what the
    sign extension gives (-1 for a right shift of a negative x, else 0); left shifts wrap."""
    inside = (y >= 0) & (y < 8 * x.dtype.itemsize)
    by = np.where(inside, y, 0).astype(x.dtype)
    if left:
        return np.where(inside, np.left_shift(x, by), 0).astype(x.dtype)
    return np.where(inside, np.right_shift(x, by), np.where(x < 0, -1, 0)).astype(x.dtype)


def _softplus(x: np.ndarray) -> np.ndarray:
    # log(1 + exp(x)) without overflow for large x, as the lowering computes it
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def _gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


# --- data movement and shapes: helpers ---


def _slice(x: np.ndarray, starts: list[int], sizes: list[int], steps: list[int] | None = None) -> np.ndarray:
    steps = steps or [1] * x.ndim
    return x[np.ix_(*(s + k * np.arange(n) for s, n, k in zip(starts, sizes, steps)))] if x.ndim else x


def _gather(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    n = data.shape[axis]
    if np.any((indices < -n) | (indices >= n)):
        raise ValueError(f"an index is out of range for axis {axis} of size {n}")
    return np.take(data, indices, axis=axis)


def _scatter_nd(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, reduction: str) -> np.ndarray:
    out = data.copy()
    k = indices.shape[-1]
    dims = np.array(data.shape[:k], dtype=np.int64)
    combine = {"none": lambda old, new: new, "add": np.add, "mul": np.multiply, "max": np.maximum,
               "min": np.minimum}[reduction]
    for at, update in zip(indices.reshape(-1, k).astype(np.int64), updates.reshape(-1, *data.shape[k:])):
        at = np.where(at < 0, at + dims, at)
        if np.all((at >= 0) & (at < dims)):  # an index outside its dim writes nothing
            out[tuple(at)] = combine(out[tuple(at)], update)
    return out


# --- reductions, softmax, normalization and batched matmul: helpers ---


def _reduce(name: str, doc: str, fn: Callable[..., Any], rule: S.Rule = S.reduce) -> OpDef:
    return OpDef(name, doc, _X, (Attr("axes", "i64s"),), infer=rule, instr=name, traits=_PURE,
                 evaluate=_np(lambda x, axes: fn(x, axis=tuple(axes))))


def _max(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """np.max, with ONNX's value for an empty set: the lowest value of the type (numpy raises)."""
    return np.max(x, axis=axis, initial=-np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min)


def _min(x: np.ndarray, axis: tuple[int, ...]) -> np.ndarray:
    """np.min, with ONNX's value for an empty set: the highest value of the type (numpy raises)."""
    return np.min(x, axis=axis, initial=np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).max)


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    d = x - np.max(x, axis=axis, keepdims=True)
    return d - np.log(np.sum(np.exp(d), axis=axis, keepdims=True))


def _layer_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, axis: int, epsilon: float) -> np.ndarray:
    dims = tuple(range(axis, x.ndim))
    d = x - np.mean(x, axis=dims, keepdims=True)
    return d / np.sqrt(np.mean(d * d, axis=dims, keepdims=True) + np.float32(epsilon)) * scale + bias


def _arg_max(x: np.ndarray, axis: int, select_last: int) -> np.ndarray:
    if not select_last:
        return np.argmax(x, axis=axis)
    return x.shape[axis] - 1 - np.argmax(np.flip(x, axis=axis), axis=axis)


OPS: list[OpDef] = [
    OpDef("constant", "A constant tensor (weights, biases, folded values).", (),
          (Attr("value", "elements"),), infer=S.constant, traits=frozenset({"pure", "constant"})),
    OpDef("splat", "A tensor of the result type filled with one value (typed like its elements).", (),
          (Attr("value", "scalar"),), infer=None, check=S.splat, instr="splat", traits=_PURE,
          evaluate=lambda args, attrs, rt: [np.full(list(rt[0].shape), attrs["value"], numpy_dtype(rt[0].element_type))]),
    OpDef("fully_connected", "FullyConnected(X[N,K], W[K,M], B[M]) = X * W + B.",
          (Operand("input"), Operand("weights"), Operand("bias")), ACTIVATION,
          infer=S.with_activation(S.fully_connected), instr="fully_connected", traits=_PURE,
          evaluate=_np(_activated(lambda x, w, b: x @ cnn_numpy.unpack_panels(w) + b))),
    OpDef("matmul", "MatMul(A[M,K], B[K,N]) = A * B.", (Operand("lhs"), Operand("rhs")), infer=S.matmul,
          instr="matmul", traits=_PURE, evaluate=_np(lambda a, b: a @ cnn_numpy.unpack_panels(b))),
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
          (Operand("input"), Operand("filter"), Operand("bias")), _WINDOW + (Attr("group", "i64"), *ACTIVATION),
          infer=S.with_activation(S.conv2d), instr="conv2d", traits=_PURE,
          evaluate=_np(_activated(cnn_numpy.conv2d))),
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
    _unary("exp", "e ** x.", np.exp),
    _unary("log", "Natural logarithm.", np.log),
    _unary("sqrt", "Square root.", np.sqrt),
    _unary("erf", "The error function.", _erf),
    _unary("floor", "The largest integer not above x.", np.floor),
    _unary("ceil", "The smallest integer not below x.", np.ceil),
    _unary("sin", "Sine (radians).", np.sin),
    _unary("cos", "Cosine (radians).", np.cos),
    _unary("tan", "Tangent (radians).", np.tan),
    _unary("asin", "Arcsine.", np.arcsin),
    _unary("acos", "Arccosine.", np.arccos),
    _unary("atan", "Arctangent.", np.arctan),
    _unary("sinh", "Hyperbolic sine.", np.sinh),
    _unary("cosh", "Hyperbolic cosine.", np.cosh),
    _unary("asinh", "Inverse hyperbolic sine.", np.arcsinh),
    _unary("acosh", "Inverse hyperbolic cosine.", np.arccosh),
    _unary("atanh", "Inverse hyperbolic tangent.", np.arctanh),
    _unary("round", "The nearest integer, halves to even.", np.round),
    _same("neg", "-x (floats or integers).", np.negative, S.numeric_unary, instr="neg"),
    _same("abs", "|x| (floats or integers).", np.abs, S.numeric_unary, instr="abs"),
    _same("pow", "lhs ** rhs (floats).", np.power, S.float_binary, _BIN, instr="element_pow"),
    _same("mod", "Remainder of lhs / rhs: fmod 1 takes the sign of lhs (C fmod), fmod 0 that of rhs (integers).",
          _mod, S.mod, _BIN, (Attr("fmod", "i64"),), instr="element_mod"),
    _same("shift_left", "lhs << rhs (i32, i64; wrapping); 0 for a shift below 0 or of the width or more.",
          lambda a, b: _shift(a, b, True), S.integer_binary, _BIN, instr="element_shift_left"),
    _same("shift_right", "lhs >> rhs, arithmetic (i32, i64); a shift below 0 or of the width or more gives -1 for a "
          "negative lhs, else 0.", lambda a, b: _shift(a, b, False), S.integer_binary, _BIN,
          instr="element_shift_right"),
    _compare("cmp_eq", "lhs == rhs, an i1 tensor.", np.equal, S.same_as_first_bool),
    _compare("cmp_lt", "lhs < rhs, an i1 tensor (Greater is CmpLT with swapped operands).", np.less,
             S.ordered_compare),
    _compare("cmp_lte", "lhs <= rhs, an i1 tensor.", np.less_equal, S.ordered_compare),
    _same("not", "Bitwise not of an integer tensor (on i1, logical).", np.invert, S.bitwise_unary, instr="not"),
    _same("and", "Bitwise and of integer tensors (on i1, logical).", np.bitwise_and, S.bitwise_binary, _BIN,
          instr="element_and"),
    _same("or", "Bitwise or of integer tensors (on i1, logical).", np.bitwise_or, S.bitwise_binary, _BIN,
          instr="element_or"),
    _same("xor", "Bitwise exclusive or of integer tensors (on i1, logical).", np.bitwise_xor, S.bitwise_binary, _BIN,
          instr="element_xor"),
    _same("select", "cond ? lhs : rhs, elementwise (cond is i1 of the same shape).", np.where, S.select,
          (Operand("cond"), Operand("lhs", group="t"), Operand("rhs", group="t")), instr="element_select"),
    OpDef("cast", "The input's values as element type 'to': float to integer truncates toward zero, "
          "to i1 is != 0, i1 to a number is 0 or 1.", _X, (Attr("to", "type"),), infer=S.cast, instr="cast",
          evaluate=_np(lambda x, to: x), traits=_EW),
    OpDef("bitcast", "The bits of each input element read as element type 'to' of the same width.", _X,
          (Attr("to", "type"),), infer=S.bitcast, instr="bitcast",
          evaluate=_np(lambda x, to: x.view(numpy_dtype(to))), traits=_EW),
    OpDef("random_uniform", "Float32 draws in [0, 1), 24 random bits each, a counter-based hash of (seed, element, run): "
          "each run draws anew, and one seed draws one sequence of runs. Not pure: never folded, merged or removed "
          "while used.", (), (Attr("seed", "i64"),), infer=None, check=S.random_uniform, instr="random_uniform"),
    # high-level nodes: no instruction, node lowering expands them (lower_nodes.py)
    _same("leaky_relu", "x < 0 ? alpha * x : x.", lambda x, alpha: np.where(x < 0, x * alpha, x), S.float_unary,
          attrs=(Attr("alpha", "f32"),)),
    _same("prelu", "x < 0 ? slope * x : x, slope of x's type (broadcasts are explicit).",
          lambda x, slope: np.where(x < 0, x * slope, x), S.numeric_binary,
          (Operand("input", group="t"), Operand("slope", group="t"))),
    _same("elu", "x < 0 ? alpha * (exp(x) - 1) : x.", lambda x, alpha: np.where(x < 0, alpha * (np.exp(x) - 1), x),
          S.float_unary, attrs=(Attr("alpha", "f32"),)),
    _same("hard_sigmoid", "max(0, min(1, alpha * x + beta)).",
          lambda x, alpha, beta: np.clip(x * alpha + beta, 0, 1), S.float_unary,
          attrs=(Attr("alpha", "f32"), Attr("beta", "f32"))),
    _same("softplus", "log(1 + exp(x)).", _softplus, S.float_unary),
    _same("gelu", "x * Phi(x): 0.5 * x * (1 + erf(x / sqrt(2))); approximate 'tanh': "
          "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).", _gelu, S.gelu,
          attrs=(Attr("approximate", "str"),)),

    # --- data movement and shapes ---
    # Binary, not variadic: IRDL binds one type to every operand of a variadic group, and the inputs of a concat
    # differ along the axis. A chain of concats becomes one buffer in bufferization (one insert_tensor per leaf).
    OpDef("concat", "lhs and rhs joined along `axis`; their other dims agree.", (Operand("lhs"), Operand("rhs")),
          (Attr("axis", "i64"),), infer=S.concat, instr="insert_tensor", traits=_PURE,
          evaluate=_np(lambda a, b, axis: np.concatenate([a, b], axis=axis))),
    OpDef("slice", "result[i] = input[starts + i * steps] for 0 <= i < sizes: a strided box (steps default to 1).",
          _X, (Attr("starts", "i64s"), Attr("sizes", "i64s"), Attr("steps", "i64s", optional=True)),
          infer=S.slice_, instr="extract_tensor", traits=_PURE, evaluate=_np(_slice)),
    OpDef("step_slice", "result = input[index] along dim 0 (a loop's step of a sequence); index is a 0-d i64.",
          (Operand("input"), Operand("index")), infer=control.step_slice, instr="step_slice", traits=_PURE,
          evaluate=_np(lambda x, i: x[int(i)])),
    OpDef("gather", "result[a.., j.., b..] = data[a.., indices[j..], b..], the index on dim `axis`; a negative "
          "index counts from the end.", (Operand("data"), Operand("indices")), (Attr("axis", "i64"),),
          infer=S.gather, instr="gather", traits=_PURE, evaluate=_np(_gather)),
    OpDef("scatter_nd", "data with updates written at the indices: indices[j.., :] (k entries) address data's first k "
          "dims, and result[indices[j..]] = updates[j..], or that element combined with it by `reduction` (add, mul, "
          "max, min), in the order of j (a later write wins). A negative index counts from the end; an index outside "
          "its dim writes nothing.", (Operand("data"), Operand("indices"), Operand("updates")),
          (Attr("reduction", "str"),), infer=S.scatter_nd, instr="scatter_nd", traits=_PURE,
          evaluate=_np(_scatter_nd)),

    # --- reductions, softmax, normalization and batched matmul ---
    *(_reduce(n, f"{doc} over the axes, which leave the shape (keepdims is a reshape).", fn)
      for n, doc, fn in (("reduce_sum", "Sum", np.sum), ("reduce_max", "Maximum", _max),
                         ("reduce_min", "Minimum", _min), ("reduce_prod", "Product", np.prod))),
    OpDef("reduce_mean", "Mean over the axes, which leave the shape (float only; lowered to a sum and a division).",
          _X, (Attr("axes", "i64s"),), infer=S.float_reduce, traits=_PURE,
          evaluate=_np(lambda x, axes: np.mean(x, axis=tuple(axes)))),
    _reduce("reduce_l2", "sqrt(sum(x * x)) over the axes, which leave the shape (float only).",
            lambda x, axis: np.sqrt(np.sum(x * x, axis=axis)), S.float_reduce),
    OpDef("softmax", "exp(x - max) / sum(exp(x - max)) along one axis.", _X, (Attr("axis", "i64"),),
          infer=S.softmax, instr="softmax", traits=_PURE, evaluate=_np(_softmax)),
    OpDef("log_softmax", "x - max - log(sum(exp(x - max))) along one axis.", _X, (Attr("axis", "i64"),),
          infer=S.softmax, instr="log_softmax", traits=_PURE, evaluate=_np(_log_softmax)),
    OpDef("layer_norm", "(x - mean) / sqrt(variance + epsilon) * scale + bias, statistics over the dims from axis on.",
          (Operand("input"), Operand("scale"), Operand("bias")), (Attr("axis", "i64"), Attr("epsilon", "f32")),
          infer=S.layer_norm, instr="layer_norm", traits=_PURE, evaluate=_np(_layer_norm)),
    OpDef("batch_matmul", "BatchMatMul(A[B,M,K], B[B,K,N])[b] = A[b] * B[b].", (Operand("lhs"), Operand("rhs")),
          infer=S.batch_matmul, instr="batch_matmul", traits=_PURE, evaluate=_np(np.matmul)),
    OpDef("arg_max", "Index (i64) of the largest element along the axis, which leaves the shape; the first one, "
          "or the last with select_last = 1.", _X, (Attr("axis", "i64"), Attr("select_last", "i64")),
          infer=S.arg_max, instr="arg_max", traits=_PURE, evaluate=_np(_arg_max)),

    # --- loops (dialects/control.py; the loops themselves are scf.for / scf.while on tensors) ---
    OpDef("iteration", "The iteration number of the enclosing loop, from its index induction variable, as a 0-d i64.",
          (Operand("index", kind="index"),), infer=control.iteration, traits=_PURE),
    OpDef("step_insert", "result = dest with dest[index] = input along dim 0 (a loop's scan output); index is a 0-d "
          "i64.", (Operand("dest"), Operand("input"), Operand("index")), infer=control.step_insert_node,
          instr="step_insert", traits=_PURE, evaluate=_np(_step_insert)),

    # --- int8 (dialects/quantized.py: real = scale * (q - offset), the parameters on the ops) ---
    OpDef("quantize", "q = saturate(round_half_even(x / scale) + offset): float32 to int8.", _X, Q.OUTPUT,
          infer=Q.quantize, instr="quantize", traits=_EW, evaluate=_np(Q.eval_quantize)),
    OpDef("dequantize", "x = (q - offset) * scale: int8 to float32.", _X, Q.OUTPUT, infer=Q.dequantize,
          instr="dequantize", traits=_EW, evaluate=_np(Q.eval_dequantize)),
    OpDef("rescale", "int8 to int8 under other parameters, clamped to [output_min, output_max].", _X,
          (Attr("input_scale", "f32"), Attr("input_offset", "i64"), *Q.OUTPUT, *Q.CLAMP), infer=Q.rescale,
          instr="rescale", traits=_EW, evaluate=_np(Q.eval_rescale)),
    OpDef("qadd", "lhs + rhs of int8 values, each rescaled to the result's parameters, clamped.", _BIN,
          (Attr("lhs_scale", "f32"), Attr("lhs_offset", "i64"), Attr("rhs_scale", "f32"), Attr("rhs_offset", "i64"),
           *Q.OUTPUT, *Q.CLAMP), infer=Q.qadd, result_group="t", instr="qadd", traits=_EW,
          evaluate=_np(Q.eval_qadd)),
    OpDef("qconv2d", "int8 convolution, NHWC/HWCF: acc = bias (i32) + sum(input * filter) with padding reading "
          "input_offset, requantized by each output channel's multiplier, plus offset, clamped.",
          (Operand("input"), Operand("filter"), Operand("bias")),
          (*_WINDOW, Attr("group", "i64"), Attr("input_offset", "i64"), *Q.REQUANT), infer=Q.qconv2d,
          instr="qconv2d", traits=_PURE, evaluate=_np(Q.eval_qconv2d)),
    OpDef("qfully_connected", "int8 product: acc = bias (i32) + input[N,K] * weights[K,M], requantized by each "
          "column's multiplier, plus offset, clamped.", (Operand("input"), Operand("weights"), Operand("bias")),
          Q.REQUANT, infer=Q.qfully_connected, instr="qfully_connected", traits=_PURE,
          evaluate=_np(Q.eval_qfully_connected)),
]

DIALECT = Dialect("glowgraph", "tensor", OPS, __doc__ or "")
DIALECT.register_python(globals())
