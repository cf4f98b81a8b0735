"""The int8 ops of both dialects: their attributes, shape rules and numpy semantics, in one place.

How quantization is represented, and why. A quantized value is an ``i8`` tensor (glowgraph) or buffer (glowir) whose
real value is ``scale * (q - offset)``; the scale and offset are **attributes of the ops** that produce and read it,
not part of its type. MLIR's quant dialect would put them in the type (``!quant.uniform<i8:f32, 0.1:-3>``), but then
every pass that handles buffers (bufferization, liveness, buffer sharing, the memory plan, the bundle ABI) and every
lowering would have to see through a type of another dialect, and a memref of such elements has no lowering of its
own; with plain ``i8`` they treat a quantized buffer as any other, and each int8 op states the arithmetic it does:

- ``quantize`` / ``dequantize``: float <-> int8 by one scale and offset (rounding half to even, saturating);
- ``rescale``: int8 -> int8 under other parameters, clamped to ``[output_min, output_max]`` (a folded relu or clip);
- ``qconv2d`` / ``qfully_connected``: an int32 accumulator ``bias + sum(x * w)`` on the raw int8 input (its zero
  point is folded into the bias at compile time, and padding reads the input's zero point, which stands for 0), then
  requantized by a multiplier per output channel (or one for all) with a 31-bit fixed-point multiply and a rounding
  right shift (:func:`requantize`), plus the output offset, clamped. A CPU with an int8 dot-product instruction
  (u8 x s8, four products summed per 32-bit lane) gets the filter packed for it (:func:`pack_filter`,
  cpu-pack-int8-weights): the sum is then over ``(x + 128) * w``, and the bias holds ``-128 * sum(w)`` more; a CPU
  without one gets the filter in int16 pairs for a pairwise multiply-add (vpmaddwd), the sum unchanged;
- ``qadd``: both inputs rescaled to the output's scale and added;
- ``max_pool`` (a float op that also takes int8): max commutes with a monotone quantization, so the output keeps the
  input's parameters and needs none.

Weights are int8 with offset 0 (symmetric, per tensor or per output channel); biases are int32 with the scale
``input_scale * weight_scale`` and offset 0, as in Glow and TFLite.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from mlir import ir

from ..quantization import params
from ..quantization.params import QMAX, QMIN, quantize_multiplier
from . import cnn_numpy
from . import shapes as S
from .optable import Attr, OpInfo, VerifyError, tensor_like

#: the parameters of an int8 result
OUTPUT = (Attr("scale", "f32", doc="real = scale * (q - offset)"), Attr("offset", "i64"))
#: the clamp of an int8 result (a folded relu or clip; [-128, 127] without)
CLAMP = (Attr("output_min", "i64", doc="least result, a folded activation's bound"),
         Attr("output_max", "i64", doc="greatest result"))
#: the requantization of an int32 accumulator
REQUANT = (Attr("multipliers", "f32s", doc="input_scale * weight_scale / scale: one per output channel, or one"),
           Attr("offset", "i64", doc="the result's offset"), *CLAMP)


def _i8(info: OpInfo, i: int, what: str) -> None:
    if str(info.elem(i)) != "i8":
        raise VerifyError(f"{what} must be i8, got {info.elem(i)}")


def _scale(info: OpInfo, name: str) -> None:
    value = info.attrs[name]
    if not (math.isfinite(value) and value > 0):
        raise VerifyError(f"{name} must be positive and finite, got {value}")


def _offset(info: OpInfo, name: str) -> None:
    if not QMIN <= info.attrs[name] <= QMAX:
        raise VerifyError(f"{name} {info.attrs[name]} is outside the int8 range [{QMIN}, {QMAX}]")


def _clamp(info: OpInfo) -> None:
    lo, hi = info.attrs["output_min"], info.attrs["output_max"]
    if not QMIN <= lo <= hi <= QMAX:
        raise VerifyError(f"output_min {lo} and output_max {hi} must be ordered within [{QMIN}, {QMAX}]")


def _requant(info: OpInfo, channels: int) -> None:
    """The requantization attributes: one positive multiplier per output channel or one, an offset, a clamp."""
    multipliers = info.attrs["multipliers"]
    if len(multipliers) not in (1, channels):
        raise VerifyError(f"multipliers must hold 1 or {channels} values (one per output channel), got "
                          f"{len(multipliers)}")
    for m in multipliers:
        if not (math.isfinite(m) and 2.0 ** -31 < m < 2.0 ** 30):
            raise VerifyError(f"multiplier {m} is out of the range a 31-bit fixed-point rescale holds")
    _offset(info, "offset")
    _clamp(info)


def quantize(info: OpInfo) -> list[ir.Type]:
    """Quantize(x: f32) {scale, offset} -> i8 of x's shape."""
    S._float(info, 0)
    _scale(info, "scale")
    _offset(info, "offset")
    return [tensor_like(info.operand_types[0], info.shape(0), ir.IntegerType.get_signless(8))]


