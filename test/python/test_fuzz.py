"""The differential fuzzer (glow_mlir/fuzz.py), a short run: random valid graphs of the supported op set compile and
match onnx.reference; mutated models get only glow_mlir's typed errors. ``python -m glow_mlir.fuzz --minutes N`` is
the long run; its findings become regression tests here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import glow_mlir
from glow_mlir import fuzz
from glow_mlir.errors import ModelError


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.integers(0, 2**31 - 1))
def test_random_graphs_match_the_reference(seed: int) -> None:
    outcome, detail = fuzz.check_graph(seed)
    assert outcome in ("pass", "skipped"), f"seed {seed}: {detail}"


def test_the_generator_is_deterministic_and_varied() -> None:
    assert fuzz.random_graph(11) == fuzz.random_graph(11)
    ops = {n.op_type for s in range(100) for n in fuzz.random_graph(s).graph.node}
    assert {"Conv", "Gemm", "MatMul", "Softmax", "Reshape", "Concat", "MaxPool", "Compress", "ReverseSequence",
            "Shrink"} <= ops
    assert fuzz.mutate(fuzz.random_graph(3), 5) == fuzz.mutate(fuzz.random_graph(3), 5)


def test_the_seeds_vary_the_threads_and_the_isa_of_the_code() -> None:
    from glow_mlir.backend import target as targets

    variants = {fuzz.code_variant(seed) for seed in range(8)}
    cpus = {"", "haswell"} if not targets.cannot_run(targets.named("haswell")) else {""}
    assert variants == {(threads, cpu) for threads in (1, 2) for cpu in cpus}


def test_a_layer_norm_of_constant_rows_is_no_finding() -> None:
    # seed 102670: ArgMax over a dim of 1, so LogSoftmax of equal values and a LayerNormalization of a constant
    # tensor, whose rounding (3.5e-4 against values of 1.5) is scaled by 1/sqrt(epsilon) in any engine
    outcome, detail = fuzz.check_graph(102670)
    assert outcome == "skipped" and "LayerNormalization" in detail


def test_a_cosine_of_a_huge_argument_is_no_finding() -> None:
    # seed 702537: cos(exp(exp(x))) at 1.2e10, where one ulp of the argument is 1024: glow_mlir's exp and numpy's
    # differ in the last bit, and the cosines by 0.13
    outcome, detail = fuzz.check_graph(702537)
    assert outcome == "skipped" and "Sin, Cos or Tan of arguments beyond 1024" in detail, detail


def test_a_cosine_of_moderate_arguments_is_compared() -> None:
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Mul", ["x", "k"], ["y"]), helper.make_node("Cos", ["y"], ["z"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [8])],
        [helper.make_tensor("k", TensorProto.FLOAT, [], [100.0])]), opset_imports=[helper.make_opsetid("", 17)])
    x = np.linspace(-3, 3, 8).astype(np.float32)
    assert not fuzz._large_periodic_argument(model, x)
    assert fuzz._large_periodic_argument(model, x * 4)


def test_mutated_models_get_typed_errors_in_a_worker(tmp_path: Path) -> None:
    # in a worker process, as the command runs them: an abort or a hang would be a finding, not a dead test run
    cases = [("mutation", seed, seed * 31 + 7) for seed in range(12)] + [("graph", 1000 + s, 0) for s in range(3)]
    counts = fuzz.run(cases, timeout=120, out=tmp_path)
    assert counts.get("finding", 0) == 0, (tmp_path / "findings.txt").read_text()
    assert sum(counts.values()) == len(cases)


def test_the_command_runs_and_summarizes(tmp_path: Path, capsys) -> None:
    assert fuzz.main(["--minutes", "0.01", "--seed", "5", "--out", str(tmp_path)]) == 0
    assert "cases from seed 5:" in capsys.readouterr().out


def test_finding_a_node_without_its_required_input_is_a_model_error() -> None:
    # a mutation left Softmax's only input out: the node had no live input, so it was evaluated at import and the
    # reference implementation failed on None (AttributeError); now the handler's "input #0 is missing"
    nodes = [helper.make_node("Softmax", [""], ["s"]), helper.make_node("Add", ["x", "s"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ModelError, match=r"node 'Softmax#0' \(Softmax\): input #0 is missing$"):
        glow_mlir.compile(model, cache=False)
