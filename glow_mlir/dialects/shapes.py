"""Shape rules: the typing of every node, shared by glowgraph (result inference and
verification) and glowir (checking an instruction's @out operand against its @in operands).

A rule takes an :class:`OpInfo` and returns the result types, or raises VerifyError.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Callable

import numpy as np
from mlir import ir

from .optable import Attr, OpInfo, VerifyError, attr_type, tensor_like

Rule = Callable[[OpInfo], list[ir.Type]]


def _fmt(shape: list[int]) -> str:
    return "x".join(str(d) for d in shape) if shape else "scalar"


def _float(info: OpInfo, *idx: int) -> None:
    for i in idx:
        if not isinstance(info.elem(i), ir.FloatType):
            raise VerifyError(f"operand #{i} must have a float element type, got {info.elem(i)}")


def _rank(info: OpInfo, i: int, rank: int, what: str) -> list[int]:
    s = info.shape(i)
    if len(s) != rank:
        raise VerifyError(f"{what} must have rank {rank}, got {_fmt(s)}")
    return s


def same_as_first(info: OpInfo) -> list[ir.Type]:
    """Elementwise: every operand has the type of the first; the result too."""
    if info.n == 0:
        raise VerifyError("expects at least one operand")
    t0 = info.operand_types[0]
    for i, t in enumerate(info.operand_types[1:], 1):
        if t != t0:
            raise VerifyError(f"operand #{i} has type {t}, expected {t0} like operand #0")
    return [t0]


def float_unary(info: OpInfo) -> list[ir.Type]:
    """Unary float op: the result has the operand's type."""
    _float(info, 0)
    return same_as_first(info)


def same_as_first_bool(info: OpInfo) -> list[ir.Type]:
    """Comparison: operands of one type, an i1 result of that shape."""
    same_as_first(info)
    return [tensor_like(info.operand_types[0], info.shape(0), ir.IntegerType.get_signless(1))]


def constant(info: OpInfo) -> list[ir.Type]:
    """Constant: the type of its value."""
    return [ir.DenseElementsAttr(info.attrs["value"]).type]


def _weights(info: OpInfo, i: int, what: str) -> tuple[int, int]:
    """``[K, N]`` of a contraction's right operand: 2-D, or packed in panels of P columns, ``[N/P, K, P]`` (the CPU
    backend's layout, made by cpu-pack-matmul-weights once the graph is optimized)."""
    if len(info.shape(i)) == 3:
        panels, k, width = _rank(info, i, 3, f"packed {what}")
        return k, panels * width
    k, n = _rank(info, i, 2, what)
    return k, n


def matmul(info: OpInfo) -> list[ir.Type]:
    """MatMul(A[M,K], B[K,N]) -> [M,N]; B may be packed in panels (:func:`_weights`)."""
    _float(info, 0, 1)
    m, k = _rank(info, 0, 2, "lhs")
    k2, n = _weights(info, 1, "rhs")
    if k != k2:
        raise VerifyError(f"inner dimensions differ: lhs {_fmt([m, k])}, rhs {_fmt([k2, n])}")
    return [tensor_like(info.operand_types[0], [m, n])]


def fully_connected(info: OpInfo) -> list[ir.Type]:
    """FullyConnected(X[N,K], W[K,M], B[M]) -> [N,M]; W may be packed in panels (:func:`_weights`)."""
    _float(info, 0, 1, 2)
    return fully_connected_shape(info)


def fully_connected_shape(info: OpInfo) -> list[ir.Type]:
    """The geometry of a fully connected product, whatever its element types: X[N,K], W[K,M], B[M] -> X's type at
    [N,M]."""
    n, k = _rank(info, 0, 2, "input")
    k2, m = _weights(info, 1, "weights")
    (mb,) = _rank(info, 2, 1, "bias")
    if k != k2 or m != mb:
        raise VerifyError(f"shapes do not agree: input {_fmt([n, k])}, weights {_fmt([k2, m])}, bias {_fmt([mb])}")
    return [tensor_like(info.operand_types[0], [n, m])]


