"""DFT and STFT as matmuls with constant matrices of cosines and sines; the window functions and MelWeightMatrix of
known parameters, computed at import.

A signal is [..., n, ..., 1] (real) or [..., n, ..., 2] (complex: real and imaginary parts in the last dim); the
transform runs along one of the other dims. With the signal dim moved last, each part of the output is the real part
times one matrix plus the imaginary part times another ([n, K], built in float64 at import, stored as float32):

- DFT: X[k] = sum_t x[t] e^(-2 pi i k t / L), k < L (k <= L / 2 with ``onesided``);
- inverse: x[t] = 1/L sum_k X[k] e^(+2 pi i k t / L);
- inverse ``onesided`` (irfft): a real x[t] from the first L / 2 + 1 frequencies of a Hermitian spectrum, each but
  the first (and the middle one of an even L) counted twice.

L is ``dft_length`` (a constant), else the signal's length (2 (n - 1) for irfft); a longer signal is cut to L, a
shorter one padded with zeros: both are zero columns of the matrices. A direct transform costs O(n K) per signal,
which is what a matmul kernel runs fastest at the lengths models use (audio frames of a few hundred samples); the
two matrices are 2 n K float32 constants (8 MiB at n = K = 1024).

STFT frames the signal with one gather of constant indices ([frames, frame_length]), multiplies by the window and
transforms each frame along its samples.
"""

from __future__ import annotations

import numpy as np
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ..builder import NodeContext, Tensor, computed, dtype_of, onnx_op, shape_of
from ..folding import evaluate
from ..model import fmt_shape
from .core import _concat_all, _expand, _reshape, _transpose, matmul_of
from .datamove import _box, _ints

INT = AttributeProto.INT
F32 = np.dtype(np.float32)


