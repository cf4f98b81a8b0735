"""Code generation end to end: hand-written glowir programs, lowered by convert-glowir-to-linalg and the CODEGEN
pipeline, run through JitProgram and compared with numpy (rtol 1e-5, atol 1e-6).

Each program is compiled once per module (fixtures); one program covers one family of instructions."""

from __future__ import annotations

import gc
from collections.abc import Callable

import numpy as np
import pytest
from conftest import compile_program, dense
from mlir import ir

from glow_mlir.backend import tools_paths
from glow_mlir.backend.jit import Argument, JitProgram, program_signature, signature_of
from glow_mlir.dialects import make_context
from glow_mlir.errors import CompileError, InputError
from glow_mlir.passes import pipelines
from glow_mlir.passes.conversion.ir_program import read_program
from glow_mlir.passes.pipeline import parse_pipeline, run_pipeline

RTOL, ATOL = 1e-5, 1e-6
RNG = np.random.default_rng(7)


def check(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        assert got[name].shape == value.shape and got[name].dtype == value.dtype, name
        np.testing.assert_allclose(got[name], value, rtol=RTOL, atol=ATOL, err_msg=name)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


@pytest.fixture(scope="module")
def ctx() -> ir.Context:
    return make_context()


@pytest.fixture(scope="module")
def build(ctx: ir.Context) -> Callable[[str], JitProgram]:
    """Compile a program; the modules stay referenced for the whole test module (the JIT code points into them)."""
    keep: list[ir.Module] = []

    def compile_one(text: str) -> JitProgram:
        program, module = compile_program(ctx, text)
        keep.append(module)
        return program

    return compile_one


# --------------------------------------------------------------------------- fully connected and activations

W = RNG.standard_normal((10, 5)).astype(np.float32)
B = RNG.standard_normal(5).astype(np.float32)

FC = f"""
func.func @fc() attributes {{glowir.inputs = ["input_1"], glowir.outputs = ["output_1", "hidden"]}} {{
  %w = "glowir.weight_var"() {{mutability = "const", name = "weights", value = {dense(W)}}} : () -> memref<10x5xf32>
  %b = "glowir.weight_var"() {{mutability = "const", name = "bias", value = {dense(B)}}} : () -> memref<5xf32>
  %x = "glowir.weight_var"() {{mutability = "mutable", name = "input_1"}} : () -> memref<3x10xf32>
  %y = "glowir.weight_var"() {{mutability = "mutable", name = "output_1"}} : () -> memref<3x5xf32>
  %h = "glowir.weight_var"() {{mutability = "mutable", name = "hidden"}} : () -> memref<3x5xf32>
  %fc = "glowir.alloc_activation"() {{name = "fc"}} : () -> memref<3x5xf32>
  "glowir.fully_connected"(%fc, %x, %w, %b) : (memref<3x5xf32>, memref<3x10xf32>, memref<10x5xf32>, memref<5xf32>) -> ()
  "glowir.relu"(%h, %fc) : (memref<3x5xf32>, memref<3x5xf32>) -> ()
  %rows = "glowir.tensor_view"(%fc) {{offsets = array<i64: 1, 0>}} : (memref<3x5xf32>) -> memref<2x5xf32>
  %part = "glowir.tensor_view"(%rows) {{offsets = array<i64: 0, 3>}} : (memref<2x5xf32>) -> memref<4xf32>
  "glowir.tanh"(%part, %part) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.sigmoid"(%y, %fc) : (memref<3x5xf32>, memref<3x5xf32>) -> ()
  "glowir.dealloc_activation"(%fc) : (memref<3x5xf32>) -> ()
  return
}}
"""


@pytest.fixture(scope="module")
def fc(build) -> JitProgram:
    return build(FC)


def test_fully_connected_activations(fc: JitProgram) -> None:
    x = RNG.standard_normal((3, 10)).astype(np.float32)
    pre = x @ W + B
    flat = pre.copy().reshape(-1)
    flat[8:12] = np.tanh(flat[8:12])  # rows 1.. start at 5, then 3 more: elements 8 to 11
    check(fc({"input_1": x}), {"output_1": sigmoid(flat.reshape(3, 5)), "hidden": np.maximum(pre, 0)})


def test_signature_follows_the_declarations(fc: JitProgram) -> None:
    assert [(a.name, a.role, a.shape) for a in fc.signature] == [
        ("weights", "const", (10, 5)), ("bias", "const", (5,)), ("input_1", "input", (3, 10)),
        ("output_1", "output", (3, 5)), ("hidden", "output", (3, 5))]
    np.testing.assert_array_equal(fc.signature[0].value, W)
    assert fc.input_names == ["input_1"] and fc.output_names == ["output_1", "hidden"]


def test_lowered_function_names_its_arguments(ctx: ir.Context) -> None:
    module = ir.Module.parse(FC, ctx)
    func = module.body.operations[0].operation
    names = [a.name for a in program_signature(func)]
    run_pipeline(module.operation, parse_pipeline("convert-glowir-to-linalg"))
    assert [ir.StringAttr(a).value for a in ir.ArrayAttr(func.attributes["glowir.arguments"])] == names


def test_program_read_before_lowering_gives_the_signature(ctx: ir.Context, fc: JitProgram) -> None:
    module = ir.Module.parse(FC, ctx)
    program = read_program(module.body.operations[0].operation)
    run_pipeline(module.operation, pipelines.elements("codegen"))  # erases the weight vars the program points at
    assert [(a.name, a.role, a.shape, a.dtype) for a in signature_of(program)] == \
        [(a.name, a.role, a.shape, a.dtype) for a in fc.signature]
    np.testing.assert_array_equal(signature_of(program)[1].value, B)


def test_repeated_calls_keep_constants_alive(fc: JitProgram) -> None:
    x = RNG.standard_normal((3, 10)).astype(np.float32)
    first = fc({"input_1": x})
    gc.collect()
    for _ in range(3):
        check(fc({"input_1": x.copy()}), first)


def test_inputs_are_checked(fc: JitProgram) -> None:
    with pytest.raises(InputError, match=r"input 'input_1' of @fc must be float32 of shape \[3, 10\], got float64"):
        fc({"input_1": np.zeros((3, 10))})
    with pytest.raises(InputError, match=r"got float32 of shape \[10, 3\]"):
        fc({"input_1": np.zeros((10, 3), np.float32)})
    with pytest.raises(InputError, match=r"missing \['input_1'\], unknown \['x'\]"):
        fc({"x": np.zeros((3, 10), np.float32)})


def test_non_contiguous_inputs_are_accepted(fc: JitProgram) -> None:
    x = RNG.standard_normal((10, 3)).astype(np.float32)
    check(fc({"input_1": x.T}), fc({"input_1": np.ascontiguousarray(x.T)}))


# --------------------------------------------------------------------------- matmul and float elementwise

ARITH = """
func.func @arith() attributes {glowir.inputs = ["a", "b", "m"],
                               glowir.outputs = ["mm", "add", "sub", "mul", "div", "max", "min"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<4x6xf32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<4x6xf32>
  %m = "glowir.weight_var"() {mutability = "mutable", name = "m"} : () -> memref<6x3xf32>
  %mm = "glowir.weight_var"() {mutability = "mutable", name = "mm"} : () -> memref<4x3xf32>
  %add = "glowir.weight_var"() {mutability = "mutable", name = "add"} : () -> memref<4x6xf32>
  %sub = "glowir.weight_var"() {mutability = "mutable", name = "sub"} : () -> memref<4x6xf32>
  %mul = "glowir.weight_var"() {mutability = "mutable", name = "mul"} : () -> memref<4x6xf32>
  %div = "glowir.weight_var"() {mutability = "mutable", name = "div"} : () -> memref<4x6xf32>
  %max = "glowir.weight_var"() {mutability = "mutable", name = "max"} : () -> memref<4x6xf32>
  %min = "glowir.weight_var"() {mutability = "mutable", name = "min"} : () -> memref<4x6xf32>
  "glowir.matmul"(%mm, %a, %m) : (memref<4x3xf32>, memref<4x6xf32>, memref<6x3xf32>) -> ()
  "glowir.element_add"(%add, %a, %b) : (memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>) -> ()
  "glowir.element_sub"(%sub, %a, %b) : (memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>) -> ()
  "glowir.element_mul"(%mul, %a, %b) : (memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>) -> ()
  "glowir.element_div"(%div, %a, %b) : (memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>) -> ()
  "glowir.element_max"(%max, %a, %b) : (memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>) -> ()
  "glowir.element_min"(%min, %a, %b) : (memref<4x6xf32>, memref<4x6xf32>, memref<4x6xf32>) -> ()
  return
}
"""


def test_matmul_and_float_elementwise(build) -> None:
    program = build(ARITH)
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    b = (RNG.uniform(0.5, 2.0, (4, 6)) * RNG.choice([-1, 1], (4, 6))).astype(np.float32)  # no tiny divisors
    m = RNG.standard_normal((6, 3)).astype(np.float32)
    check(program({"a": a, "b": b, "m": m}),
          {"mm": a @ m, "add": a + b, "sub": a - b, "mul": a * b, "div": a / b, "max": np.maximum(a, b),
           "min": np.minimum(a, b)})


# --------------------------------------------------------------------------- data movement and views

BIAS = RNG.standard_normal((3, 4)).astype(np.float32)

MOVEMENT = f"""
func.func @movement() attributes {{glowir.inputs = ["x", "r", "c"],
                                  glowir.outputs = ["t", "br", "bc", "cp", "sp", "ba", "part"]}} {{
  %s = "glowir.weight_var"() {{mutability = "const", name = "slice", value = {dense(BIAS)}}} : () -> memref<3x4xf32>
  %x = "glowir.weight_var"() {{mutability = "mutable", name = "x"}} : () -> memref<2x3x4xf32>
  %r = "glowir.weight_var"() {{mutability = "mutable", name = "r"}} : () -> memref<1x4xf32>
  %c = "glowir.weight_var"() {{mutability = "mutable", name = "c"}} : () -> memref<3x1xf32>
  %t = "glowir.weight_var"() {{mutability = "mutable", name = "t"}} : () -> memref<4x2x3xf32>
  %br = "glowir.weight_var"() {{mutability = "mutable", name = "br"}} : () -> memref<2x3x4xf32>
  %bc = "glowir.weight_var"() {{mutability = "mutable", name = "bc"}} : () -> memref<2x3x4xf32>
  %cp = "glowir.weight_var"() {{mutability = "mutable", name = "cp"}} : () -> memref<2x3x4xf32>
  %sp = "glowir.weight_var"() {{mutability = "mutable", name = "sp"}} : () -> memref<5xf32>
  %ba = "glowir.weight_var"() {{mutability = "mutable", name = "ba"}} : () -> memref<2x3x4xf32>
  %part = "glowir.weight_var"() {{mutability = "mutable", name = "part"}} : () -> memref<2x5xf32>
  "glowir.transpose"(%t, %x) {{shuffle = array<i64: 2, 0, 1>}} : (memref<4x2x3xf32>, memref<2x3x4xf32>) -> ()
  "glowir.broadcast"(%br, %r) {{shape = array<i64: 2, 3, 4>}} : (memref<2x3x4xf32>, memref<1x4xf32>) -> ()
  "glowir.broadcast"(%bc, %c) {{shape = array<i64: 2, 3, 4>}} : (memref<2x3x4xf32>, memref<3x1xf32>) -> ()
  "glowir.copy"(%cp, %x) : (memref<2x3x4xf32>, memref<2x3x4xf32>) -> ()
  "glowir.splat"(%sp) {{value = -1.5 : f32}} : (memref<5xf32>) -> ()
  "glowir.batched_add"(%ba, %x, %s) : (memref<2x3x4xf32>, memref<2x3x4xf32>, memref<3x4xf32>) -> ()
  %flat = "glowir.tensor_view"(%x) : (memref<2x3x4xf32>) -> memref<24xf32>
  %tail = "glowir.tensor_view"(%flat) {{offsets = array<i64: 7>}} : (memref<24xf32>) -> memref<10xf32>
  %src = "glowir.tensor_view"(%tail) : (memref<10xf32>) -> memref<2x5xf32>
  "glowir.copy"(%part, %src) : (memref<2x5xf32>, memref<2x5xf32>) -> ()
  return
}}
"""


def test_data_movement_and_views(build) -> None:
    program = build(MOVEMENT)
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    r = RNG.standard_normal((1, 4)).astype(np.float32)
    c = RNG.standard_normal((3, 1)).astype(np.float32)
    check(program({"x": x, "r": r, "c": c}),
          {"t": x.transpose(2, 0, 1), "br": np.broadcast_to(r, (2, 3, 4)), "bc": np.broadcast_to(c, (2, 3, 4)),
           "cp": x, "sp": np.full(5, -1.5, np.float32), "ba": x + BIAS, "part": x.reshape(-1)[7:17].reshape(2, 5)})


# --------------------------------------------------------------------------- scalars (0-d buffers)

SCALARS = """
func.func @scalars() attributes {glowir.inputs = ["a", "b"], glowir.outputs = ["sum", "relu", "v", "k2"]} {
  %k = "glowir.weight_var"() {mutability = "const", name = "k", value = dense<2.5> : tensor<f32>} : () -> memref<f32>
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<f32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<f32>
  %sum = "glowir.weight_var"() {mutability = "mutable", name = "sum"} : () -> memref<f32>
  %relu = "glowir.weight_var"() {mutability = "mutable", name = "relu"} : () -> memref<f32>
  %v = "glowir.weight_var"() {mutability = "mutable", name = "v"} : () -> memref<2x3xf32>
  %k2 = "glowir.weight_var"() {mutability = "mutable", name = "k2"} : () -> memref<f32>
  "glowir.element_add"(%sum, %a, %b) : (memref<f32>, memref<f32>, memref<f32>) -> ()
  "glowir.relu"(%relu, %a) : (memref<f32>, memref<f32>) -> ()
  "glowir.broadcast"(%v, %sum) {shape = array<i64: 2, 3>} : (memref<2x3xf32>, memref<f32>) -> ()
  "glowir.element_mul"(%k2, %k, %k) : (memref<f32>, memref<f32>, memref<f32>) -> ()
  return
}
"""


def test_scalars(build) -> None:
    program = build(SCALARS)
    a, b = np.array(-1.25, np.float32), np.array(4.0, np.float32)
    check(program({"a": a, "b": b}), {"sum": a + b, "relu": np.maximum(a, np.float32(0)),
                                      "v": np.full((2, 3), a + b, np.float32), "k2": np.array(6.25, np.float32)})


# --------------------------------------------------------------------------- int64 elementwise

INTS = """
func.func @ints() attributes {glowir.inputs = ["a", "b", "s"],
                              glowir.outputs = ["add", "sub", "mul", "div", "max", "min", "ss", "fill"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<3x4xi64>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<3x4xi64>
  %s = "glowir.weight_var"() {mutability = "mutable", name = "s"} : () -> memref<i64>
  %add = "glowir.weight_var"() {mutability = "mutable", name = "add"} : () -> memref<3x4xi64>
  %sub = "glowir.weight_var"() {mutability = "mutable", name = "sub"} : () -> memref<3x4xi64>
  %mul = "glowir.weight_var"() {mutability = "mutable", name = "mul"} : () -> memref<3x4xi64>
  %div = "glowir.weight_var"() {mutability = "mutable", name = "div"} : () -> memref<3x4xi64>
  %max = "glowir.weight_var"() {mutability = "mutable", name = "max"} : () -> memref<3x4xi64>
  %min = "glowir.weight_var"() {mutability = "mutable", name = "min"} : () -> memref<3x4xi64>
  %ss = "glowir.weight_var"() {mutability = "mutable", name = "ss"} : () -> memref<i64>
  %fill = "glowir.weight_var"() {mutability = "mutable", name = "fill"} : () -> memref<3xi64>
  "glowir.element_add"(%add, %a, %b) : (memref<3x4xi64>, memref<3x4xi64>, memref<3x4xi64>) -> ()
  "glowir.element_sub"(%sub, %a, %b) : (memref<3x4xi64>, memref<3x4xi64>, memref<3x4xi64>) -> ()
  "glowir.element_mul"(%mul, %a, %b) : (memref<3x4xi64>, memref<3x4xi64>, memref<3x4xi64>) -> ()
  "glowir.element_div"(%div, %a, %b) : (memref<3x4xi64>, memref<3x4xi64>, memref<3x4xi64>) -> ()
  "glowir.element_max"(%max, %a, %b) : (memref<3x4xi64>, memref<3x4xi64>, memref<3x4xi64>) -> ()
  "glowir.element_min"(%min, %a, %b) : (memref<3x4xi64>, memref<3x4xi64>, memref<3x4xi64>) -> ()
  "glowir.element_mul"(%ss, %s, %s) : (memref<i64>, memref<i64>, memref<i64>) -> ()
  "glowir.splat"(%fill) {value = -3 : i64} : (memref<3xi64>) -> ()
  return
}
"""


def test_int64_elementwise(build) -> None:
    program = build(INTS)
    a = RNG.integers(-50, 50, (3, 4)).astype(np.int64)
    b = (RNG.integers(1, 9, (3, 4)) * RNG.choice([-1, 1], (3, 4))).astype(np.int64)
    a[0, 0] = 1 << 40  # beyond float precision: the arithmetic stays in i64
    truncated = np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))  # divsi truncates toward zero (ONNX Div)
    s = np.array(-3_000_000_007, np.int64)
    check(program({"a": a, "b": b, "s": s}),
          {"add": a + b, "sub": a - b, "mul": a * b, "div": truncated, "max": np.maximum(a, b), "min": np.minimum(a, b),
           "ss": s * s, "fill": np.full(3, -3, np.int64)})


