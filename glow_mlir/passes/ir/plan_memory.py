"""glowir-plan-memory: the static memory plan of a program, as Glow bundles have it.

Three regions, each a byte array the caller (or the runtime) provides:

- ``constantWeight``: every const weight_var, one after the other;
- ``mutableWeight``: the inputs and outputs (every mutable weight_var), one after the other;
- ``activations``: every alloc_activation, placed by the interval allocator (allocator.py) over its allocation
  interval, alloc_activation to dealloc_activation: buffers whose intervals do not meet may share bytes. The scratch
  buffers of the instructions whose kernels take some (ir_to_linalg.SCRATCH: a padded convolution's bordered input,
  softmax's row statistics) go there too, each live at its instruction only, their offsets in the instruction's
  ``scratch_offsets``: the planned program allocates nothing at run time.

Every offset is a multiple of 64 bytes. The pass records each buffer's offset as its ``offset`` attribute and the
three region sizes as function attributes (ir_program.REGION_SIZE_ATTRS); convert-glowir-to-linalg then turns each
buffer into a view of its region. Run it last on glowir: any later change to the allocation intervals would
invalidate the plan.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from mlir import ir

from ..conversion.ir_program import OFFSET_ATTR, REGION_SIZE_ATTRS, SCRATCH_ATTR, operand_roles, size_in_bytes
from ..conversion.ir_to_linalg import scratch_types
from ..registry import Pass, PassError
from . import allocator
from .allocator import ALIGNMENT, Interval, align_up
from .liveness import CONST, Liveness, byte_size, programs


@dataclass(frozen=True)
class MemoryReport:
    """How much memory a program needs, planned or not (bytes)."""

    #: every activation in its own memory
    naive_bytes: int
    #: the activations region as planned
    planned_bytes: int
    #: the most activation bytes live at one program point: no plan can be smaller
    lower_bound_bytes: int
    constant_weights_bytes: int
    mutable_weights_bytes: int
    activations: int
    #: kernels' scratch buffers placed with the activations
    scratch_buffers: int
    #: which allocator strategy gave the plan
    strategy: str

    def as_dict(self) -> dict[str, int | str | float]:
        d: dict[str, int | str | float] = asdict(self)
        d["planned_over_lower_bound"] = round(self.planned_bytes / self.lower_bound_bytes, 4) \
            if self.lower_bound_bytes else 1.0
        return d


def sequential(sizes: list[int]) -> tuple[list[int], int]:
    """Offsets of buffers laid out one after the other at aligned offsets, and the region size."""
    offsets, top = [], 0
    for size in sizes:
        offsets.append(align_up(top, ALIGNMENT))
        top = offsets[-1] + size
    return offsets, top


@dataclass(frozen=True)
class Plan:
    """The offsets of one program's buffers and its region sizes."""

    #: (weight_var or alloc_activation, its offset)
    offsets: list[tuple[ir.Operation, int]]
    #: (instruction, the offsets of its scratch buffers)
    scratch: list[tuple[ir.Operation, list[int]]]
    region_sizes: dict[str, int]
    report: MemoryReport


#: instructions whose scratch buffer is their input inside a border (the padding of a convolution or pooling)
BORDERED_INPUT = ("glowir.conv2d", "glowir.max_pool", "glowir.avg_pool")
#: instructions whose kernel can take the copy of its output into such a border as the last update of its epilogue
BORDER_WRITERS = ("glowir.conv2d",)


def _scratch_start(lv: Liveness, op: ir.Operation) -> int:
    """Where the scratch buffers of ``op`` begin to live: at ``op``, or for a bordered input written by a convolution
    right before, at that convolution, whose kernel may then write the bordered copy itself (linalg-outline-kernels
    makes the copy the last update of its epilogue) while it reads its own inputs. Other writers do not take the
    copy: their bordered buffer need not live longer."""
    here = lv.position[op]
    k = lv.instructions.index(op)
    if op.name not in BORDERED_INPUT or k == 0 or lv.instructions[k - 1].name not in BORDER_WRITERS:
        return here
    before = lv.instructions[k - 1]
    src = op.operands[1]  # dest, src, ...
    writes = [v for v, role in zip(before.operands, operand_roles(before), strict=True) if role != "in"]
    return lv.position[before] if any(lv.regions[v].root == lv.regions[src].root for v in writes) else here


