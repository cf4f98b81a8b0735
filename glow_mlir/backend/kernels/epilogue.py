"""Epilogue fusion: a convolution or matmul with the bias that initializes its output and the elementwise updates
that follow it (activation, residual add, scale-shift) as ONE loop nest, so that each output tile is written once,
from the registers that accumulated it.

linalg-outline-kernels puts such a chain in one kernel function (:func:`~glow_mlir.passes.conversion.outline_kernels.
kernel_groups`); here it becomes one tensor island in destination-passing style on the output buffer ``D``::

    linalg.broadcast ins(%bias) outs(%D)                       %t0 = to_tensor %D restrict writable
    linalg.conv_2d_nhwc_hwcf ins(%x, %w) outs(%D)          ->  %t1 = linalg.broadcast ins(%tbias) outs(%t0)
    linalg.generic ins(%D, %skip) outs(%D) {add}               %t2 = linalg.conv_2d_nhwc_hwcf ins(%tx, %tw) outs(%t1)
    linalg.generic outs(%D) {relu}                             %t3 = linalg.generic ins(%tskip) outs(%t2) {add}
                                                               %t4 = linalg.generic outs(%t3) {relu}
                                                               materialize_in_destination %t4 in writable %D

(an update that reads ``D`` as an input reads its output operand instead: on tensors the chain then runs through the
outputs only, and nothing allocates). An update marked ``glow.dead_input`` (the outliner found ``D`` dead after it)
moves the chain to the buffer it writes, ``E`` (a residual add written onto the skip): on tensors it reads the chain's
value as an input and writes ``E``'s tensor, the island materializes into ``E``, and ``D`` is never written back.

A convolution that the kernel cuts by output channels (pieces of vector widths, or the blocks of a packed filter, in
a loop or as tasks) gets one island per slice: the chain restricted to the slice's channels (:func:`sliced_chain`:
the bias slice as its init, each update on the slices of its operands that its maps read by channel), when every
update reads the channel only as a plain dim (:func:`sliceable`).

The schedule (:func:`schedule_tiles`) tiles the LAST op of the chain at the kernel's L1 tile and fuses its producers
into that loop (``transform.structured.fuse``, which follows the destination operands through the loops' iter_args),
then once more at the register tile, so that the bias is the accumulators' initial value and the updates run on the
accumulators after the reduction loops (a producer fused through an input rather than the destination stays behind,
dead, until a DCE). The convolution or matmul tile is then tiled over its reductions and vectorized as its own kernel
does (:mod:`.conv`, :mod:`.matmul`), the epilogue tiles are vectorized as they are. With threads, the first tiling is
an ``scf.forall`` over the rows of the output.

Tile sizes equal to a dim's whole extent are given as 0 (untiled): ``structured.fuse`` failed ("replacement value
0") on a one-iteration loop (shared/NOTES-mlir.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, bufferization, linalg, memref, transform
from mlir.dialects.transform import structured

from ...passes.conversion.ir_to_linalg import BLOCKED_CONV_ATTR
from ...passes.conversion.linalg_buffers import DEAD_INPUT_ATTR, clone_body, updates_in_place
from . import conv, matmul
from . import transform as schedule
from .isa import KernelSpec

#: on the contraction or convolution of a fused chain: its kernel's tile key (the unfused kernels use TILES_ATTR)
FUSED_ATTR = "glow.fused"
#: on the init and the updates of a fused chain: the key of its head
EPILOGUE_ATTR = "glow.epilogue"
#: on the last op of a fused chain (the head itself when only an init precedes it): the key of its head
LAST_ATTR = "glow.fused_last"
#: the ops that may initialize the head's output
INITS = ("linalg.fill", "linalg.broadcast")


@dataclass
class Chain:
    """A head (convolution or matmul writing ``dest``), the op that initializes ``dest`` before it if any, and the
    elementwise updates of ``dest`` after it."""

    head: ir.Operation
    dest: ir.Value
    init: ir.Operation | None
    updates: list[ir.Operation]

    def fused(self) -> bool:
        return self.init is not None or bool(self.updates)

    def moves(self) -> bool:
        """Whether an update moves the chain to another buffer (a residual add written onto the skip). Such a
        convolution island stays on one thread: in an scf.forall over the other buffer, each tile of its own output
        would be a private buffer allocated per tile."""
        return any(DEAD_INPUT_ATTR in op.attributes for op in self.updates)

    def before_move(self) -> Chain:
        """The chain up to the update that moves it to another buffer (that update and the rest stay ops of their
        own after the island): what several threads fuse, so that the convolution's rows stay their tasks."""
        first = next(i for i, op in enumerate(self.updates) if DEAD_INPUT_ATTR in op.attributes)
        return Chain(self.head, self.dest, self.init, self.updates[:first])


