"""Ahead-of-time bundles (Glow's ``model-compiler -emit-bundle``): planned programs as one relocatable object file,
a C header and the constant weights, for linking into an application with no MLIR or Python at run time.

A bundle holds one or more networks (entry points). Each network is a glowir program whose memory is planned
(glowir-plan-memory), possibly cut into partitions (glowir-partition), lowered to the LLVM dialect. The files:

- ``NAME.o``: position-independent code for the target CPU (static code for a bare-metal triple such as
  ``thumbv7em-none-eabihf``: firmware links at fixed addresses): ``mlir-translate --mlir-to-llvmir`` of each network,
  ``llvm-link`` when there are several, ``opt -O3`` (the optimization the JIT applies too: without it loops are
  neither vectorized nor unrolled; ``-Os``/``-Oz`` with every function optsize/minsize for firmware whose flash is
  short), ``llc -O3 -stack-size-section -filetype=obj``, all from the pinned wheels; its
  budget (code, read-only data, deepest stack frame: :func:`object_budget`) goes into the header.
  It needs only libc and libm (``cc app.c NAME.o -lm``): the lowering calls no MLIR runtime library, and the memory
  plan holds the kernels' scratch buffers (the tiled matmul's packed B panels excepted: ``malloc``). Compiled with
  threads above 1, each network carries its own copy of the worker pool (:func:`embed_pool`), which starts its
  threads with ``pthread_create`` (``-lpthread`` on older C libraries).
- per network ``ENTRY.weights.bin``: the constantWeight region, each constant at its planned offset (64-byte
  aligned, the region's size exactly); with ``weights_txt`` also ``ENTRY.weights.txt``, the same bytes as a C
  array initializer (``uint8_t w[] = {\n#include "ENTRY.weights.txt"\n};``); with ``weights_in_object`` the same
  bytes in the object too, as the read-only symbol ``ENTRY_constantWeight`` (firmware links one object).
- ``NAME.h``: the C API (:func:`header_text`).

What each network exports, beside the internal code:

    int ENTRY(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations);   /* 0 on success */
    const struct GlowMlirPartition ENTRY_partitions[N];   /* {name, run, flops, activationBytes} */

The lowered program of a partition takes three memref descriptors (``memref<Nxi8>``, each expanded by the LLVM
lowering into allocated pointer, aligned pointer, offset, size, stride). For each, a C-ABI wrapper is written in the
LLVM dialect (:func:`entry_points_text`) that builds the descriptors from bare pointers and the planned sizes and
returns 0; the table lists the wrappers; ``ENTRY`` runs them in table order, stopping at the first that fails. An
unpartitioned network is one partition. Every other function of the object gets internal linkage, so several
bundles link into one program.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from mlir import ir

from ..errors import CompileError
from ..passes.conversion.ir_program import REGIONS, Program, UniqueNames
from ..passes.conversion.ir_to_linalg import ALIGNMENT
from ..passes.ir.partition import PartitionInfo
from . import machine_code, pool
from .target import bare_metal
from .tools_paths import llvm_tool, mlir_tool

#: a C identifier: what network and bundle names must be
C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: the most dimensions a tensor may have in the header's type table
MAX_RANK = 8
#: numpy dtype name -> the C type of one stored element (bool is stored as one byte, 0 or 1; a float16 as its IEEE
#: binary16 bits)
C_TYPES = {"float32": "float", "float64": "double", "float16": "uint16_t", "bfloat16": "uint16_t", "int64": "int64_t",
           "int32": "int32_t", "bool": "uint8_t", "int8": "int8_t", "uint8": "uint8_t", "int16": "int16_t",
           "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
           # the 4- and 2-bit integers one per byte, as the program takes them
           "int4": "int8_t", "uint4": "uint8_t", "int2": "int8_t", "uint2": "uint8_t",
           # the 8-bit floats as their bits, a 4-bit one in the low bits of its byte
           "float8_e4m3fn": "uint8_t", "float8_e4m3fnuz": "uint8_t", "float8_e5m2": "uint8_t",
           "float8_e5m2fnuz": "uint8_t", "float4_e2m1fn": "uint8_t", "float8_e8m0fnu": "uint8_t"}
#: one region argument of a lowered program, a memref<Nxi8> descriptor as the LLVM lowering expands it (``{index}``:
#: i64, or i32 on a target with 32-bit pointers)
_REGION_ARGS = ("!llvm.ptr", "!llvm.ptr", "{index}", "{index}", "{index}")
#: the partition table's element type: {const char *name; int (*run)(...); uint64_t flops; uint64_t activationBytes}
_ENTRY_TYPE = "!llvm.struct<(ptr, ptr, i64, i64)>"


@dataclass
class Network:
    """One entry point of a bundle: its planned glowir program (read before lowering: weights, offsets, region
    sizes) and the module it was lowered into, with its partitions in run order."""

    entry: str
    program: Program
    module: ir.Module
    partitions: list[PartitionInfo]
    #: the model it came from, for the header's comments
    model: str


@dataclass
class BundleFiles:
    """What :func:`write_bundle` wrote."""

    directory: Path
    object: Path
    header: Path
    weights: dict[str, Path]
    weights_txt: dict[str, Path] = field(default_factory=dict)
    #: the CPU the code was generated for (``native`` resolved to the host's name)
    target_cpu: str = ""
    networks: list[Network] = field(default_factory=list)
    #: code, its read-only data and the deepest stack frame of the object
    budget: Budget | None = None


def check_name(name: str, what: str) -> str:
    """``name`` if it is a C identifier, else a one-line error."""
    if not C_IDENTIFIER.match(name):
        raise CompileError(f"{what} '{name}' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*): the header and the "
                           "object name their symbols after it")
    return name


def c_identifier(text: str) -> str:
    """``text`` as a C identifier: other characters become ``_``, and a leading digit gets one before it."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", text) or "_"
    return "_" + name if name[0].isdigit() else name