def plan_program(lv: Liveness) -> Plan:
    """Place the weights and activations of one program."""
    consts = [r for r in lv.roots if lv.kinds[r] == CONST]
    mutables = [r for r in lv.roots if lv.definition[r].name == "glowir.weight_var" and lv.kinds[r] != CONST]
    activations = lv.activations()
    offsets: list[tuple[ir.Operation, int]] = []
    region_sizes: dict[str, int] = {}
    for region, roots in (("constantWeight", consts), ("mutableWeight", mutables)):
        placed, region_sizes[region] = sequential([byte_size(r.type) for r in roots])
        offsets.extend((lv.definition[r], o) for r, o in zip(roots, placed))
    intervals = [Interval(*lv.interval(r), byte_size(r.type)) for r in activations]
    # each scratch buffer lives at its instruction's position, a bordered input from the instruction that writes it
    scratch_of = [(op, scratch_types(op)) for op in lv.instructions]
    scratch_of = [(op, types) for op, types in scratch_of if types]
    for op, types in scratch_of:
        here = lv.position[op]
        intervals += [Interval(_scratch_start(lv, op), here, size_in_bytes(t)) for t in types]
    placement = allocator.plan(intervals)
    offsets.extend((lv.definition[r], o) for r, o in zip(activations, placement.offsets))
    scratch, k = [], len(activations)
    for op, types in scratch_of:
        scratch.append((op, list(placement.offsets[k: k + len(types)])))
        k += len(types)
    region_sizes["activations"] = placement.size
    report = MemoryReport(
        naive_bytes=sum(i.size for i in intervals), planned_bytes=placement.size,
        lower_bound_bytes=allocator.lower_bound(intervals), constant_weights_bytes=region_sizes["constantWeight"],
        mutable_weights_bytes=region_sizes["mutableWeight"], activations=len(activations),
        scratch_buffers=len(intervals) - len(activations), strategy=placement.strategy)
    bad = allocator.conflicts(intervals, placement.offsets)
    if bad:  # a bug in the allocator: never hand out overlapping memory
        i, j = bad[0]
        raise PassError(f"memory plan places buffers #{i} and #{j} (activations, then scratch buffers) in the same "
                        "bytes while both are live", lv.func.location)
    return Plan(offsets, scratch, region_sizes, report)


def memory_report(func: ir.Operation) -> MemoryReport:
    """The memory report of a program (planning it, without changing it)."""
    with func.context, ir.Location.unknown(func.context):
        return plan_program(Liveness(func)).report


def apply_plan(func: ir.Operation, plan: Plan) -> None:
    """Record the offsets and region sizes as attributes."""
    i64 = ir.IntegerType.get_signless(64, func.context)
    for op, offset in plan.offsets:
        op.attributes[OFFSET_ATTR] = ir.IntegerAttr.get(i64, offset)
    for op, offsets in plan.scratch:
        op.attributes[SCRATCH_ATTR] = ir.DenseI64ArrayAttr.get(offsets, func.context)
    for region, size in plan.region_sizes.items():
        func.attributes[REGION_SIZE_ATTRS[region]] = ir.IntegerAttr.get(i64, size)


@dataclass(frozen=True)
class PlanMemory(Pass):
    """Offsets for every buffer in three regions: constant weights, mutable weights, activations."""

    name = "glowir-plan-memory"
    summary = "place weights and activations at aligned offsets in three regions (records offset attributes)"

    def run(self, module: ir.Operation) -> None:
        with module.context, ir.Location.unknown(module.context):
            for func in programs(module):
                apply_plan(func, plan_program(Liveness(func)))
