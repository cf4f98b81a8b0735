"""The pass: each glowir program becomes a function on its buffers (region views when planned, arguments and
allocations when not), every other glowir op its family's lowering (:data:`LOWERINGS`); a glowir op left anywhere
is an error naming it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, memref, scf

from ...registry import Pass, PassError
from ..ir_program import OFFSET_ATTR, REGION_SIZE_ATTRS, REGIONS, SCRATCH_ATTR, is_program, memory_layout, size_in_bytes
from . import arithmetic, basic, cnn, datamove, quantized, reductions
from .common import ALIGNMENT, PREFIX, Lowering, Operands, _memref, storage_type

#: glowir op name -> its lowering, by family. weight_var has no row: it becomes an argument in
#: :func:`convert_program`.
LOWERINGS: dict[str, Lowering] = {**basic.LOWERINGS, **cnn.LOWERINGS, **arithmetic.LOWERINGS, **datamove.LOWERINGS,
                                  **reductions.LOWERINGS, **quantized.LOWERINGS}

#: glowir instruction -> the scratch buffers its lowering takes (``Operands.scratch``), in that order. Each lives
#: during its instruction only: glowir-plan-memory places them in the activations region with the activations.
SCRATCH: dict[str, Callable[[ir.OpView], list[ir.MemRefType]]] = {**cnn.SCRATCH, **reductions.SCRATCH,
                                                                    **quantized.SCRATCH}


def region_body(op: ir.Operation, k: int = 0) -> list[ir.Operation]:
    """The instructions of region ``k`` of a glowir loop or if, its terminator left out."""
    return [o.operation for o in op.regions[k].blocks[0].operations][:-1]


def scratch_types(op: ir.Operation) -> list[ir.MemRefType]:
    """The scratch buffers the lowering of ``op`` takes (none for most instructions); a loop or an if takes those
    of the instructions of its regions, in order, for its whole run."""
    if len(op.regions):
        return [t for k in range(len(op.regions)) for inner in region_body(op, k) for t in scratch_types(inner)]
    rule = SCRATCH.get(op.name.removeprefix(PREFIX))
    return rule(op.opview) if rule is not None else []


def _scratch_buffers(op: ir.Operation, activations: ir.Value | None) -> list[ir.Value]:
    """The scratch buffers of ``op``: views of the activations region at its planned ``scratch_offsets``, or heap
    allocations (``activations`` None: not planned) that the caller frees after the instruction."""
    types = scratch_types(op)
    if not types:
        return []
    if activations is None:
        return [memref.alloc(t, [], [], alignment=ALIGNMENT) for t in types]
    offsets = [int(x) for x in ir.DenseI64ArrayAttr(op.attributes[SCRATCH_ATTR])] \
        if SCRATCH_ATTR in op.attributes else []
    if len(offsets) != len(types):
        raise PassError(f"'{op.name}' takes {len(types)} scratch buffer(s) but its '{SCRATCH_ATTR}' gives "
                        f"{len(offsets)} offset(s) although the function's memory is planned", op.location)
    region = _memref(activations).shape[0]
    views = []
    for t, offset in zip(types, offsets):
        if offset % ALIGNMENT or offset + size_in_bytes(t) > region:
            raise PassError(f"'{op.name}' has a scratch buffer at offset {offset} that does not fit the {region}-byte "
                            f"activations region at a {ALIGNMENT}-byte aligned offset", op.location)
        views.append(memref.view(t, activations, arith.constant(ir.IndexType.get(), offset), []))
    return views


def _is_glowir(op: ir.Operation) -> bool:
    return op.name.startswith(PREFIX)


def _region_of(op: ir.Operation) -> str:
    """The region a planned weight var or activation lives in."""
    if op.name == PREFIX + "alloc_activation":
        return "activations"
    return "constantWeight" if ir.StringAttr(op.attributes["mutability"]).value == "const" else "mutableWeight"


def _planned_buffer(op: ir.Operation, regions: dict[str, ir.Value], sizes: dict[str, int]) -> ir.Value:
    """A view of the buffer's region at its planned offset, checked to lie inside the region."""
    region = _region_of(op)
    if OFFSET_ATTR not in op.attributes:
        raise PassError(f"'{op.name}' has no '{OFFSET_ATTR}' although the function's memory is planned", op.location)
    offset = ir.IntegerAttr(op.attributes[OFFSET_ATTR]).value
    if offset % ALIGNMENT or offset + size_in_bytes(op.results[0].type) > sizes[region]:
        raise PassError(f"'{op.name}' at offset {offset} does not fit the {sizes[region]}-byte {region} region "
                        f"at a {ALIGNMENT}-byte aligned offset", op.location)
    shift = arith.constant(ir.IndexType.get(), offset)
    return memref.view(storage_type(op.results[0].type), regions[region], shift, [])


