"""The command-line tools: what they print, and one-line errors with a non-zero exit for bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import EXAMPLES_DIR, ROOT, run_tool

EXAMPLE = EXAMPLES_DIR / "linear_sigmoid.onnx"


def _save(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def _graph_model(nodes, inputs, outputs, initializers=(), name="bad") -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _vi(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _not_onnx(tmp: Path) -> Path:
    (tmp / "noise.onnx").write_bytes(np.random.default_rng(0).bytes(300))
    return tmp / "noise.onnx"


def _truncated(tmp: Path) -> Path:
    data = EXAMPLE.read_bytes()
    (tmp / "cut.onnx").write_bytes(data[: len(data) // 2])
    return tmp / "cut.onnx"


def _missing_producer(tmp: Path) -> Path:
    m = _graph_model([helper.make_node("Relu", ["ghost"], ["y"], name="r")], [_vi("x", [2])], [_vi("y", [2])])
    return _save(m, tmp / "ghost.onnx")


def _cyclic(tmp: Path) -> Path:
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="first"), helper.make_node("Relu", ["a"], ["b"], name="loop")]
    return _save(_graph_model(nodes, [_vi("x", [2])], [_vi("b", [2])]), tmp / "cycle.onnx")


def _initializer(tmp: Path, n: int) -> Path:
    w = numpy_helper.from_array(np.ones(4, np.float32), "w")
    w.raw_data = np.ones(n, np.float32).tobytes()
    m = _graph_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [_vi("x", [4])], [_vi("y", [4])], [w])
    return _save(m, tmp / f"init{n}.onnx")


def _external_escape(tmp: Path) -> Path:
    w = numpy_helper.from_array(np.ones(4, np.float32), "w")
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="../../etc/passwd")
    m = _graph_model([helper.make_node("Add", ["x", "w"], ["y"], name="add")], [_vi("x", [4])], [_vi("y", [4])], [w])
    return _save(m, tmp / "escape.onnx")


def _unsupported(tmp: Path) -> Path:
    nodes = [helper.make_node("FooOp", ["x"], ["a"], name="a"), helper.make_node("FooOp", ["a"], ["b"], name="b"),
             helper.make_node("BarOp", ["b"], ["y"], name="c")]
    return _save(_graph_model(nodes, [_vi("x", [2])], [_vi("y", [2])], name="two_unsupported"), tmp / "model.onnx")


def _dynamic(tmp: Path) -> Path:
    m = _graph_model([helper.make_node("Relu", ["x"], ["y"], name="r")], [_vi("x", ["N", 3])], [_vi("y", ["N", 3])])
    return _save(m, tmp / "dynamic.onnx")


BAD_INPUTS = {
    "not_onnx": (_not_onnx, ["noise.onnx", "not an ONNX model"]),
    "truncated": (_truncated, ["cut.onnx", "ONNX"]),
    "missing_producer": (_missing_producer, ["ghost", "node 'r'", "Relu"]),
    "cyclic": (_cyclic, ["cycle"]),
    "initializer_too_long": (lambda t: _initializer(t, 5), ["'w'", "5"]),
    "initializer_too_short": (lambda t: _initializer(t, 3), ["'w'", "3"]),
    "external_data_escape": (_external_escape, ["'w'", "is not a file inside the model's folder"]),
    "unsupported_ops": (_unsupported, ["2 unsupported ONNX ops at opset 17", "FooOp (nodes a, b)", "BarOp (node c)"]),
    "dynamic_dimension": (_dynamic, ["'x'", "--input-shape"]),
}


@pytest.mark.parametrize("tool", ["glow-compile", "glow-run"])
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_model_is_one_line_error_and_exit_1(tool: str, case: str, tmp_path: Path):
    make, words = BAD_INPUTS[case]
    path = make(tmp_path)
    done = run_tool(tool, "-model", str(path))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"{tool}: error: ")
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_missing_model_file(tmp_path: Path):
    done = run_tool("glow-run", "-model", str(tmp_path / "nope.onnx"))
    assert done.returncode == 1
    assert "nope.onnx" in done.stderr and "Traceback" not in done.stderr


def test_dynamic_dimension_fixed_with_input_shape(tmp_path: Path):
    path = _dynamic(tmp_path)
    x = tmp_path / "x.npy"
    np.save(x, np.array([[-1, 2, -3], [4, -5, 6]], np.float32))
    done = run_tool("glow-run", "-model", str(path), "--input-shape", "x=2x3", "--input", f"x={x}")
    assert done.returncode == 0, done.stderr
    assert "[0, 2, 0, 4, 0, 6]" in done.stdout


@pytest.mark.parametrize("args, words", [
    (["--input", "wrong=x.npy"], ["unknown input 'wrong'", "missing input 'input_1'"]),
    (["--input", "input_1=missing.npy"], ["cannot read input 'input_1'"]),
    (["--input", "input_1"], ["--input expects NAME=FILE.npy"]),
])
def test_bad_run_inputs(args: list[str], words: list[str], tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "x.npy", np.zeros((3, 10), np.float32))
    done = run_tool("glow-run", "-model", str(EXAMPLE), *args)
    assert done.returncode == 1, done.stdout
    for w in words:
        assert w in done.stderr, (w, done.stderr)


def test_wrong_input_shape_names_the_input(tmp_path: Path):
    np.save(tmp_path / "x.npy", np.zeros((2, 10), np.float32))
    done = run_tool("glow-run", "-model", str(EXAMPLE), "--input", f"input_1={tmp_path / 'x.npy'}")
    assert done.returncode == 1
    assert "input 'input_1' has shape [2, 10], expected [3, 10]" in done.stderr


def test_run_prints_outputs_like_glow(tmp_path: Path):
    done = run_tool("glow-run", "-model", str(EXAMPLE), "--reference", str(EXAMPLES_DIR / "linear_sigmoid.io.npz"),
                    "--save", str(tmp_path))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == "Model: linear_sigmoid"
    assert out[1] == "output_1: shape ( 3 x 5 ) float32"
    assert out[2].startswith("max: ") and "  min: " in out[2]
    saved = np.load(tmp_path / "output_1.npy")
    expected = np.load(EXAMPLES_DIR / "linear_sigmoid.io.npz")["out_output_1"]
    np.testing.assert_allclose(saved, expected, rtol=1e-5, atol=1e-6)
    assert float(out[2].split()[1]) == pytest.approx(float(saved.max()), rel=1e-5)


def test_compile_emit_mlir_writes_every_stage(tmp_path: Path):
    done = run_tool("glow-compile", "-model", str(EXAMPLE), "--emit-mlir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files[0] == "00-import.mlir" and files[-1].endswith("-codegen.mlir")
    assert any("irgen" in f for f in files)
    assert '"glowgraph.fully_connected"' in (tmp_path / "00-import.mlir").read_text()
    assert "llvm.func" in (tmp_path / files[-1]).read_text()
    irgen = next(tmp_path.glob("*-irgen.mlir"))
    # every stage's file is complete IR that glow-opt takes back
    again = run_tool("glow-opt", str(irgen), "--convert-glowir-to-linalg")
    assert again.returncode == 0, again.stderr


def test_compile_dump_graph_dag(tmp_path: Path):
    dot = tmp_path / "g.dot"
    done = run_tool("glow-compile", "-model", str(EXAMPLE), "--dump-graph-dag", str(dot))
    assert done.returncode == 0, done.stderr
    text = dot.read_text()
    assert text.startswith('digraph "main"') or text.startswith("digraph")
    assert "fully_connected" in text and "sigmoid" in text and "Placeholder" in text and "Save" in text
    assert text.count("->") >= 4


def test_compile_time_passes():
    done = run_tool("glow-compile", "-model", str(EXAMPLE), "--time-passes")
    assert done.returncode == 0, done.stderr
    report = done.stderr
    for stage in ("import", "optimize", "lower", "irgen", "codegen"):
        assert f"  {stage}" in report
    assert "glowgraph-cse" in report and "total" in report


def test_glow_opt_lower_to_llvm_from_stdin():
    graph = """
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "glowgraph.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}"""
    done = subprocess.run([sys.executable, "-m", "glow_mlir.tools.glow_opt", "-", "--lower-to-llvm"], input=graph,
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "llvm.func @f" in done.stdout


def test_a_wrongly_declared_shape_is_a_one_line_warning(tmp_path):
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["t"]), helper.make_node("Neg", ["t"], ["y"])], "decl",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              value_info=[helper.make_tensor_value_info("t", TensorProto.FLOAT, [3])])
    path = tmp_path / "decl.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    done = run_tool("glow-compile", "-model", str(path), "--no-cache", "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == (f"glow-compile: warning: {path}: node 'Relu#0' (Relu): output 't' is declared 3 "
                                   "float32 but computes to 2 float32; going on with 2")