def partition_symbol(entry: str, index: int) -> str:
    """The C-ABI function of a network's partition ``index``."""
    return f"{entry}_part{index}"


def program_symbol(entry: str, index: int) -> str:
    """The lowered program of a network's partition ``index`` (internal to the object)."""
    return f"{entry}_program{index}"


def name_programs(module: ir.Operation, entry: str, partitions: Sequence[PartitionInfo]) -> list[PartitionInfo]:
    """Rename the (partition) programs of a glowir module after the network, before lowering: the graph's own name
    could be the entry point's, and several networks share one object."""
    renamed = []
    for p in partitions:
        (func,) = [op for op in module.regions[0].blocks[0].operations if _func_name(op.operation) == p.name]
        new = replace(p, name=program_symbol(entry, p.index))
        func.operation.attributes["sym_name"] = ir.StringAttr.get(new.name)
        renamed.append(new)
    return renamed


def _func_name(op: ir.Operation) -> str | None:
    attrs = op.attributes
    return ir.StringAttr(attrs["sym_name"]).value if "sym_name" in attrs else None


# --- the object file ---------------------------------------------------------------------------------------------


def _index_type(module: ir.Module) -> str:
    """The LLVM type the lowering gave ``index``: i32 where cpu-index-bitwidth set a data layout, else i64."""
    return "i32" if "dlti.dl_spec" in module.operation.attributes else "i64"


def entry_points_text(network: Network) -> str:
    """The LLVM-dialect functions and table a network exports: one C-ABI wrapper per partition, the partition table,
    and the entry point that runs the table. Declarations of the lowered programs come first (for parsing)."""
    entry, sizes = network.entry, network.program.memory
    if sizes is None:
        raise CompileError(f"@{network.program.name}: its memory is not planned; a bundle needs the memory plan")
    n = len(network.partitions)
    index = _index_type(network.module)
    args = ", ".join(_REGION_ARGS * len(REGIONS)).format(index=index)
    lines = [f"llvm.func @{p.name}({args})" for p in network.partitions]
    for k, p in enumerate(network.partitions):
        symbol = partition_symbol(entry, k)
        call_args = []
        for ptr in ("%c", "%m", "%a"):
            call_args += [ptr, ptr, "%zero", f"%size_{ptr[1:]}", "%one"]
        lines += [
            f"llvm.func internal @{symbol}(%c: !llvm.ptr, %m: !llvm.ptr, %a: !llvm.ptr) -> i32 {{",
            f"  %zero = llvm.mlir.constant(0 : {index}) : {index}",
            f"  %one = llvm.mlir.constant(1 : {index}) : {index}",
            *(f"  %size_{r} = llvm.mlir.constant({s} : {index}) : {index}" for r, s in zip("cma", sizes.sizes())),
            f"  llvm.call @{p.name}({', '.join(call_args)}) : ({args}) -> ()",
            "  %ok = llvm.mlir.constant(0 : i32) : i32",
            "  llvm.return %ok : i32",
            "}",
            f'llvm.mlir.global private constant @{symbol}_name("{symbol}\\00") {{addr_space = 0 : i32}}',
        ]
    table = f"!llvm.array<{n} x {_ENTRY_TYPE}>"
    lines += [f"llvm.mlir.global external constant @{entry}_partitions() {{addr_space = 0 : i32}} : {table} {{",
              f"  %t0 = llvm.mlir.undef : {table}"]
    for k, p in enumerate(network.partitions):
        symbol = partition_symbol(entry, k)
        fields = [f"llvm.mlir.addressof @{symbol}_name : !llvm.ptr", f"llvm.mlir.addressof @{symbol} : !llvm.ptr",
                  f"llvm.mlir.constant({p.flops} : i64) : i64", f"llvm.mlir.constant({p.activation_bytes} : i64) : i64"]
        for j, value in enumerate(fields):
            step = 4 * k + j
            lines += [f"  %v{step} = {value}",
                      f"  %t{step + 1} = llvm.insertvalue %v{step}, %t{step}[{k}, {j}] : {table}"]
    lines += [f"  llvm.return %t{4 * n} : {table}", "}"]
    lines += [
        f"llvm.func @{entry}(%c: !llvm.ptr, %m: !llvm.ptr, %a: !llvm.ptr) -> i32 {{",
        "  %zero = llvm.mlir.constant(0 : i64) : i64",
        "  llvm.br ^next(%zero : i64)",
        "^next(%i: i64):",
        f"  %n = llvm.mlir.constant({n} : i64) : i64",
        "  %done = llvm.icmp \"uge\" %i, %n : i64",
        "  llvm.cond_br %done, ^success, ^run",
        "^run:",
        f"  %table = llvm.mlir.addressof @{entry}_partitions : !llvm.ptr",
        f"  %slot = llvm.getelementptr %table[0, %i, 1] : (!llvm.ptr, i64) -> !llvm.ptr, {table}",
        "  %fn = llvm.load %slot : !llvm.ptr -> !llvm.ptr",
        "  %rc = llvm.call %fn(%c, %m, %a) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32",
        "  %ok = llvm.mlir.constant(0 : i32) : i32",
        "  %failed = llvm.icmp \"ne\" %rc, %ok : i32",
        "  %one = llvm.mlir.constant(1 : i64) : i64",
        "  %after = llvm.add %i, %one : i64",
        "  llvm.cond_br %failed, ^failure(%rc : i32), ^next(%after : i64)",
        "^success:",
        "  %zero32 = llvm.mlir.constant(0 : i32) : i32",
        "  llvm.return %zero32 : i32",
        "^failure(%code: i32):",
        "  llvm.return %code : i32",
        "}",
    ]
    return "\n".join(lines) + "\n"


