"""The Glow-style IR dump and stats of a program built by hand and bufferized by convert-glowgraph-to-glowir."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from mlir import ir
from mlir.dialects import func

from glow_mlir.backend.ir_dump import format_program, glow_type, program_stats
from glow_mlir.dialects import glowgraph as gg
from glow_mlir.dialects import make_context
from glow_mlir.dialects.optable import numpy_to_elements
from glow_mlir.passes.conversion.ir_program import read_program
from glow_mlir.passes.pipeline import run_pipeline
from glow_mlir.passes.registry import get_pass


def _names(*names: str) -> ir.ArrayAttr:
    return ir.ArrayAttr.get([ir.DictAttr.get({"glowgraph.name": ir.StringAttr.get(n)}) for n in names])


def _linear_sigmoid(ctx: ir.Context) -> ir.Module:
    """Linear(10, 5) + Sigmoid on a [3, 10] input, as the importer would name it."""
    rng = np.random.default_rng(0)
    with ctx, ir.Location.unknown():
        f32 = ir.F32Type.get()
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            f = func.FuncOp("main", ([ir.RankedTensorType.get([3, 10], f32)], [ir.RankedTensorType.get([3, 5], f32)]))
            f.arg_attrs = _names("input_1")
            f.result_attrs = _names("output_1")
            with ir.InsertionPoint(f.add_entry_block()):
                w = gg.constant(value=numpy_to_elements(rng.standard_normal((10, 5)).astype(np.float32)),
                                loc=ir.Location.name("weights"))
                b = gg.constant(value=numpy_to_elements(rng.standard_normal(5).astype(np.float32)),
                                loc=ir.Location.name("bias"))
                fc = gg.fully_connected(f.arguments[0], w, b, loc=ir.Location.name("fc"))
                func.ReturnOp([gg.sigmoid(fc, loc=ir.Location.name("sigmoid"))])
    run_pipeline(module.operation, [get_pass("convert-glowgraph-to-glowir")()])
    return module


@pytest.fixture
def program() -> Iterator[ir.Operation]:
    ctx = make_context()
    module = _linear_sigmoid(ctx)
    # yield, not return: the module and its context stay alive while the test reads the op
    yield module.body.operations[0]


def test_dump_of_linear_sigmoid(program: ir.Operation) -> None:
    assert format_program(program) == """\
function main
declare {
  %weights = WeightVar float<10 x 5> const // size: 200 // Users: @in 1
  %bias = WeightVar float<5> const // size: 20 // Users: @in 1
  %input_1 = WeightVar float<3 x 10> mutable // size: 120 // Users: @in 1
  %output_1 = WeightVar float<3 x 5> mutable // size: 60 // Users: @out 2

  ; size = 400 bytes
}

