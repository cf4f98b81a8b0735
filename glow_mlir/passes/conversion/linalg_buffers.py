"""The buffers of a lowered program (linalg on memrefs, see :mod:`.ir_to_linalg`), as the fusion rules see them.

A buffer is a view of a function argument (a planned region, or a weight var of an unplanned program) or a heap
allocation; its *footprint* is the byte range it covers in that root. Two operands of different SSA values may still
be the same memory (a tensor_view) or overlap it in part: loop fusion is legal only on buffers that are either the
same value or provably disjoint, so every rule here answers "don't know" (None) for a view it cannot follow.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from mlir import ir

from .ir_to_linalg.common import row_major_strides

#: the planned region that holds the activations (``glowir.arguments`` of a lowered program names its arguments)
ACTIVATIONS = "activations"
#: ops that may sit between ops that fuse or share a kernel: no memory effects, so those ops may run where the last is
PURE_OPS = ("arith.constant", "memref.get_global", "memref.view", "memref.subview", "memref.reinterpret_cast",
            "memref.expand_shape", "memref.collapse_shape")


@dataclass(frozen=True)
class Footprint:
    """Bytes ``[start, end)`` of ``root`` (a block argument or a memref.alloc result)."""

    root: ir.Value
    start: int
    end: int

    def overlaps(self, other: Footprint) -> bool:
        return self.root == other.root and self.start < other.end and other.start < self.end


def _static_int(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.OpView) and owner.operation.name == "arith.constant":
        return ir.IntegerAttr(owner.operation.attributes["value"]).value
    return None


def _bytes(t: ir.MemRefType) -> int | None:
    if not t.has_static_shape or not isinstance(t.element_type, (ir.FloatType, ir.IntegerType)):
        return None
    return prod(t.shape) * max(1, t.element_type.width // 8)


def footprint(value: ir.Value) -> Footprint | None:
    """The bytes ``value`` covers, if it is a buffer this module can follow to its root: a block argument, a
    memref.alloc, a constant memref.get_global, a memref.view at a constant shift, a static reinterpret_cast, a reshape or a static subview of one
    of these (a strided view: the range from its first to its last byte, which may hold bytes of others between)."""
    t = ir.MemRefType(value.type)
    size = _bytes(t)
    if size is None:
        return None
    if isinstance(value, ir.BlockArgument):
        return Footprint(value, 0, size)
    op = value.owner.operation
    if op.name == "memref.alloc":
        return Footprint(value, 0, size)
    if op.name == "memref.get_global":  # the lowerings' constant tables: their own root, never written
        return Footprint(value, 0, size)
    if op.name == "memref.view" and isinstance(op.operands[0], ir.BlockArgument):
        shift = _static_int(op.operands[1])
        return None if shift is None else Footprint(op.operands[0], shift, shift + size)
    if op.name == "memref.subview" and len(op.operands) == 1:  # static offsets: the range from first to last byte
        base = footprint(op.operands[0])
        strides, offset = t.get_strides_and_offset()
        _, base_offset = ir.MemRefType(op.operands[0].type).get_strides_and_offset()
        dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
        if base is None or dynamic in (offset, base_offset, *strides):
            return None
        element = size // max(1, prod(t.shape))
        start = base.start + (offset - base_offset) * element
        return Footprint(base.root, start, start + (sum((n - 1) * s for n, s in zip(t.shape, strides)) + 1) * element)
    if op.name in ("memref.expand_shape", "memref.collapse_shape"):  # the same bytes, reshaped
        base = footprint(op.operands[0])
        return None if base is None else Footprint(base.root, base.start, base.start + size)
    if op.name == "memref.reinterpret_cast" and len(op.operands) == 1:
        strides, offset = t.get_strides_and_offset()
        base = footprint(op.operands[0])
        contiguous = strides == row_major_strides(t.shape)
        if base is None or not contiguous or offset == ir.ShapedType.get_dynamic_stride_or_offset():
            return None
        start = base.start + offset * (size // max(1, prod(t.shape)))
        return Footprint(base.root, start, start + size)
    return None


def same_or_disjoint(a: ir.Value, b: ir.Value, cache: dict[ir.Value, Footprint | None] | None = None) -> bool:
    """Whether buffers ``a`` and ``b`` are the same SSA value or provably share no byte (footprints memoized in
    ``cache``)."""
    if a == b:
        return True
    cache = {} if cache is None else cache
    for v in (a, b):
        if v not in cache:
            cache[v] = footprint(v)
    fa, fb = cache[a], cache[b]
    if fa is None or fb is None:
        return False
    if fa.root != fb.root:
        # distinct roots: function arguments (the regions, or weight vars) and allocations never alias
        return True
    return not fa.overlaps(fb)


def may_overlap(a: ir.Value, b: ir.Value, cache: dict[ir.Value, Footprint | None] | None = None) -> bool:
    """Whether buffers ``a`` and ``b`` may share a byte: the same value, or not provably disjoint."""
    return a == b or not same_or_disjoint(a, b, cache)


def all_same_or_disjoint(buffers: list[ir.Value], cache: dict[ir.Value, Footprint | None] | None = None) -> bool:
    """Whether any two of ``buffers`` are the same SSA value or provably share no byte: :func:`same_or_disjoint` of
    every pair, in O(k log k) (the footprints of one root sorted by start), footprints memoized in ``cache``."""
    cache = {} if cache is None else cache
    distinct = list(dict.fromkeys(buffers))
    if len(distinct) < 2:
        return True
    by_root: dict[ir.Value, list[tuple[int, int]]] = {}
    for value in distinct:
        if value not in cache:
            cache[value] = footprint(value)
        found = cache[value]
        if found is None:
            return False
        by_root.setdefault(found.root, []).append((found.start, found.end))
    for ranges in by_root.values():
        ranges.sort()
        for (_, end), (start, _) in zip(ranges, ranges[1:]):
            if start < end:
                return False
    return True


def is_temporary(value: ir.Value) -> bool:
    """Whether ``value`` is an activation of the program (a memref.alloc, or a view of the planned activations
    region): memory that no one reads after the program, unlike weights, inputs and outputs. Not in a partition of
    a program (``glowir.partition``): a later partition may read its activations."""
    if isinstance(value, ir.BlockArgument):
        return False
    op = value.owner.operation
    if op.name == "memref.alloc":
        return True
    if op.name != "memref.view" or not isinstance(op.operands[0], ir.BlockArgument):
        return False
    arg = ir.BlockArgument(op.operands[0])
    func = arg.owner.owner
    # in a partition, an activation may be read by a later partition (another function): none is known to die
    if "glowir.arguments" not in func.attributes or "glowir.partition" in func.attributes:
        return False
    return ir.StringAttr(ir.ArrayAttr(func.attributes["glowir.arguments"])[arg.arg_number]).value == ACTIVATIONS


def is_identity(map_attr: ir.Attribute) -> bool:
    m = ir.AffineMapAttr(map_attr).value
    return m.is_permutation and m == ir.AffineMap.get_identity(m.n_dims, context=m.context)


def parallel_generic(op: ir.Operation) -> bool:
    """A linalg.generic of one output, every loop parallel, writing its output at the identity map (elementwise over
    its output's index space; its inputs may be read through any map)."""
    if op.name != "linalg.generic" or len(op.results) or len(op.opview.outputs) != 1:
        return False
    iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    return all("parallel" in it for it in iterators) and is_identity(maps[-1])


def inputs(op: ir.Operation) -> list[tuple[ir.Value, ir.Attribute]]:
    """The inputs of a linalg.generic with their indexing maps."""
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    return list(zip(op.opview.inputs, maps))


#: on an elementwise op that reads buffer D and writes another: D's content is dead after it (linalg-outline-kernels
#: sets it where it knows D is a temporary no later op reads; the epilogue fusion then need not write D)
DEAD_INPUT_ATTR = "glow.dead_input"


def moves_to(op: ir.Operation, dest: ir.Value) -> ir.Value | None:
    """The buffer ``op`` writes if it is an elementwise op reading ``dest`` (at the identity map) into another buffer
    disjoint from it, whose other inputs are disjoint from ``dest`` too (a residual add written onto the skip)."""
    if not parallel_generic(op):
        return None
    out = op.operands[len(op.operands) - 1]
    reads = inputs(op)
    if out == dest or not same_or_disjoint(out, dest) or dest not in [v for v, _ in reads]:
        return None
    for value, map_attr in reads:
        if value in (dest, out):
            if not is_identity(map_attr):
                return None
        elif isinstance(value.type, ir.MemRefType) and not same_or_disjoint(value, dest):
            return None
    return out if _loads_disjoint(op, (dest, out)) else None


def updates_in_place(op: ir.Operation, dest: ir.Value) -> bool:
    """Whether ``op`` is an elementwise update of buffer ``dest`` (:func:`parallel_generic` writing ``dest``) whose
    other inputs are buffers disjoint from ``dest``: every element of ``dest`` is then read (if at all) at the index it
    is written, so the update can run on any tile of ``dest`` right after the tile is computed."""
    if not parallel_generic(op) or op.operands[len(op.operands) - 1] != dest:
        return False
    for value, map_attr in inputs(op):
        if value == dest:
            if not is_identity(map_attr):
                return False
        elif isinstance(value.type, ir.MemRefType) and not same_or_disjoint(value, dest):
            return False
    return _loads_disjoint(op, (dest,))


def _loads_disjoint(op: ir.Operation, written: tuple[ir.Value, ...]) -> bool:
    """Whether every buffer ``op``'s body loads itself (a gather's data: read at computed positions) is provably
    disjoint from the ``written`` ones (the same buffer is not enough: another iteration may have written it)."""
    for value in captured(op):
        if isinstance(value.type, ir.MemRefType) and any(
                value == w or not same_or_disjoint(value, w) for w in written):
            return False
    return True


def captured(op: ir.Operation) -> list[ir.Value]:
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


def remap(op: ir.Operation, mapping: dict[ir.Value, ir.Value]) -> None:
    """Replace, in ``op`` and everything nested in it, every operand found in ``mapping``."""

    def visit(nested: ir.Operation) -> ir.WalkResult:
        for k, v in enumerate(nested.operands):
            if v in mapping:
                nested.operands[k] = mapping[v]
        return ir.WalkResult.ADVANCE

    op.walk(visit)


def clone_body(source: ir.Block, target: ir.Block, mapping: dict[ir.Value, ir.Value],
               skip_yield: bool = False) -> list[ir.Value]:
    """Clone the ops of ``source`` at the end of ``target``, their operands (nested ones too) through ``mapping``,
    which learns the clones' results; with ``skip_yield`` the terminator is not cloned. Returns the terminator's
    operands, mapped."""
    ops = list(source.operations)
    with ir.InsertionPoint(target):
        for op in ops[:-1] if skip_yield else ops:
            clone = op.operation.clone()
            remap(clone, mapping)
            mapping.update(zip(op.results, clone.results))
    return [mapping.get(v, v) for v in ops[-1].operands]


def code_blocks(func_op: ir.Operation) -> list[ir.Block]:
    """The blocks of a lowered program that hold its code: the entry block, then the body of each of its loops
    (``scf.for``, the ``do`` block of ``scf.while``) and both branches of its ifs, nested ones included."""
    blocks: list[ir.Block] = []

    def visit(block: ir.Block) -> None:
        blocks.append(block)
        for op in block.operations:
            if op.operation.name == "scf.for":
                visit(op.operation.regions[0].blocks[0])
            elif op.operation.name == "scf.while":
                visit(op.operation.regions[1].blocks[0])
            elif op.operation.name == "scf.if":
                for region in op.operation.regions:
                    for inner in region.blocks:
                        visit(inner)

    if func_op.regions[0].blocks:
        visit(func_op.regions[0].blocks[0])
    return blocks