def test_integer_division_never_traps(build) -> None:
    # x / 0 and INT_MIN / -1 trap in hardware (SIGFPE); the lowering guards both, so the process survives
    program = build(INTS)
    imin = np.iinfo(np.int64).min
    a = np.array([[7, -7, imin, 5]] * 3, np.int64)
    b = np.array([[0, 0, -1, -1]] * 3, np.int64)
    out = program({"a": a, "b": b, "s": np.array(1, np.int64)})
    np.testing.assert_array_equal(out["div"][0], [7, -7, imin, -5])


# --------------------------------------------------------------------------- booleans (i1 buffers, numpy bool)

MASK = np.array([True, False, False, True, True])

BOOLS = f"""
func.func @bools() attributes {{glowir.inputs = ["x"], glowir.outputs = ["t", "rows", "mask", "ones", "scalar"]}} {{
  %k = "glowir.weight_var"() {{mutability = "const", name = "k", value = {dense(MASK)}}} : () -> memref<5xi1>
  %x = "glowir.weight_var"() {{mutability = "mutable", name = "x"}} : () -> memref<3x5xi1>
  %t = "glowir.weight_var"() {{mutability = "mutable", name = "t"}} : () -> memref<5x3xi1>
  %rows = "glowir.weight_var"() {{mutability = "mutable", name = "rows"}} : () -> memref<2x5xi1>
  %mask = "glowir.weight_var"() {{mutability = "mutable", name = "mask"}} : () -> memref<2x5xi1>
  %ones = "glowir.weight_var"() {{mutability = "mutable", name = "ones"}} : () -> memref<7xi1>
  %scalar = "glowir.weight_var"() {{mutability = "mutable", name = "scalar"}} : () -> memref<i1>
  %tmp = "glowir.alloc_activation"() {{name = "tmp"}} : () -> memref<5x3xi1>
  "glowir.transpose"(%tmp, %x) {{shuffle = array<i64: 1, 0>}} : (memref<5x3xi1>, memref<3x5xi1>) -> ()
  "glowir.copy"(%t, %tmp) : (memref<5x3xi1>, memref<5x3xi1>) -> ()
  "glowir.dealloc_activation"(%tmp) : (memref<5x3xi1>) -> ()
  %last = "glowir.tensor_view"(%x) {{offsets = array<i64: 1, 0>}} : (memref<3x5xi1>) -> memref<2x5xi1>
  "glowir.copy"(%rows, %last) : (memref<2x5xi1>, memref<2x5xi1>) -> ()
  "glowir.broadcast"(%mask, %k) {{shape = array<i64: 2, 5>}} : (memref<2x5xi1>, memref<5xi1>) -> ()
  "glowir.splat"(%ones) {{value = true}} : (memref<7xi1>) -> ()
  %one = "glowir.tensor_view"(%x) {{offsets = array<i64: 2, 4>}} : (memref<3x5xi1>) -> memref<i1>
  "glowir.copy"(%scalar, %one) : (memref<i1>, memref<i1>) -> ()
  return
}}
"""