#: the activations a conv2d or fully_connected node (and its instruction) can apply to its own result
ACTIVATIONS = ("none", "relu", "clip")
#: the optional attributes of a fused activation: its kind, and the bounds of a clip
ACTIVATION = (Attr("activation", "str", optional=True, doc="none, relu or clip, applied to the result"),
              Attr("activation_min", "f32", optional=True, doc="the lower bound of a clip activation"),
              Attr("activation_max", "f32", optional=True, doc="the upper bound of a clip activation"))


def with_activation(rule: Rule) -> Rule:
    """``rule`` for a node that may carry a fused activation: optional ``activation`` (none, relu, or clip, which
    needs ``activation_min`` <= ``activation_max``) applied to its result in place; the type is ``rule``'s."""

    def checked(info: OpInfo) -> list[ir.Type]:
        kind = info.attrs.get("activation", "none")
        if kind not in ACTIVATIONS:
            raise VerifyError(f"activation must be one of {', '.join(ACTIVATIONS)}, got '{kind}'")
        bounds = [info.attrs.get(b) for b in ("activation_min", "activation_max")]
        if kind == "clip" and (None in bounds or bounds[0] > bounds[1]):
            raise VerifyError(f"a clip activation needs activation_min <= activation_max, got {bounds[0]} and "
                              f"{bounds[1]}")
        if kind != "clip" and bounds != [None, None]:
            raise VerifyError(f"activation_min and activation_max go with a clip activation, not '{kind}'")
        return rule(info)

    checked.__doc__ = rule.__doc__
    return checked


def batched_add(info: OpInfo) -> list[ir.Type]:
    """BatchedAdd(batch[N,...], slice[...]) -> batch: adds slice to every batch entry."""
    b, s = info.shape(0), info.shape(1)
    if b[1:] != s or info.elem(0) != info.elem(1):
        raise VerifyError(f"slice {_fmt(s)} must match the batch {_fmt(b)} without its first dimension")
    return [info.operand_types[0]]


def reshape(info: OpInfo) -> list[ir.Type]:
    """Reshape(x) {shape} -> shape, same number of elements."""
    new = info.attrs["shape"]
    if any(d < 0 for d in new):
        raise VerifyError(f"shape {new} has a negative dimension")
    if int(np.prod(new)) != int(np.prod(info.shape(0))):
        raise VerifyError(f"cannot reshape {_fmt(info.shape(0))} into {_fmt(new)}: element counts differ")
    return [tensor_like(info.operand_types[0], new)]


def transpose(info: OpInfo) -> list[ir.Type]:
    """Transpose(x) {shuffle} -> x's dims permuted: result[i] = x[shuffle[i]]."""
    s, perm = info.shape(0), info.attrs["shuffle"]
    if sorted(perm) != list(range(len(s))):
        raise VerifyError(f"shuffle {perm} is not a permutation of the {len(s)} dimensions")
    return [tensor_like(info.operand_types[0], [s[p] for p in perm])]


def broadcast(info: OpInfo) -> list[ir.Type]:
    """Broadcast(x) {shape} -> shape, numpy rules (right-aligned, size-1 dims stretch)."""
    s, new = info.shape(0), info.attrs["shape"]
    if len(new) < len(s) or any(a not in (1, b) for a, b in zip(s[::-1], new[::-1])):
        raise VerifyError(f"cannot broadcast {_fmt(s)} to {_fmt(new)}")
    return [tensor_like(info.operand_types[0], new)]


def splat(info: OpInfo) -> None:
    """Splat: the value is an attribute of the filled element type (result, or the @out buffer)."""
    target = info.result_types[0] if info.result_types else info.operand_types[0]
    et = ir.ShapedType(target).element_type
    value = info.raw_attrs.get("value")
    if value is None or attr_type(value) != et:
        raise VerifyError(f"value {value} must be a {et} attribute like the elements it fills")


def random_uniform(info: OpInfo) -> None:
    """Random draws: the filled tensor (result, or the @out buffer) holds float32."""
    target = info.result_types[0] if info.result_types else info.operand_types[0]
    et = ir.ShapedType(target).element_type
    if not isinstance(et, ir.F32Type):
        raise VerifyError(f"draws float32 elements, got {et}")


# --- convolution, pooling and normalization (NHWC) ---


def window_extent(kernel: int, dilation: int) -> int:
    """How many input positions a dilated window spans."""
    return (kernel - 1) * dilation + 1


