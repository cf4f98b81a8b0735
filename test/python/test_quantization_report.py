"""The per-value quantization report (glow_mlir/quantization/report.py, glow-run --load-profile P
--quantization-report): scale, offset, range kept, share clipped, and the SQNR estimated from the profile's histogram
against the SQNR of quantizing the values themselves."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import digits, model_path, run_tool

from glow_mlir.quantization.profile import Profile, TensorProfile
from glow_mlir.quantization.report import report, tensor_report

RNG = np.random.default_rng(5)


def _exact_sqnr(values: np.ndarray, params) -> float:
    error = params.dequantize(params.quantize(values)) - values
    return 10 * math.log10(float(np.sum(values.astype(np.float64) ** 2)) / float(np.sum(error.astype(np.float64) ** 2)))


@pytest.mark.parametrize("calibration", ["minmax", "percentile", "mse", "kl"])
@pytest.mark.parametrize("schema", ["asymmetric", "symmetric"])
def test_sqnr_from_the_histogram_matches_the_values(schema: str, calibration: str) -> None:
    values = np.concatenate([RNG.standard_normal(100_000), RNG.standard_normal(50) * 8]).astype(np.float32)
    profile = TensorProfile.empty()
    profile.update(values)
    row = tensor_report("x", profile, schema, calibration)
    assert row.sqnr_db == pytest.approx(_exact_sqnr(values, row.params), abs=0.5)
    clipped = np.mean((values < row.params.lo - row.params.scale) | (values > row.params.hi + row.params.scale))
    assert row.clipped == pytest.approx(clipped, abs=2e-3)


def test_a_relu_output_takes_the_unsigned_range_with_symmetric_uint8() -> None:
    profile = TensorProfile.empty()
    profile.update(np.maximum(RNG.standard_normal(10_000), 0).astype(np.float32))
    asym = tensor_report("r", profile, "asymmetric")
    uint8 = tensor_report("r", profile, "symmetric_uint8")
    sym = tensor_report("r", profile, "symmetric")
    assert uint8.params.offset == -128 and sym.params.offset == 0
    assert uint8.sqnr_db > sym.sqnr_db + 5  # half of int8's range unused by symmetric on values >= 0
    assert abs(uint8.sqnr_db - asym.sqnr_db) < 0.5


def test_unknown_names_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown schema 'wide'"):
        report(Profile("m", "0"), "wide")


def test_cli_reports_digits_from_its_profile(tmp_path: Path) -> None:
    model = model_path("digits_cnn")
    np.savez(tmp_path / "calib.npz", image=digits("x_train", 64))
    profile = tmp_path / "digits.yaml"
    done = run_tool("glow-run", "-model", str(model), "--dataset", str(tmp_path / "calib.npz"),
                    "--dump-profile", str(profile), "--threads", "1")
    assert done.returncode == 0, done.stderr
    done = run_tool("glow-run", "-model", str(model), "--load-profile", str(profile), "--quantization-report",
                    "--quantization-schema", "symmetric_uint8", "--quantization-calibration", "mse")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "symmetric_uint8, calibration mse" in lines[0]
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert set(rows) == set(Profile.load(profile).values)  # every value of the profile, one line each
    assert rows["/1/Relu_output_0"][2] == "-128" and float(rows["image"][-1]) > 40  # unsigned range; a good SQNR
    assert sum("<- lowest" in line for line in lines) == 1
    # a profile of another graph is refused
    other = run_tool("glow-run", "-model", str(model_path("lenet5")), "--load-profile", str(profile),
                     "--quantization-report")
    assert other.returncode != 0 and "does not belong to this graph" in other.stderr
