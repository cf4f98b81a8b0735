"""linalg-outline-kernels: every linalg op of a lowered program becomes a call to a private kernel function, and
identical kernels are one function (across the programs of a module too: the partitions of a network).

Why: LLVM's loop passes (loop vectorization and load elimination above all) take time that grows faster than linearly
with the size of a function. A network lowered into one function of hundreds of loop nests took minutes to JIT
(mobilenet_v2: about 3 minutes at -O3) where the same loops as separate functions take seconds; sharing identical
kernels (a network repeats its layers) shrinks the code further. This is also the shape of Glow's CPU backend, where
each instruction calls a kernel, and it gives later per-kernel schedules one function to work on.

A kernel takes the op's operands (memrefs and scalars) as arguments, and any value its body captures from the program
too, except ``arith.constant`` values, which are cloned into the kernel so that the loop body keeps them as constants.
Kernels are marked ``noinline``: inlining them back would rebuild the large function.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from ..registry import Pass
from .ir_program import is_program

#: the function attribute LLVM translation turns into function attributes (here: noinline)
_PASSTHROUGH = "passthrough"


def _captured(op: ir.Operation) -> list[ir.Value]:
    """Values used inside ``op``'s regions but defined outside ``op``, in first-use order."""
    defined: set[ir.Value] = set()
    used: dict[ir.Value, None] = {}

    def visit(nested: ir.Operation) -> ir.WalkResult:
        for region in nested.regions:
            for block in region.blocks:
                defined.update(block.arguments)
        if nested != op:
            defined.update(nested.results)
            used.update(dict.fromkeys(nested.operands))
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    return [v for v in used if v not in defined]


def _is_constant(value: ir.Value) -> bool:
    return isinstance(value, ir.OpResult) and value.owner.operation.name == "arith.constant"


def _remap(op: ir.Operation, mapping: dict[ir.Value, ir.Value]) -> None:
    """Replace, in ``op`` and everything nested in it, every operand found in ``mapping``."""

    def visit(nested: ir.Operation) -> ir.WalkResult:
        for i, v in enumerate(nested.operands):
            if v in mapping:
                nested.operands[i] = mapping[v]
        return ir.WalkResult.ADVANCE

    op.walk(visit)


def outline(op: ir.Operation, program: ir.Operation, name: str) -> tuple[func.FuncOp, ir.Operation]:
    """A private noinline kernel function ``name`` running ``op`` (inserted before ``program``), and the call to it
    that replaces ``op``."""
    captured = _captured(op)
    # operands are arguments, constants included (one fill kernel per shape, whatever its value); a constant the body
    # captures is cloned into the kernel, where it stays a constant of the loop body
    args = list(dict.fromkeys([*op.operands, *(v for v in captured if not _is_constant(v))]))
    outer = list(dict.fromkeys([*args, *captured]))
    with ir.InsertionPoint(program), op.location:
        kernel = func.FuncOp(name, ([v.type for v in args], []))
        kernel.attributes["sym_visibility"] = ir.StringAttr.get("private")
        kernel.attributes[_PASSTHROUGH] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
        entry = kernel.add_entry_block()
        with ir.InsertionPoint(entry):
            mapping: dict[ir.Value, ir.Value] = dict(zip(args, entry.arguments))
            for v in outer:
                if v not in mapping:
                    mapping[v] = v.owner.operation.clone().results[0]
            _remap(op.clone(), mapping)
            func.ReturnOp([])
    with ir.InsertionPoint(op), op.location:
        call = func.CallOp([], ir.FlatSymbolRefAttr.get(name), args)
    op.erase()
    return kernel, call.operation


def _text_without_name(kernel: func.FuncOp, name: str) -> str:
    """The kernel's text with its own name left out: equal for kernels that do the same thing. Printed in its local
    scope: ``str()`` numbers values and aliases over the whole module, at a cost in the module's size per kernel
    (mobilenet_v2: 0.46 s of the pass's 0.69)."""
    text = kernel.operation.get_asm(use_local_scope=True, assume_verified=True)
    return text.replace(f"@{name}(", "@(", 1)


def outline_kernels(program: ir.Operation, taken: set[str], known: dict[str, str] | None = None) -> int:
    """Outline every linalg op in the body of ``program``; returns the number of distinct kernels it made.
    ``taken`` holds the module's symbol names; the kernels' are added. ``known`` maps the text of the kernels made so
    far (:func:`_text_without_name`) to their names: programs sharing it share kernels (the partitions of a network)."""
    prefix = ir.StringAttr(program.attributes["sym_name"]).value
    known = {} if known is None else known
    before = len(known)
    for op in [o.operation for o in program.regions[0].blocks[0].operations]:
        if not op.name.startswith("linalg."):
            continue
        base = f"{prefix}_{op.name.removeprefix('linalg.')}"
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        kernel, call = outline(op, program, name)
        text = _text_without_name(kernel, name)
        if text in known:
            call.attributes["callee"] = ir.FlatSymbolRefAttr.get(known[text])
            kernel.operation.erase()
        else:
            known[text] = name
            taken.add(name)
    return len(known) - before


@dataclass(frozen=True)
class OutlineKernels(Pass):
    """linalg op in a program -> func.call @kernel(operands), one private noinline kernel per distinct op."""

    name = "linalg-outline-kernels"
    summary = "Move each linalg op of a lowered program into a kernel function, identical kernels shared"

    def run(self, module: ir.Operation) -> None:
        with module.context:
            ops = [o.operation for o in module.regions[0].blocks[0].operations]
            taken = {ir.StringAttr(op.attributes["sym_name"]).value for op in ops if "sym_name" in op.attributes}
            known: dict[str, str] = {}  # one set of kernels for the module: partitions of a program share them
            for op in ops:
                if op.name == "func.func" and is_program(op):
                    outline_kernels(op, taken, known)