def _matrices(n: int, length: int, inverse: bool, onesided: bool) -> tuple[np.ndarray, np.ndarray]:
    """(C, S) for an input of ``n`` entries along the signal dim and K entries out: the weighted cosines and sines
    of the angles 2 pi k t / L ([n, K], zero where t lies beyond L or k beyond an irfft's L / 2), which
    :func:`_transform` combines with the real and imaginary parts."""
    if inverse and onesided:
        count = length
        k = np.arange(n)[:, None]
        t = np.arange(count)[None, :]
        weight = np.where((k == 0) | ((length % 2 == 0) & (k == length // 2)), 1.0, 2.0)
        weight = np.where(k <= length // 2, weight, 0.0) / length
    else:
        count = length // 2 + 1 if onesided else length
        t = np.arange(n)[:, None]
        k = np.arange(count)[None, :]
        weight = np.where(t < length, 1.0 / length if inverse else 1.0, 0.0)
    angle = 2 * np.pi * ((k * t) % length) / length
    return (weight * np.cos(angle)).astype(F32), (weight * np.sin(angle)).astype(F32)


def _transform(ctx: NodeContext, real: Tensor, imag: Tensor | None, length: int, inverse: bool,
               onesided: bool) -> list[Tensor]:
    """The transform of the signal along the last dim of ``real`` (and ``imag``, None for a real signal): its real
    part and, but for irfft, its imaginary part, each [..., K]."""
    cos, sin = _matrices(shape_of(real)[-1], length, inverse, onesided)
    c, s = ctx.const(cos, name=f"{ctx.label}.cos"), ctx.const(sin, name=f"{ctx.label}.sin")
    sign = 1.0 if inverse else -1.0  # e^(sign i theta) = cos theta + sign i sin theta
    out_real = matmul_of(ctx, real, c)
    if imag is not None:  # (xr + i xi)(cos + sign i sin): real part xr cos - sign xi sin
        term = matmul_of(ctx, imag, s)
        out_real = gg.add(ctx.value(out_real), ctx.value(term)) if sign < 0 else \
            gg.sub(ctx.value(out_real), ctx.value(term))
    if inverse and onesided:
        return [out_real]
    out_imag = matmul_of(ctx, real, s)  # imaginary part: sign xr sin + xi cos
    if sign < 0:
        out_imag = gg.neg(ctx.value(out_imag))
    if imag is not None:
        out_imag = gg.add(ctx.value(out_imag), ctx.value(matmul_of(ctx, imag, c)))
    return [out_real, out_imag]


def _parts(ctx: NodeContext, x: Tensor, axis: int) -> tuple[Tensor, Tensor | None, list[int]]:
    """The real and imaginary parts of signal ``x`` with dim ``axis`` moved last (the component dim dropped), and
    the permutation that did it."""
    shape = shape_of(x)
    rank = len(shape) - 1
    perm = [d for d in range(rank) if d != axis] + [axis]
    parts = []
    for component in range(shape[-1]):
        part = _box(ctx, x, [0] * rank + [component], [*shape[:-1], 1])
        parts.append(_transpose(ctx, _reshape(ctx, part, shape[:-1]), perm))
    return parts[0], (parts[1] if len(parts) > 1 else None), perm


def _joined(ctx: NodeContext, parts: list[Tensor], perm: list[int]) -> Tensor:
    """Transformed parts [..., K] back in the signal's layout, stacked along a new last dim."""
    inverse = list(np.argsort(perm))
    restored = [_transpose(ctx, p, inverse) for p in parts]
    return _concat_all(ctx, [_reshape(ctx, p, [*shape_of(p), 1]) for p in restored], axis=len(perm))


def _signal(ctx: NodeContext) -> Tensor:
    x = ctx.input(0)
    ctx.check_element_type(x, "input", (F32,))
    shape = shape_of(x)
    if len(shape) < 2 or shape[-1] not in (1, 2):
        raise ctx.error(f"the input {fmt_shape(shape)} must end in a dim of 1 (real) or 2 (complex)")
    return x


def _constant_int(ctx: NodeContext, i: int, what: str) -> int | None:
    """The one integer of known input ``i``, None when the node leaves it out."""
    if ctx.optional_input(i) is None:
        return None
    values = _ints(ctx, i, what)
    if len(values) != 1:
        raise ctx.error(f"{what} must be one integer, got {values}")
    return values[0]


@onnx_op("DFT", since=17, inputs=(1, 2), attrs=("axis", "inverse", "onesided"))
@onnx_op("DFT", since=20, inputs=(1, 3), attrs=("inverse", "onesided"))
def dft(ctx: NodeContext) -> Tensor:
    """The discrete Fourier transform along ``axis`` (an attribute, default 1, before opset 20; a constant input,
    default -2, from it): see the module docstring."""
    x = _signal(ctx)
    shape = shape_of(x)
    rank = len(shape)
    axis = ctx.attr("axis", INT, 1) if ctx.opset < 20 else _constant_int(ctx, 2, "axis")
    axis = -2 if axis is None else axis
    if not -rank <= axis < rank or axis % rank == rank - 1:
        raise ctx.error(f"axis {axis} must name a signal dim of the input {fmt_shape(shape)}, not its last one")
    axis %= rank
    inverse, onesided = bool(ctx.attr("inverse", INT, 0)), bool(ctx.attr("onesided", INT, 0))
    if onesided and not inverse and shape[-1] != 1:
        raise ctx.error("onesided is for a real input (last dim 1)")
    n = shape[axis]
    length = _constant_int(ctx, 1, "dft_length")
    if length is None:
        length = 2 * (n - 1) if inverse and onesided else n
    if length < 1:
        raise ctx.error(f"dft_length must be positive, got {length}")
    real, imag, perm = _parts(ctx, x, axis)
    return _joined(ctx, _transform(ctx, real, imag, length, inverse, onesided), perm)


@onnx_op("STFT", since=17, inputs=(2, 4), attrs=("onesided",))
def stft(ctx: NodeContext) -> Tensor:
    """Short-time Fourier transform of signal [batch, length, 1 or 2]: frames of ``frame_length`` samples (default:
    the window's length) every ``frame_step`` samples (both constant), each times the window (default all ones),
    transformed: [batch, frames, bins, 2], bins frame_length / 2 + 1 with ``onesided`` (default 1)."""
    x = _signal(ctx)
    shape = shape_of(x)
    if len(shape) != 3:
        raise ctx.error(f"the signal must be [batch, length, 1 or 2], got {fmt_shape(shape)}")
    step = _constant_int(ctx, 1, "frame_step")
    window = ctx.optional_input(2)
    length = _constant_int(ctx, 3, "frame_length")
    if window is not None:
        if len(shape_of(window)) != 1 or dtype_of(window) != F32:
            raise ctx.error(f"the window must be a 1-D float32 tensor, got {fmt_shape(shape_of(window))}")
        if length is not None and length != shape_of(window)[0]:
            raise ctx.error(f"frame_length {length} differs from the window's {shape_of(window)[0]}")
        length = shape_of(window)[0]
    if length is None:
        raise ctx.error("frame_length or a window is required")
    if step is None or step < 1 or not 1 <= length <= shape[1]:
        raise ctx.error(f"frame_step {step} must be positive and frame_length {length} in [1, {shape[1]}]")
    frames = 1 + (shape[1] - length) // step
    batch, components = shape[0], shape[2]
    index = (np.arange(frames)[:, None] * step + np.arange(length)[None, :]).reshape(-1).astype(np.int64)
    framed = gg.gather(ctx.value(x), ctx.value(ctx.const(index, name=f"{ctx.label}.frames")), axis=1)
    framed = _reshape(ctx, framed, [batch, frames, length, components])
    if window is not None:
        framed = gg.mul(ctx.value(framed),
                        _expand(ctx, _reshape(ctx, window, [1, 1, length, 1]), [batch, frames, length, components]))
    onesided = bool(ctx.attr("onesided", INT, 1))
    if onesided and components != 1:
        raise ctx.error("onesided is for a real signal (last dim 1)")
    real, imag, perm = _parts(ctx, framed, 2)
    return _joined(ctx, _transform(ctx, real, imag, length, False, onesided), perm)


def _evaluated(ctx: NodeContext) -> Tensor:
    """The node's output computed at import by onnx.reference from its inputs, which must all be known (their values
    make the output's shape): a window of ``size`` samples, a mel filter bank."""
    arrays = [ctx.constant_input(i, f"#{i}") if name else None for i, name in enumerate(ctx.node.input)]
    try:
        (value,) = evaluate(ctx.node, arrays, ctx.opset)
    except ValueError as e:
        raise ctx.error(str(e)) from None
    return ctx.const(computed(np.asarray(value)), name=ctx.output_name)


@onnx_op("HannWindow", since=17, inputs=(1, 1), attrs=("output_datatype", "periodic"), folds=True)
@onnx_op("HammingWindow", since=17, inputs=(1, 1), attrs=("output_datatype", "periodic"), folds=True)
@onnx_op("BlackmanWindow", since=17, inputs=(1, 1), attrs=("output_datatype", "periodic"), folds=True)
def window(ctx: NodeContext) -> Tensor:
    """A window function of a known ``size``: computed at import (:func:`_evaluated`)."""
    return _evaluated(ctx)


@onnx_op("MelWeightMatrix", since=17, inputs=(5, 5), attrs=("output_datatype",), folds=True)
def mel_weight_matrix(ctx: NodeContext) -> Tensor:
    """The [dft_length / 2 + 1, num_mel_bins] mel filter bank of known parameters: computed at import."""
    return _evaluated(ctx)
