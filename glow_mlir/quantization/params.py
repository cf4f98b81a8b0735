"""Quantization parameters from a profile: the range a calibration method keeps of a tensor's histogram, the scale
and offset a schema maps that range to, and the fixed-point multiplier that rescales an int32 accumulator.

A quantized value ``q`` stands for the real ``scale * (q - offset)``; int8 holds ``q`` in [-128, 127] (uint8 data is
the same with the offset moved by 128). As in Glow (``chooseQuantizationParams``), the range is first widened to
hold 0, so that 0 is exactly representable (padding, ReLU), then mapped by the schema:

- ``asymmetric``: [min, max] onto [-128, 127], the offset rounded to an integer within that range;
- ``symmetric``: offset 0; the end that saturates first sets the scale, the other end widens to match;
- ``symmetric_uint8``: as symmetric, but a range that is all >= 0 (after ReLU) takes the whole [-128, 127] with the
  offset -128 (uint8's [0, 255] with offset 0);
- ``symmetric_power2``: symmetric with the scale rounded up to a power of two (rescaling is then a shift).

Calibration chooses the range from a histogram of the values seen (``counts`` over ``[lo, hi]``, equal bins):

- ``minmax``: all of it;
- ``percentile``: the central ``percentile`` of the values (99.99 by default) on each side;
- ``mse``: the symmetric clip threshold minimizing the expected squared error of clipping plus rounding at 8 bits;
- ``kl``: the threshold minimizing the KL divergence between the clipped distribution and its 8-bit quantization
  (the entropy calibration of NVIDIA's TensorRT, 8-bit inference talk, 2017); it needs many bins (the profile keeps
  2048: with Glow's default of 10 it silently does nothing).

Requantization of an int32 accumulator by a real multiplier ``m`` (``in_scale * w_scale / out_scale``) uses the
form of gemmlowp and TFLite (:func:`quantize_multiplier`, :func:`requantize`): ``m = M * 2^(shift - 31)`` with
``M`` a 31-bit integer in [2^30, 2^31), one 64-bit product and one rounding right shift: relative error below 2^-30,
where Glow's 8-bit integer scale with a truncating pre-shift is off by up to ~1.6e-3. Ties round up (TFLite's single
rounding; ONNX's QLinear ops round them to even: one step apart on exact ties only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

#: the schemas (Glow's -quantization-schema) and calibration methods this module knows
SCHEMAS = ("asymmetric", "symmetric", "symmetric_uint8", "symmetric_power2")
CALIBRATIONS = ("minmax", "percentile", "mse", "kl")
QMIN, QMAX = -128, 127


@dataclass(frozen=True)
class QuantParams:
    """``real = scale * (q - offset)``, q in [QMIN, QMAX]; ``lo``/``hi``: the real range kept (values beyond clip)."""

    scale: float
    offset: int
    lo: float
    hi: float

    def quantize(self, x: np.ndarray) -> np.ndarray:
        """``x`` as int8: rounded half to even, as ONNX QuantizeLinear rounds, then saturated."""
        q = np.rint(np.asarray(x, np.float64) / self.scale) + self.offset
        return np.clip(q, QMIN, QMAX).astype(np.int8)

    def dequantize(self, q: np.ndarray) -> np.ndarray:
        return (self.scale * (np.asarray(q, np.float64) - self.offset)).astype(np.float32)


def choose(lo: float, hi: float, schema: str = "asymmetric") -> QuantParams:
    """The scale and offset mapping the real range ``[lo, hi]`` (widened to hold 0) onto int8 by ``schema``."""
    if schema not in SCHEMAS:
        raise ValueError(f"unknown quantization schema '{schema}' (schemas: {', '.join(SCHEMAS)})")
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ValueError(f"cannot quantize the range [{lo}, {hi}]")
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if schema == "symmetric_uint8" and lo >= 0.0:
        scale = (hi / (QMAX - QMIN)) or 0.1
        return QuantParams(scale, QMIN, 0.0, scale * (QMAX - QMIN))
    if schema != "asymmetric":  # the end that saturates first sets the scale; the other widens to match
        ratio = max(lo / QMIN, hi / QMAX)
        lo, hi = ratio * QMIN, ratio * QMAX
    scale = (hi - lo) / (QMAX - QMIN) or 0.1  # an all-zero tensor: any scale represents it
    if schema == "symmetric_power2":
        scale = 2.0 ** math.ceil(math.log2(scale))
        return QuantParams(scale, 0, scale * QMIN, scale * QMAX)
    if schema != "asymmetric":
        return QuantParams(scale, 0, lo, hi)
    # the zero point from the end whose terms are smaller (less rounding error), nudged to an integer in range
    from_lo, from_hi = QMIN - lo / scale, QMAX - hi / scale
    zero = from_lo if abs(QMIN) + abs(lo / scale) < abs(QMAX) + abs(hi / scale) else from_hi
    offset = int(min(max(round(zero), QMIN), QMAX))
    return QuantParams(scale, offset, scale * (QMIN - offset), scale * (QMAX - offset))


def calibrate(counts: np.ndarray, lo: float, hi: float, method: str = "minmax",
              percentile: float = 99.99) -> tuple[float, float]:
    """The real range to quantize, chosen by ``method`` from a histogram of ``counts`` in equal bins over
    ``[lo, hi]`` (the values seen: their exact min and max at the ends)."""
    if method not in CALIBRATIONS:
        raise ValueError(f"unknown calibration '{method}' (methods: {', '.join(CALIBRATIONS)})")
    counts = np.asarray(counts, np.float64)
    total = counts.sum()
    if method == "minmax" or total == 0 or hi <= lo:
        return float(lo), float(hi)
    edges = np.linspace(lo, hi, len(counts) + 1)
    if method == "percentile":
        tail = total * (100.0 - percentile) / 100.0
        cumulative = np.cumsum(counts)
        first = int(np.searchsorted(cumulative, tail, side="right"))
        last = int(np.searchsorted(cumulative, total - tail, side="left"))
        return float(min(edges[first], 0.0) if lo < 0 else lo), float(max(edges[min(last + 1, len(counts))], 0.0))
    # mse and kl pick a symmetric threshold on |x|: fold the histogram onto magnitudes
    centers = (edges[:-1] + edges[1:]) / 2
    magnitude = np.abs(centers)
    top = float(max(abs(lo), abs(hi)))
    folded, folded_edges = np.histogram(magnitude, bins=len(counts), range=(0.0, top), weights=counts)
    if method == "mse":
        threshold = _mse_threshold(folded, folded_edges)
    else:
        # the first magnitude bin is mostly exact zeros where a relu came before (half of the values): every
        # threshold represents them exactly, and their spike would make KL prefer a threshold that clips the tail
        # hard (the digits network's last relu: 59 -> 15, top-1 down 2 points); KL compares the rest
        folded = folded.copy()
        folded[0] = 0
        threshold = _kl_threshold(folded, folded_edges)
    return (max(lo, -threshold), min(hi, threshold))


def _mse_threshold(counts: np.ndarray, edges: np.ndarray) -> float:
    """The clip threshold t minimizing sum(count * err^2): (|x| - t)^2 beyond t, step^2 / 12 for rounding inside."""
    centers = (edges[:-1] + edges[1:]) / 2
    best, best_error = float(edges[-1]), math.inf
    for i in range(max(1, len(counts) // 64), len(counts) + 1):
        t = float(edges[i])
        step = 2 * t / (QMAX - QMIN)
        beyond = centers > t
        error = float((counts[beyond] * (centers[beyond] - t) ** 2).sum() + counts[~beyond].sum() * step * step / 12)
        if error < best_error:
            best, best_error = t, error
    return best


def _kl_threshold(counts: np.ndarray, edges: np.ndarray, levels: int = 128) -> float:
    """Entropy calibration: for each candidate threshold (bin i of the magnitudes, i >= ``levels``), P is the
    histogram up to i with the clipped tail added to its last bin, Q is P merged into ``levels`` buckets and spread
    back over the non-empty bins of each; the threshold of least KL(P || Q) wins."""
    n = len(counts)
    if n < levels:
        return float(edges[-1])  # too few bins to tell thresholds apart: keep the whole range
    best, best_kl = float(edges[-1]), math.inf
    for i in range(levels, n + 1):
        p = counts[:i].copy()
        p[-1] += counts[i:].sum()
        if p.sum() == 0:
            continue
        # the chunks of np.array_split(range(i), levels): i % levels of them one bin longer, then the rest
        small, longer = divmod(i, levels)
        sizes = np.full(levels, small)
        sizes[:longer] += 1
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        filled = counts[:i] > 0
        sums, kept = np.add.reduceat(counts[:i], starts), np.add.reduceat(filled.astype(np.int64), starts)
        q = np.repeat(np.divide(sums, kept, out=np.zeros(levels), where=kept > 0), sizes) * filled
        mask = p > 0
        if np.any(q[mask] == 0):
            continue
        pn, qn = p / p.sum(), q / q.sum()
        kl = float(np.sum(pn[mask] * np.log(pn[mask] / qn[mask])))
        if kl <= best_kl + 1e-12:  # ties (a histogram of a few spikes: KL 0 at many thresholds) clip least
            best, best_kl = float(edges[i]), kl
    return best


def quantize_multiplier(real: float) -> tuple[int, int]:
    """``real`` (> 0) as ``M * 2^(shift - 31)``: M in [2^30, 2^31) (a 31-bit fixed-point fraction), shift an int."""
    if not real > 0 or not math.isfinite(real):
        raise ValueError(f"a requantization multiplier must be positive and finite, got {real}")
    fraction, shift = math.frexp(real)  # real = fraction * 2^shift, fraction in [0.5, 1)
    m = round(fraction * (1 << 31))
    if m == 1 << 31:  # the fraction rounded up to 1
        m, shift = m // 2, shift + 1
    return m, shift


def requantize(acc: np.ndarray, multiplier: Any, shift: Any, offset: int = 0, lo: int = QMIN,
               hi: int = QMAX) -> np.ndarray:
    """int32 accumulators times ``multiplier * 2^(shift - 31)`` rounded to nearest, ties up, plus ``offset``,
    saturated to int8 (or clamped to [lo, hi], a folded activation): the integer arithmetic of the kernels' epilogue,
    one 32 x 32 -> 64-bit multiply and one rounding right shift, ``(acc * M + 2^(right-1)) >> right`` (TFLite's
    single-rounding form; gemmlowp's high multiply then shift rounds twice, which sends 16% of the products of a
    multiplier of 0.25 one step off). ``multiplier`` and ``shift`` are one value, or one per entry of the
    accumulators' last axis (the output channels)."""
    right = 31 - np.asarray(shift, np.int64)
    if not np.all((right > 0) & (right < 63)):
        raise ValueError(f"a requantization shift of {shift} is out of range")
    product = np.asarray(acc, np.int64) * np.asarray(multiplier, np.int64)
    rounded = (product + (np.int64(1) << (right - 1))) >> right
    return np.clip(rounded + offset, lo, hi).astype(np.int8)


__all__ = ["CALIBRATIONS", "QMAX", "QMIN", "SCHEMAS", "QuantParams", "calibrate", "choose", "quantize_multiplier",
           "requantize"]