def _dest(op: ir.Operation) -> ir.Value:
    return op.operands[len(op.operands) - 1]  # every op here has one output, its last operand


def chain_of(head: ir.Operation, dest: ir.Value | None = None) -> Chain:
    """``head`` with the ops right before and after it in its block that form its epilogue of ``dest`` (default:
    the buffer the head writes)."""
    ops = [o.operation for o in head.block.operations]
    i = ops.index(head)
    dest = _dest(head) if dest is None else dest
    before = ops[i - 1] if i > 0 else None
    init = before if before is not None and before.name in INITS and _dest(before) == dest else None
    updates, target = [], dest
    for op in ops[i + 1:]:
        if not updates_in_place(op, target) and _moved_to(op, target) is None:
            break
        target = _moved_to(op, target) or target
        updates.append(op)
    return Chain(head, dest, init, updates)


def _copies(op: ir.Operation, dest: ir.Value) -> ir.Value | None:
    """The buffer ``op`` copies ``dest`` into, if it is a plain elementwise copy (identity maps, the body yields the
    input) that the outliner found ``dest`` dead after (the bordered copy of a convolution's padded input)."""
    target = _moved_to(op, dest)
    if target is None or len(op.opview.inputs) != 1:
        return None
    block = op.regions[0].blocks[0]
    ops = list(block.operations)
    return target if len(ops) == 1 and ops[0].operands[0] == block.arguments[0] else None


def retarget_copy(chain: Chain) -> Chain:
    """The chain with a plain copy of its output into another buffer ``E`` folded away: the init, the head and the
    updates before the copy write ``E`` itself (``D`` is dead after the copy, and ``E`` is disjoint from what the head
    reads: linalg-outline-kernels checked both). No tile of ``D`` is then written anywhere, not even into a private
    buffer of a thread (a fused island writing ``D`` inside an scf.forall over ``E`` allocated one per tile)."""
    for k, op in enumerate(chain.updates):
        target = _copies(op, chain.dest)
        if target is None:
            continue
        if not all(updates_in_place(u, chain.dest) for u in chain.updates[:k]):
            return chain
        for user in [*([chain.init] if chain.init is not None else []), *chain.updates[:k]]:
            for i, v in enumerate(user.operands):
                if v == chain.dest:
                    user.operands[i] = target
        head_dest = _dest(chain.head)
        if head_dest == chain.dest:
            chain.head.operands[len(chain.head.operands) - 1] = target
        else:  # a packed convolution's [.., F/B, B] view of D: the same view of E
            with ir.InsertionPoint(chain.head), chain.head.location:
                chain.head.operands[len(chain.head.operands) - 1] = _expand_like(head_dest.owner.operation, target)
        op.erase()
        return Chain(chain.head, target, chain.init, chain.updates[:k] + chain.updates[k + 1:])
    return chain


def _expand_like(view: ir.Operation, source: ir.Value) -> ir.Value:
    """``source`` reshaped as the expand_shape ``view`` reshapes its source (the last dim split in blocks)."""
    t = ir.MemRefType(source.type)
    strides, offset = t.get_strides_and_offset()
    shape = ir.MemRefType(view.results[0].type).shape
    block = shape[-1]
    layout = ir.StridedLayoutAttr.get(offset, [*strides[:-1], block * strides[-1], strides[-1]])
    result = ir.MemRefType.get(shape, t.element_type, layout=layout)
    return memref.expand_shape(result, source, view.attributes["reassociation"], [], shape)


