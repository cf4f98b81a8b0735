"""Bundles cross-compiled for Cortex-M microcontrollers (thumbv7em-none-eabihf: Cortex-M4F, M7; with Helium,
thumbv8.1m.main-none-eabihf: Cortex-M55, run on QEMU's mps3-an547): the object is a
32-bit Arm EABI object with the hard-float ABI that needs nothing but libm and the C library's memory functions;
built into firmware by examples/bundle/cortex-m/build.sh (weights in flash, static regions, semihosting) and run
under qemu-system-arm (mps2-an386: Cortex-M4F; mps2-an500: Cortex-M7; mps3-an547: M55), its outputs equal the host JIT's within
1e-5. Needs gcc-arm-none-eabi, libnewlib-arm-none-eabi and qemu-system-arm (examples/bundle/install-cross-tools.sh);
skips naming the missing tool where they are absent. QEMU runs the instructions, not their timing: nothing here is
a speed figure."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, check_runner_outputs, model_path, runner_inputs

import glow_mlir.api as glow
from glow_mlir.backend.bundle import (
    TABLE_CALLER,
    call_graph,
    deepest_chain,
    defined_symbols,
    object_budget,
    stack_frames,
    undefined_symbols,
)
from glow_mlir.backend.tools_paths import llvm_tool
from glow_mlir.errors import CompileError

ARM_CC = shutil.which("arm-none-eabi-gcc")
QEMU = shutil.which("qemu-system-arm")
BUILD = ROOT / "examples" / "bundle" / "cortex-m" / "build.sh"
TRIPLE = "thumbv7em-none-eabihf"
#: QEMU's board for each CPU
BOARDS = {"cortex-m4": "mps2-an386", "cortex-m7": "mps2-an500", "cortex-m55": "mps3-an547"}
#: the triple of each CPU's architecture
TRIPLES = {"cortex-m4": TRIPLE, "cortex-m7": TRIPLE, "cortex-m55": "thumbv8.1m.main-none-eabihf"}
#: the C library's memory functions, also by their Arm EABI names (__aeabi_memset4...: newlib and libgcc have them)
LIBC = {"memcpy", "memmove", "memset"} | {f"__aeabi_{f}{n}" for f in ("memcpy", "memmove", "memset", "memclr")
                                          for n in ("", "4", "8")}
#: and the Arm run-time ABI's 64-bit integer helpers (libgcc, compiler-rt): code for size shifts int64 through them
LIBC |= {f"__aeabi_{f}" for f in ("llsl", "llsr", "lasr", "lmul", "ldivmod", "uldivmod")}
LIBM = re.compile(r"(exp|expm1|log|log1p|log2|log10|sqrt|cbrt|pow|erf|erfc|tanh|sinh|cosh|sin|cos|tan|asin|acos|atan"
                  r"|atan2|fmod|floor|ceil|round|trunc|fabs|fmin|fmax|fma)f?")
EM_ARM = 40
needs_tools = [
    pytest.mark.skipif(ARM_CC is None, reason="arm-none-eabi-gcc not installed (examples/bundle/install-cross-tools.sh)"),
    pytest.mark.skipif(QEMU is None, reason="qemu-system-arm not installed (examples/bundle/install-cross-tools.sh)"),
]


def _examples():
    """examples/bundle/cortex-m/budget.py as a module: the keyword spotter and the profile the README's budget
    table is made with."""
    spec = importlib.util.spec_from_file_location("cortex_m_budget", BUILD.parent / "budget.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _model(name: str, tmp: Path) -> Path:
    """A shared model's path, or the keyword-spotting network of examples/bundle/cortex-m/kws_model.py (with an
    input written beside it)."""
    return model_path(name) if name != "kws" else _examples().kws(tmp)


def _quantization(name: str, tmp: Path):
    """int8 from a profile of eight noisy copies of the model's input (channelwise weights)."""
    return _examples().quantization(_model(name, tmp))


def _bundle(name: str, cpu: str, tmp: Path, in_object: bool = False, quantization=None, opt_level: str = "O3"):
    options = glow.CompileOptions(threads=1, target_cpu=cpu, target_triple=TRIPLES[cpu], quantization=quantization)
    files, _ = glow.emit_bundle(str(_model(name, tmp)), tmp / "bundle",
                                glow.BundleOptions(target_cpu=cpu, weights_txt=not in_object,
                                                   weights_in_object=in_object, opt_level=opt_level), options)
    return files