def test_booleans(build) -> None:
    program = build(BOOLS)
    x = RNG.random((3, 5)) > 0.5
    check(program({"x": x}), {"t": x.T, "rows": x[1:], "mask": np.broadcast_to(MASK, (2, 5)),
                              "ones": np.ones(7, np.bool_), "scalar": np.array(x[2, 4])})


# --------------------------------------------------------------------------- signatures and the runtime's files


def test_signature_roles_and_errors(ctx: ir.Context) -> None:
    module = ir.Module.parse("""
func.func @p() attributes {glowir.inputs = ["in"], glowir.outputs = ["out"]} {
  %0 = "glowir.weight_var"() {mutability = "mutable", name = "in"} : () -> memref<2xi64>
  %1 = "glowir.weight_var"() {mutability = "mutable", name = "out"} : () -> memref<2xi64>
  %2 = "glowir.weight_var"() {mutability = "mutable", name = "stray"} : () -> memref<2xi64>
  return
}""", ctx)
    with pytest.raises(CompileError, match=r"program @p: mutable weight 'stray' is neither an input \['in'\]"):
        program_signature(module.body.operations[0].operation)


def test_bad_role_is_refused(ctx: ir.Context) -> None:
    with pytest.raises(ValueError, match="argument roles"):
        JitProgram(ir.Module.parse("", ctx), "f", [Argument("x", (1,), np.dtype(np.float32), "scratch")])


def test_unlowered_module_is_a_compile_error(ctx: ir.Context) -> None:
    with pytest.raises(CompileError, match="JIT compilation of @f failed"):
        JitProgram(ir.Module.parse("func.func @f() { return }", ctx), "f", [])


def test_missing_function_is_a_compile_error(ctx: ir.Context) -> None:
    with pytest.raises(CompileError, match="no function @g with a C interface"):
        JitProgram(ir.Module.parse("llvm.func @f() { llvm.return }", ctx), "g", [])


def test_runtime_files_exist() -> None:
    assert tools_paths.c_runner_utils().endswith("libmlir_c_runner_utils.so")
    assert tools_paths.llvm_tool("llc").endswith("llvm/bin/llc")
    assert tools_paths.mlir_tool("mlir-opt").endswith("mlir/bin/mlir-opt")