def _moved_to(op: ir.Operation, dest: ir.Value) -> ir.Value | None:
    """The buffer an update writes instead of ``dest``, if the outliner found ``dest`` dead after it (the input it
    names in DEAD_INPUT_ATTR is ``dest``)."""
    if DEAD_INPUT_ATTR not in op.attributes or op.name != "linalg.generic":
        return None
    index = ir.IntegerAttr(op.attributes[DEAD_INPUT_ATTR]).value
    reads = list(op.opview.inputs)
    return _dest(op) if index < len(reads) and reads[index] == dest and _dest(op) != dest else None


class Tensors:
    """The tensors of an island's buffers, one ``to_tensor`` per buffer (``restrict`` promises it is the only one);
    a scalar operand (a constant that linalg-fuse-elementwise folded in) stays itself."""

    def __init__(self, dest: ir.Value, init: ir.Value):
        self.dest = dest
        self._of: dict[ir.Value, ir.Value] = {}
        self.current = init

    def __call__(self, buffer: ir.Value) -> ir.Value:
        if not isinstance(buffer.type, ir.MemRefType):
            return buffer
        if buffer not in self._of:
            self._of[buffer] = matmul.tensor_of(buffer)
        return self._of[buffer]


def _tag(op: ir.Operation, name: str, key: str) -> None:
    op.attributes[name] = ir.StringAttr.get(key)


def _tensor_init(op: ir.Operation, tensors: Tensors) -> ir.Value:
    """The init op on tensors, writing the island's current value of the output."""
    if op.name == "linalg.fill":
        return linalg.fill(op.operands[0], outs=[tensors.current])
    dims = [int(d) for d in ir.DenseI64ArrayAttr(op.attributes["dimensions"])]
    result = linalg.broadcast(tensors(op.operands[0]), outs=[tensors.current], dimensions=dims)
    return result if isinstance(result, ir.Value) else result.result  # the builder returns the op


def _tensor_update(op: ir.Operation, tensors: Tensors) -> ir.Value:
    """An update of the output on tensors: inputs that are the buffer it writes become reads of the output operand.
    An update in place (:func:`updates_in_place`) writes the island's current value; one that moves the chain to
    another buffer (DEAD_INPUT_ATTR) reads the current value as an input and writes that buffer, which becomes the
    island's output (the first buffer is dead: it is not written back)."""
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    ins = list(op.opview.inputs)
    target = _dest(op)
    moved = target != tensors.dest
    kept = [k for k, v in enumerate(ins) if v != target]
    out = matmul.tensor_of(target, writable=True) if moved else tensors.current
    operands = [tensors.current if moved and ins[k] == tensors.dest else tensors(ins[k]) for k in kept]
    new = linalg.GenericOp([out.type], operands, [out],
                           ir.ArrayAttr.get([maps[k] for k in kept] + [maps[-1]]), op.attributes["iterator_types"])
    old = op.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*(a.type for a in [old.arguments[k] for k in kept] + [old.arguments[-1]]))
    mapping = {old.arguments[k]: block.arguments[n] for n, k in enumerate(kept)}
    mapping.update((old.arguments[k], block.arguments[-1]) for k, v in enumerate(ins) if v == target)
    mapping[old.arguments[-1]] = block.arguments[-1]
    tensors.dest = target
    clone_body(old, block, mapping)
    return new.result


def make_island(chain: Chain, key: str, build_head: Callable[[Tensors], ir.Value]) -> None:
    """Replace the ops of ``chain`` by one tensor island on its output (see the module docstring); ``build_head``
    builds the head on tensors, its output operand ``tensors.current``."""
    head = chain.head
    with ir.InsertionPoint(head), head.location:
        tensors = Tensors(chain.dest, matmul.tensor_of(chain.dest, writable=True))
        last = None
        if chain.init is not None:
            tensors.current = _tensor_init(chain.init, tensors)
            _tag(tensors.current.owner.operation, EPILOGUE_ATTR, key)
        tensors.current = build_head(tensors)
        last = tensors.current.owner.operation
        _tag(last, FUSED_ATTR, key)
        for op in chain.updates:
            tensors.current = _tensor_update(op, tensors)
            last = tensors.current.owner.operation
            _tag(last, EPILOGUE_ATTR, key)
        _tag(last, LAST_ATTR, key)
        bufferization.materialize_in_destination(None, tensors.current, tensors.dest, writable=True)
    for op in [*([chain.init] if chain.init is not None else []), head, *chain.updates]:
        op.erase()