def test_the_object_is_a_hard_float_arm_eabi_object_needing_only_libm(tmp_path: Path) -> None:
    files = _bundle("lenet5", "cortex-m4", tmp_path)
    head = files.object.read_bytes()[:20]
    # ELF32, little-endian, machine ARM
    assert head[:4] == b"\x7fELF" and head[4] == 1 and head[5] == 1 and int.from_bytes(head[18:20], "little") == EM_ARM
    needed = set(undefined_symbols(files.object))
    assert {s for s in needed if s not in LIBC and not LIBM.fullmatch(s)} == set()
    header = files.header.read_text()
    assert f"{TRIPLE}, CPU cortex-m4" in header
    # 32-bit index arithmetic: the lowered program's memref descriptors hold i32 offsets, sizes and strides
    (network,) = files.networks
    assert "dlti.dl_spec" in network.module.operation.attributes
    assert "!llvm.struct<(ptr, ptr, i32, array<4 x i32>, array<4 x i32>)>" in str(network.module)
    # the budget a firmware engineer reads: code, its read-only data, the deepest stack frame, as header macros
    assert files.budget is not None and files.budget.text > 1000 and 0 < files.budget.max_stack_frame < 64 << 10
    assert f"#define LENET5_BUNDLE_TEXT_SIZE {files.budget.text}" in header
    assert f"#define LENET5_BUNDLE_MAX_STACK_FRAME {files.budget.max_stack_frame}" in header
    # the stack an entry point needs: its deepest call chain, the frames summed
    budget = files.budget
    assert budget.stack_chain[0] == "lenet5" and len(budget.stack_chain) >= 2
    assert budget.max_stack_frame <= budget.stack < 4096
    assert f"#define LENET5_BUNDLE_STACK_SIZE {budget.stack}" in header
    if ARM_CC is not None:  # the build attributes say: floats in VFP registers, Thumb-2
        attributes = subprocess.run(["arm-none-eabi-readelf", "-A", str(files.object)], capture_output=True,
                                    text=True, check=True).stdout
        assert "Tag_ABI_VFP_args: VFP registers" in attributes and "Tag_CPU_arch: v7E-M" in attributes


def test_weights_in_the_object_are_an_aligned_read_only_section_with_a_symbol(tmp_path: Path) -> None:
    files = _bundle("digits_cnn", "cortex-m4", tmp_path, in_object=True)
    header = files.header.read_text()
    assert "#define DIGITS_CNN_WEIGHTS_IN_OBJECT 1" in header
    assert "extern const uint8_t digits_cnn_constantWeight[DIGITS_CNN_CONSTANT_MEM_SIZE];" in header
    assert "digits_cnn_constantWeight" in defined_symbols(files.object)
    sections = subprocess.run([llvm_tool("llvm-readelf"), "-S", str(files.object)], capture_output=True, text=True,
                              check=True).stdout
    (line,) = [row for row in sections.splitlines() if ".rodata.digits_cnn_weights" in row]
    fields = line.split()
    assert fields[-1] == "64" and "A" in fields[-4] and "W" not in fields[-4]  # aligned, allocated, read-only
    size = int(fields[fields.index("PROGBITS") + 3], 16)
    assert size == files.weights["digits_cnn"].stat().st_size  # the same bytes as ENTRY.weights.bin
    assert files.budget.rodata < 1024  # the code's budget leaves the weights out


def test_a_stack_bound_below_the_deepest_call_chain_is_an_error_naming_it(tmp_path: Path) -> None:
    options = glow.CompileOptions(threads=1, target_cpu="cortex-m4", target_triple=TRIPLE)
    model = str(_model("kws", tmp_path))
    files, _ = glow.emit_bundle(model, tmp_path / "fits", glow.BundleOptions(target_cpu="cortex-m4", max_stack=4096),
                                options)
    bound = files.budget.stack - 1
    chain = r" -> ".join(rf"{f} \(\d+ bytes\)" for f in files.budget.stack_chain)
    with pytest.raises(CompileError, match=rf"bundle kws needs {files.budget.stack} bytes of stack, more than the bound "
                                           rf"of {bound}: {chain}$"):
        glow.emit_bundle(model, tmp_path / "over", glow.BundleOptions(target_cpu="cortex-m4", max_stack=bound),
                         options)


