"""Numpy semantics of the convolution, pooling and normalization nodes (NHWC, filters HWCF): the ``evaluate`` of
their op-table rows (constant folding, tests), and the window counts that average pooling divides by, which the
linalg lowering bakes into the code as constants."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .shapes import window_extent, window_output_size


def _pad_hw(x: np.ndarray, pads: Sequence[int], value: float, extra: Sequence[int] = (0, 0)) -> np.ndarray:
    """``x`` [N,H,W,C] padded by pads [top, left, bottom, right] (bottom and right grown by ``extra``)."""
    top, left, bottom, right = pads
    widths = ((0, 0), (top, bottom + extra[0]), (left, right + extra[1]), (0, 0))
    return np.pad(x, widths, constant_values=value)


def _window_slices(x: np.ndarray, kernels: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
                   out: Sequence[int]):
    """For each kernel offset (kh, kw): the [N,OH,OW,C] slice of the padded ``x`` that offset reads."""
    for kh in range(kernels[0]):
        for kw in range(kernels[1]):
            h0, w0 = kh * dilations[0], kw * dilations[1]
            yield kh, kw, x[:, h0: h0 + (out[0] - 1) * strides[0] + 1: strides[0],
                            w0: w0 + (out[1] - 1) * strides[1] + 1: strides[1], :]


def unpack_panels(w: np.ndarray) -> np.ndarray:
    """Weights ``[K, N]`` from their panels ``[N/P, K, P]`` (``w[k, j*P+p] = packed[j, k, p]``); 2-D weights as they
    are."""
    if w.ndim != 3:
        return w
    panels, k, width = w.shape
    return w.transpose(1, 0, 2).reshape(k, panels * width)


def pack_panels(w: np.ndarray, width: int) -> np.ndarray:
    """Weights ``[K, N]`` as panels of ``width`` columns, ``[N/width, K, width]``, each panel contiguous."""
    k, n = w.shape
    return np.ascontiguousarray(w.reshape(k, n // width, width).transpose(1, 0, 2))


def conv2d(x: np.ndarray, w: np.ndarray, b: np.ndarray, strides: Sequence[int], pads: Sequence[int],
           dilations: Sequence[int], group: int) -> np.ndarray:
    """y[n,oh,ow,g*Fg+f] = b + sum over kh, kw, c of x_padded[n, oh*sh+kh*dh, ow*sw+kw*dw, g*Cg+c] * w[kh,kw,c,g*Fg+f];
    a packed filter ``[F/B, KH, KW, C, B]`` is the HWCF filter ``w[kh,kw,c,j*B+b] = packed[j,kh,kw,c,b]``, one in
    chunks ``[F/B, C/Cc, KH, KW, Cc, B]`` the HWCF filter ``w[kh,kw,q*Cc+c,j*B+b] = packed[j,q,kh,kw,c,b]``."""
    if w.ndim == 5:
        blocks, kh_, kw_, cg, b_ = w.shape
        w = w.transpose(1, 2, 3, 0, 4).reshape(kh_, kw_, cg, blocks * b_)
    elif w.ndim == 6:
        blocks, chunks, kh_, kw_, cc, b_ = w.shape
        w = w.transpose(2, 3, 1, 4, 0, 5).reshape(kh_, kw_, chunks * cc, blocks * b_)
    n, h, wd, _ = x.shape
    kh_, kw_, cg, f = w.shape
    out = [window_output_size(size, k, s, pads[i], pads[i + 2], d)
           for i, (size, k, s, d) in enumerate(zip((h, wd), (kh_, kw_), strides, dilations))]
    xp = _pad_hw(x.astype(np.float64), pads, 0.0)
    y = np.zeros((n, *out, group, f // group))
    for kh, kw, window in _window_slices(xp, (kh_, kw_), strides, dilations, out):
        taps = w[kh, kw].astype(np.float64).reshape(cg, group, f // group)
        y += np.einsum("nhwgc,cgf->nhwgf", window.reshape(n, *out, group, cg), taps)
    return (y.reshape(n, *out, f) + b).astype(x.dtype)


def _pool_geometry(x: np.ndarray, kernels: Sequence[int], strides: Sequence[int], pads: Sequence[int],
                   dilations: Sequence[int], ceil_mode: int) -> tuple[list[int], list[int]]:
    """The output size [OH, OW], and how far past the bottom and right pads the last windows reach (ceil_mode)."""
    hw = x.shape[1:3]
    out = [window_output_size(hw[i], kernels[i], strides[i], pads[i], pads[i + 2], dilations[i], bool(ceil_mode))
           for i in range(2)]
    overhang = [max(0, (out[i] - 1) * strides[i] + window_extent(kernels[i], dilations[i])
                    - hw[i] - pads[i] - pads[i + 2]) for i in range(2)]
    return out, overhang


def max_pool(x: np.ndarray, kernels: Sequence[int], strides: Sequence[int], pads: Sequence[int],
             dilations: Sequence[int], ceil_mode: int) -> np.ndarray:
    """The maximum of each window; padding and overhang never win (-inf, or an integer type's least value)."""
    out, overhang = _pool_geometry(x, kernels, strides, pads, dilations, ceil_mode)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = _pad_hw(x, pads, low, overhang)
    y = np.full((x.shape[0], *out, x.shape[3]), low, dtype=x.dtype)
    for _, _, window in _window_slices(xp, kernels, strides, dilations, out):
        y = np.maximum(y, window)
    return y


def pool_counts(hw: Sequence[int], kernels: Sequence[int], strides: Sequence[int], pads: Sequence[int],
                dilations: Sequence[int], out: Sequence[int], count_include_pad: bool) -> np.ndarray:
    """[OH, OW]: how many elements each average-pooling window divides by. A window counts the input elements it
    covers, and the pad elements too with ``count_include_pad``; never the ceil_mode overhang past the end pad."""
    per_dim = []
    for i in range(2):
        lo, hi = (0, pads[i] + hw[i] + pads[i + 2]) if count_include_pad else (pads[i], pads[i] + hw[i])
        starts = np.arange(out[i])[:, None] * strides[i] + np.arange(kernels[i])[None, :] * dilations[i]
        per_dim.append(((starts >= lo) & (starts < hi)).sum(axis=1))
    return np.outer(per_dim[0], per_dim[1]).astype(np.float64)


def avg_pool(x: np.ndarray, kernels: Sequence[int], strides: Sequence[int], pads: Sequence[int],
             dilations: Sequence[int], ceil_mode: int, count_include_pad: int) -> np.ndarray:
    """The sum of each window over its count (:func:`pool_counts`)."""
    out, overhang = _pool_geometry(x, kernels, strides, pads, dilations, ceil_mode)
    xp = _pad_hw(x.astype(np.float64), pads, 0.0, overhang)
    y = np.zeros((x.shape[0], *out, x.shape[3]))
    for _, _, window in _window_slices(xp, kernels, strides, dilations, out):
        y += window
    counts = pool_counts(x.shape[1:3], kernels, strides, pads, dilations, out, bool(count_include_pad))
    return (y / counts[None, :, :, None]).astype(x.dtype)


def batch_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, var: np.ndarray,
               epsilon: float, channel_axis: int) -> np.ndarray:
    """(x - mean) / sqrt(var + epsilon) * scale + bias, per channel along ``channel_axis``."""
    shape = [1] * x.ndim
    shape[channel_axis] = -1
    mul, add = batch_norm_scale_shift(scale, bias, mean, var, epsilon)
    return (x * mul.reshape(shape) + add.reshape(shape)).astype(x.dtype)