# --------------------------------------------------------------------------- convolutions


def fused_key(key: str, extents: list[int], serial: bool = False) -> str:
    """The key of a fused chain: its head's tile key, the extents of its output (the schedule leaves a dim whose
    tile is its whole extent untiled), and ``serial`` for a chain too small to hand to other threads."""
    return f"{key}|{'x'.join(str(e) for e in extents)}" + ("|serial" if serial else "")


def parse_fused_key(key: str) -> tuple[str, list[int], bool]:
    """The head's tile key, the output extents and the serial flag of a :func:`fused_key`."""
    head, extents, *serial = key.split("|")
    return head, [int(e) for e in extents.split("x")], bool(serial)


def head_flops(chain: Chain) -> int:
    """2 x the multiply-adds of the chain's head (on memrefs): output elements times the reduction."""
    shapes = [ir.MemRefType(v.type).shape for v in chain.head.operands]
    reduction = shapes[0][-1] if chain.head.name == "linalg.matmul" else math.prod(shapes[1][:-1])
    return 2 * math.prod(shapes[-1]) * reduction


def conv_island(chain: Chain, tiles: conv.ConvTiles, serial: bool = False) -> None:
    """The island of a convolution chain (the head as :func:`.conv.make_island` builds it)."""
    op = chain.head
    src, filt, _ = op.operands
    strides = conv._ints(op, "strides")

    def build(tensors: Tensors) -> ir.Value:
        builder = linalg.depthwise_conv_2d_nhwc_hwc if tiles.depthwise else linalg.conv_2d_nhwc_hwcf
        return builder(tensors(src), tensors(filt), outs=[tensors.current], strides=strides, dilations=[1, 1])

    make_island(chain, fused_key(tiles.key(), list(ir.MemRefType(chain.dest.type).shape), serial), build)


# --------------------------------------------------------------------------- convolutions cut into channel slices

#: the output channel dim of a convolution's output and of its elementwise epilogue's iteration space (NHWC)
CHANNEL = 3


def _channel_positions(map_attr: ir.Attribute) -> list[int] | None:
    """The results of an indexing map that are the channel dim; None when the channel takes part in a compound
    expression (a slice of channels would not be a slice of that operand)."""
    positions = []
    for k, e in enumerate(ir.AffineMapAttr(map_attr).value.results):
        if isinstance(e, ir.AffineDimExpr):
            if e.position == CHANNEL:
                positions.append(k)
        elif f"d{CHANNEL}" in str(e):
            return None
    return positions


def sliceable(chain: Chain) -> bool:
    """Whether the chain's epilogue restricts to a slice of the output channels: every update is 4-D over the
    output and reads each operand with the channel dim at most as a plain result of its map."""
    for op in chain.updates:
        if len(ir.ArrayAttr(op.attributes["iterator_types"])) != CHANNEL + 1:
            return False
        if any(_channel_positions(m) is None for m in ir.ArrayAttr(op.attributes["indexing_maps"])):
            return False
    return chain.init is None or chain.init.name == "linalg.fill" or \
        CHANNEL not in ir.DenseI64ArrayAttr(chain.init.attributes["dimensions"])


def _slice(v: ir.Value, dim: int, start: ir.Value | int, size: int) -> ir.Value:
    """``v`` restricted to ``[start, start + size)`` along ``dim`` (a view)."""
    t = ir.MemRefType(v.type)
    strides, offset = t.get_strides_and_offset()
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    static = isinstance(start, int) and offset != dynamic
    result = ir.MemRefType.get([size if d == dim else n for d, n in enumerate(t.shape)], t.element_type,
                               layout=ir.StridedLayoutAttr.get(offset + start * strides[dim] if static else dynamic,
                                                               strides))
    offsets = [start if d == dim else 0 for d in range(t.rank)]
    sizes = [size if d == dim else n for d, n in enumerate(t.shape)]
    return memref.subview(v, offsets, sizes, [1] * t.rank, result_type=result)