def dequantize(info: OpInfo) -> list[ir.Type]:
    """Dequantize(q: i8) {scale, offset} -> f32 of q's shape."""
    _i8(info, 0, "the input")
    _scale(info, "scale")
    _offset(info, "offset")
    return [tensor_like(info.operand_types[0], info.shape(0), ir.F32Type.get())]


def rescale(info: OpInfo) -> list[ir.Type]:
    """Rescale(q: i8) {input_scale, input_offset, scale, offset, output_min, output_max} -> i8 of q's shape."""
    _i8(info, 0, "the input")
    for name in ("input_scale", "scale"):
        _scale(info, name)
    for name in ("input_offset", "offset"):
        _offset(info, name)
    _clamp(info)
    return [info.operand_types[0]]


def qadd(info: OpInfo) -> list[ir.Type]:
    """QAdd(lhs: i8, rhs: i8) {lhs_scale, lhs_offset, rhs_scale, rhs_offset, scale, offset, clamp} -> i8."""
    _i8(info, 0, "lhs")
    S.same_as_first(info)
    for name in ("lhs_scale", "rhs_scale", "scale"):
        _scale(info, name)
    for name in ("lhs_offset", "rhs_offset", "offset"):
        _offset(info, name)
    _clamp(info)
    return [info.operand_types[0]]


def _int8_operands(info: OpInfo) -> None:
    _i8(info, 0, "the input")
    if not (len(info.shape(1)) == 6 and str(info.elem(1)) == "i16"):  # int16 pairs: the packed form of pmaddwd
        _i8(info, 1, "the weights")
    if str(info.elem(2)) != "i32":
        raise VerifyError(f"the bias must be i32, got {info.elem(2)}")


def qconv2d(info: OpInfo) -> list[ir.Type]:
    """QConv2d(input: i8 [N,H,W,C], filter: i8 [KH,KW,C/group,F], bias: i32 [F]) {window, group, input_offset,
    multipliers, offset, clamp} -> i8 [N,OH,OW,F]. The filter may be packed for an int8 dot-product kernel (group 1):
    ``[F/L, KH, KW, Cp/4, L, 4]`` (:func:`unpack_filter`), or depthwise (group C) ``[KH, KW/4, 1, C, 4]``
    (:func:`unpack_depthwise`), the input then read as unsigned (+128)."""
    _int8_operands(info)
    _offset(info, "input_offset")
    rank = len(info.shape(1))
    if rank == 6:
        return _packed_qconv2d(info)
    if rank == 5:
        return _packed_depthwise(info)
    if rank != 4:
        raise VerifyError(f"the filter must be [KH, KW, C/group, F] (or packed, rank 6 or 5), got rank {rank}")
    result = S.conv_shape(info)
    _requant(info, info.shape(1)[3])
    return result