def embed_pool(module: ir.Module) -> None:
    """Put the worker pool (:mod:`.pool`) into ``module`` when its threaded kernels call it: a bundle has no JIT
    process to take it from. It becomes internal with the rest, so each network of a bundle has its own."""
    body = module.body
    symbols = {_func_name(op.operation): op.operation for op in body.operations}
    declaration = symbols.get(pool.ENTRY)
    if declaration is None or len(declaration.regions[0].blocks):
        return
    declaration.erase()
    with module.context:
        source = ir.Module.parse(pool.pool_text())  # held while its ops move: freeing it would free them
        for op in list(source.body.operations):
            name = _func_name(op.operation)
            if name in symbols and name != pool.ENTRY:
                if len(op.operation.regions) and len(op.operation.regions[0].blocks):
                    raise CompileError(f"the bundle's code defines @{name}, a symbol of the worker pool")
                continue  # a library function both declare
            body.append(op)


def add_entry_points(network: Network) -> None:
    """Give the lowered module of ``network`` its C API (:func:`entry_points_text`) and make everything else
    internal: the lowered programs, their C interfaces for the JIT (dropped), the worker pool and any helper
    functions."""
    module = network.module
    embed_pool(module)
    body = module.body
    defined = {}
    for op in list(body.operations):
        name = _func_name(op.operation)
        if op.operation.name == "llvm.func" and name is not None and name.startswith("_mlir_ciface_"):
            op.operation.erase()  # the JIT's calling convention; the bundle has its own
        elif name is not None:
            defined[name] = op.operation
    args = ", ".join(_REGION_ARGS * len(REGIONS)).format(index=_index_type(module))
    expected = f"!llvm.func<void ({args})>".replace("!llvm.ptr", "ptr")
    for p in network.partitions:
        op = defined.get(p.name)
        if op is None or op.name != "llvm.func":
            raise CompileError(f"the lowered module has no function @{p.name} for partition {p.index}")
        actual = str(ir.TypeAttr(op.attributes["function_type"]).value)
        if actual != expected:
            raise CompileError(f"@{p.name} was lowered to {actual}; a bundle expects the three planned regions, "
                               f"{expected}")
    ours = {network.entry, f"{network.entry}_partitions"}
    ours |= {s for k in range(len(network.partitions)) for s in (partition_symbol(network.entry, k),
                                                                  f"{partition_symbol(network.entry, k)}_name")}
    taken = sorted(ours & set(defined))
    if taken:
        raise CompileError(f"network name '{network.entry}' clashes with the generated code's symbol @{taken[0]}: "
                           "choose another")
    with module.context, ir.Location.unknown(module.context):
        internal = ir.Attribute.parse("#llvm.linkage<internal>")
        for op in defined.values():
            if op.name == "llvm.func" and len(op.regions[0].blocks):
                op.attributes["linkage"] = internal
        extra = ir.Module.parse(entry_points_text(network))
        for op in list(extra.body.operations)[len(network.partitions):]:  # the declarations stay behind
            body.append(op)
        module.operation.verify()


def host_triple() -> str:
    """The target triple of this machine, as the LLVM tools of the wheels see it."""
    return _run([llvm_tool("llvm-config"), "--host-target"], "llvm-config").strip()


def host_cpu() -> str:
    """The name LLVM gives this machine's CPU (what ``-mcpu=native`` selects)."""
    match = re.search(r"Host CPU:\s*(\S+)", _run([llvm_tool("llc"), "--version"], "llc"))
    return match.group(1) if match else "native"


def _run(command: list[str], what: str) -> str:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if "is not a recognized processor" in result.stderr:  # a warning only, but the code would be for no CPU at all
        first = result.stderr.strip().splitlines()[0].removesuffix(" (ignoring processor)")
        raise CompileError(f"{first.split(': ', 1)[-1]} (llc -mcpu=help lists the CPUs)")
    if result.returncode != 0:
        first = (result.stderr.strip().splitlines() or ["(no message)"])[0]
        raise CompileError(f"{what} failed (exit {result.returncode}): {first}; command: {' '.join(command)}")
    return result.stdout