class _Slices:
    """Views of a chain's buffers restricted to one slice of the output channels, each made once."""

    def __init__(self, dest: ir.Value, dest_slice: ir.Value, start: ir.Value | int, size: int):
        self._views: dict[tuple[ir.Value, int], ir.Value] = {(dest, CHANNEL): dest_slice}
        self.start, self.size = start, size

    def __call__(self, v: ir.Value, dims: list[int]) -> ir.Value:
        for dim in dims:
            if (v, dim) not in self._views:
                self._views[(v, dim)] = _slice(v, dim, self.start, self.size)
            v = self._views[(v, dim)]
        return v


def _sliced_operands(op: ir.Operation, slices: _Slices) -> list[ir.Value]:
    """The operands of the elementwise update ``op``, each sliced where its map reads the channel."""
    maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
    return [slices(v, _channel_positions(m)) if isinstance(v.type, ir.MemRefType) else v
            for v, m in zip(op.operands, maps)]


def _sliced_update(op: ir.Operation, operands: list[ir.Value]) -> ir.Operation:
    """The elementwise update ``op`` on the sliced ``operands``."""
    count = len(op.opview.inputs)
    new = linalg.GenericOp([], operands[:count], operands[count:], op.attributes["indexing_maps"],
                           op.attributes["iterator_types"])
    old = op.regions[0].blocks[0]
    block = new.regions[0].blocks.append(*(a.type for a in old.arguments))
    clone_body(old, block, dict(zip(old.arguments, block.arguments)))
    return new.operation


def just_built() -> ir.Operation:
    """The op a builder just made at the current insertion point (the structured-op builders return the results of
    an op on memrefs, which are none)."""
    point = ir.InsertionPoint.current
    ops = [o.operation for o in point.block.operations]
    at = len(ops) if point.ref_operation is None else ops.index(point.ref_operation.operation)
    return ops[at - 1]


def _sliced_init(op: ir.Operation, slices: _Slices) -> ir.Operation:
    """The init of the chain's output on the channel slice: a fill as it is, a broadcast of the sliced source."""
    dest = slices(_dest(op), [CHANNEL])
    if op.name == "linalg.fill":
        linalg.fill(op.operands[0], outs=[dest])
    else:
        dims = [int(d) for d in ir.DenseI64ArrayAttr(op.attributes["dimensions"])]
        kept = [d for d in range(CHANNEL + 1) if d not in dims]  # the output dims that the source's dims stand for
        linalg.broadcast(slices(op.operands[0], [kept.index(CHANNEL)]), outs=[dest], dimensions=dims)
    return just_built()


def sliced_chain(chain: Chain, dest_slice: ir.Value, start: ir.Value | int, size: int,
                 build_head: Callable[[ir.Value], ir.Operation]) -> Chain:
    """The chain restricted to output channels ``[start, start + size)`` on memrefs, at the insertion point:
    ``dest_slice`` is that view of the output, ``build_head`` makes the head writing it."""
    slices = _Slices(chain.dest, dest_slice, start, size)
    operands = [_sliced_operands(op, slices) for op in chain.updates]  # views first: the island uses them all
    init = _sliced_init(chain.init, slices) if chain.init is not None else None
    head = build_head(dest_slice)
    updates = [_sliced_update(op, ops) for op, ops in zip(chain.updates, operands)]
    return Chain(head, dest_slice, init, updates)


def erase_chain(chain: Chain) -> None:
    for op in [*chain.updates, chain.head, *([chain.init] if chain.init is not None else [])]:
        op.erase()


def blocked_chain(head: ir.Operation) -> Chain | None:
    """The chain of a convolution on a packed filter (convert-glowir-to-linalg's blocked generic), which writes its
    output viewed as [N, OH, OW, F / B, B]: the init and the updates write the view's source."""
    view = _dest(head)
    if not isinstance(view, ir.OpResult) or view.owner.operation.name != "memref.expand_shape":
        return None
    return chain_of(head, view.owner.operation.operands[0])