@pytest.mark.parametrize("opt_level", ["O3", "Oz"])
def test_every_function_of_the_object_is_on_a_call_chain_from_the_entry_point(opt_level: str, tmp_path: Path) -> None:
    """The stack bound covers the whole object: Oz code calls a kernel called many times through a register loaded
    from a literal pool (blx r8), which the call graph counts too."""
    options = glow.CompileOptions(threads=1, target_cpu="cortex-m4", target_triple=TRIPLE)
    files, _ = glow.emit_bundle(str(_model("kws", tmp_path)), tmp_path / "b",
                                glow.BundleOptions(target_cpu="cortex-m4", opt_level=opt_level), options)
    graph = call_graph(files.object)
    reached, todo = set(), ["kws", *graph[TABLE_CALLER]]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += graph.get(name, ())
    assert set(stack_frames(files.object)) <= reached
    assert files.budget.stack >= files.budget.max_stack_frame


def test_the_stack_covers_partitions_the_entry_point_calls_through_its_table(tmp_path: Path) -> None:
    """With many partitions the entry point loops over its table of function pointers (data, not calls): the
    functions the table names are its callees all the same."""
    options = glow.CompileOptions(threads=1, target_cpu="cortex-m4", target_triple=TRIPLE)
    files, _ = glow.emit_bundle(str(model_path("bert_tiny_encoder")), tmp_path / "b",
                                glow.BundleOptions(target_cpu="cortex-m4", opt_level="Oz", partitions=16), options)
    assert len(call_graph(files.object)[TABLE_CALLER]) == 16
    assert files.budget.stack > files.budget.max_stack_frame
    assert files.budget.stack_chain[0] == "bert_tiny_encoder" and "_part" in files.budget.stack_chain[1]


#: code for size on x86-64: a tail call, on one branch, of an internal function with a big frame (``jmp <big>``, no
#: relocation), and a tail call the linker fills in right before the next function (objdump prints that function as
#: the placeholder target, ``jmp <c>``: it is no call, and taken for one it made a and c a recursion)
_TAIL_CALLS = """
declare void @ext(ptr)
define internal void @big(ptr %p) noinline minsize optsize {
  %buf = alloca [4096 x i8]
  call void @ext(ptr %buf)
  ret void
}
define void @a(ptr %p) noinline minsize optsize {
  tail call void @ext(ptr %p)
  ret void
}
define void @c(ptr %p) noinline minsize optsize {
  %buf = alloca [64 x i8]
  call void @a(ptr %buf)
  ret void
}
define void @root(ptr %p, i32 %x) noinline minsize optsize {
  call void @c(ptr %p)
  %zero = icmp eq i32 %x, 0
  br i1 %zero, label %then, label %else
then:
  tail call void @big(ptr %p)
  ret void
else:
  ret void
}
"""


def test_tail_calls_count_and_linker_placeholders_do_not(tmp_path: Path) -> None:
    source, obj = tmp_path / "calls.ll", tmp_path / "calls.o"
    source.write_text(_TAIL_CALLS)
    subprocess.run([llvm_tool("llc"), "-O2", "-mtriple=x86_64-unknown-linux-gnu", "-relocation-model=pic",
                    "-stack-size-section", "-filetype=obj", str(source), "-o", str(obj)], check=True)
    graph = call_graph(obj)
    assert graph["a"] == {"ext"} and graph["c"] == {"a"} and "big" in graph["root"]
    budget = object_budget(obj)
    assert budget.stack_chain[:2] == ("root", "big") and budget.stack >= 4096


def test_code_for_size_is_smaller(tmp_path: Path) -> None:
    options = glow.CompileOptions(threads=1, target_cpu="cortex-m4", target_triple=TRIPLE)
    model = str(_model("kws", tmp_path))
    text = {level: glow.emit_bundle(model, tmp_path / level, glow.BundleOptions(target_cpu="cortex-m4",
                                                                                opt_level=level), options)[0].budget.text
            for level in ("O3", "Os", "Oz")}
    assert text["Oz"] <= text["Os"] < 0.8 * text["O3"]
    with pytest.raises(CompileError, match="unknown optimization level 'O4'"):
        glow.emit_bundle(model, tmp_path / "x", glow.BundleOptions(opt_level="O4"), options)