def batch_norm_scale_shift(scale: np.ndarray, bias: np.ndarray, mean: np.ndarray, var: np.ndarray,
                           epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Inference batch normalization as one multiply and one add per channel: y = x * mul + add."""
    mul = scale.astype(np.float64) / np.sqrt(var.astype(np.float64) + epsilon)
    add = bias.astype(np.float64) - mean.astype(np.float64) * mul
    return mul.astype(scale.dtype), add.astype(scale.dtype)


def lrn_window(size: int) -> tuple[int, int]:
    """How many channels before and after its own an LRN window sums (ONNX: floor and ceil of (size - 1) / 2)."""
    return (size - 1) // 2, size // 2


def local_response_norm(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """y[..., c] = x[..., c] / (bias + alpha / size * sum of x[..., j]^2 over the channels j of c's window) ^ beta."""
    before, after = lrn_window(size)
    sq = np.pad(x.astype(np.float64) ** 2, ((0, 0), (0, 0), (0, 0), (before, after)))
    channels = x.shape[3]
    sums = sum(sq[..., j: j + channels] for j in range(size))
    return (x / (bias + alpha / size * sums) ** beta).astype(x.dtype)


def pad(x: np.ndarray, pads: Sequence[int], value: float) -> np.ndarray:
    """``x`` grown by pads (begins, then ends) filled with ``value``; negative pads crop."""
    rank = x.ndim
    crop = tuple(slice(max(0, -pads[i]), x.shape[i] - max(0, -pads[rank + i])) for i in range(rank))
    widths = [(max(0, pads[i]), max(0, pads[rank + i])) for i in range(rank)]
    return np.pad(x[crop], widths, constant_values=value)


def clip(x: np.ndarray, min: float, max: float) -> np.ndarray:  # the attribute names shadow builtins
    """min(max(x, min), max), NaN kept."""
    return np.minimum(np.maximum(x, np.asarray(min, x.dtype)), np.asarray(max, x.dtype))