def blocked_islands(chain: Chain, tiles: conv.ConvTiles, threads: int) -> None:
    """A convolution on a packed filter with its epilogue: for each filter block ``j``, the chain restricted to
    channels ``[j B, (j + 1) B)`` as one fused island (that block's conv_2d_nhwc_hwcf, the bias slice its init, the
    slices of the updates after it). The blocks run as the unfused ones do (:func:`.conv.for_blocks`), each island
    on the thread that runs its block."""
    head = chain.head
    src, filt, view = head.operands
    strides = [int(v) for v in ir.DenseI64ArrayAttr(head.attributes[BLOCKED_CONV_ATTR])]
    count, size = ir.MemRefType(filt.type).shape[0], ir.MemRefType(filt.type).shape[-1]

    def one(j: ir.Value) -> None:
        def build(dest: ir.Value) -> ir.Operation:
            linalg.conv_2d_nhwc_hwcf(src, conv._block(filt, j, 0), outs=[dest], strides=strides, dilations=[1, 1])
            return just_built()

        start = arith.muli(j, conv._index(size))
        conv_island(sliced_chain(chain, conv._block(view, j, 3), start, size, build), tiles, serial=threads > 1)

    with ir.InsertionPoint(head), head.location:
        conv.for_blocks(count, threads, one)
    erase_chain(chain)


def pieced_islands(chain: Chain, plan: conv.ConvPlan, serial: bool) -> None:
    """A convolution cut into channel pieces with its epilogue: each piece with its slice of the chain as one fused
    island."""
    head = chain.head
    src, filt, dest = head.operands
    strides = conv._ints(head, "strides")
    depthwise = head.name == conv.DEPTHWISE
    with ir.InsertionPoint(head), head.location:
        for start, size, tiles in plan.pieces:
            def build(out: ir.Value, start: int = start, size: int = size) -> ir.Operation:
                if depthwise:
                    linalg.depthwise_conv_2d_nhwc_hwc(conv._channels(src, start, size),
                                                      conv._channels(filt, start, size), outs=[out], strides=strides,
                                                      dilations=[1, 1])
                else:
                    linalg.conv_2d_nhwc_hwcf(src, conv._channels(filt, start, size), outs=[out], strides=strides,
                                             dilations=[1, 1])
                return just_built()

            conv_island(sliced_chain(chain, _slice(dest, CHANNEL, start, size), start, size, build), tiles, serial)
    erase_chain(chain)


def _match(root: ir.Value, names: list[str], attr: str, key: str) -> ir.Value:
    return structured.MatchOp(schedule.any_op(), root, ops=names,
                              op_attrs=ir.DictAttr.get({attr: ir.StringAttr.get(key)})).result


def _tile_and_fuse(root: ir.Value, key: str, names: list[str], extents: list[int], l1: list[int],
                   registers: list[int], reductions: int, threads: int, split: int) -> None:
    """Tile the last ops of the chains ``key`` (one handle per op name: loops of different counts) at the L1 and the
    register tiles of the output dims ``extents``, fusing their producers into both loop nests; with threads, the L1
    tiles of dim ``split`` are the iterations of an scf.forall."""
    inside = l1
    if threads > 1:
        across = [l1[d] if d == split else 0 for d in range(len(extents))]
        inside = [0 if d == split else s for d, s in enumerate(l1)]
    for name in names:
        extra = [0] * (reductions if name not in ("linalg.generic", *INITS) else 0)
        last = _match(root, [name], LAST_ATTR, key)
        if threads > 1:
            last = schedule.fuse(last, schedule.whole(across, extents) + extra, forall=True)
        tiled = schedule.fuse(last, schedule.whole(inside, extents) + extra)
        sizes = schedule.whole(registers, [s or e for s, e in zip(l1, extents)]) + extra
        if not any(sizes):
            continue
        fused = structured.FuseOp(tiled, tile_sizes=sizes, apply_cleanup=True)
        peeled = [d for d, (size, extent) in enumerate(zip(registers, l1)) if size and (extent % size)]
        if peeled:  # the dim whose last register tile is narrower: that tile peeled off, its shapes static
            schedule.peel_remainder(fused.loops[sum(1 for s in sizes[:peeled[0]] if s)])
    # producers fused through an input (a chain that moved to another buffer) stay behind, dead, until DCE
    schedule.for_each(schedule.functions(root), transform.ApplyDeadCodeEliminationOp)