#: the regions a planned program takes with ``io_arguments``: its inputs and outputs come as arguments of their own
IO_REGIONS = tuple(r for r in REGIONS if r != "mutableWeight")


def _check_inputs_read_only(func_op: ir.Operation, name: str) -> None:
    """An input handed over as the caller's own buffer must not be written: name the instruction that does."""
    from ...ir.liveness import INPUT, Liveness  # the analysis of glowir programs (passes/ir)

    lv = Liveness(func_op)
    for root, kind in lv.kinds.items():
        written = [a for a in lv.accesses_of(root) if a.writes] if kind == INPUT else []
        if written:
            raise PassError(f"glowir program @{name} writes its input '{root.owner.opview.name}' "
                            f"('{written[0].op.name}'): inputs are read-only, so that they can be the caller's "
                            f"buffers", written[0].op.location)


def convert_program(func_op: ir.Operation, io_arguments: bool = False) -> None:
    """Rewrite one program in place: buffers become region views (planned) or arguments and allocations, every
    other glowir op its lowering. ``io_arguments`` (planned only): the inputs and outputs are arguments of their own
    after the constantWeight and activations regions (:data:`IO_REGIONS`), so that a caller's arrays are used
    where they are, and there is no mutableWeight region."""
    name = ir.StringAttr(func_op.attributes["sym_name"]).value
    block = func_op.regions[0].blocks[0]
    if len(block.arguments):
        raise PassError(f"glowir program @{name} takes no arguments: its weight_vars become them", func_op.location)
    ops = [op.operation for op in block.operations if _is_glowir(op.operation)]
    weights = [op for op in ops if op.name == PREFIX + "weight_var"]
    layout = memory_layout(func_op)
    planned = layout is not None
    if not planned and any(REGION_SIZE_ATTRS[r] in func_op.attributes for r in REGIONS):
        raise PassError(f"glowir program @{name} gives some region sizes but not all of "
                        f"{', '.join(REGION_SIZE_ATTRS.values())}", func_op.location)
    io_arguments = io_arguments and planned
    if io_arguments:
        _check_inputs_read_only(func_op, name)
    # the arguments: the regions (planned), then the weight vars that are not views of one
    kept = (IO_REGIONS if io_arguments else REGIONS) if planned else ()
    sizes = dict(zip(REGIONS, layout.sizes())) if planned else {}
    regions = {r: block.add_argument(ir.MemRefType.get([sizes[r]], ir.IntegerType.get_signless(8)), func_op.location)
               for r in kept}
    own = [op for op in weights if not planned or (io_arguments and _region_of(op) == "mutableWeight")]
    lowered: dict[ir.Value, ir.Value] = {
        op.results[0]: block.add_argument(storage_type(op.results[0].type), op.location) for op in own}
    names = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in [*kept, *(op.opview.name for op in own)]])
    for op in ops:
        if op.results and op.results[0] in lowered:  # an input or output given as an argument of its own
            continue
        if planned and op.name in (PREFIX + "weight_var", PREFIX + "alloc_activation"):
            with ir.InsertionPoint(op), op.location:
                lowered[op.results[0]] = _planned_buffer(op, regions, sizes)
            continue
        if op.name == PREFIX + "weight_var" or (planned and op.name == PREFIX + "dealloc_activation"):
            continue
        with ir.InsertionPoint(op), op.location:
            scratch = _scratch_buffers(op, regions["activations"] if planned else None)
        replacement = _lower(op, lowered, scratch)
        if not planned:
            with ir.InsertionPoint(op), op.location:
                for buffer in scratch:
                    memref.dealloc(buffer)
        if replacement is not None:
            lowered[op.results[0]] = replacement
    for op in reversed(ops):  # users go before the buffers they use
        for result in op.results:
            result.replace_all_uses_with(lowered[result])  # what is left are non-glowir users, e.g. a return
        op.erase()
    results = ir.FunctionType(ir.TypeAttr(func_op.attributes["function_type"]).value).results
    func_op.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get([a.type for a in block.arguments], results))
    func_op.attributes["glowir.arguments"] = names
    func_op.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()


def _lower(op: ir.Operation, lowered: dict[ir.Value, ir.Value], scratch: list[ir.Value]) -> ir.Value | None:
    """Lower one instruction before it, on its ``scratch`` buffers; its replacement value, if it has a result."""
    if op.name == PREFIX + "loop":
        _lower_loop(op, lowered, scratch)
        return None
    if op.name == PREFIX + "if":
        _lower_if(op, lowered, scratch)
        return None
    lowering = LOWERINGS.get(op.name.removeprefix(PREFIX))
    if lowering is None:
        raise PassError(f"'{op.name}' has no lowering to linalg", op.location)
    with ir.InsertionPoint(op), op.location:
        return lowering(op.opview, Operands(op.opview, lowered, scratch))