#: the optimization levels a bundle is compiled at: opt's level, the function attributes that make LLVM's code
#: generation choose small code too (as clang's -Os and -Oz set them; opt's level alone leaves instruction selection
#: and unrolling in codegen as at -O2), and llc's level. ``O3`` is for speed: on a target with an operating system
#: it is the JIT's pipeline (:data:`SPEED_PIPELINE`), for firmware LLVM's -O3.
OPT_LEVELS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "O3": ("-O3", (), "-O3"),
    "O2": ("-O2", (), "-O2"),
    "Os": ("-Os", ("optsize",), "-O2"),
    "Oz": ("-Oz", ("optsize", "minsize"), "-O2"),
}
#: opt's and llc's flags of a bundle at ``O3`` for a target with an operating system: the pipeline the JIT runs
#: (:mod:`.machine_code`: LLVM's O2 passes without LLVM's loop unrolling, code generation at -O2), so that a bundle
#: runs the code the kernels were measured and tuned as. LLVM's -O3 unrolled the loops around the kernels' register
#: tiles again and made some of them far slower (haswell code of a 3x3 200->200 convolution at 14x14, Zen 5, one
#: core: 2.11 ms against 1.21; light_squeezenet 7.4-7.8 ms against 6.3; the host's AVX-512 code of resnet18,
#: mobilenet_v2, light_resnet50 and light_squeezenet level)
SPEED_PIPELINE: tuple[tuple[str, ...], str] = ((f"-passes={machine_code.PIPELINE}", "--disable-loop-unrolling"), "-O2")


def check_opt_level(level: str) -> str:
    """``level`` if it is one of :data:`OPT_LEVELS`, else a CompileError listing them."""
    if level not in OPT_LEVELS:
        raise CompileError(f"unknown optimization level '{level}' (one of {', '.join(OPT_LEVELS)})")
    return level


def compile_object(modules: Sequence[ir.Module], path: Path, target_cpu: str = "native", triple: str = "",
                   opt_level: str = "O3") -> None:
    """One object file (position-independent but for bare-metal targets) from LLVM-dialect modules for
    ``target_cpu`` on ``triple`` (default: the host's): translate each, link them, optimize at ``opt_level``
    (:data:`OPT_LEVELS`: ``O3`` for speed, ``Os``/``Oz`` for code size), generate code."""
    opt_flag, attributes, llc_flag = OPT_LEVELS[check_opt_level(opt_level)]
    triple = triple or host_triple()
    opt_flags = (opt_flag,)
    if opt_level == "O3" and not bare_metal(triple):
        opt_flags, llc_flag = SPEED_PIPELINE
    with tempfile.TemporaryDirectory(prefix="glow-bundle-") as tmp:
        files = []
        for i, module in enumerate(modules):
            mlir_file, ll_file = os.path.join(tmp, f"{i}.mlir"), os.path.join(tmp, f"{i}.ll")
            Path(mlir_file).write_text(module.operation.get_asm(large_elements_limit=None))
            _run([mlir_tool("mlir-translate"), "--mlir-to-llvmir", mlir_file, "-o", ll_file], "mlir-translate")
            files.append(ll_file)
        linked = files[0]
        if len(files) > 1:
            linked = os.path.join(tmp, "linked.bc")
            _run([llvm_tool("llvm-link"), *files, "-o", linked], "llvm-link")
        optimized = os.path.join(tmp, "optimized.bc")
        target = [f"-mtriple={triple}", f"-mcpu={target_cpu}"]
        forced = [f"-force-attribute={a}" for a in attributes]  # on every function
        _run([llvm_tool("opt"), *opt_flags, *forced, *target, linked, "-o", optimized], "opt")
        # firmware links statically at fixed addresses; everything else gets position-independent code
        relocation = "static" if bare_metal(triple) else "pic"
        _run([llvm_tool("llc"), llc_flag, f"-relocation-model={relocation}", "-stack-size-section", "-filetype=obj",
              *target, optimized, "-o", str(path)], "llc")


@dataclass(frozen=True)
class Budget:
    """What a firmware engineer budgets for a bundle's object: code bytes (``.text``), read-only data of the code
    (``.rodata``: constants of the kernels, not the weights), the deepest stack frame of any of its functions
    (``llc -stack-size-section``) and the stack its entry points need: the deepest call chain, its frames summed
    (:func:`call_graph`; the C library's own frames, memset or expf, come on top: ``external`` names them)."""

    text: int
    rodata: int
    max_stack_frame: int
    #: the most stack any exported function needs (its frame plus its deepest callee's, recursively)
    stack: int = 0
    #: the call chain that needs it, from the entry point down
    stack_chain: tuple[str, ...] = ()
    #: the functions the object calls but does not define (the C library's), whose frames are not counted
    external: tuple[str, ...] = ()


#: a disassembled function's first line (``00000298 <name>:``)
_FUNCTION_LINE = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
#: an instruction naming the start of a symbol as its target or in its comment (``bl 0x298 <name>``, ``je 0x40
#: <name>``, ``cbz r0, 0x40 <name>``, ``lea rdi, [rip + 0x..] # 0x1234 <task>``): a call, a tail call (conditional
#: ones too) or an address taken; ``<name+0x10>`` is a branch inside a function or a literal
_NAMED_TARGET = re.compile(r"<([^>+]+)>")
#: a relocation line of the disassembly (``00000086:  R_ARM_THM_CALL fminf``) and its symbol
_RELOCATION = re.compile(r"^\s+[0-9a-f]+:\s+R_\w+\s+([\w.$]+)")
#: the relocation records of a data section (``llvm-objdump -r``): ``RELOCATION RECORDS FOR [.data.rel.ro]:``
_RECORDS = re.compile(r"^RELOCATION RECORDS FOR \[([^\]]+)\]:")


