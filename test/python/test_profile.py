"""Profiling for quantization (glow_mlir/quantization/profile.py, glow-run --dump-profile): ranges and histograms
of a model's float values on a calibration set, the YAML profile, the graph hash, and the command line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import digits, model_path, run_tool
from onnx import TensorProto, helper, numpy_helper

import glow_mlir
from glow_mlir.quantization import yaml_subset
from glow_mlir.quantization.profile import Profile, TensorProfile, bin_index, graph_hash, rebin

# Small integers: every product and sum below is exact in float32, so the compiled code's ranges equal numpy's.
W1 = np.array([[1, -2, 0], [2, 1, -1], [0, 3, 1], [-1, 0, 2]], np.float32)
B1 = np.array([1, -1, 2], np.float32)
W2 = np.array([[2, -1], [1, 1], [-3, 2]], np.float32)
B2 = np.array([0.5, -0.5], np.float32)


def two_layer(batch: int = 2, second: str = "Relu") -> onnx.ModelProto:
    """x [batch, 4] -> MatMul W1 (h) -> Add B1 (a) -> Relu (r) -> MatMul W2 (m) -> Add 2*B2 (y); 2*B2 comes from the
    initializers alone (constant), and Neg(x) feeds no output (dead)."""
    nodes = [
        helper.make_node("MatMul", ["x", "W1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "B1"], ["a"], name="bias1"),
        helper.make_node(second, ["a"], ["r"], name="act"),
        helper.make_node("MatMul", ["r", "W2"], ["m"], name="fc2"),
        helper.make_node("Mul", ["B2", "two"], ["b2x2"], name="scale_bias"),
        helper.make_node("Add", ["m", "b2x2"], ["y"], name="bias2"),
        helper.make_node("Neg", ["x"], ["unused"], name="dead"),
    ]
    inits = [numpy_helper.from_array(v, n) for n, v in
             [("W1", W1), ("B1", B1), ("W2", W2), ("B2", B2), ("two", np.array(2, np.float32))]]
    graph = helper.make_graph(nodes, "two_layer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 2])], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def reference(x: np.ndarray) -> dict[str, np.ndarray]:
    h = x @ W1
    a = h + B1
    r = np.maximum(a, 0)
    m = r @ W2
    return {"x": x, "h": h, "a": a, "r": r, "m": m, "y": m + 2 * B2}


def feeds(count: int, batch: int = 2, seed: int = 0) -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    return [{"x": rng.integers(-4, 5, (batch, 4)).astype(np.float32)} for _ in range(count)]


def test_ranges_of_every_float_value_equal_numpy() -> None:
    data = feeds(3)
    profile = glow_mlir.profile(two_layer(), data, threads=1)
    # graph input first, then node outputs in order; the constant 2*B2 and the dead Neg(x) are not profiled
    assert list(profile.values) == ["x", "h", "a", "r", "m", "y"]
    assert profile.model == "two_layer" and profile.graph_hash == graph_hash(two_layer())
    seen = {name: np.concatenate([reference(f["x"])[name].ravel() for f in data]) for name in profile.values}
    for name, p in profile.values.items():
        assert (p.min, p.max) == (seen[name].min(), seen[name].max()), name
        assert p.count == seen[name].size and p.histogram.sum() == p.count and p.bins == 2048, name
        assert p.histogram_range == (p.min, p.max)


def test_one_batch_histogram_counts_each_value_in_its_bin() -> None:
    x = feeds(1, batch=8, seed=1)[0]["x"]
    profile = glow_mlir.profile(two_layer(batch=8), [{"x": x}], threads=1, bins=16)
    for name, values in reference(x).items():
        p = profile[name]
        want = np.bincount(bin_index(values.ravel(), p.min, p.max, 16), minlength=16)
        assert p.histogram.tolist() == want.tolist(), name
    # bin i is [lo + i*w, lo + (i+1)*w), the last one closed: the max is in the last bin
    assert bin_index(np.array([0.0, 0.999, 1.0, 15.0, 16.0]), 0.0, 16.0, 16).tolist() == [0, 0, 1, 15, 15]


def test_rebin_keeps_aligned_bins_whole() -> None:
    # [0, 4] in 4 bins -> [0, 8]: each new bin (width 2) holds two old ones
    assert rebin(np.array([1, 2, 3, 4]), 0.0, 4.0, 0.0, 8.0).tolist() == [3, 7, 0, 0]


def test_rebin_splits_a_straddling_bin_by_overlap() -> None:
    # old bin [1, 2) over new bins [0, 1.25) and [1.25, 2.5): a quarter to the first, the rest to the second
    assert rebin(np.array([0, 4, 0, 0]), 0.0, 4.0, 0.0, 5.0).tolist() == [1, 3, 0, 0]
    # a range of one point moves whole into the bin of that point
    assert rebin(np.array([5, 0, 0, 0]), 2.0, 2.0, 0.0, 4.0).tolist() == [0, 0, 5, 0]


def test_widening_range_rebins_earlier_counts_into_the_right_bins() -> None:
    p = TensorProfile.empty(4)
    p.update(np.array([-1.0, 0.5, 1.5, 3.0], np.float32))  # [-1, 3]: bins of width 1, one value each
    assert (p.min, p.max, p.histogram.tolist()) == (-1.0, 3.0, [1, 1, 1, 1])
    p.update(np.array([-5.0], np.float32))  # [-5, 3]: bins [-5,-3) [-3,-1) [-1,1) [1,3]
    assert (p.min, p.max, p.count) == (-5.0, 3.0, 5)
    assert p.histogram.tolist() == np.histogram([-1, 0.5, 1.5, 3, -5], 4, (-5, 3))[0].tolist() == [1, 0, 2, 2]


def test_many_widening_batches_keep_the_total_and_the_range() -> None:
    rng = np.random.default_rng(7)
    p = TensorProfile.empty()
    batches = [rng.normal(0, scale, 1000).astype(np.float32) for scale in (0.1, 1, 0.5, 10, 3)]
    for b in batches:
        p.update(b)
    everything = np.concatenate(batches)
    assert (p.min, p.max, p.count, p.histogram.sum()) == (everything.min(), everything.max(), 5000, 5000)


def test_nonfinite_values_are_counted_apart() -> None:
    p = TensorProfile.empty(8)
    p.update(np.array([1.0, -np.inf, 2.0, np.nan], np.float32))
    assert (p.min, p.max, p.count, p.nonfinite, p.histogram.sum()) == (1.0, 2.0, 4, 2, 2)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    profile = glow_mlir.profile(two_layer(), feeds(2), threads=1)
    odd = TensorProfile.empty(5)
    odd.update(np.array([0.1, 1e-30, np.inf, 3.4e38], np.float32))
    profile.values['a "quoted": name #1'] = odd
    profile.values["never seen"] = TensorProfile.empty(3)  # min +inf, max -inf
    profile.save(tmp_path / "p.yaml")
    loaded = Profile.load(tmp_path / "p.yaml")
    assert loaded == profile and list(loaded.values) == list(profile.values)
    assert loaded.values["never seen"].min == math.inf
    text = (tmp_path / "p.yaml").read_text()
    assert f'graph_hash: "{profile.graph_hash}"' in text and 'model: "two_layer"' in text


def test_yaml_floats_have_a_dot_and_read_back_exactly() -> None:
    for value in (1e-05, 3e38, -2.5, 0.1, 1.0000000031710769e-30, -math.inf):
        text = yaml_subset.scalar_text(value)
        assert "." in text and yaml_subset.loads(f"v: {text}\nitems:\n", "items")[0]["v"] == value
    assert yaml_subset.scalar_text(1e-05) == "1.0e-05"


def test_load_rejects_a_file_that_is_not_a_profile(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("format: 1\nmodel: digits\nvalues:\n")
    with pytest.raises(glow_mlir.ProfileError, match=r"bad.yaml: not a glow_mlir profile: line 2"):
        Profile.load(tmp_path / "bad.yaml")


def test_graph_hash_ignores_the_batch_size_and_sees_a_changed_node() -> None:
    assert graph_hash(two_layer(batch=1)) == graph_hash(two_layer(batch=4))
    assert graph_hash(two_layer(second="Sigmoid")) != graph_hash(two_layer())
    renamed = two_layer()
    renamed.graph.node[2].output[0] = "r2"
    renamed.graph.node[3].input[0] = "r2"
    assert graph_hash(renamed) != graph_hash(two_layer())


def test_a_profile_of_another_graph_is_a_clear_error() -> None:
    profile = glow_mlir.profile(two_layer(batch=4), feeds(1, batch=4), threads=1)
    profile.check(two_layer(batch=1))  # another batch size: the same graph
    other = two_layer(second="Sigmoid")
    with pytest.raises(glow_mlir.ProfileError) as e:
        profile.check(other)
    message = str(e.value)
    assert "two_layer" in message and profile.graph_hash in message and graph_hash(other) in message


def test_no_feeds_is_an_error() -> None:
    with pytest.raises(glow_mlir.GlowError, match="no calibration inputs"):
        glow_mlir.profile(two_layer(), [], threads=1)


# --------------------------------------------------------------------------- glow-run --dump-profile


def test_cli_profiles_digits_on_64_training_images(tmp_path: Path) -> None:
    model = model_path("digits_cnn")
    np.savez(tmp_path / "calib.npz", image=digits("x_train", 64))
    done = run_tool("glow-run", "-model", str(model), "--dataset", str(tmp_path / "calib.npz"),
                    "--dump-profile", str(tmp_path / "digits.yaml"), "--threads", "1")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1
    assert "profiled 64 samples in 64 batches: 11 values (1 input, 10 node outputs)" in done.stdout
    profile = Profile.load(tmp_path / "digits.yaml")
    profile.check(model)
    assert profile["image"].count == 64 * 64 and profile["logits"].count == 64 * 10
    assert profile["/1/Relu_output_0"].min == 0.0 and profile["/0/Conv_output_0"].min < 0.0


def test_cli_feeds_batches_and_drops_the_partial_one(tmp_path: Path) -> None:
    onnx.save(two_layer(batch=4), tmp_path / "m.onnx")
    x = np.concatenate([f["x"] for f in feeds(5, batch=2)])  # 10 samples: 2 batches of 4, 2 left over
    np.savez(tmp_path / "d.npz", samples=x.astype(np.float64))  # one array, any name; float64 is cast
    done = run_tool("glow-run", "-model", str(tmp_path / "m.onnx"), "--dataset", str(tmp_path / "d.npz"),
                    "--dump-profile", str(tmp_path / "p.yaml"), "--threads", "1")
    assert done.returncode == 0, done.stderr
    assert "profiled 8 samples in 2 batches, 2 samples left over dropped" in done.stdout
    assert Profile.load(tmp_path / "p.yaml")["x"].max == x[:8].max()


def test_cli_bad_dataset_is_one_line_naming_model_and_input(tmp_path: Path) -> None:
    onnx.save(two_layer(batch=4), tmp_path / "m.onnx")
    np.savez(tmp_path / "d.npz", x=np.zeros((8, 5), np.float32))
    done = run_tool("glow-run", "-model", str(tmp_path / "m.onnx"), "--dataset", str(tmp_path / "d.npz"),
                    "--dump-profile", str(tmp_path / "p.yaml"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert "m.onnx: input 'x': dataset array 'x' has shape 8x5, expected Nx4" in done.stderr
    np.savez(tmp_path / "two.npz", a=np.zeros((8, 4)), b=np.zeros((8, 4)))
    done = run_tool("glow-run", "-model", str(tmp_path / "m.onnx"), "--dataset", str(tmp_path / "two.npz"),
                    "--dump-profile", str(tmp_path / "p.yaml"))
    assert done.returncode == 1 and "has no array 'x' for input 'x'" in done.stderr
