"""The spine's networks end to end: compiled through the API and through glow-run, against references."""

from __future__ import annotations

import numpy as np
import pytest

import glow_mlir.api as glow
from conftest import EXAMPLES_DIR, model_path, run_tool

#: the issue's tolerance for these float32 networks
RTOL, ATOL = 1e-4, 1e-5


def reference(path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    data = np.load(path.with_suffix(".io.npz"))
    inputs = {k[3:]: data[k] for k in data.files if k.startswith("in_")}
    outputs = {k[4:]: data[k] for k in data.files if k.startswith("out_")}
    return inputs, outputs


@pytest.mark.parametrize("name", ["seed_linear_sigmoid", "seed_add_const", "mlp_mnist"])
def test_model_matches_reference_through_api(name: str):
    path = model_path(name)
    inputs, expected = reference(path)
    model = glow.compile(path)
    got = model.run(inputs)
    assert set(got) == set(expected)
    for key, want in expected.items():
        np.testing.assert_allclose(got[key], want, rtol=RTOL, atol=ATOL, err_msg=f"{name}:{key}")


@pytest.mark.parametrize("name", ["seed_linear_sigmoid", "mlp_mnist"])
def test_model_matches_reference_through_glow_run(name: str):
    path = model_path(name)
    done = run_tool("glow-run", "-model", str(path), "--reference", str(path.with_suffix(".io.npz")),
                    "--rtol", str(RTOL), "--atol", str(ATOL))
    assert done.returncode == 0, done.stderr
    assert "MISMATCH" not in done.stdout
    assert "reference" in done.stdout and ": match" in done.stdout


def test_glow_run_detects_a_mismatch(tmp_path):
    # a reference with one output changed must fail: the check above can fail
    data = dict(np.load(EXAMPLES_DIR / "linear_sigmoid.io.npz"))
    data["out_output_1"] = data["out_output_1"] + 0.01
    bad = tmp_path / "bad.io.npz"
    np.savez(bad, **data)
    done = run_tool("glow-run", "-model", str(EXAMPLES_DIR / "linear_sigmoid.onnx"), "--reference", str(bad))
    assert done.returncode == 1
    assert "MISMATCH" in done.stdout
    assert "glow-run: error: linear_sigmoid: outputs differ from the reference: output_1" in done.stderr


def test_seed_add_const_prints_the_sums():
    done = run_tool("glow-run", "-model", str(model_path("seed_add_const")))
    assert done.returncode == 0, done.stderr
    assert "[51.7, 14.4, 28.6]" in done.stdout
    assert "max: 51.7  min: 14.4" in done.stdout


def test_seed_add_const_graph_keeps_exactly_one_add():
    done = run_tool("glow-compile", "-model", str(model_path("seed_add_const")), "--dump-graph")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count('"glowgraph.add"') == 1


def test_seed_linear_sigmoid_dump_ir_sizes():
    done = run_tool("glow-compile", "-model", str(model_path("seed_linear_sigmoid")), "--dump-ir")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()

    def weight(name: str) -> str:
        return next(line for line in lines if line.strip().startswith(f"%{name} = WeightVar"))

    assert "float<3 x 10> mutable // size: 120" in weight("input_1")
    assert "float<3 x 5> mutable // size: 60" in weight("output_1")
    assert "float<10 x 5> const // size: 200" in weight("0.weight")
    assert "float<5> const // size: 20" in weight("0.bias")
    fc = next(line for line in lines if "fullyconnected" in line)
    sigmoid = next(line for line in lines if " sigmoid " in line)
    assert "@in %input_1, @in %0.weight, @in %0.bias" in fc
    assert sigmoid.split("=", 1)[1].strip().startswith("sigmoid @out %output_1, @in %")