def call_graph(object_file: str | os.PathLike) -> dict[str, set[str]]:
    """Who may call whom in an object: each function's callees, read from its disassembly (``llvm-objdump -d -r``):
    every function or external symbol an instruction names (a call, a tail call, conditional or not, an address
    taken: code for size calls a kernel called many times through a register loaded from a literal pool, ``blx
    r8``); where the linker fills in the target (a relocation on the instruction), the relocation's symbol, not the
    placeholder objdump prints. A task the worker pool runs counts as called by the function that hands it over
    (which runs tasks itself). Functions named in data (the partition table the entry point calls through) are
    callees of every exported function: :data:`TABLE_CALLER` stands for them."""
    tool = llvm_tool("llvm-objdump")
    text = _run([tool, "-d", "-r", "--no-show-raw-insn", str(object_file)], "llvm-objdump")
    graph: dict[str, set[str]] = {}
    named: dict[str, set[str]] = {}
    current, pending = None, None

    def commit() -> None:
        if current is not None and pending is not None:
            named[current].add(pending)

    for line in text.splitlines():
        head = _FUNCTION_LINE.match(line)
        if head:
            commit()
            current, pending = head.group(1), None
            graph.setdefault(current, set())
            named.setdefault(current, set())
            continue
        if current is None:
            continue
        relocation = _RELOCATION.match(line)
        if relocation:  # the instruction above is filled in by the linker: its printed target is a placeholder
            named[current].add(relocation.group(1))
            pending = None
            continue
        commit()
        target = _NAMED_TARGET.search(line.split(">:", 1)[-1]) if "\t" in line else None
        pending = target.group(1) if target else None
    commit()
    # the symbols defined as data (tables, constants, sections) are not callees; external ones are functions
    nm = _run([llvm_tool("llvm-nm"), "--defined-only", "--format=just-symbols", str(object_file)], "llvm-nm")
    data = set(nm.split()) - set(graph)
    for name, symbols in named.items():
        graph[name] |= {s for s in symbols if s not in data and not s.startswith(".")}
        graph[name].discard(name)
    # functions whose addresses data holds (the partition table): reached through it from the entry points
    records = _run([tool, "-r", str(object_file)], "llvm-objdump")
    section, tabled = None, set()
    for line in records.splitlines():
        head = _RECORDS.match(line)
        if head:
            section = head.group(1)
            continue
        fields = line.split()  # offset, type, symbol[+-addend]
        if section is None or section.startswith((".rel.text", ".rela.text", ".text")) or len(fields) < 3:
            continue
        symbol = re.split(r"[+-]", fields[2])[0]
        if symbol in graph:
            tabled.add(symbol)
    graph[TABLE_CALLER] = tabled
    return graph


#: the call graph's stand-in for "a function named in data": an exported function may call any of them
TABLE_CALLER = "<functions named in data>"


def stack_frames(object_file: str | os.PathLike) -> dict[str, int]:
    """Each function's stack frame in bytes (``llc -stack-size-section``, read with llvm-readobj; functions that
    share their code each get the frame)."""
    stacks = _run([llvm_tool("llvm-readobj"), "--stack-sizes", str(object_file)], "llvm-readobj")
    return {name.strip(): int(size, 16)
            for names, size in re.findall(r"Functions: \[([^\]]+)\]\s+Size: (0x[0-9a-fA-F]+)", stacks)
            for name in names.split(",")}


def deepest_chain(graph: dict[str, set[str]], frames: dict[str, int],
                  roots: Sequence[str]) -> tuple[int, tuple[str, ...]]:
    """The call chain from one of ``roots`` whose frames sum highest: (bytes, the chain). Functions without a frame
    (external ones) count 0. A recursive call is a CompileError: no bound exists."""
    done: dict[str, tuple[int, tuple[str, ...]]] = {}
    active: set[str] = set()

    def visit(name: str) -> tuple[int, tuple[str, ...]]:
        if name in done:
            return done[name]
        if name in active:
            raise CompileError(f"the bundle's function {name} calls itself (through others): its stack has no bound")
        active.add(name)
        below = max((visit(callee) for callee in graph.get(name, ())), default=(0, ()))
        active.discard(name)
        done[name] = (frames.get(name, 0) + below[0], (name, *below[1]))
        return done[name]

    return max((visit(root) for root in roots), default=(0, ()))


