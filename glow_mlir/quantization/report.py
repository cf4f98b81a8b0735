"""The per-tensor quantization report: for each value of a profile, the range a calibration method keeps, the scale
and offset a schema gives it, the share of the calibration values clipped, and the SQNR of its int8 representation:
estimated from the profile's histogram (:func:`report`), or measured (:func:`measured_report`) by running the int8
model and the float model side by side on calibration inputs, every profiled value a probe of both.

The SQNR (signal to quantization noise, in dB) is computed from the profile's histogram, each value taken at its
bin's center: signal power the mean of x^2, noise the rounding error of the values within the kept range
(``scale^2 / 12`` each, uniform rounding) plus the clipping error of those beyond it. It is the error of the
tensor's own quantization; a network run in int8 adds up the errors of every layer before it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .params import CALIBRATIONS, SCHEMAS, QuantParams, calibrate, choose
from .profile import Profile, TensorProfile


@dataclass(frozen=True)
class TensorReport:
    """One value's line of the report."""

    name: str
    params: QuantParams
    #: share of the calibration values beyond the kept range
    clipped: float
    sqnr_db: float


def tensor_report(name: str, profile: TensorProfile, schema: str = "asymmetric",
                  calibration: str = "minmax") -> TensorReport:
    """The report of one value's profile."""
    lo, hi = profile.histogram_range
    counts = np.asarray(profile.histogram, np.float64)
    total = counts.sum()
    if total == 0 or not (math.isfinite(lo) and math.isfinite(hi)):
        return TensorReport(name, choose(0.0, 0.0, schema), 0.0, math.inf)
    params = choose(*calibrate(counts, lo, hi, calibration), schema)
    edges = np.linspace(lo, hi, len(counts) + 1)
    centers = (edges[:-1] + edges[1:]) / 2 if hi > lo else np.full(len(counts), lo)
    beyond = np.maximum(centers - params.hi, 0.0) + np.maximum(params.lo - centers, 0.0)
    inside = beyond == 0
    noise = float((counts[inside].sum() * params.scale ** 2 / 12) + (counts * beyond ** 2).sum())
    signal = float((counts * centers ** 2).sum())
    sqnr = math.inf if noise == 0 else (-math.inf if signal == 0 else 10 * math.log10(signal / noise))
    return TensorReport(name, params, float(counts[~inside].sum() / total), sqnr)


def report(profile: Profile, schema: str = "asymmetric", calibration: str = "minmax") -> list[TensorReport]:
    """The report of every value of ``profile``, in its order."""
    if schema not in SCHEMAS or calibration not in CALIBRATIONS:
        raise ValueError(f"unknown schema '{schema}' or calibration '{calibration}' (schemas: {', '.join(SCHEMAS)}; "
                         f"calibrations: {', '.join(CALIBRATIONS)})")
    return [tensor_report(name, values, schema, calibration) for name, values in profile.values.items()]


def format_report(rows: list[TensorReport], schema: str, calibration: str, measured: bool = False) -> str:
    """The report as a table, the worst SQNR marked."""
    width = max([len(r.name) for r in rows] + [5])
    head = f"{'value':<{width}} {'scale':>11} {'offset':>6} {'kept range':>25} {'clipped':>8} {'SQNR dB':>8}"
    what = ("of the int8 model's value against the float model's, measured on the calibration inputs" if measured
            else "of the value's own quantization on the profile's histogram")
    title = f"int8 quantization of each value ({schema}, calibration {calibration}); SQNR {what}"
    lines = [title, head, "-" * len(head)]
    finite = [r.sqnr_db for r in rows if math.isfinite(r.sqnr_db)]
    worst = min(finite) if finite else None
    for r in rows:
        kept = f"[{r.params.lo:.4g}, {r.params.hi:.4g}]"
        mark = "  <- lowest" if worst is not None and r.sqnr_db == worst else ""
        lines.append(f"{r.name:<{width}} {r.params.scale:>11.4g} {r.params.offset:>6} {kept:>25} "
                     f"{100 * r.clipped:>7.3f}% {r.sqnr_db:>8.2f}{mark}")
    return "\n".join(lines)


def measured_report(model, profile: Profile, feeds, schema: str = "asymmetric", calibration: str = "minmax",
                    channelwise: bool = False, threads: int | None = None) -> list[TensorReport]:
    """For each profiled value: its parameters, the share of its float values beyond the kept range, and the SQNR of
    the int8 model's value against the float model's on ``feeds`` (the error accumulated up to that layer, Glow's
    #4771). Both models are compiled with every profiled value an output (a probe), so a relu is not fused into the
    convolution before it there: the int8 graph measured rescales it apart."""
    from ..api import compile
    from ..importer.model import load_model
    from .annotate import QuantizationOptions
    from .profile import graph_hash, instrument, profiled_values

    loaded = load_model(model)
    profile.check(loaded)
    inputs, values = profiled_values(loaded)
    probed = instrument(loaded, values)
    options = QuantizationOptions(Profile(profile.model, graph_hash(probed), profile.values), schema, calibration,
                                  channelwise, model_outputs=tuple(o.name for o in loaded.proto.graph.output))
    float_run = compile(probed, threads=threads)
    int8_run = compile(probed, threads=threads, quantization=options)
    names = [n for n in [*inputs, *values] if options.params(n) is not None]
    signal, noise, beyond, count = ({n: 0.0 for n in names} for _ in range(4))
    for feed in feeds:
        want, got = float_run.run(dict(feed)), int8_run.run(dict(feed))
        for n in names:
            f = np.asarray(feed[n] if n in inputs else want[n], np.float64)
            q = np.asarray(feed[n] if n in inputs else got[n], np.float64)
            params = options.params(n)
            signal[n] += float(np.sum(f * f))
            noise[n] += float(np.sum((q - f) ** 2)) if n not in inputs else float(
                np.sum((params.dequantize(params.quantize(f)) - f) ** 2))
            beyond[n] += float(np.sum((f < params.lo) | (f > params.hi)))
            count[n] += f.size
    rows = []
    for n in names:
        sqnr = math.inf if noise[n] == 0 else (-math.inf if signal[n] == 0 else 10 * math.log10(signal[n] / noise[n]))
        rows.append(TensorReport(n, options.params(n), beyond[n] / max(count[n], 1), sqnr))
    return rows


__all__ = ["TensorReport", "format_report", "measured_report", "report", "tensor_report"]
