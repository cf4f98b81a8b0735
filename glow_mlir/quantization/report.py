"""The per-tensor quantization report: for each value of a profile, the range a calibration method keeps, the scale
and offset a schema gives it, the share of the calibration values clipped, and the SQNR of its int8 representation.

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


def format_report(rows: list[TensorReport], schema: str, calibration: str) -> str:
    """The report as a table, the worst SQNR marked."""
    width = max([len(r.name) for r in rows] + [5])
    head = f"{'value':<{width}} {'scale':>11} {'offset':>6} {'kept range':>25} {'clipped':>8} {'SQNR dB':>8}"
    title = (f"int8 quantization of each value ({schema}, calibration {calibration}); SQNR of the value's own "
             "quantization on the profile's histogram")
    lines = [title, head, "-" * len(head)]
    finite = [r.sqnr_db for r in rows if math.isfinite(r.sqnr_db)]
    worst = min(finite) if finite else None
    for r in rows:
        kept = f"[{r.params.lo:.4g}, {r.params.hi:.4g}]"
        mark = "  <- lowest" if worst is not None and r.sqnr_db == worst else ""
        lines.append(f"{r.name:<{width}} {r.params.scale:>11.4g} {r.params.offset:>6} {kept:>25} "
                     f"{100 * r.clipped:>7.3f}% {r.sqnr_db:>8.2f}{mark}")
    return "\n".join(lines)


__all__ = ["TensorReport", "format_report", "report", "tensor_report"]