def _lower_loop(op: ir.Operation, lowered: dict[ir.Value, ir.Value], scratch: list[ir.Value]) -> None:
    """glowir.loop -> scf.for over [0, max_trip), or scf.while also testing the condition buffer (an i1 stored as a
    byte) before each iteration; each iteration first stores its number into the counter buffer. The body's
    instructions move into the scf loop and are lowered there, each on its share of the loop's scratch buffers."""
    body = region_body(op)
    counter, condition = (lowered[v] for v in op.operands)
    index, i64 = ir.IndexType.get(), ir.IntegerType.get_signless(64)
    with ir.InsertionPoint(op), op.location:
        zero, one = arith.constant(index, 0), arith.constant(index, 1)
        trips = arith.constant(index, ir.IntegerAttr(op.attributes["max_trip"]).value)
        if not ir.IntegerAttr(op.attributes["has_condition"]).value:
            loop = scf.ForOp(zero, trips, one)
            with ir.InsertionPoint(loop.body):
                memref.store(arith.index_cast(i64, loop.induction_variable), counter, [])
                end = scf.YieldOp([])
        else:
            loop = scf.WhileOp([index], [zero])
            before = loop.before.blocks.append(index)
            with ir.InsertionPoint(before):
                i = before.arguments[0]
                below = arith.cmpi(arith.CmpIPredicate.slt, i, trips)
                holds = arith.cmpi(arith.CmpIPredicate.ne, memref.load(condition, []),
                                   arith.constant(ir.MemRefType(condition.type).element_type, 0))
                scf.ConditionOp(arith.andi(below, holds), [i])
            after = loop.after.blocks.append(index)
            with ir.InsertionPoint(after):
                memref.store(arith.index_cast(i64, after.arguments[0]), counter, [])
                end = scf.YieldOp([arith.addi(after.arguments[0], one)])
    _lower_into(body, end.operation, lowered, scratch)


def _lower_into(ops: list[ir.Operation], end: ir.Operation, lowered: dict[ir.Value, ir.Value],
                scratch: list[ir.Value]) -> list[ir.Value]:
    """Move ``ops`` before ``end`` and lower each there, on its share of ``scratch``; returns the scratch left."""
    for inner in ops:
        inner.move_before(end)
    for inner in ops:
        count = len(scratch_types(inner))
        _lower(inner, lowered, scratch[:count])
        scratch = scratch[count:]
        inner.erase()
    return scratch


def _lower_if(op: ir.Operation, lowered: dict[ir.Value, ir.Value], scratch: list[ir.Value]) -> None:
    """glowir.if -> scf.if on the condition's byte; each branch's instructions move into its block and are lowered
    there."""
    condition = lowered[op.operands[0]]
    with ir.InsertionPoint(op), op.location:
        holds = arith.cmpi(arith.CmpIPredicate.ne, memref.load(condition, []),
                           arith.constant(ir.MemRefType(condition.type).element_type, 0))
        branch = scf.IfOp(holds, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            ends = [scf.YieldOp([])]
        with ir.InsertionPoint(branch.else_block):
            ends.append(scf.YieldOp([]))
    for k, end in enumerate(ends):
        scratch = _lower_into(region_body(op, k), end.operation, lowered, scratch)


def check_legal(module: ir.Operation) -> None:
    """Raise for the first glowir op left in ``module``: the target has none."""
    left: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        # an exception raised here would come out of walk() as a RuntimeError: collect, and raise after
        if _is_glowir(op):
            left.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    if left:
        raise PassError(f"'{left[0].name}' was left unconverted: only glowir ops directly in the body of a program "
                        "(a func.func naming its glowir.inputs and glowir.outputs) are lowered", left[0].location)


@dataclass(frozen=True)
class ConvertIRToLinalg(Pass):
    """glowir -> linalg, memref, arith and math on the buffers glowir fixed."""

    name = "convert-glowir-to-linalg"
    summary = "lower glowir programs to linalg on memrefs; weight vars become function arguments"

    #: a planned program takes its inputs and outputs as arguments of their own, not in the mutableWeight region:
    #: the in-process runtime's convention (the caller's arrays used where they are); bundles keep Glow's three
    #: regions
    io_arguments: bool = False

    def run(self, module: ir.Operation) -> None:
        with module.context, module.location:
            for op in module.regions[0].blocks[0].operations:
                if op.operation.name == "func.func" and is_program(op.operation):
                    convert_program(op.operation, self.io_arguments)
            check_legal(module)
