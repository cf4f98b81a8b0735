"""linalg-outline-kernels: every linalg op of a lowered program becomes a call to a private kernel function, and
identical kernels are one function (across the programs of a module too: the partitions of a network).

Why: LLVM's loop passes (loop vectorization and load elimination above all) take time that grows faster than linearly
with the size of a function. A network lowered into one function of hundreds of loop nests took minutes to JIT
(mobilenet_v2: about 3 minutes at -O3) where the same loops as separate functions take seconds; sharing identical
kernels (a network repeats its layers) shrinks the code further. This is also the shape of Glow's CPU backend, where
each instruction calls a kernel, and it gives later per-kernel schedules one function to work on.

A convolution or matmul is one kernel with its epilogue (:func:`kernel_groups`): the fill or bias broadcast that
initializes its output before it, and the elementwise updates of that output after it, so that cpu-tile-kernels can
fuse them into the contraction's loop nest.

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
from .ir_to_linalg import BLOCKED_CONV_ATTR, INT8_CONV_ATTR, INT8_DEPTHWISE_ATTR, PACKED_MATMUL_ATTR
from .linalg_buffers import (
    DEAD_INPUT_ATTR,
    PURE_OPS,
    captured,
    code_blocks,
    is_temporary,
    moves_to,
    remap,
    same_or_disjoint,
    updates_in_place,
)

#: the function attribute LLVM translation turns into function attributes (here: noinline)
_PASSTHROUGH = "passthrough"


def _is_constant(value: ir.Value) -> bool:
    return isinstance(value, ir.OpResult) and value.owner.operation.name == "arith.constant"


#: the view ops whose result may be rebuilt inside a kernel from the source the kernel takes
VIEW_OPS = ("memref.expand_shape", "memref.collapse_shape")


def _view_of(value: ir.Value, args: list[ir.Value]) -> bool:
    """Whether ``value`` is a static reshaping view of another of ``args``."""
    return (isinstance(value, ir.OpResult) and value.owner.operation.name in VIEW_OPS
            and len(value.owner.operation.operands) == 1 and value.owner.operation.operands[0] in args)


def outline(ops: list[ir.Operation], program: ir.Operation, name: str) -> tuple[func.FuncOp, ir.Operation]:
    """A private noinline kernel function ``name`` running ``ops`` in order (inserted before ``program``), and the
    call to it that replaces them, where the last of them was."""
    used = list(dict.fromkeys(v for op in ops for v in captured(op)))
    # operands are arguments, constants included (one fill kernel per shape, whatever its value); a constant the body
    # captures is cloned into the kernel, where it stays a constant of the loop body
    inside = {v for op in ops for v in op.results}  # a buffer of the kernel's own (its alloc among ``ops``)
    operands = [v for op in ops for v in op.operands if v not in inside]
    args = list(dict.fromkeys([*operands, *(v for v in used if not _is_constant(v) and v not in inside)]))
    # a view of another argument is made inside the kernel (a packed convolution's [.., F/B, B] view of the buffer
    # its bias and epilogue write): the kernel then knows both are one buffer
    views = [v for v in args if _view_of(v, args)]
    args = [v for v in args if v not in views]
    outer = list(dict.fromkeys([*args, *used, *views]))
    last = ops[-1]
    with ir.InsertionPoint(program), last.location:
        kernel = func.FuncOp(name, ([v.type for v in args], []))
        kernel.attributes["sym_visibility"] = ir.StringAttr.get("private")
        kernel.attributes[_PASSTHROUGH] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
        entry = kernel.add_entry_block()
        with ir.InsertionPoint(entry):
            mapping: dict[ir.Value, ir.Value] = dict(zip(args, entry.arguments))
            for v in outer:
                if v not in mapping:  # a constant, or a view of an argument
                    clone = v.owner.operation.clone()
                    remap(clone, mapping)
                    mapping[v] = clone.results[0]
            for op in ops:
                clone = op.clone()
                remap(clone, mapping)
                mapping.update(zip(op.results, clone.results))
            func.ReturnOp([])
    with ir.InsertionPoint(last), last.location:
        call = func.CallOp([], ir.FlatSymbolRefAttr.get(name), args)
    for op in reversed(ops):  # users first: a buffer of the kernel's own is allocated by the first op
        op.erase()
    return kernel, call.operation


#: the contractions and convolutions whose epilogue (see :func:`kernel_groups`) is one kernel with them
EPILOGUE_HEADS = ("linalg.conv_2d_nhwc_hwcf", "linalg.depthwise_conv_2d_nhwc_hwc", "linalg.matmul")
#: the ops that may write a head's output before it, as its initial value
EPILOGUE_INITS = ("linalg.fill", "linalg.broadcast")


def head_dest(op: ir.Operation) -> ir.Value | None:
    """The buffer an epilogue head writes (the one its init and updates write), None if ``op`` is no head. A
    convolution on a packed filter (convert-glowir-to-linalg's blocked generic) writes its output viewed as
    [N, OH, OW, F / B, B], a matmul on packed weights as [M, N / P, P], an int8 convolution its int32 accumulators
    as [N, OH, OW, F / L, L]: its buffer is the view's source."""
    dest = op.operands[len(op.operands) - 1] if len(op.operands) else None  # heads have one output, the last
    if op.name in EPILOGUE_HEADS or (op.name == "linalg.generic" and INT8_DEPTHWISE_ATTR in op.attributes):
        return dest
    packed = any(a in op.attributes for a in (BLOCKED_CONV_ATTR, PACKED_MATMUL_ATTR, INT8_CONV_ATTR))
    if op.name == "linalg.generic" and packed and isinstance(dest, ir.OpResult) \
            and dest.owner.operation.name == "memref.expand_shape":
        return dest.owner.operation.operands[0]
    return None


def _users(buffer: ir.Value) -> set[ir.Operation]:
    """The ops that use ``buffer`` directly or through views of it (its dealloc aside)."""
    users = set()
    for use in buffer.uses:
        op = use.owner.operation
        if op.name in PURE_OPS and len(op.results) == 1:
            users |= _users(op.results[0])
        elif op.name != "memref.dealloc":
            users.add(op)
    return users


def _private_buffers(group: list[ir.Operation], after: list[ir.Operation]) -> tuple[list[ir.Operation],
                                                                                  list[ir.Operation]]:
    """The memref.alloc ops (each followed by its views) of buffers that only ``group`` uses (through views or not)
    and that are freed among the first ops ``after`` it (pure ops between), and those deallocs: a buffer of the
    kernel's own (an int8 convolution's int32 accumulators), allocated and freed inside it."""
    ends = []
    for op in after:
        if op.name == "memref.dealloc":
            ends.append(op)
        elif op.name not in PURE_OPS:
            break
    allocs, deallocs = [], []
    for value in dict.fromkeys(v for op in group for v in op.operands):
        if not isinstance(value, ir.OpResult) or value.owner.operation.name != "memref.alloc":
            continue
        frees = [use.owner.operation for use in value.uses if use.owner.operation.name == "memref.dealloc"]
        if _users(value) <= set(group) and len(frees) == 1 and frees[0] in ends:
            allocs += [value.owner.operation, *_views(value)]
            deallocs += frees
    return allocs, deallocs


def _views(buffer: ir.Value) -> list[ir.Operation]:
    """The view ops of ``buffer`` (views of views too), each after its source."""
    found = []
    for use in buffer.uses:
        op = use.owner.operation
        if op.name in PURE_OPS and len(op.results) == 1:
            found += [op, *_views(op.results[0])]
    return found


def _dies_in(buffer: ir.Value, group: list[ir.Operation]) -> bool:
    """Whether ``buffer`` is a temporary that no op outside ``group`` uses (but its dealloc), through a view (a
    packed convolution's [.., F/B, B] view of its output) or not."""
    return is_temporary(buffer) and _users(buffer) <= set(group)


def kernel_groups(ops: list[ir.Operation]) -> list[list[ir.Operation]]:
    """The linalg ops of a program's body, each group one kernel. Most ops are a kernel each; a contraction or
    convolution (:data:`EPILOGUE_HEADS`) writing buffer D is one kernel with its epilogue, so that the backend can
    fuse them into one loop nest (cpu-tile-kernels)::

        fill/broadcast(-> D); conv/matmul(-> D); elementwise updates of D in place (activation, residual add, ...)

    The init is the linalg op right before the head (only pure view ops between); the updates are the linalg ops
    right after it that :func:`.linalg_buffers.updates_in_place` accepts: identity reads of D, other inputs disjoint
    from D. One update may move the chain to another buffer E (:func:`.linalg_buffers.moves_to`: a residual add
    written onto the skip) when D is a temporary that only the group uses and E is disjoint from every buffer of the
    group: it is marked with ``glow.dead_input`` (D's content is dead after it, so the fused kernel need not write D),
    and the updates after it are those of E in place. Grouping moves no computation past another: the members run in
    their order where the last of them was."""
    groups: list[list[ir.Operation]] = []
    linalg = [i for i, op in enumerate(ops) if op.name.startswith("linalg.")]

    def adjacent(i: int, j: int) -> bool:  # only pure ops between positions i < j
        return all(ops[k].name in PURE_OPS for k in range(i + 1, j))

    taken: set[int] = set()
    for n, i in enumerate(linalg):
        op = ops[i]
        if i in taken:
            continue
        dest = head_dest(op)
        if dest is None:
            continue
        members = [i]
        if n > 0 and linalg[n - 1] not in taken and adjacent(linalg[n - 1], i):
            before = ops[linalg[n - 1]]
            if before.name in EPILOGUE_INITS and before.operands[len(before.operands) - 1] == dest:
                members.insert(0, linalg[n - 1])
        moved = False
        for j in linalg[n + 1:]:
            if not adjacent(members[-1], j):
                break
            if updates_in_place(ops[j], dest):
                members.append(j)
                continue
            target = None if moved else moves_to(ops[j], dest)
            if target is None or not _dies_in(dest, [ops[k] for k in members] + [ops[j]]):
                break
            if not all(same_or_disjoint(target, v) for k in members for v in ops[k].operands
                       if isinstance(v.type, ir.MemRefType)):
                break
            # the head reads its inputs through windows, across the tiles: the buffer it writes must not be one of
            # them (a 1x1 projection of the skip added onto the skip would read channels an earlier tile updated)
            if any(v == target or not same_or_disjoint(target, v) for v in ops[i].operands[:-1]
                   if isinstance(v.type, ir.MemRefType)):
                break
            # dest dies here: the rest of the epilogue updates the buffer this op writes
            reads = list(ops[j].opview.inputs)
            ops[j].attributes[DEAD_INPUT_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), reads.index(dest))
            members.append(j)
            dest, moved = target, True
        if len(members) > 1:
            taken.update(members)
            groups.append(members)
    singles = [[i] for i in linalg if i not in taken]
    return [[ops[i] for i in members] for members in sorted(groups + singles)]


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
    groups = []
    for block in code_blocks(program):
        ops = [o.operation for o in block.operations]
        found = kernel_groups(ops)  # before the positions: an op's hash covers its attributes, which this sets
        position = {op: k for k, op in enumerate(ops)}
        for group in found:
            allocs, deallocs = _private_buffers(group, ops[position[group[-1]] + 1:position[group[-1]] + 8])
            groups.append([*allocs, *group, *deallocs])
    for group in groups:
        head = next((op for op in group if head_dest(op) is not None), group[0])
        base = f"{prefix}_{head.name.removeprefix('linalg.')}"
        name, k = base, 0
        while name in taken:
            k += 1
            name = f"{base}_{k}"
        kernel, call = outline(group, program, name)
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
    """linalg op in a program -> func.call @kernel(operands), one private noinline kernel per distinct op (or
    contraction with its epilogue)."""

    name = "linalg-outline-kernels"
    summary = ("Move each linalg op of a lowered program (a contraction with its epilogue) into a kernel function, "
               "identical kernels shared")

    def run(self, module: ir.Operation) -> None:
        with module.context:
            ops = [o.operation for o in module.regions[0].blocks[0].operations]
            taken = {ir.StringAttr(op.attributes["sym_name"]).value for op in ops if "sym_name" in op.attributes}
            known: dict[str, str] = {}  # one set of kernels for the module: partitions of a program share them
            for op in ops:
                if op.name == "func.func" and is_program(op):
                    outline_kernels(op, taken, known)