def test_the_deepest_chain_sums_frames_and_refuses_recursion() -> None:
    graph = {"entry": {"a", "b"}, "a": {"memset"}, "b": {"c"}, "c": set(), "memset": set()}
    frames = {"entry": 16, "a": 200, "b": 64, "c": 100}
    assert deepest_chain(graph, frames, ["entry"]) == (216, ("entry", "a", "memset"))
    frames["c"] = 180
    assert deepest_chain(graph, frames, ["entry"]) == (260, ("entry", "b", "c"))
    graph["c"] = {"b"}
    with pytest.raises(CompileError, match="calls itself"):
        deepest_chain(graph, frames, ["entry"])


def test_a_bare_metal_bundle_has_one_thread(tmp_path: Path) -> None:
    options = glow.CompileOptions(threads=2, target_cpu="cortex-m4", target_triple=TRIPLE)
    with pytest.raises(CompileError, match="runs on one thread"):
        glow.emit_bundle(str(model_path("lenet5")), tmp_path, glow.BundleOptions(target_cpu="cortex-m4"), options)


@needs_tools[0]
@needs_tools[1]
@pytest.mark.parametrize(("name", "cpu", "in_object"), [("lenet5", "cortex-m4", False), ("mlp_mnist", "cortex-m4", False),
                                                        ("digits_cnn", "cortex-m7", False), ("kws", "cortex-m4", True),
                                                        ("kws", "cortex-m55", True)])
def test_firmware_runs_under_qemu_as_the_jit_does(name: str, cpu: str, in_object: bool, tmp_path: Path) -> None:
    # weights compiled in from ENTRY.weights.txt, or (in_object) linked from the bundle's own object
    _run_firmware(name, cpu, in_object, tmp_path)


@needs_tools[0]
@needs_tools[1]
@pytest.mark.parametrize(("name", "cpu", "opt_level"), [("kws", "cortex-m4", "O3"), ("kws", "cortex-m4", "Oz"),
                                                       ("kws", "cortex-m55", "O3"), ("digits_cnn", "cortex-m7", "O3")])
def test_int8_firmware_runs_under_qemu_as_the_host_int8_code_does(name: str, cpu: str, opt_level: str,
                                                                   tmp_path: Path) -> None:
    """Quantized from a profile: the Cortex-M code (generic int8 convolutions, the quantize's rounding in arith:
    newlib has no roundevenf; for speed or for size) computes the same integers as the host's int8 kernels (VNNI
    or int16 pairs)."""
    quantization = _quantization(name, tmp_path)
    files = _run_firmware(name, cpu, True, tmp_path, quantization, opt_level)
    needed = set(undefined_symbols(files.object))
    assert {s for s in needed if s not in LIBC and not LIBM.fullmatch(s)} == set()
    if name == "kws":  # int32 accumulators for one output row, not a layer's: 25 x 5 x 64 of them were 32000 bytes
        assert files.networks[0].program.memory.activations < 32000


def _run_firmware(name: str, cpu: str, in_object: bool, tmp_path: Path, quantization=None, opt_level: str = "O3"):
    """Build ``name``'s bundle for ``cpu`` into firmware, run it under QEMU on the model's .io.npz input and check
    its outputs against the host's code (JIT, or int8 with ``quantization``); returns the bundle's files."""
    files = _bundle(name, cpu, tmp_path, in_object, quantization, opt_level)
    model = _model(name, tmp_path)
    firmware = tmp_path / f"{name}.elf"
    build = ["sh", str(BUILD), str(files.directory), name, "--cpu", cpu, "-o", str(firmware)]
    built = subprocess.run(build + (["--weights-in-object"] if in_object else []), capture_output=True, text=True,
                           check=False)
    assert built.returncode == 0, built.stderr
    jit = glow.compile(model, threads=1, quantization=quantization)
    inputs, files_in, out = runner_inputs(jit, model, tmp_path)
    args = ["runner", *files_in, "--out", str(out)]
    semihosting = "enable=on,target=native," + ",".join(f"arg={a}" for a in args)
    done = subprocess.run([QEMU, "-M", BOARDS[cpu], "-nographic", "-monitor", "none", "-serial", "none",
                           "-semihosting-config", semihosting, "-kernel", str(firmware)], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    check_runner_outputs(jit, inputs, out, name)
    return files