def object_budget(object_file: str | os.PathLike) -> Budget:
    """The :class:`Budget` of an object file, read with llvm-size, llvm-readobj and llvm-objdump."""
    sizes = _run([llvm_tool("llvm-size"), "-A", str(object_file)], "llvm-size")
    section = {}
    for line in sizes.splitlines()[2:]:
        fields = line.split()
        if len(fields) >= 2 and fields[1].isdigit():
            section[fields[0]] = section.get(fields[0], 0) + int(fields[1])
    frames = stack_frames(object_file)
    graph = call_graph(object_file)
    exported = [name for name in defined_symbols(object_file) if name in graph]
    for name in exported:  # the entry point calls the partition table's functions through it
        graph[name] = graph[name] | graph[TABLE_CALLER]
    stack, chain = deepest_chain(graph, frames, exported)
    # every function on its own too: one no call reaches (a caller this reading missed) still counts with its own
    # chain, never less than its frame
    others = deepest_chain(graph, frames, [f for f in graph if f != TABLE_CALLER])
    if others[0] > stack:
        stack, chain = others
    external = sorted(set(undefined_symbols(object_file)) & {c for callees in graph.values() for c in callees})
    return Budget(section.get(".text", 0), sum(v for k, v in section.items() if k.startswith(".rodata")),
                  max(frames.values(), default=0), stack, chain, tuple(external))


def undefined_symbols(object_file: str | os.PathLike) -> list[str]:
    """The symbols an object file needs from elsewhere (``nm -u``)."""
    out = _run([llvm_tool("llvm-nm"), "--undefined-only", "--format=just-symbols", str(object_file)], "llvm-nm")
    return sorted(line.strip() for line in out.splitlines() if line.strip())


def defined_symbols(object_file: str | os.PathLike) -> list[str]:
    """The symbols an object file exports (``nm --defined-only -g``)."""
    out = _run([llvm_tool("llvm-nm"), "--defined-only", "--extern-only", "--format=just-symbols", str(object_file)],
               "llvm-nm")
    return sorted(line.strip() for line in out.splitlines() if line.strip())


# --- the weights -------------------------------------------------------------------------------------------------


def weights_blob(program: Program) -> bytes:
    """The constantWeight region of a planned program: each constant's bytes at its offset, zeros between."""
    assert program.memory is not None
    blob = np.zeros(program.memory.constant_weights, dtype=np.uint8)
    for w in program.constants:
        data = np.ascontiguousarray(w.numpy(), dtype=w.dtype).reshape(-1).view(np.uint8)
        if w.offset is None or w.offset + data.size > blob.size:
            raise CompileError(f"constant '{w.name}' at offset {w.offset} does not fit the {blob.size}-byte "
                               "constantWeight region")
        blob[w.offset: w.offset + data.size] = data
    return blob.tobytes()


def weights_initializer(blob: bytes) -> str:
    """The bytes as the body of a C array initializer, 16 a line."""
    table = np.array([f"0x{b:02X}," for b in range(256)])
    cells = table[np.frombuffer(blob, dtype=np.uint8)]
    return "".join(" ".join(cells[i: i + 16]) + "\n" for i in range(0, len(cells), 16))


# --- the header --------------------------------------------------------------------------------------------------

_COMMON = """\
// ---------------------------------------------------------------
//                       Common definitions
// ---------------------------------------------------------------
#ifndef _GLOW_BUNDLE_COMMON_DEFS
#define _GLOW_BUNDLE_COMMON_DEFS

// Glow bundle error code for correct execution.
#define GLOW_SUCCESS 0

// Type describing a symbol table entry of a generated bundle (as Glow's bundles have it).
struct SymbolTableEntry {
  // Name of a variable.
  const char *name;
  // Offset of the variable inside the memory area (mutableWeight if mutable, else constantWeight).
  uint64_t offset;
  // The size of this variable in bytes.
  uint64_t size;
  // Variable kind: 1 if it is a mutable variable (an input or output), 0 otherwise.
  char kind;
};

#endif

#ifndef _GLOW_MLIR_BUNDLE_DEFS
#define _GLOW_MLIR_BUNDLE_DEFS

// The most dimensions a symbol has.
#define GLOW_MLIR_MAX_RANK %(max_rank)d

// Element type and shape of a symbol: entry i describes symbol table entry i.
struct GlowMlirSymbolType {
  // "float32", "float64", "int64", "int32" or "bool" (one byte, 0 or 1).
  const char *elementType;
  uint64_t elementSize;
  uint64_t rank;
  uint64_t shape[GLOW_MLIR_MAX_RANK];
};

// One partition of a network: a contiguous range of its instructions, run on the same three regions. The entry
// point runs the partitions in table order; running them one by one in that order does the same.
struct GlowMlirPartition {
  const char *name;
  int (*run)(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations);
  // 2 * multiply-accumulates of the contractions, one per element for the other instructions.
  uint64_t flops;
  // Bytes of the activations region in use while the partition runs (its tensors and those alive across it).
  uint64_t activationBytes;
};

#endif
"""


def _c_string(text: str) -> str:
    """A C string literal holding ``text`` (UTF-8; quotes, backslashes and non-printable bytes escaped)."""
    out = []
    for b in text.encode():
        c = chr(b)
        out.append("\\" + c if c in '"\\' else c if 32 <= b < 127 and c != "?" else f"\\{b:03o}")
    return '"' + "".join(out) + '"'


@dataclass(frozen=True)
class _Symbol:
    name: str
    offset: int
    size: int
    kind: int
    dtype: np.dtype
    shape: tuple[int, ...]


def _symbols(program: Program) -> list[_Symbol]:
    """The symbol table of a program: its inputs, its outputs (mutable, kind 1), then its constants (kind 0)."""
    out = []
    for w in (*program.input_vars, *program.output_vars, *program.constants):
        if len(w.shape) > MAX_RANK:
            raise CompileError(f"'{w.name}' has {len(w.shape)} dimensions; the bundle header holds at most {MAX_RANK}")
        out.append(_Symbol(w.name, w.offset if w.offset is not None else -1, w.size_in_bytes,
                           0 if w.mutability == "const" else 1, w.dtype, w.shape))
    return out