def schedule_conv(root: ir.Value, key: str, threads: int) -> None:
    """The schedule of the fused convolution chains tagged ``key`` (:func:`fused_key`): output rows across threads."""
    head, extents, serial = parse_fused_key(key)
    threads = 1 if serial else threads
    t = conv.parse_key(head)
    name = conv.DEPTHWISE if t.depthwise else conv.NAME
    reductions = 2 if t.depthwise else 3
    _tile_and_fuse(root, key, ["linalg.generic", name], extents, [1, 1, t.ow, t.f], [0, 0, t.owr, t.fr],
                   reductions, threads, split=1)
    heads = _match(root, [name], FUSED_ATTR, key)
    window = [1, 0] if t.depthwise else [1, 1, 1]
    registers = structured.TileUsingForOp(heads, sizes=[0, 0, 0, 0, *window]).tiled_linalg_op
    structured.VectorizeOp(structured.DecomposeOp(registers).transformed)
    structured.VectorizeOp(_match(root, ["linalg.generic", *INITS], EPILOGUE_ATTR, key))


# --------------------------------------------------------------------------- matmuls


def matmul_tiles(chain: Chain, spec: KernelSpec) -> matmul.Tiles | None:
    """The tiles of a matmul chain if one island covers it: the plan is one piece, B not packed, K untiled (the
    other plans keep the unfused islands)."""
    a, b, _ = chain.head.operands
    (m, k), n = ir.MemRefType(a.type).shape, ir.MemRefType(b.type).shape[1]
    pieces = matmul.plan(m, n, k, spec)
    if len(pieces) != 1 or pieces[0].tiles.pack or pieces[0].tiles.k:
        return None
    return pieces[0].tiles


def matmul_island(chain: Chain, tiles: matmul.Tiles, serial: bool = False) -> None:
    """The island of a matmul chain (the head as :func:`.matmul.make_islands` builds a one-piece plan)."""
    a, b, _ = chain.head.operands

    def build(tensors: Tensors) -> ir.Value:
        return linalg.matmul(tensors(a), tensors(b), outs=[tensors.current])

    make_island(chain, fused_key(tiles.key(), list(ir.MemRefType(chain.dest.type).shape), serial), build)


def schedule_matmul(root: ir.Value, key: str, threads: int) -> None:
    """The schedule of the fused matmul chains tagged ``key``: the split dim of its tiles across threads."""
    head, extents, serial = parse_fused_key(key)
    threads = 1 if serial else threads
    t = matmul.parse_key(head)
    _tile_and_fuse(root, key, ["linalg.generic", "linalg.matmul"], extents, [t.m, t.n], [t.mr, t.nr], 1, threads,
                   split=t.split)
    heads = _match(root, ["linalg.matmul"], FUSED_ATTR, key)
    registers = structured.TileUsingForOp(heads, sizes=[0, 0, 1]).tiled_linalg_op
    structured.VectorizeOp(registers).create_named_contraction = True
    structured.VectorizeOp(_match(root, ["linalg.generic", *INITS], EPILOGUE_ATTR, key))


def schedule_tiles(root: ir.Value, key: str, threads: int) -> None:
    """The schedule of the fused chains tagged ``key``, by the kind of their head."""
    head, _, _ = parse_fused_key(key)
    (schedule_matmul if head.startswith("l1=") else schedule_conv)(root, key, threads)


def fused_keys(module: ir.Operation) -> list[str]:
    """The distinct keys of the fused chains in ``module``, in order of appearance."""
    keys: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if FUSED_ATTR in op.attributes:
            key = ir.StringAttr(op.attributes[FUSED_ATTR]).value
            if key not in keys:
                keys.append(key)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    return keys
