"""Quantization parameters (glow_mlir/quantization/params.py): the four schemas, the calibration methods on
histograms, and integer requantization against the real arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from glow_mlir.quantization import params as qp

RNG = np.random.default_rng(3)


def test_asymmetric_maps_the_range_onto_int8_with_zero_exact() -> None:
    p = qp.choose(-1.0, 3.0, "asymmetric")
    assert p.scale == pytest.approx(4.0 / 255)
    assert p.dequantize(p.quantize(np.float32(0.0))) == 0.0  # 0 is exact
    assert p.quantize(np.array([-1.0, 3.0])).tolist() == [-128, 127]
    # a range that misses 0 is widened to hold it
    q = qp.choose(2.0, 5.0, "asymmetric")
    assert q.offset == -128 and q.lo == 0.0 and q.hi == pytest.approx(5.0, abs=q.scale)


@pytest.mark.parametrize("schema", ["symmetric", "symmetric_power2"])
def test_symmetric_schemas_have_offset_zero(schema: str) -> None:
    p = qp.choose(-0.5, 3.0, schema)
    assert p.offset == 0
    assert p.scale >= 3.0 / 127 - 1e-12  # the end that saturates first (3.0) sets the scale
    if schema == "symmetric_power2":
        assert math.log2(p.scale).is_integer() and p.scale < 2 * 3.0 / 127


def test_symmetric_uint8_takes_the_whole_range_for_nonnegative_values() -> None:
    p = qp.choose(0.0, 6.0, "symmetric_uint8")
    assert p.offset == -128 and p.scale == pytest.approx(6.0 / 255)
    assert qp.choose(-1.0, 6.0, "symmetric_uint8").offset == 0  # not all >= 0: plain symmetric


def test_bad_schema_and_range_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown quantization schema 'wide'"):
        qp.choose(0, 1, "wide")
    with pytest.raises(ValueError, match="cannot quantize the range"):
        qp.choose(1.0, -1.0)
    assert qp.choose(0.0, 0.0).scale == 0.1  # an all-zero tensor


def _histogram(values: np.ndarray, bins: int = 2048) -> tuple[np.ndarray, float, float]:
    lo, hi = float(values.min()), float(values.max())
    counts, _ = np.histogram(values, bins=bins, range=(lo, hi))
    return counts, lo, hi


def test_calibrations_clip_outliers_that_minmax_keeps() -> None:
    values = np.concatenate([RNG.standard_normal(200_000), [40.0, -35.0]])  # two outliers
    counts, lo, hi = _histogram(values)
    assert qp.calibrate(counts, lo, hi, "minmax") == (lo, hi)
    for method in ("percentile", "kl"):
        clip_lo, clip_hi = qp.calibrate(counts, lo, hi, method)
        assert lo <= clip_lo < -2.0 and 2.0 < clip_hi <= hi, method  # the bulk kept
        assert clip_hi < 20.0 and clip_lo > -20.0, method  # the outliers clipped
    # kl keeps the bulk's shape: much less error on it than min/max; mse minimizes the error over all values, the two
    # outliers' clipping included
    bulk = values[:-2]

    def error(method: str, on: np.ndarray) -> float:
        p = qp.choose(*qp.calibrate(counts, lo, hi, method), "symmetric")
        return float(np.mean((p.dequantize(p.quantize(on)) - on) ** 2))

    assert error("kl", bulk) < error("minmax", bulk) / 4
    assert error("mse", values) < error("minmax", values) < error("minmax", values) * 1.0001
    assert error("mse", values) <= error("kl", values) * 1.05 and error("mse", values) <= error("percentile", values)


def test_kl_needs_enough_bins() -> None:
    values = RNG.standard_normal(10_000)
    counts, lo, hi = _histogram(values, bins=10)  # Glow's default: no threshold to choose between
    assert qp.calibrate(counts, lo, hi, "kl") == (lo, hi)


@pytest.mark.parametrize("real", [0.0007, 0.013, 0.25, 0.9999, 1.7, 37.0])
def test_requantize_matches_the_real_product(real: float) -> None:
    m, shift = qp.quantize_multiplier(real)
    assert 1 << 30 <= m < 1 << 31 and m * 2.0 ** (shift - 31) == pytest.approx(real, rel=2**-30)
    span = int(200 / real)  # accumulators that land within int8 once rescaled, where the rounding shows
    acc = RNG.integers(-span, span + 1, 5000).astype(np.int32)
    got = qp.requantize(acc, m, shift, offset=3).astype(np.int64)
    right = 31 - shift
    # the fixed-point product rounded once, to nearest with ties up, in exact integer arithmetic
    fixed = np.array([min(127, max(-128, (int(a) * m + (1 << (right - 1))) // (1 << right) + 3)) for a in acc])
    assert np.array_equal(got, fixed)
    # against the real product: off only where M's 31 bits move a product across a half
    near = np.clip(np.floor(acc.astype(np.float64) * real + 0.5) + 3, -128, 127)
    assert np.max(np.abs(got - near)) <= 1


def test_kl_ignores_the_zero_spike_of_a_relu_and_keeps_a_few_levels_whole() -> None:
    """A relu output (half exact zeros, an exponential tail) keeps most of its tail with KL (the zero spike alone
    made it clip to a quarter of the range); a histogram of a few levels (an 8-bit image's 17 gray levels) has KL 0
    at every threshold that keeps the levels apart, and keeps its whole range."""
    rng = np.random.default_rng(3)
    relu = np.concatenate([np.zeros(50_000), rng.exponential(1.0, 50_000)])
    counts, edges = np.histogram(relu, bins=2048, range=(0.0, relu.max()))
    _, hi = qp.calibrate(counts, 0.0, relu.max(), "kl")
    assert hi > 0.4 * relu.max()
    levels = rng.integers(0, 17, 20_000) / 16.0
    counts, _ = np.histogram(levels, bins=2048, range=(0.0, 1.0))
    assert qp.calibrate(counts, 0.0, 1.0, "kl") == (0.0, 1.0)