def _packed_qconv2d(info: OpInfo) -> list[ir.Type]:
    blocks, kh, kw, groups, lanes, g = info.shape(1)
    n, h, w, c = S._rank(info, 0, 4, "input")
    want = 2 if str(info.elem(1)) == "i16" else 4  # int16 pairs, or int8 quads
    if g != want or groups != -(-c // want) or info.attrs["group"] != 1:
        raise VerifyError(f"a packed {info.elem(1)} filter [F/L, KH, KW, Cp/{want}, L, {want}] must have "
                          f"Cp/{want} = {-(-c // want)} (the input's {c} channels in groups of {want}) and group 1, got "
                          f"{S._fmt(info.shape(1))} and group {info.attrs['group']}")
    f = blocks * lanes
    if info.shape(2) != [f]:
        raise VerifyError(f"bias {S._fmt(info.shape(2))} must have one entry per output channel ({f})")
    oh, ow = S._windows(info, [h, w], [kh, kw])
    _requant(info, f)
    return [tensor_like(info.operand_types[0], [n, oh, ow, f])]


def _packed_depthwise(info: OpInfo) -> list[ir.Type]:
    kh, quads, one, c, four = info.shape(1)
    n, h, w, channels = S._rank(info, 0, 4, "input")
    if one != 1 or four != 4 or c != channels or info.attrs["group"] != c or str(info.elem(1)) != "i8":
        raise VerifyError(f"a packed depthwise filter [KH, KW/4, 1, C, 4] (i8) must have the input's {channels} "
                          f"channels and group {channels}, got {S._fmt(info.shape(1))} {info.elem(1)} and group "
                          f"{info.attrs['group']}")
    if info.shape(2) != [c]:
        raise VerifyError(f"bias {S._fmt(info.shape(2))} must have one entry per channel ({c})")
    oh, ow = S._windows(info, [h, w], [kh, 4 * quads])
    _requant(info, c)
    return [tensor_like(info.operand_types[0], [n, oh, ow, c])]


#: what a packed convolution adds to every input value: its kernel reads int8 as unsigned (u8 x s8 dot products)
UNSIGNED_SHIFT = 128


def pack_depthwise(w: np.ndarray) -> np.ndarray:
    """A depthwise HWCF int8 filter [KH, KW, 1, C] as ``[KH, ceil(KW/4), 1, C, 4]``: each channel's taps of one
    filter row in quads (zeros past KW), the four bytes one lane of a u8 x s8 dot product reads. The convolution
    then has 4 * ceil(KW/4) taps: its right pad grows by the zero taps' columns (at the input's zero point), which
    keeps its output width."""
    kh, kw, _, c = w.shape
    quads = -(-kw // 4)
    padded = np.zeros((kh, 4 * quads, c), np.int8)
    padded[:, :kw, :] = w[:, :, 0, :]
    return np.ascontiguousarray(padded.reshape(kh, quads, 4, c).transpose(0, 1, 3, 2)[:, :, None, :, :])


def unpack_depthwise(packed: np.ndarray) -> np.ndarray:
    """The depthwise HWCF filter [KH, 4 * quads, 1, C] a packed one holds (its zero taps past KW kept: the window
    the packed convolution reads)."""
    kh, quads, _, c, four = packed.shape
    return np.ascontiguousarray(packed[:, :, 0].transpose(0, 1, 3, 2).reshape(kh, quads * four, 1, c))


def pack_filter(w: np.ndarray, lanes: int, group: int = 4) -> np.ndarray:
    """An HWCF int8 filter as ``[F/L, KH, KW, Cp/g, L, g]``: for each block of L output channels and each group of
    ``g`` input channels (zeros past C), the L x g weights one dot-product instruction reads: g = 4 int8 for a u8 x s8
    dot product (vpdpbusd), g = 2 widened to int16 for a pairwise int16 one (vpmaddwd)."""
    kh, kw, c, f = w.shape
    cp = -(-c // group) * group
    padded = np.zeros((kh, kw, cp, f), np.int8 if group == 4 else np.int16)
    padded[:, :, :c, :] = w
    return np.ascontiguousarray(padded.reshape(kh, kw, cp // group, group, f // lanes, lanes)
                                .transpose(4, 0, 1, 2, 5, 3))


def unpack_filter(packed: np.ndarray, channels: int) -> np.ndarray:
    """The HWCF filter of ``channels`` input channels a packed filter holds."""
    blocks, kh, kw, c4, lanes, four = packed.shape
    w = packed.transpose(1, 2, 3, 5, 0, 4).reshape(kh, kw, c4 * four, blocks * lanes)
    return w[:, :, :channels, :]


def qfully_connected(info: OpInfo) -> list[ir.Type]:
    """QFullyConnected(input: i8 [N,K], weights: i8 [K,M], bias: i32 [M]) {multipliers, offset, clamp} -> i8
    [N,M]."""
    _int8_operands(info)
    if len(info.shape(1)) != 2:
        raise VerifyError(f"the weights must be [K, M], got rank {len(info.shape(1))}")
    result = S.fully_connected_shape(info)
    _requant(info, info.shape(1)[1])
    return result


# --------------------------------------------------------------------------- numpy semantics


def fixed_point(multiplier: float) -> tuple[int, int]:
    """``multiplier`` as ``M * 2^-right``, M a 31-bit integer in [2^30, 2^31) and right > 0: the integers of the
    rescale the kernels do (:func:`~glow_mlir.quantization.params.quantize_multiplier`)."""
    m, shift = quantize_multiplier(multiplier)
    return m, 31 - shift


def requantize(acc: np.ndarray, multipliers: Any, offset: int, lo: int, hi: int) -> np.ndarray:
    """int32 accumulators (channels last) times their channel's multiplier, as ``(acc * M) >> right`` rounded to
    nearest (ties up) in 64 bits, plus ``offset``, clamped to [lo, hi]: bit for bit what the kernels compute."""
    pairs = [quantize_multiplier(float(m)) for m in np.atleast_1d(np.asarray(multipliers, np.float32))]
    return params.requantize(acc, [m for m, _ in pairs], [s for _, s in pairs], offset, lo, hi)


def _round_i8(x: np.ndarray, offset: int, lo: int = QMIN, hi: int = QMAX) -> np.ndarray:
    """float32 values rounded half to even, plus ``offset``, clamped, as int8."""
    return np.clip(np.rint(x).astype(np.int64) + offset, lo, hi).astype(np.int8)


def eval_quantize(x: np.ndarray, scale: float, offset: int) -> np.ndarray:
    return _round_i8(np.asarray(x, np.float32) / np.float32(scale), offset)


def eval_dequantize(q: np.ndarray, scale: float, offset: int) -> np.ndarray:
    return (np.asarray(q, np.int32) - np.int32(offset)).astype(np.float32) * np.float32(scale)


def ratio(a: float, b: float) -> np.float32:
    """``a / b`` as the float32 constant the lowering multiplies by."""
    return np.float32(float(np.float32(a)) / float(np.float32(b)))


def eval_rescale(q: np.ndarray, input_scale: float, input_offset: int, scale: float, offset: int, output_min: int,
                 output_max: int) -> np.ndarray:
    real = (np.asarray(q, np.int32) - np.int32(input_offset)).astype(np.float32) * ratio(input_scale, scale)
    return _round_i8(real, offset, output_min, output_max)


def eval_qadd(a: np.ndarray, b: np.ndarray, lhs_scale: float, lhs_offset: int, rhs_scale: float, rhs_offset: int,
              scale: float, offset: int, output_min: int, output_max: int) -> np.ndarray:
    left = (np.asarray(a, np.int32) - np.int32(lhs_offset)).astype(np.float32) * ratio(lhs_scale, scale)
    right = (np.asarray(b, np.int32) - np.int32(rhs_offset)).astype(np.float32) * ratio(rhs_scale, scale)
    return _round_i8(left + right, offset, output_min, output_max)


def eval_qconv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray, strides: list[int], pads: list[int],
                 dilations: list[int], group: int, input_offset: int, multipliers: list[float], offset: int,
                 output_min: int, output_max: int) -> np.ndarray:
    padded = cnn_numpy._pad_hw(np.asarray(x, np.int64), pads, input_offset)
    if w.ndim == 6 and w.shape[-1] == 4:  # int8 quads: the input read as unsigned, the bias holding -128 * sum(w)
        w, padded = unpack_filter(w, x.shape[3]), padded + UNSIGNED_SHIFT
    elif w.ndim == 5:  # depthwise taps in quads (its right pad grown by the zero taps), read the same way
        w, padded = unpack_depthwise(w), padded + UNSIGNED_SHIFT
    elif w.ndim == 6:  # int16 pairs: signed products
        w = unpack_filter(w, x.shape[3])
    acc = cnn_numpy.conv2d(padded.astype(np.float64), np.asarray(w, np.float64), np.asarray(b, np.float64),
                           strides, [0, 0, 0, 0], dilations, group)
    return requantize(np.rint(acc).astype(np.int64), multipliers, offset, output_min, output_max)


def eval_qfully_connected(x: np.ndarray, w: np.ndarray, b: np.ndarray, multipliers: list[float], offset: int,
                          output_min: int, output_max: int) -> np.ndarray:
    acc = np.asarray(x, np.int64) @ np.asarray(w, np.int64) + np.asarray(b, np.int64)
    return requantize(acc, multipliers, offset, output_min, output_max)
