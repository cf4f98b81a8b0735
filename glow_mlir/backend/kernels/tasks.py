"""Parallel loops as tasks of the worker pool (:mod:`glow_mlir.backend.pool`).

Each ``scf.parallel`` without reductions, and each ``scf.forall`` without results (the kernels' tile loops once
bufferized, taken directly), becomes a task function and one call (a loop with reductions is left to
convert-scf-to-cf, which runs it serially)::

    scf.parallel (%i) = (%lb) to (%ub) step (%s) {        func.func private @f_task0(%ctx: !llvm.ptr, %k: i64) {
      body(%i, %a, %m)                             ->       %a, %m = the captured values, loaded from %ctx
    }                                                       %i = %lb + %k * %s
                                                            body(%i, %a, %m)
                                                          }
                                                          (in @f) %ctx = {%a, %m} in a stack slot of @f
                                                          glow_pool_run(@f_task0, %ctx, ceildiv(%ub - %lb, %s), N)

How many threads a call asks for: never more than the loop has tasks, and with ``flops-per-thread`` or
``bytes-per-thread`` set, no more than its work is worth (:func:`work`: the float operations and the bytes loaded and
stored by one task, times the tasks), at least two (the kernel passes already chose to split it). Each thread that
joins a loop costs a hand-off and a share of the claims on one counter; on sixteen cores a 4 MFLOP matmul spread over
all of them ran slower than on eight.

A multi-dimensional loop is one task per point of its iteration space, the point recovered from ``%k`` by
division. The values the body uses from outside cross in one struct: a memref as its LLVM descriptor (``builtin.
unrealized_conversion_cast`` both ways, which reconcile-unrealized-casts removes once memrefs are lowered), an index
as i64, scalars and 1-D vectors as they are; constants are cloned into the task instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, func, llvm

from ...passes.conversion.linalg_buffers import captured, remap
from ...passes.registry import Pass, PassError
from ..pool import ENTRY

#: ops cloned into a task rather than captured
CLONED = ("arith.constant", "llvm.mlir.constant", "ub.poison")
#: MLIR's marker of a dynamic entry in a static bound array
_DYNAMIC = -(2 ** 63)


def _llvm_type(t: ir.Type, where: ir.Location) -> ir.Type:
    """How a captured value of type ``t`` crosses: a memref as its descriptor, an index as i64, others as they are."""
    if isinstance(t, ir.MemRefType):
        rank = t.rank
        arrays = f", array<{rank} x i64>, array<{rank} x i64>" if rank else ""
        return ir.Type.parse(f"!llvm.struct<(ptr, ptr, i64{arrays})>")
    if isinstance(t, ir.IndexType):
        return ir.IntegerType.get_signless(64)
    if isinstance(t, (ir.IntegerType, ir.F32Type, ir.F64Type, ir.F16Type, ir.BF16Type)) or (
            isinstance(t, ir.VectorType) and t.rank == 1):
        return t
    raise PassError(f"a parallel loop uses a value of type {t} from outside it, which cannot cross to a task", where)


def _cross(v: ir.Value, t: ir.Type) -> ir.Value:
    """``v`` as type ``t``, one side of a crossing (:func:`_llvm_type`): a memref and its descriptor by a cast that
    reconcile-unrealized-casts removes, an index and i64 by index_cast; other types cross as they are."""
    if isinstance(v.type, ir.MemRefType) or isinstance(t, ir.MemRefType):
        return ir.Operation.create("builtin.unrealized_conversion_cast", results=[t], operands=[v]).result
    if isinstance(v.type, ir.IndexType) or isinstance(t, ir.IndexType):
        return arith.index_cast(t, v)
    return v


def _constant(v: ir.Value) -> int | None:
    """The value of an index constant, else None."""
    if isinstance(v, ir.OpResult) and v.owner.name == "arith.constant":
        return ir.IntegerAttr(v.owner.attributes["value"]).value
    return None


def _unique(symbols: ir.SymbolTable, base: str) -> str:
    k = 0
    while f"{base}_task{k}" in symbols:
        k += 1
    return f"{base}_task{k}"


def _enclosing_func(op: ir.Operation) -> ir.Operation:
    parent = op.parent
    while parent.name != "func.func":
        parent = parent.parent
    return parent


def _declare_entry(module: ir.Operation) -> None:
    symbols = ir.SymbolTable(module)
    if ENTRY not in symbols:
        with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
            ptr, i64 = ir.Type.parse("!llvm.ptr"), ir.IntegerType.get_signless(64)
            llvm.LLVMFuncOp(ENTRY, ir.TypeAttr.get(ir.Type.parse(f"!llvm.func<void ({ptr}, {ptr}, {i64}, {i64})>")))


def _bounds(loop: ir.Operation) -> tuple[list[ir.Value], list[ir.Value], list[ir.Value]]:
    """The lower bounds, upper bounds and steps of an ``scf.parallel`` or ``scf.forall`` as index values (a forall's
    static ones as constants before it)."""
    rank = len(loop.regions[0].blocks[0].arguments)
    operands = list(loop.operands)
    if loop.name == "scf.parallel":
        return tuple(operands[k * rank:(k + 1) * rank] for k in range(3))
    dynamic = iter(operands)
    index = ir.IndexType.get()
    result = []
    with ir.InsertionPoint(loop), loop.location:
        for name in ("staticLowerBound", "staticUpperBound", "staticStep"):
            values = []
            for v in ir.DenseI64ArrayAttr(loop.attributes[name]):
                values.append(next(dynamic) if v == _DYNAMIC else arith.constant(index, v))
            result.append(values)
    return tuple(result)


#: arithmetic that counts as float operations in :func:`work` (per lane; an FMA counts two)
_FLOAT_OPS = {"arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.minimumf",
              "arith.maxnumf", "arith.minnumf", "arith.negf", "math.sqrt", "math.rsqrt", "math.exp", "math.absf",
              "arith.addi", "arith.muli", "arith.subi", "arith.maxsi", "arith.minsi", "arith.extsi", "arith.sitofp",
              "arith.fptosi", "arith.select", "arith.cmpf"}
_FMA_OPS = {"vector.fma", "math.fma"}
_LOADS = {"memref.load", "vector.load", "vector.maskedload", "vector.transfer_read", "vector.gather",
          "vector.expandload"}
_STORES = {"memref.store", "vector.store", "vector.maskedstore", "vector.transfer_write", "vector.scatter",
           "vector.compressstore"}


def _elements(t: ir.Type) -> tuple[int, int]:
    """(elements, bytes per element) of a scalar or vector type; (1, 0) for others."""
    if isinstance(t, ir.VectorType):
        return math.prod(t.shape), max(1, t.element_type.width // 8) if hasattr(t.element_type, "width") else 4
    for cls in (ir.F32Type, ir.F64Type, ir.F16Type, ir.BF16Type, ir.IntegerType):
        if isinstance(t, cls):
            return 1, max(1, cls(t).width // 8)
    return 1, 0


def _trip(loop: ir.Operation) -> int:
    """The trip count of an scf.for with constant bounds; 1 when not known."""
    lb, ub, step = (_constant(v) for v in list(loop.operands)[:3])
    if None in (lb, ub, step) or step <= 0:
        return 1
    return max(0, -((lb - ub) // step))


def work(block: ir.Block) -> tuple[int, int]:
    """(float operations, bytes loaded and stored) of one run of ``block``: scf.for loops count their constant trip
    counts (1 when not constant), an scf.if its larger branch, a vector op its lanes."""
    flops = moved = 0
    for op in block.operations:
        op = op.operation
        name = op.name
        if name == "scf.for":
            f, b = work(op.regions[0].blocks[0])
            trip = _trip(op)
            flops, moved = flops + trip * f, moved + trip * b
        elif len(op.regions):
            branches = [work(r.blocks[0]) for r in op.regions if len(r.blocks)]
            if branches:
                flops, moved = flops + max(f for f, _ in branches), moved + max(b for _, b in branches)
        elif name in _FMA_OPS or name in _FLOAT_OPS:
            n, _ = _elements(op.results[0].type)
            flops += n * (2 if name in _FMA_OPS else 1)
        elif name in _LOADS:
            n, size = _elements(op.results[0].type)
            moved += n * size
        elif name in _STORES:
            n, size = _elements(op.operands[0].type)
            moved += n * size
    return flops, moved


def _threads(loop: ir.Operation, threads: int, tasks: int | None, flops_per_thread: int = 0,
             bytes_per_thread: int = 0) -> int:
    """The threads a loop's call asks the pool for: the program's, at most the loop's number of tasks when known and
    what its work is worth (at least two)."""
    if tasks is None:
        return threads
    threads = min(threads, tasks)
    if flops_per_thread or bytes_per_thread:
        flops, moved = work(loop.regions[0].blocks[0])
        wanted = max(tasks * flops // flops_per_thread if flops_per_thread else 0,
                     tasks * moved // bytes_per_thread if bytes_per_thread else 0)
        threads = min(threads, max(2, wanted))
    return max(1, threads)


def outline(loop: ir.Operation, module: ir.Operation, threads: int, flops_per_thread: int = 0,
            bytes_per_thread: int = 0) -> None:
    """Replace the ``scf.parallel`` or result-less ``scf.forall`` ``loop`` by a task function and a call to the
    pool for the threads its tasks are worth (:func:`_threads`)."""
    where = loop.location
    body = loop.regions[0].blocks[0]
    rank = len(body.arguments)
    lbs, ubs, steps = _bounds(loop)
    index, i64, ptr = ir.IndexType.get(), ir.IntegerType.get_signless(64), ir.Type.parse("!llvm.ptr")
    owner = _enclosing_func(loop)
    name = _unique(ir.SymbolTable(module), ir.StringAttr(owner.attributes["sym_name"]).value)

    # the trip counts, at the call site (constants when the bounds are)
    with ir.InsertionPoint(loop), where:
        counts = []
        for lb, ub, step in zip(lbs, ubs, steps):
            known = [_constant(v) for v in (lb, ub, step)]
            if None in known:
                counts.append(arith.ceildivsi(arith.subi(ub, lb), step))
            else:
                counts.append(arith.constant(index, -((known[0] - known[1]) // known[2])))
        total = counts[0]
        for c in counts[1:]:
            total = arith.muli(total, c)
    known = [_constant(c) for c in counts]
    threads = _threads(loop, threads, math.prod(known) if None not in known else None, flops_per_thread,
                       bytes_per_thread)
    needed = list(dict.fromkeys([*captured(loop), *lbs, *steps, *counts[1:]]))
    clones = [v for v in needed if isinstance(v, ir.OpResult) and v.owner.name in CLONED]
    inputs = [v for v in needed if v not in clones]
    fields = [_llvm_type(v.type, where) for v in inputs]
    struct = ir.Type.parse(f"!llvm.struct<({', '.join(str(f) for f in fields)})>") if fields else None

    # the task function, after the function that holds the loop
    with ir.InsertionPoint(owner), where:
        task = func.FuncOp(name, ir.FunctionType.get([ptr, i64], []))
    task.attributes["sym_visibility"] = ir.StringAttr.get("private")
    task.operation.move_after(owner)
    entry = task.add_entry_block()
    ctx, k = entry.arguments
    mapping: dict[ir.Value, ir.Value] = {}
    with ir.InsertionPoint(entry), where:
        for v in clones:
            mapping[v] = v.owner.clone().results[v.result_number]
        for n, (v, f) in enumerate(zip(inputs, fields)):
            slot = llvm.getelementptr(ptr, ctx, [], ir.DenseI32ArrayAttr.get([0, n]), struct, None)
            mapping[v] = _cross(llvm.load(f, slot), v.type)
        point = arith.index_cast(index, k)
        value = lambda v: mapping.get(v, v)
        for d in reversed(range(rank)):
            coordinate = point
            if d > 0:
                coordinate = arith.remsi(point, value(counts[d]))
                point = arith.divsi(point, value(counts[d]))
            mapping[body.arguments[d]] = arith.addi(value(lbs[d]), arith.muli(coordinate, value(steps[d])))
        done = func.ReturnOp([])
    for op in list(body.operations)[:-1]:  # the terminator (scf.reduce, scf.forall.in_parallel) stays behind
        op.operation.move_before(done)
        remap(op.operation, mapping)

    # the call: the captured values into a stack slot of the caller (allocated once, in its entry block)
    owner_entry = owner.regions[0].blocks[0]
    with where:
        if struct is not None:
            with ir.InsertionPoint.at_block_begin(owner_entry):
                one = llvm.mlir_constant(ir.IntegerAttr.get(i64, 1))
                slot_ptr = llvm.alloca(ptr, one, struct, alignment=64)
        with ir.InsertionPoint(loop):
            if struct is None:
                slot_ptr = llvm.mlir_zero(ptr)
            for n, (v, f) in enumerate(zip(inputs, fields)):
                field = llvm.getelementptr(ptr, slot_ptr, [], ir.DenseI32ArrayAttr.get([0, n]), struct, None)
                llvm.store(_cross(v, f), field)
            fn = func.constant(ir.FunctionType.get([ptr, i64], []), ir.FlatSymbolRefAttr.get(name))
            fn_ptr = ir.Operation.create("builtin.unrealized_conversion_cast", results=[ptr], operands=[fn]).result
            llvm.call(None, [fn_ptr, slot_ptr, arith.index_cast(i64, total),
                             llvm.mlir_constant(ir.IntegerAttr.get(i64, threads))], [], [],
                      callee=ir.FlatSymbolRefAttr.get(ENTRY))
    loop.erase()


@dataclass(frozen=True)
class ParallelToPool(Pass):
    """Run the parallel loops on the worker pool: each becomes a task function and a call to ``glow_pool_run``
    for no more threads than it has tasks and its work is worth."""

    name = "cpu-parallel-to-pool"
    summary = ("scf.parallel (no reductions) and scf.forall (no results) -> an outlined task function and a call to "
               "the worker pool")

    #: the threads the pool may use for these loops (the caller's included)
    threads: int = 2
    #: the float operations (and the bytes moved) that each thread of a loop is to get: a loop asks for no more
    #: threads than its work is worth (at least two); 0: no limit
    flops_per_thread: int = 0
    bytes_per_thread: int = 0

    def run(self, module: ir.Operation) -> None:
        loops: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name in ("scf.parallel", "scf.forall") and not len(op.results):
                loops.append(op)  # a loop with reductions stays serial (convert-scf-to-cf)
            return ir.WalkResult.ADVANCE

        with module.context, module.location:
            module.walk(visit)  # post-order: a nested loop is outlined before the loop around it
            if not loops:
                return
            _declare_entry(module)
            for loop in loops:
                outline(loop, module, self.threads, self.flops_per_thread, self.bytes_per_thread)


__all__ = ["ParallelToPool", "outline", "work"]