def weights_symbol(entry: str) -> str:
    """The symbol of a network's constant weights when they are in the object (``--weights-in-object``)."""
    return f"{entry}_constantWeight"


def embed_weights(object_file: Path, blobs: dict[str, bytes], directory: Path) -> None:
    """Add each network's constant weights to ``object_file`` as a read-only data section of its own
    (``.rodata.ENTRY_weights``, 64-byte aligned) with a global symbol at its start (:func:`weights_symbol`), so that
    firmware links one object and its weights land in flash."""
    objcopy = llvm_tool("llvm-objcopy")
    for entry, blob in blobs.items():
        section, data = f".rodata.{entry}_weights", directory / f".{entry}.weights.section"
        data.write_bytes(blob or b"\0")
        try:
            _run([objcopy, f"--add-section={section}={data}", f"--set-section-flags={section}=alloc,readonly,data",
                  f"--add-symbol={weights_symbol(entry)}={section}:0,global,object", str(object_file)], "llvm-objcopy")
            # in a second run: the alignment of a section added in the same run is not applied
            _run([objcopy, f"--set-section-alignment={section}={ALIGNMENT}", str(object_file)], "llvm-objcopy")
        finally:
            data.unlink()


def _network_section(network: Network, weights_in_object: bool = False) -> list[str]:
    entry, program = network.entry, network.program
    assert program.memory is not None
    upper = entry.upper()
    symbols = _symbols(program)
    io = symbols[: len(program.inputs) + len(program.outputs)]
    lines = ["// ---------------------------------------------------------------",
             f"//   Network {entry}: model {network.model}, program @{program.name}",
             "// ---------------------------------------------------------------",
             "// Inputs and outputs, inside the mutableWeight region:"]
    for k, s in enumerate(io):
        role = "input " if k < len(program.inputs) else "output"
        lines.append(f"//   {role} '{s.name}': {s.dtype.name} {list(s.shape)}, {s.size} bytes at offset {s.offset}")
    macros: list[tuple[str, str, str]] = [  # (name, value, comment before it)
        (f"{upper}_CONSTANT_MEM_SIZE", str(program.memory.constant_weights), "Memory sizes (bytes)."),
        (f"{upper}_MUTABLE_MEM_SIZE", str(program.memory.mutable_weights), ""),
        (f"{upper}_ACTIVATIONS_MEM_SIZE", str(program.memory.activations), ""),
        (f"{upper}_MEM_ALIGN", str(ALIGNMENT), "Memory alignment (bytes): each region must start at a multiple."),
        (f"{upper}_NUM_INPUTS", str(len(program.inputs)), "Inputs and outputs: the first symbols of the table."),
        (f"{upper}_NUM_OUTPUTS", str(len(program.outputs)), ""),
    ]
    namer = UniqueNames()
    comment = "Input and output offsets within the mutableWeight region (bytes), sizes (bytes), types and shapes."
    for s in io:
        base = f"{upper}_{namer.take(c_identifier(s.name))}"
        macros += [(base, str(s.offset), comment), (f"{base}_SIZE", str(s.size), ""),
                   (f"{base}_TYPE", C_TYPES[s.dtype.name], ""), (f"{base}_RANK", str(len(s.shape)), ""),
                   (f"{base}_SHAPE", "{" + ", ".join(str(d) for d in s.shape) + "}", "")]
        comment = ""
    macros += [(f"{upper}_NUM_SYMBOLS", str(len(symbols)), ""),
               (f"{upper}_NUM_PARTITIONS", str(len(network.partitions)), "")]
    names = [m for m, _, _ in macros]
    clash = sorted({m for m in names if names.count(m) > 1})
    if clash:
        raise CompileError(f"network '{entry}': two header macros would be named {clash[0]}: rename the model's "
                           "inputs or outputs")
    lines += ["", "#ifdef __cplusplus", 'extern "C" {', "#endif"]
    for name, value, before in macros:
        if before:
            lines += ["", f"// {before}"]
        lines.append(f"#define {name} {value}")
    lines += ["", (f"// Symbol table: the {len(io)} inputs and outputs (kind 1, in mutableWeight), then the "
                   f"{len(symbols) - len(io)} constant weights (kind 0, in constantWeight: {entry}.weights.bin)."),
              f"static const struct SymbolTableEntry {entry}_symbols[{upper}_NUM_SYMBOLS] = {{"]
    lines += [f"  {{{_c_string(s.name)}, {s.offset}, {s.size}, {s.kind}}}," for s in symbols]
    lines += ["};", "", "// Element type and shape of each symbol, in symbol table order.",
              f"static const struct GlowMlirSymbolType {entry}_symbol_types[{upper}_NUM_SYMBOLS] = {{"]
    lines += [f"  {{\"{s.dtype.name}\", {s.dtype.itemsize}, {len(s.shape)}, {{{', '.join(map(str, s.shape))}}}}},"
              for s in symbols]
    lines += ["};", "", f"// Partitions, run in this order by {entry}():"]
    lines += [f"//   {partition_symbol(entry, p.index)}: {p.flops} FLOPs, {p.activation_bytes} activation bytes"
              for p in network.partitions]
    if weights_in_object:
        lines += ["", "// The constant weights are in the object (read-only data: flash): pass this as constantWeight.",
                  f"#define {upper}_WEIGHTS_IN_OBJECT 1",
                  f"extern const uint8_t {weights_symbol(entry)}[{upper}_CONSTANT_MEM_SIZE];"]
    lines += [f"extern const struct GlowMlirPartition {entry}_partitions[{upper}_NUM_PARTITIONS];", "",
              "// Bundle entry point (inference function): reads the inputs from and writes the outputs to",
              "// mutableWeight, uses activations as scratch; returns GLOW_SUCCESS (0) on success.",
              f"int {entry}(uint8_t *constantWeight, uint8_t *mutableWeight, uint8_t *activations);",
              "", "#ifdef __cplusplus", "}", "#endif", ""]
    return lines


