"""LLVM-dialect module -> machine code for a target, on several cores: relocatable object files that
:mod:`.orc` links into this process (the JIT) or that the compile cache stores.

The module is translated to LLVM IR once (MLIR's translation, in the calling thread), written to bitcode in memory,
and cut into ``parts`` by its functions: each part is the whole module read back in an LLVM context of its own, where
the functions of the other parts become declarations (``available_externally``, dropped by the first pass) and the
part's own internal functions become hidden externals, so the parts' objects link together. LLVM's optimizer and
code generator run on each part in a thread of its own; every LLVM call is a foreign call during which ctypes
releases the GIL, so the parts compile in parallel. Parts are balanced by the functions' sizes in LLVM-dialect ops
(largest first onto the lightest part); one part is the whole module as it is.

LLVM's own loop unrolling is off: the kernels arrive unrolled to their register tiles from MLIR, and LLVM's full
unrolling of the remaining loops (the window and channel loops of copies, fills and pooling, known trip counts) grew
their code several times over, the largest share of the code generator's time (inception_v1: 11.8 s of JIT with it).
"""

from __future__ import annotations

import heapq
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from mlir import ir

from ..errors import CompileError
from . import llvm_api
from .target import Target

#: LLVM's optimization pipeline for the generated code (the kernels are vectorized and tiled already)
PIPELINE = "default<O2>"
#: a function smaller than this many LLVM-dialect ops weighs this much (each part pays fixed costs per function)
MIN_WEIGHT = 16


@dataclass(frozen=True)
class CodegenOptions:
    """How :func:`compile_objects` generates code."""

    #: LLVM's optimization pipeline
    pipeline: str = PIPELINE
    #: let LLVM unroll loops (see the module docstring)
    unroll: bool = False
    #: position-independent code: ORC maps the objects at any address, far above the 2 GiB that absolute 32-bit
    #: relocations of the small code model reach (constant pools then failed to link); bundles need it too
    pic: bool = True


def function_weights(module: ir.Module) -> dict[str, int]:
    """Each defined ``llvm.func`` by name, with its size in ops (its blocks are flat after the LLVM lowering)."""
    weights = {}
    for op in module.body.operations:
        operation = op.operation
        if operation.name != "llvm.func" or not len(operation.regions[0].blocks):
            continue
        name = ir.StringAttr(operation.attributes["sym_name"]).value
        weights[name] = max(MIN_WEIGHT, sum(len(block.operations) for block in operation.regions[0].blocks))
    return weights


def partition(weights: dict[str, int], parts: int) -> list[set[str]]:
    """The functions cut into at most ``parts`` sets of near-equal weight (longest processing time first)."""
    parts = max(1, min(parts, len(weights)))
    heap = [(0, k) for k in range(parts)]
    sets: list[set[str]] = [set() for _ in range(parts)]
    for name, weight in sorted(weights.items(), key=lambda item: (-item[1], item[0])):
        load, k = heapq.heappop(heap)
        sets[k].add(name)
        heapq.heappush(heap, (load + weight, k))
    return [s for s in sets if s]


def _compile_part(code: bytes, own: set[str] | None, target: Target, options: CodegenOptions) -> bytes:
    """One object from the module's bitcode: the functions in ``own`` defined (None: all of them, as they are)."""
    llvm = llvm_api.library()
    context = llvm.LLVMContextCreate()
    machine = llvm_api.target_machine(target.triple, target.cpu, target.features, pic=options.pic)
    try:
        module = llvm_api.parse_bitcode(code, context)
        try:
            if own is not None:
                for function in llvm_api.functions(module):
                    if llvm.LLVMIsDeclaration(function):
                        continue
                    if llvm_api.function_name(function) in own:
                        if llvm.LLVMGetLinkage(function) in (llvm_api.INTERNAL_LINKAGE, llvm_api.PRIVATE_LINKAGE):
                            llvm.LLVMSetLinkage(function, llvm_api.EXTERNAL_LINKAGE)
                            llvm.LLVMSetVisibility(function, llvm_api.HIDDEN_VISIBILITY)
                    else:
                        llvm.LLVMSetLinkage(function, llvm_api.AVAILABLE_EXTERNALLY_LINKAGE)
                llvm_api.optimize(module, machine, "elim-avail-extern")
            llvm_api.set_target(module, machine, target.triple)
            llvm_api.optimize(module, machine, options.pipeline, unroll=options.unroll)
            return llvm_api.emit(module, machine)
        finally:
            llvm.LLVMDisposeModule(module)
    finally:
        llvm.LLVMDisposeTargetMachine(machine)
        llvm.LLVMContextDispose(context)


def compile_objects(module: ir.Module, target: Target, threads: int = 1,
                    options: CodegenOptions | None = None) -> list[bytes]:
    """Object files for ``module`` (the LLVM dialect) on ``target``, made on ``threads`` cores: one per part."""
    options = options or CodegenOptions()
    if not llvm_api.available():
        raise CompileError("LLVM's C API is not available on this host: cannot generate code in process")
    llvm = llvm_api.library()
    context = llvm.LLVMContextCreate()
    errors: list[str] = []

    def diagnostic(d: ir.Diagnostic) -> bool:
        errors.append(f"{d.location}: {d.message}")
        return True

    handler = module.context.attach_diagnostic_handler(diagnostic)
    try:
        try:
            translated = llvm_api.translate(module, context)
        except CompileError as e:
            raise CompileError(f"{e}: {'; '.join(errors) or 'no diagnostic'}") from None
        finally:
            handler.detach()
        try:
            code = llvm_api.bitcode(translated)
        finally:
            llvm.LLVMDisposeModule(translated)
    finally:
        llvm.LLVMContextDispose(context)
    sets = partition(function_weights(module), threads) if threads > 1 else []
    if len(sets) <= 1:
        return [_compile_part(code, None, target, options)]
    with ThreadPoolExecutor(max_workers=len(sets), thread_name_prefix="glow-llvm") as pool:
        return list(pool.map(lambda own: _compile_part(code, own, target, options), sets))


__all__ = ["CodegenOptions", "compile_objects", "function_weights", "partition"]
