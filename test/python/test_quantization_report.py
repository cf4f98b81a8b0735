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


def test_measured_report_runs_the_int8_model_against_the_float_one(tmp_path: Path) -> None:
    """With --dataset the report measures each value of the int8 model against the float model's on the dataset:
    the input's error is its own rounding (about 6.02 dB a bit: 8 bits over [0, 1], near 50 dB), the error adds up
    down the network, and the logits keep an SQNR that leaves the top-1 as it is (above 25 dB)."""
    import glow_mlir
    from glow_mlir.quantization.report import measured_report

    images = digits("x_train", 64)
    path = model_path("digits_cnn")
    profile = glow_mlir.profile(path, ({"image": images[i:i + 1]} for i in range(64)), threads=1)
    feeds = [{"image": images[i:i + 1]} for i in range(16)]
    rows = {r.name: r for r in measured_report(path, profile, feeds, threads=1)}
    assert set(rows) == set(profile.values)
    assert 45 < rows["image"].sqnr_db < 70
    assert rows["logits"].sqnr_db < rows["image"].sqnr_db and rows["logits"].sqnr_db > 25
    # min/max of these very inputs: only what the zero point's rounding to an integer moves out of the kept range
    assert all(r.clipped < 0.005 for r in rows.values())
    np.savez(tmp_path / "d.npz", image=images[:16])
    profile.save(tmp_path / "p.yaml")
    done = run_tool("glow-run", "-model", str(path), "--load-profile", str(tmp_path / "p.yaml"),
                    "--quantization-report", "--dataset", str(tmp_path / "d.npz"))
    assert done.returncode == 0, done.stderr
    assert "measured on the calibration inputs" in done.stdout and "logits" in done.stdout