code {
  0 %fc = allocactivation  { Ty: float<3 x 5>} // size: 60 // Users: @out 1, @in 2, @out 3
  1 %fc_res = fullyconnected @out %fc, @in %input_1, @in %weights, @in %bias
  2 %output_1_res = sigmoid @out %output_1, @in %fc
  3 %dealloc = deallocactivation @out %fc
}
"""


def test_program_reader(program: ir.Operation) -> None:
    p = read_program(program)
    assert [(w.name, w.mutability, w.shape, w.size_in_bytes) for w in p.weights] == [
        ("weights", "const", (10, 5), 200), ("bias", "const", (5,), 20),
        ("input_1", "mutable", (3, 10), 120), ("output_1", "mutable", (3, 5), 60)]
    assert (p.inputs, p.outputs) == (("input_1",), ("output_1",))
    assert [w.name for w in p.constants] == ["weights", "bias"]
    assert p.weight("bias").numpy().dtype == np.float32 and p.input_vars[0].value is None


def test_stats(program: ir.Operation) -> None:
    stats = program_stats(program)
    assert stats.instructions == {"fullyconnected": 1, "sigmoid": 1}
    assert (stats.constant_bytes, stats.mutable_bytes) == (220, 180)
    assert (stats.activations, stats.activation_bytes, stats.peak_activation_bytes) == (1, 60, 60)
    assert "instructions: 2 (fullyconnected 1, sigmoid 1)" in str(stats)


def test_views_attributes_and_peak_memory() -> None:
    """A tensorview lists its users; instruction members print in braces; peak counts only live activations."""
    ctx = make_context()
    module = ir.Module.parse("""
      func.func @g(%a: tensor<2x6xf32>) -> tensor<3x4xf32> {
        %0 = "glowgraph.relu"(%a) : (tensor<2x6xf32>) -> tensor<2x6xf32> loc("r")
        %1 = "glowgraph.reshape"(%0) {shape = array<i64: 6, 2>} : (tensor<2x6xf32>) -> tensor<6x2xf32> loc("flat")
        %2 = "glowgraph.transpose"(%1) {shuffle = array<i64: 1, 0>} : (tensor<6x2xf32>) -> tensor<2x6xf32> loc("t")
        %3 = "glowgraph.reshape"(%2) {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
        return %3 : tensor<3x4xf32>
      }""", ctx)
    run_pipeline(module.operation, [get_pass("convert-glowgraph-to-glowir")()])
    text = format_program(module.body.operations[0])
    assert "  0 %r = allocactivation  { Ty: float<2 x 6>} // size: 48 // Users: @out 1, @in 2, @out 5\n" in text
    assert "  2 %flat = tensorview @in %r { Ty: float<6 x 2>} // Users: @in 4\n" in text
    assert "  4 %t_res = transpose @out %t, @in %flat { Shuffle: [1, 0]}\n" in text
    assert "  5 %dealloc = deallocactivation @out %r\n" in text
    assert "  6 %t_view = tensorview @in %t { Ty: float<3 x 4>} // Users: @in 7\n" in text
    assert "  7 %output_0_res = copy @out %output_0, @in %t_view\n" in text
    assert "  8 %dealloc_1 = deallocactivation @out %t\n" in text
    stats = program_stats(module.body.operations[0])
    assert (stats.activations, stats.activation_bytes, stats.peak_activation_bytes) == (2, 96, 96)
    assert stats.instructions == {"relu": 1, "transpose": 1, "copy": 1}


def test_loop_and_if_print_their_regions_one_level_in() -> None:
    """A loop's body and an if's branches print indented under it, numbered <instruction>.<k>; uses inside them are
    listed with those numbers; the stats count the instructions inside too."""
    ctx = make_context()
    module = ir.Module.parse("""
      func.func @g(%c: tensor<i1>, %xs: tensor<4x2xf32>, %h0: tensor<2xf32>) -> tensor<2xf32> {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %c4 = arith.constant 4 : index
        %h = scf.for %iv = %c0 to %c4 step %c1 iter_args(%s = %h0) -> (tensor<2xf32>) {
          %i = "glowgraph.iteration"(%iv) : (index) -> tensor<i64>
          %x = "glowgraph.step_slice"(%xs, %i) : (tensor<4x2xf32>, tensor<i64>) -> tensor<2xf32> loc("x")
          %n = "glowgraph.add"(%s, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("n")
          scf.yield %n : tensor<2xf32>
        } loc("loop")
        %flag = tensor.extract %c[] : tensor<i1>
        %r = scf.if %flag -> (tensor<2xf32>) {
          %t = "glowgraph.tanh"(%h) : (tensor<2xf32>) -> tensor<2xf32> loc("t")
          scf.yield %t : tensor<2xf32>
        } else {
          %u = "glowgraph.neg"(%h) : (tensor<2xf32>) -> tensor<2xf32> loc("u")
          scf.yield %u : tensor<2xf32>
        } loc("if")
        return %r : tensor<2xf32>
      }""", ctx)
    run_pipeline(module.operation, [get_pass("convert-glowgraph-to-glowir")()])
    text = format_program(module.body.operations[0])
    assert "{ MaxTrip: 4, HasCondition: 0} {\n    6.0 %x_res = stepslice @out %x, @in %input_1, @in %loop.counter\n" in text
    assert "    6.2 %loop.state0_res_1 = copy @out %loop.state0, @in %n\n  }\n" in text
    assert "  11 %input_0_res = if @in %input_0 {\n    11.0 %output_0_res = tanh @out %output_0, @in %loop.state0\n" \
           "  } else {\n    11.1 %output_0_res_1 = neg @out %output_0, @in %loop.state0\n  }\n" in text
    assert "%loop.state0 = allocactivation  { Ty: float<2>} // size: 8 // Users: @out 3, @in 6.1, @out 6.2, @in 11.0, " \
           "@in 11.1, @out 12\n" in text
    stats = program_stats(module.body.operations[0])
    assert stats.instructions == {"copy": 2, "loop": 1, "stepslice": 1, "elementadd": 1, "if": 1, "tanh": 1, "neg": 1}


def test_glow_type_names() -> None:
    with make_context(), ir.Location.unknown():
        assert glow_type(ir.MemRefType.get([2, 3], ir.IntegerType.get_signless(64))) == "index64<2 x 3>"
        assert glow_type(ir.MemRefType.get([4], ir.IntegerType.get_signless(1))) == "bool<4>"
        assert glow_type(ir.MemRefType.get([], ir.IntegerType.get_signless(32))) == "int32<>"