def budget_lines(name: str, budget: Budget) -> list[str]:
    """The header's macros of the object's budget (bytes): code, its read-only data, the deepest stack frame and
    the stack of the deepest call chain."""
    upper = name.upper()
    external = ", ".join(budget.external) or "none"
    return ["// The object's budget (bytes): code (.text), the code's read-only data (.rodata: flash beside each",
            "// network's constant weights), the deepest stack frame of its functions, and the stack an entry",
            f"// point needs: its deepest call chain ({' -> '.join(budget.stack_chain)}), plus the frames of",
            f"// the C library functions it calls ({external}).",
            f"#define {upper}_BUNDLE_TEXT_SIZE {budget.text}",
            f"#define {upper}_BUNDLE_RODATA_SIZE {budget.rodata}",
            f"#define {upper}_BUNDLE_MAX_STACK_FRAME {budget.max_stack_frame}",
            f"#define {upper}_BUNDLE_STACK_SIZE {budget.stack}", ""]


def header_text(name: str, networks: Sequence[Network], target: str, budget: Budget | None = None,
                weights_in_object: bool = False) -> str:
    """The bundle's C header: common types, then per network its memory sizes and alignment (Glow's
    ``NAME_CONSTANT_MEM_SIZE``... macros), the offset, size, C type, rank and shape of every input and output, the
    symbol table (Glow's ``SymbolTableEntry``) with a parallel table of element types and shapes, the partition
    table and the entry point."""
    guard = f"_GLOW_MLIR_BUNDLE_{name.upper()}_H"
    lines = ["// Bundle API header generated by glow_mlir (glow-compile --emit-bundle). Do not edit.",
             f"// Target: {target}. Link: cc app.c {name}.o -lm", "",
             f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
             _COMMON % {"max_rank": MAX_RANK}]
    if budget is not None:
        lines += budget_lines(name, budget)
    for network in networks:
        lines += _network_section(network, weights_in_object)
    lines += [f"#endif  // {guard}", ""]
    return "\n".join(lines)


# --- the whole bundle --------------------------------------------------------------------------------------------


def write_bundle(directory: str | os.PathLike, name: str, networks: Sequence[Network], target_cpu: str = "native",
                 weights_txt: bool = False, triple: str = "", weights_in_object: bool = False,
                 max_stack: int = 0, opt_level: str = "O3") -> BundleFiles:
    """Write ``NAME.o``, ``NAME.h`` and each network's weights into ``directory`` (created if needed); with
    ``weights_in_object`` the weights are also in the object (:func:`embed_weights`). With ``max_stack`` (bytes), an
    entry point whose deepest call chain needs more stack is a CompileError naming the chain; ``opt_level`` as
    :func:`compile_object` takes it."""
    check_name(name, "bundle name")
    entries = [check_name(n.entry, "network name") for n in networks]
    if not entries or len(set(entries)) != len(entries):
        raise CompileError(f"a bundle needs one or more networks with distinct names, got {entries}")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for network in networks:
        add_entry_points(network)
    files = BundleFiles(out, out / f"{name}.o", out / f"{name}.h", {}, networks=list(networks))
    compile_object([n.module for n in networks], files.object, target_cpu, triple, opt_level)
    files.target_cpu = host_cpu() if target_cpu == "native" else target_cpu
    files.budget = object_budget(files.object)  # the code's own: before any weights join it
    if max_stack and files.budget.stack > max_stack:
        frames = stack_frames(files.object)
        chain = " -> ".join(f"{f} ({frames.get(f, 0)} bytes)" for f in files.budget.stack_chain)
        raise CompileError(f"bundle {name} needs {files.budget.stack} bytes of stack, more than the bound of "
                           f"{max_stack}: {chain}")
    if weights_in_object:
        embed_weights(files.object, {n.entry: weights_blob(n.program) for n in networks}, out)
    for network in networks:
        blob = weights_blob(network.program)
        files.weights[network.entry] = out / f"{network.entry}.weights.bin"
        files.weights[network.entry].write_bytes(blob)
        if weights_txt:
            files.weights_txt[network.entry] = out / f"{network.entry}.weights.txt"
            files.weights_txt[network.entry].write_text(weights_initializer(blob))
    files.header.write_text(header_text(name, networks, f"{triple or host_triple()}, CPU {files.target_cpu}",
                                        files.budget, weights_in_object))
    return files