def window_output_size(size: int, kernel: int, stride: int, pad_begin: int, pad_end: int, dilation: int,
                       ceil_mode: bool = False) -> int:
    """The number of window positions along one spatial dim (ONNX's formula). With ``ceil_mode`` a last window may
    overhang the end padding, but it must start inside the input or the begin padding."""
    span = size + pad_begin + pad_end - window_extent(kernel, dilation)
    if span < 0:
        return 0
    if not ceil_mode:
        return span // stride + 1
    out = -(-span // stride) + 1
    return out - 1 if (out - 1) * stride >= size + pad_begin else out


def _ints(info: OpInfo, name: str, count: int, low: int) -> list[int]:
    """Attribute ``name``: ``count`` integers, each at least ``low``."""
    values = info.attrs[name]
    if len(values) != count or any(v < low for v in values):
        raise VerifyError(f"{name} {values} must hold {count} integers >= {low}")
    return values


def _flag(info: OpInfo, name: str) -> bool:
    if info.attrs[name] not in (0, 1):
        raise VerifyError(f"{name} must be 0 or 1, got {info.attrs[name]}")
    return bool(info.attrs[name])


def _windows(info: OpInfo, hw: list[int], kernels: list[int], ceil_mode: bool = False) -> list[int]:
    """[OH, OW] of a 2-D windowed op on an [H, W] input, from its strides, pads [top, left, bottom, right] and
    dilations; every output position must have a window."""
    strides = _ints(info, "strides", 2, 1)
    pads = _ints(info, "pads", 4, 0)
    dilations = _ints(info, "dilations", 2, 1)
    out = [window_output_size(hw[i], kernels[i], strides[i], pads[i], pads[i + 2], dilations[i], ceil_mode)
           for i in range(2)]
    if min(out) < 1:
        extent = [window_extent(k, d) for k, d in zip(kernels, dilations)]
        raise VerifyError(f"window {_fmt(extent)} (dilated) does not fit the padded input {_fmt(hw)} with pads {pads}")
    return out


def conv2d(info: OpInfo) -> list[ir.Type]:
    """Conv2D(input[N,H,W,C], filter[KH,KW,C/group,F], bias[F]) {strides, pads, dilations, group} -> [N,OH,OW,F].

    The filter may also be packed in blocks of B output channels, [F/B, KH, KW, C, B], or also in chunks of Cc input
    channels, [F/B, C/Cc, KH, KW, Cc, B] (group 1, no dilation: the CPU backend's layouts, made by
    cpu-pack-conv-filters once the graph is optimized)."""
    _float(info, 0, 1, 2)
    if len({str(info.elem(i)) for i in range(3)}) != 1:
        raise VerifyError(f"input, filter and bias must have one element type, got {info.elem(0)}, "
                          f"{info.elem(1)}, {info.elem(2)}")
    return conv_shape(info)


def conv_shape(info: OpInfo) -> list[ir.Type]:
    """The geometry of a convolution, whatever its element types: input[N,H,W,C], filter[KH,KW,C/group,F] (or
    packed), bias[F] -> the input's type at [N,OH,OW,F]."""
    n, h, w, c = _rank(info, 0, 4, "input")
    group = info.attrs["group"]
    if len(info.shape(1)) in (5, 6):
        packed = info.shape(1)
        if len(packed) == 5:
            blocks, kh, kw, cg, b = _rank(info, 1, 5, "packed filter")
        else:
            blocks, chunks, kh, kw, chunk, b = _rank(info, 1, 6, "packed filter")
            cg = chunks * chunk
        f = blocks * b
        if group != 1 or list(_ints(info, "dilations", 2, 1)) != [1, 1]:
            raise VerifyError(f"a packed filter {_fmt(packed)} needs group 1 and no dilation")
    else:
        kh, kw, cg, f = _rank(info, 1, 4, "filter")
    (fb,) = _rank(info, 2, 1, "bias")
    if group < 1 or c % group or f % group:
        raise VerifyError(f"group {group} must divide the {c} input channels and the {f} output channels")
    if cg != c // group:
        shown = _fmt(info.shape(1)) + (f" (packed: {cg} input channels)" if len(info.shape(1)) > 4 else "")
        raise VerifyError(f"filter {shown} must have {c // group} channels (input channels / group)")
    if fb != f:
        raise VerifyError(f"bias {_fmt([fb])} must have one entry per output channel ({f})")
    oh, ow = _windows(info, [h, w], [kh, kw])
    return [tensor_like(info.operand_types[0], [n, oh, ow, f])]


def _pool(info: OpInfo, integers: bool = False) -> list[ir.Type]:
    """The NHWC output of a pooling window, which must hold at least one input element wherever it is; float
    elements, or also signed integers with ``integers``."""
    if not (integers and isinstance(info.elem(0), ir.IntegerType) and ir.IntegerType(info.elem(0)).width > 1):
        _float(info, 0)
    n, h, w, c = _rank(info, 0, 4, "input")
    kernels = _ints(info, "kernels", 2, 1)
    ceil_mode = _flag(info, "ceil_mode")
    oh, ow = _windows(info, [h, w], kernels, ceil_mode)
    pads, dilations = info.attrs["pads"], info.attrs["dilations"]
    for i, p in enumerate(pads):
        # a pad at least as wide as the dilated window would give windows made of padding only
        if p >= window_extent(kernels[i % 2], dilations[i % 2]):
            raise VerifyError(f"pads {pads} must be smaller than the dilated window "
                              f"{_fmt([window_extent(k, d) for k, d in zip(kernels, dilations)])}")
    return [tensor_like(info.operand_types[0], [n, oh, ow, c])]


def max_pool(info: OpInfo) -> list[ir.Type]:
    """MaxPool(input[N,H,W,C]) {kernels, strides, pads, dilations, ceil_mode} -> [N,OH,OW,C]; float or signed
    integer elements (int8 in a quantized graph)."""
    return _pool(info, integers=True)


def avg_pool(info: OpInfo) -> list[ir.Type]:
    """AvgPool(input[N,H,W,C]) {kernels, strides, pads, dilations, ceil_mode, count_include_pad} -> [N,OH,OW,C]."""
    _flag(info, "count_include_pad")
    return _pool(info)


def batch_norm(info: OpInfo) -> list[ir.Type]:
    """BatchNorm(input, scale[C], bias[C], mean[C], var[C]) {epsilon, channel_axis}: C is the size of the input's
    channel_axis dim; the result has the input's type."""
    _float(info, *range(5))
    shape = info.shape(0)
    axis = info.attrs["channel_axis"]
    if len(shape) < 2 or not 0 <= axis < len(shape):
        raise VerifyError(f"channel_axis {axis} must name a dim of the input {_fmt(shape)} (rank 2 or more)")
    for i, what in enumerate(("scale", "bias", "mean", "var"), 1):
        if info.shape(i) != [shape[axis]] or info.elem(i) != info.elem(0):
            raise VerifyError(f"{what} {_fmt(info.shape(i))} {info.elem(i)} must be {shape[axis]} {info.elem(0)} "
                              f"(one entry per channel)")
    if info.attrs["epsilon"] < 0:
        raise VerifyError(f"epsilon {info.attrs['epsilon']} must not be negative")
    return [info.operand_types[0]]


def local_response_norm(info: OpInfo) -> list[ir.Type]:
    """LRN(input[N,H,W,C]) {size, alpha, beta, bias}: the result has the input's type."""
    _float(info, 0)
    _rank(info, 0, 4, "input")
    if info.attrs["size"] < 1:
        raise VerifyError(f"size {info.attrs['size']} must be at least 1")
    return [info.operand_types[0]]


def pad(info: OpInfo) -> list[ir.Type]:
    """Pad(input) {pads: begins then ends, value} -> each dim grown by its begin and end (negative: cropped)."""
    _float(info, 0)
    shape, pads = info.shape(0), info.attrs["pads"]
    rank = len(shape)
    if len(pads) != 2 * rank:
        raise VerifyError(f"pads {pads} must hold 2 x {rank} entries (begins, then ends)")
    value = info.raw_attrs.get("value")
    if value is None or attr_type(value) != info.elem(0):
        raise VerifyError(f"value {value} must be a {info.elem(0)} attribute like the elements it fills")
    out = [d + pads[i] + pads[rank + i] for i, d in enumerate(shape)]
    if any(d < 1 for d in out):
        raise VerifyError(f"pads {pads} leave no element of the input {_fmt(shape)} in some dim ({_fmt(out)})")
    if any(-p > d for p, d in zip(pads, shape * 2)):
        raise VerifyError(f"pads {pads} crop more than the input {_fmt(shape)} holds")
    return [tensor_like(info.operand_types[0], out)]


def clip(info: OpInfo) -> list[ir.Type]:
    """Clip(input) {min, max}: min(max(input, min), max) (max wins where min > max, as numpy and ONNX)."""
    return float_unary(info)


# --- elementwise math, activations, comparisons and casts ---

#: the element types glowgraph computes with
#: f64, f16, bf16 and the 8- and 4-bit floats are storage types: a model's tensors of those types are computed in f32 and
#: cast at its boundary (and where it stores them, to round them)
_CAST_TYPES = ("f32", "i32", "i64", "i1", "f64", "f16", "bf16", "i16", "i8", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2",
               "f8E5M2FNUZ", "f4E2M1FN", "f8E8M0FNU")


def _is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def _numeric(info: OpInfo, *idx: int) -> None:
    for i in idx:
        if _is_bool(info.elem(i)):
            raise VerifyError(f"operand #{i} must have a numeric element type, got i1")


def _boolean(info: OpInfo, *idx: int) -> None:
    for i in idx:
        if not _is_bool(info.elem(i)):
            raise VerifyError(f"operand #{i} must have element type i1, got {info.elem(i)}")


def numeric_unary(info: OpInfo) -> list[ir.Type]:
    """Unary op on floats or integers (not i1): the result has the operand's type."""
    _numeric(info, 0)
    return same_as_first(info)


def float_binary(info: OpInfo) -> list[ir.Type]:
    """Binary float op: both operands and the result of one float type."""
    types = same_as_first(info)
    _float(info, 0)
    return types


def numeric_binary(info: OpInfo) -> list[ir.Type]:
    """Binary op on floats or integers (not i1): both operands and the result of one type."""
    types = same_as_first(info)
    _numeric(info, 0)
    return types


def mod(info: OpInfo) -> list[ir.Type]:
    """Mod(a, b) {fmod}: fmod 1 takes the dividend's sign (C fmod), fmod 0 the divisor's (integers only)."""
    types = numeric_binary(info)
    fmod = info.attrs["fmod"]
    if fmod not in (0, 1):
        raise VerifyError(f"fmod must be 0 or 1, got {fmod}")
    if fmod == 0 and isinstance(info.elem(0), ir.FloatType):
        raise VerifyError(f"fmod 0 needs integer operands, got {info.elem(0)}")
    return types


def ordered_compare(info: OpInfo) -> list[ir.Type]:
    """Less-than comparisons: numeric operands of one type, an i1 result of that shape."""
    _numeric(info, 0)
    return same_as_first_bool(info)


def bitwise_unary(info: OpInfo) -> list[ir.Type]:
    """Bitwise op on integers (on i1, the logical one): the result has the operand's type."""
    if not isinstance(info.elem(0), ir.IntegerType):
        raise VerifyError(f"operand #0 must have an integer element type, got {info.elem(0)}")
    return same_as_first(info)


def bitwise_binary(info: OpInfo) -> list[ir.Type]:
    """Binary bitwise op on integers (on i1, the logical one): both operands and the result of one type."""
    types = same_as_first(info)
    if not isinstance(info.elem(0), ir.IntegerType):
        raise VerifyError(f"operands must have an integer element type, got {info.elem(0)}")
    return types


def bool_unary(info: OpInfo) -> list[ir.Type]:
    """Logical op on i1: the result has the operand's type."""
    _boolean(info, 0)
    return same_as_first(info)


def integer_binary(info: OpInfo) -> list[ir.Type]:
    """Binary op on i32 or i64: both operands and the result of one type."""
    types = same_as_first(info)
    if str(info.elem(0)) not in ("i32", "i64"):
        raise VerifyError(f"operands must have element type i32 or i64, got {info.elem(0)}")
    return types


def bool_binary(info: OpInfo) -> list[ir.Type]:
    """Binary logical op: both operands and the result i1 of one shape."""
    types = same_as_first(info)
    _boolean(info, 0)
    return types


def select(info: OpInfo) -> list[ir.Type]:
    """Select(cond, lhs, rhs): an i1 cond of the shape of lhs and rhs, which have one type, the result's."""
    _boolean(info, 0)
    cond, lhs = info.shape(0), info.shape(1)
    if cond != lhs:
        raise VerifyError(f"cond {_fmt(cond)} must have the shape of the values {_fmt(lhs)}")
    return same_as_first(OpInfo(info.operand_types[1:], info.attrs, []))


def cast(info: OpInfo) -> list[ir.Type]:
    """Cast(x) {to}: x's shape with element type ``to``; both types among f32, i32, i64, i1, f64, f16, bf16, i16,
    i8 and the 8- and 4-bit floats (the storage types at a program's boundary, and to round or wrap a value into their
    range)."""
    to = info.attrs["to"]
    for what, t in (("operand", info.elem(0)), ("target", to)):
        if str(t) not in _CAST_TYPES:
            raise VerifyError(f"{what} element type {t} is not one of {', '.join(_CAST_TYPES)}")
    return [tensor_like(info.operand_types[0], info.shape(0), to)]


#: the element types a bitcast reinterprets (i1 has no bits to reinterpret; the 4-bit float is stored in a byte)
_BITCAST_TYPES = ("f32", "i32", "f64", "i64", "f16", "bf16", "i16", "i8", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2",
                  "f8E5M2FNUZ", "f8E8M0FNU")


def bitcast(info: OpInfo) -> list[ir.Type]:
    """Bitcast(x) {to}: x's shape with element type ``to`` of the same width, each element's bits read as ``to``."""
    to, src = info.attrs["to"], info.elem(0)
    for what, t in (("operand", src), ("target", to)):
        if str(t) not in _BITCAST_TYPES:
            raise VerifyError(f"{what} element type {t} is not one of {', '.join(_BITCAST_TYPES)}")
    if src.width != to.width:
        raise VerifyError(f"operand element type {src} and target {to} must have one width ({src.width} and "
                          f"{to.width} bits)")
    return [tensor_like(info.operand_types[0], info.shape(0), to)]


def gelu(info: OpInfo) -> list[ir.Type]:
    """Gelu(x) {approximate}: a float unary op; approximate is "none" (erf) or "tanh"."""
    if info.attrs["approximate"] not in ("none", "tanh"):
        raise VerifyError(f"approximate must be 'none' or 'tanh', got '{info.attrs['approximate']}'")
    return float_unary(info)


# --- data movement and shapes ---

#: element types that data movement carries (float32, int64, int32, bool, and the int8 of quantized values)
MOVABLE = ("f32", "i64", "i32", "i1", "i8")


def _movable(info: OpInfo, *idx: int) -> None:
    for i in idx:
        if str(info.elem(i)) not in MOVABLE:
            raise VerifyError(f"operand #{i} has element type {info.elem(i)}; data movement takes {', '.join(MOVABLE)}")


def _box(shape: list[int], starts: list[int], sizes: list[int], steps: list[int]) -> None:
    """Check that the strided box {starts[d] + i * steps[d] : 0 <= i < sizes[d]} lies inside ``shape``."""
    for name, values in (("starts", starts), ("sizes", sizes), ("steps", steps)):
        if len(values) != len(shape):
            raise VerifyError(f"{name} {values} must have one entry per dimension ({len(shape)})")
    for d, (n, start, size, step) in enumerate(zip(shape, starts, sizes, steps)):
        if size < 0:
            raise VerifyError(f"dimension {d}: size {size} is negative")
        if step == 0:
            raise VerifyError(f"dimension {d}: the step is 0")
        if size > 0 and not (0 <= start < n and 0 <= start + (size - 1) * step < n):
            raise VerifyError(f"dimension {d}: {size} elements from {start} by steps of {step} leave 0..{n - 1}")


def concat(info: OpInfo) -> list[ir.Type]:
    """Concat(lhs, rhs) {axis}: one element type and rank; dims agree but along axis, where they add up."""
    _movable(info, 0, 1)
    a, b, axis = info.shape(0), info.shape(1), info.attrs["axis"]
    if not 0 <= axis < len(a):
        raise VerifyError(f"axis {axis} is out of range for rank {len(a)}")
    if info.elem(0) != info.elem(1):
        raise VerifyError(f"operands have element types {info.elem(0)} and {info.elem(1)}")
    if len(a) != len(b) or any(x != y for d, (x, y) in enumerate(zip(a, b)) if d != axis):
        raise VerifyError(f"shapes {_fmt(a)} and {_fmt(b)} differ on another dimension than axis {axis}")
    out = list(a)
    out[axis] += b[axis]
    return [tensor_like(info.operand_types[0], out)]


def slice_(info: OpInfo) -> list[ir.Type]:
    """Slice(x) {starts, sizes, steps}: result[i] = x[starts + i * steps], of shape sizes (steps default to 1)."""
    _movable(info, 0)
    shape, sizes = info.shape(0), info.attrs["sizes"]
    _box(shape, info.attrs["starts"], sizes, info.attrs.get("steps") or [1] * len(shape))
    return [tensor_like(info.operand_types[0], sizes)]


def gather(info: OpInfo) -> list[ir.Type]:
    """Gather(data, indices) {axis}: data's dims before axis, the indices' dims, then data's dims after axis."""
    _movable(info, 0)
    data, indices, axis = info.shape(0), info.shape(1), info.attrs["axis"]
    if not 0 <= axis < len(data):
        raise VerifyError(f"axis {axis} is out of range for rank {len(data)}")
    if str(info.elem(1)) not in ("i32", "i64"):
        raise VerifyError(f"indices must be i32 or i64, got {info.elem(1)}")
    return [tensor_like(info.operand_types[0], data[:axis] + indices + data[axis + 1:])]


#: how scatter_nd combines an update with the element it lands on
SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


def scatter_nd(info: OpInfo) -> list[ir.Type]:
    """ScatterND(data, indices[..., k], updates) {reduction} -> data's type: indices address data's first k dims,
    updates has the indices' dims but the last, then data's dims from k on; i1 data takes reduction none only."""
    _movable(info, 0)
    data, indices, updates = info.shape(0), info.shape(1), info.shape(2)
    if str(info.elem(1)) not in ("i32", "i64"):
        raise VerifyError(f"indices must be i32 or i64, got {info.elem(1)}")
    if not indices or not 0 <= indices[-1] <= len(data):
        raise VerifyError(f"indices {_fmt(indices)} must have rank 1 or more and a last dim of at most the data's "
                          f"rank {len(data)}")
    want = indices[:-1] + data[indices[-1]:]
    if updates != want or info.elem(2) != info.elem(0):
        raise VerifyError(f"updates {_fmt(updates)} {info.elem(2)} must be {_fmt(want)} {info.elem(0)}: the indices' "
                          f"dims but the last, then the data's dims from {indices[-1]} on")
    reduction = info.attrs["reduction"]
    if reduction not in SCATTER_REDUCTIONS:
        raise VerifyError(f"reduction must be one of {', '.join(SCATTER_REDUCTIONS)}, got '{reduction}'")
    if reduction != "none" and _is_bool(info.elem(0)):
        raise VerifyError(f"reduction '{reduction}' needs numeric data, got i1")
    return [info.operand_types[0]]


def extract_tensor(info: OpInfo) -> None:
    """ExtractTensor(dest, src) {offsets, steps}: dest = the strided box of src at offsets (steps default to 1)."""
    _movable(info, 0)
    dest, src = info.shape(0), info.shape(1)
    if info.elem(0) != info.elem(1):
        raise VerifyError(f"dest element type {info.elem(0)} differs from the source's {info.elem(1)}")
    _box(src, info.attrs["offsets"], dest, info.attrs.get("steps") or [1] * len(src))


def insert_tensor(info: OpInfo) -> None:
    """InsertTensor(dest, src) {offsets}: the box of dest at offsets, of src's shape, = src."""
    _movable(info, 0)
    dest, src = info.shape(0), info.shape(1)
    if info.elem(0) != info.elem(1):
        raise VerifyError(f"dest element type {info.elem(0)} differs from the source's {info.elem(1)}")
    if len(src) != len(dest):
        raise VerifyError(f"source {_fmt(src)} and dest {_fmt(dest)} have different ranks")
    _box(dest, info.attrs["offsets"], src, [1] * len(dest))


# --- reductions, softmax, normalization and batched matmul ---


def _in_range(axis: int, rank: int) -> None:
    if not 0 <= axis < rank:
        raise VerifyError(f"axis {axis} is out of range for rank {rank} (0 <= axis < {rank})")


def _reduced(shape: list[int], axes: list[int]) -> list[int]:
    """``shape`` without the dims in ``axes``, which must be strictly increasing, in range and not empty."""
    if not axes:
        raise VerifyError("axes must not be empty")
    if any(a >= b for a, b in pairwise(axes)):
        raise VerifyError(f"axes {axes} must be strictly increasing")
    _in_range(axes[0], len(shape))
    _in_range(axes[-1], len(shape))
    return [d for i, d in enumerate(shape) if i not in axes]


def reduce(info: OpInfo) -> list[ir.Type]:
    """Reduce(x) {axes} -> x's shape without the axes (float or integer elements)."""
    _numeric(info, 0)
    return [tensor_like(info.operand_types[0], _reduced(info.shape(0), info.attrs["axes"]))]


def float_reduce(info: OpInfo) -> list[ir.Type]:
    """Reduce(x) {axes} -> x's shape without the axes (float elements)."""
    _float(info, 0)
    return reduce(info)


def softmax(info: OpInfo) -> list[ir.Type]:
    """Softmax(x) {axis} -> x's type: normalized along one axis (0 <= axis < rank)."""
    _float(info, 0)
    _in_range(info.attrs["axis"], len(info.shape(0)))
    return [info.operand_types[0]]


def layer_norm(info: OpInfo) -> list[ir.Type]:
    """LayerNorm(x, scale, bias) {axis, epsilon} -> x's type: normalized over the dims from ``axis`` on,
    whose shape ``scale`` and ``bias`` have."""
    _float(info, 0)
    shape, axis = info.shape(0), info.attrs["axis"]
    _in_range(axis, len(shape))
    for i, what in ((1, "scale"), (2, "bias")):
        if info.shape(i) != shape[axis:] or info.elem(i) != info.elem(0):
            raise VerifyError(f"{what} {_fmt(info.shape(i))} {info.elem(i)} must be {_fmt(shape[axis:])} "
                              f"{info.elem(0)}: the input's dims from axis {axis} on")
    return [info.operand_types[0]]


def batch_matmul(info: OpInfo) -> list[ir.Type]:
    """BatchMatMul(A[B,M,K], B[B,K,N]) -> [B,M,N]: one matmul per batch entry."""
    _float(info, 0, 1)
    b, m, k = _rank(info, 0, 3, "lhs")
    b2, k2, n = _rank(info, 1, 3, "rhs")
    if b != b2 or k != k2 or info.elem(0) != info.elem(1):
        raise VerifyError(f"batch and inner dimensions and element types must agree: lhs {_fmt([b, m, k])} "
                          f"{info.elem(0)}, rhs {_fmt([b2, k2, n])} {info.elem(1)}")
    return [tensor_like(info.operand_types[0], [b, m, n])]


def arg_max(info: OpInfo) -> list[ir.Type]:
    """ArgMax(x) {axis, select_last} -> i64 indices of x's shape without the axis."""
    _numeric(info, 0)
    shape, axis = info.shape(0), info.attrs["axis"]
    _in_range(axis, len(shape))
    if info.attrs["select_last"] not in (0, 1):
        raise VerifyError(f"select_last must be 0 or 1, got {info.attrs['select_last']}")
    return [tensor_like(info.operand_types[0], shape[:axis] + shape[axis + 1:], ir.IntegerType.get_signless(64))]


def instruction(rule: Rule, n_out: int = 1) -> Callable[[OpInfo], None]:
    """A check for an address-only instruction: the first ``n_out`` operands are the
    @out buffers, whose types must equal what ``rule`` infers from the rest."""

    def check(info: OpInfo) -> None:
        ins = OpInfo(info.operand_types[n_out:], info.attrs, [], info.raw_attrs)
        want = rule(ins)
        got = info.operand_types[:n_out]
        if [str(t) for t in want] != [str(t) for t in got]:
            raise VerifyError(
                f"@out buffer {', '.join(map(str, got))} does not match the type {', '.join(map(str, want))} computed from the @in operands"
            )

    check.__doc__ = rule.__doc__
    return check
