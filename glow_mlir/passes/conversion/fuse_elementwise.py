"""linalg-fuse-elementwise: elementwise linalg.generics over one index space, one after the other (or with generics
between that leave the first's buffers alone), become one loop nest, when what the first writes is read only by the
second (Glow's CPU backend "stacks" data-parallel instructions the same way)::

    generic ins(%x) outs(%t) {f}; generic ins(%t, %y) outs(%d) {g}      (%t a temporary that nothing else uses)
      -> generic ins(%x, %y) outs(%d) {g(f(x), y)}                      (%t is not written at all)
    generic ins(%d, %s) outs(%d) {add}; generic outs(%d) {relu}         (%d rewritten whole by the second)
      -> generic ins(%d, %s) outs(%d) {relu(add)}

Why on linalg on memrefs and not on glowir: a glowir instruction has no body, so a fused chain has no glowir spelling
short of a new region-carrying instruction (which IRDL rows cannot declare); a linalg.generic is exactly a loop nest
with a body, so the chain becomes one generic that the kernel outliner, the epilogue fusion of cpu-tile-kernels and
the loop lowering all treat as any other. The memory plan is fixed by then and fusion only drops writes, so no buffer
changes. It runs after convert-glowir-to-linalg and before linalg-outline-kernels (one kernel per fused chain).

First, a ``linalg.fill`` of a scalar folds into the generics after it that read the filled buffer as an input, until
an op may write that buffer (:func:`fold_fills`): they read the scalar (at the empty map) instead, and the fill is
dropped where nothing else read the buffer before it was rewritten whole, or it is a temporary nothing else reads.
Node lowering spells a clip as ``max(x, splat(lo))`` then ``min(.., splat(hi))``: one loop over x, not two fills and
two passes::

    fill ins(%lo) outs(%t); generic ins(%x, %t) outs(%d) {max}          (%t a temporary, or %d itself)
      -> generic ins(%x, %lo : memref, f32) outs(%d) {max}

The first op's result is dead after the second when the second rewrites the same buffer whole, or when it is a
temporary (:func:`.linalg_buffers.is_temporary`) whose only users are the two ops (and its dealloc): a planned
temporary is a view of the activations region, and the plan gives memory to another buffer only once this one is
dead. Both ops must be :func:`.linalg_buffers.parallel_generic` over the same shape with only pure view ops between
them, or generics that may as well run before the first (:func:`may_move_past`: GELU's two interleaved chains); the
buffers they write must be read only at the identity map (no element is then read after a later iteration wrote
it), and any two of their buffers must be the same value or provably disjoint; a buffer a body loads from itself (a
gather's data) must be disjoint from both written ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import linalg

from ..registry import Pass
from .linalg_buffers import (
    PURE_OPS,
    Footprint,
    all_same_or_disjoint,
    captured,
    clone_body,
    code_blocks,
    inputs,
    is_identity,
    is_temporary,
    may_overlap,
    parallel_generic,
)

#: a fused loop reads at most this many distinct buffers and holds at most this many body ops: enough for any chain
#: a network stacks (activation, residual add, scale and shift), and it keeps each fusion's cost bounded, so the pass
#: is linear in the program (fusing into an ever longer chain would copy its body and re-check its buffers each time)
MAX_BUFFERS = 16
MAX_BODY_OPS = 64


def _output(op: ir.Operation) -> ir.Value:
    return op.opview.outputs[0]


def _out_arg_used(op: ir.Operation) -> bool:
    return any(True for _ in op.regions[0].blocks[0].arguments[-1].uses)


def _body_size(op: ir.Operation) -> int:
    return len(op.regions[0].blocks[0].operations)


def fusable(producer: ir.Operation, consumer: ir.Operation,
            footprints: dict[ir.Value, Footprint | None] | None = None) -> bool:
    """Whether ``consumer`` can take ``producer`` into its loop (see the module docstring); ``footprints`` memoizes
    the buffers' footprints across calls."""
    if not (parallel_generic(producer) and parallel_generic(consumer)):
        return False
    if _body_size(producer) + _body_size(consumer) > MAX_BODY_OPS:
        return False
    t, out = _output(producer), _output(consumer)
    if ir.MemRefType(t.type).shape != ir.MemRefType(out.type).shape:
        return False
    reads = [v for v, _ in inputs(consumer)]
    if t != out:
        users = {use.owner.operation for use in t.uses if use.owner.operation.name != "memref.dealloc"}
        if not is_temporary(t) or t not in reads or users != {producer, consumer} or _out_arg_used(producer):
            return False
    written = {t, out}
    operands = [*inputs(producer), *inputs(consumer)]
    if any(v in written and not is_identity(m) for v, m in operands):
        return False
    # a buffer a body reads itself (a gather's data, at a computed position) is read anywhere: disjoint from both
    # written buffers, or a later iteration could read what an earlier one wrote
    loaded = [v for v in (*captured(producer), *captured(consumer)) if isinstance(v.type, ir.MemRefType)]
    if any(v in written for v in loaded):
        return False
    buffers = list(dict.fromkeys(v for v, _ in operands if isinstance(v.type, ir.MemRefType)) | dict.fromkeys(loaded)
                   | dict.fromkeys(written))
    return len(buffers) <= MAX_BUFFERS and all_same_or_disjoint(buffers, footprints)


def fuse(producer: ir.Operation, consumer: ir.Operation) -> ir.Operation:
    """One generic computing ``consumer`` of ``producer``'s element, where ``consumer`` was; both are erased. An
    input both read at the same map (SiLU's x in sigmoid(x) and x * sigmoid(x)) is one operand of the fused op."""
    t, out = _output(producer), _output(consumer)
    old_p, old_c = producer.regions[0].blocks[0], consumer.regions[0].blocks[0]
    reads_p = [(v, m, a) for (v, m), a in zip(inputs(producer), old_p.arguments)]
    reads_c = [(v, m, a) for (v, m), a in zip(inputs(consumer), old_c.arguments) if v != t]
    slots: dict[tuple[ir.Value, ir.Attribute], ir.Type] = {}  # the fused op's inputs, each with its element type
    for v, m, a in reads_p + reads_c:
        slots.setdefault((v, m), a.type)
    ins = list(slots)
    index = {key: k for k, key in enumerate(ins)}
    with ir.InsertionPoint(consumer), consumer.location:
        maps = ir.ArrayAttr.get([m for _, m in ins] + [list(ir.ArrayAttr(consumer.attributes["indexing_maps"]))[-1]])
        new = linalg.GenericOp([], [v for v, _ in ins], [out], maps, consumer.attributes["iterator_types"])
        block = new.regions[0].blocks.append(*slots.values(), old_c.arguments[-1].type)
        mapping = {a: block.arguments[index[(v, m)]] for v, m, a in reads_p}
        mapping[old_p.arguments[-1]] = block.arguments[-1]  # the same buffer as out, or unused (a temporary)
        (value,) = clone_body(old_p, block, mapping, skip_yield=True)
        mapping = {old_c.arguments[-1]: value if t == out else block.arguments[-1]}
        mapping.update({a: block.arguments[index[(v, m)]] for v, m, a in reads_c})
        mapping.update({a: value for (v, _), a in zip(inputs(consumer), old_c.arguments) if v == t})
        results = clone_body(old_c, block, mapping, skip_yield=True)
        with ir.InsertionPoint(block):
            linalg.YieldOp(results)
    producer.erase()
    consumer.erase()
    return new.operation


def _scalar_fill(op: ir.Operation) -> tuple[ir.Value, ir.Value] | None:
    """(value, buffer) of a ``linalg.fill`` of a scalar of the buffer's element type, else None."""
    if op.name != "linalg.fill" or len(op.results):
        return None
    value, buffer = op.operands[0], op.operands[len(op.operands) - 1]
    if isinstance(value.type, ir.ShapedType) or not isinstance(buffer.type, ir.MemRefType) \
            or value.type != ir.MemRefType(buffer.type).element_type:
        return None
    return value, buffer


def _fold_into(consumer: ir.Operation, scalars: dict[ir.Value, ir.Value]) -> ir.Operation:
    """``consumer`` (a linalg.generic) reading the scalar ``scalars[b]`` wherever it read buffer ``b`` as an input
    (at whatever map: every element is that scalar), in a new op where it was; it is erased."""
    old = consumer.regions[0].blocks[0]
    reads = inputs(consumer)
    rank = len(ir.ArrayAttr(consumer.attributes["iterator_types"]))
    scalar_map = ir.AffineMapAttr.get(ir.AffineMap.get(rank, 0, []))
    ins = [(scalars[v], scalar_map) if v in scalars else (v, m) for v, m in reads]
    maps = [m for _, m in ins] + list(ir.ArrayAttr(consumer.attributes["indexing_maps"]))[len(reads):]
    with ir.InsertionPoint(consumer), consumer.location:
        new = linalg.GenericOp([], [v for v, _ in ins], list(consumer.opview.outputs), ir.ArrayAttr.get(maps),
                               consumer.attributes["iterator_types"])
        for name in list(consumer.attributes):
            if name not in ("indexing_maps", "iterator_types", "operandSegmentSizes"):
                new.operation.attributes[name] = consumer.attributes[name]
        block = new.regions[0].blocks.append(*[a.type for a in old.arguments])
        results = clone_body(old, block, dict(zip(old.arguments, block.arguments)), skip_yield=True)
        with ir.InsertionPoint(block):
            linalg.YieldOp(results)
    consumer.erase()
    return new.operation


#: the most scalar fills :func:`fold_fills` follows at once (a padded convolution's border strips are fills that no
#: later op writes): each op is checked against these, so the sweep stays linear in the block
MAX_LIVE_FILLS = 32


@dataclass
class _Filled:
    """A scalar fill whose buffer still holds the scalar at the point of the sweep."""

    fill: ir.Operation
    value: ir.Value
    #: something read the buffer as a buffer since (the fill must stay)
    read: bool = False


def fold_fills(block: ir.Block) -> int:
    """Fold every ``linalg.fill`` of a scalar in ``block`` into the generics after it that read its buffer as an
    input, until an op may write the buffer (see the module docstring): they read the scalar instead. A fill is
    erased where nothing else read its buffer before an op rewrote it whole, or it is a temporary nothing else reads.
    Returns how many ops were folded or erased."""
    changed = 0
    live: dict[ir.Value, _Filled] = {}
    dead: list[ir.Operation] = []
    kept: list[_Filled] = []
    footprints: dict[ir.Value, Footprint | None] = {}

    def read(buffer: ir.Value) -> None:
        """``buffer`` read as a buffer: the fills of the buffers it may share bytes with must stay."""
        for b, entry in live.items():
            if may_overlap(b, buffer, footprints):
                entry.read = True

    def written(buffer: ir.Value, whole_by: ir.Operation | None = None) -> None:
        for b in [b for b in live if may_overlap(b, buffer, footprints)]:
            entry = live.pop(b)
            if whole_by is not None and b == buffer and not entry.read:
                dead.append(entry.fill)  # rewritten whole before anything read it as a buffer
            else:
                kept.append(entry)

    for op in [o.operation for o in block.operations]:
        if op.name in PURE_OPS or op.name in ("memref.alloc", "memref.alloca", "memref.dealloc"):
            continue
        filled = _scalar_fill(op)
        if filled is not None:
            written(filled[1])
            if len(live) == MAX_LIVE_FILLS:  # the oldest stays as it is: each op's checks stay bounded
                oldest = next(iter(live))
                live[oldest].read = True
                kept.append(live.pop(oldest))
            live[filled[1]] = _Filled(op, filled[0])
            continue
        if op.name == "linalg.generic" and not len(op.results):
            out = list(op.opview.outputs)
            body_reads = set(captured(op))
            out_read = _out_arg_used(op)
            foldable = {v: live[v].value for v, _ in inputs(op)
                        if v in live and v not in body_reads and not (v in out and out_read)}
            for v in [*(v for v, _ in inputs(op)), *body_reads, *(out if out_read else [])]:
                if isinstance(v.type, ir.MemRefType) and v not in foldable:
                    read(v)
            if foldable:
                op = _fold_into(op, foldable)
                changed += 1
            whole = parallel_generic(op) and not _out_arg_used(op)
            for b in out:
                written(b, op if whole else None)
            continue
        if op.name.startswith("linalg.") and not len(op.results):
            for v in list(op.opview.inputs) if hasattr(op.opview, "inputs") else []:
                if isinstance(v.type, ir.MemRefType):
                    read(v)
            for b in list(op.opview.outputs) if hasattr(op.opview, "outputs") else list(op.operands):
                read(b)  # a named op may accumulate into its output (a matmul after its zero fill)
                written(b)
            continue
        if not len(op.regions) and not any(isinstance(v.type, ir.MemRefType) for v in op.operands):
            continue  # touches no buffer (the return, scalar arithmetic)
        for entry in live.values():  # anything else (a loop, a call) may read or write any buffer
            entry.read = True
        kept.extend(live.values())
        live.clear()
    kept.extend(live.values())
    for entry in kept:
        buffer = entry.fill.operands[len(entry.fill.operands) - 1]
        users = {use.owner.operation for use in buffer.uses if use.owner.operation.name != "memref.dealloc"}
        if not entry.read and is_temporary(buffer) and users == {entry.fill}:
            dead.append(entry.fill)
    for fill in dict.fromkeys(dead):
        fill.erase()
        changed += 1
    return changed


#: how many generics back from an op fusion looks for a producer that the ones in between leave alone: enough for
#: the interleaved chains node lowering spells (GELU's ``erf(x * c)`` and ``x * 0.5`` before ``1 + erf`` and the
#: product), and the sweep stays linear
MAX_LOOKBACK = 4


def _buffers(op: ir.Operation) -> tuple[list[ir.Value], list[ir.Value]]:
    """The buffers ``op`` (a generic) reads, and those it writes (every output: arg_max writes two)."""
    reads = [v for v, _ in inputs(op) if isinstance(v.type, ir.MemRefType)]
    reads += [v for v in captured(op) if isinstance(v.type, ir.MemRefType)]
    return reads, list(op.opview.outputs)


def may_move_past(op: ir.Operation, between: list[ir.Operation],
                  footprints: dict[ir.Value, Footprint | None]) -> bool:
    """Whether generic ``op`` computes the same when it runs after the generics ``between`` instead of before them:
    none of them reads or writes a buffer that may share bytes with what ``op`` writes, nor writes one that may share
    bytes with what it reads."""
    reads, writes = _buffers(op)
    for other in between:
        other_reads, other_writes = _buffers(other)
        if any(may_overlap(w, v, footprints) for w in writes for v in other_reads + other_writes):
            return False
        if any(may_overlap(r, w, footprints) for r in reads for w in other_writes):
            return False
    return True


def fuse_block(block: ir.Block) -> int:
    """Fuse the chains of elementwise generics in ``block``; returns how many ops were fused away. The generics
    before an op (only pure ops between them) are tried last first: once the one right before is fused in, the one
    before that is next to the fused op (LeakyReLU's compare, multiply and select: the select takes the multiply,
    then the compare). A producer further back (up to :data:`MAX_LOOKBACK` generics) fuses where the generics in
    between may run before it (:func:`may_move_past`): the fused op sits where the consumer was. GELU,
    ``erf(x * c)`` into T, ``x * 0.5`` into Y, ``T += 1``, ``Y *= T``: the first joins the third, that the fourth,
    then the second: one loop."""
    fused = 0
    run: list[ir.Operation] = []
    footprints: dict[ir.Value, Footprint | None] = {}
    for op in [o.operation for o in block.operations]:
        if op.name in PURE_OPS:
            continue
        while run:
            back = range(len(run) - 1, max(-1, len(run) - 1 - MAX_LOOKBACK), -1)
            found = next((i for i in back if fusable(run[i], op, footprints)
                          and may_move_past(run[i], run[i + 1:], footprints)), None)
            if found is None:
                break
            op = fuse(run.pop(found), op)
            fused += 1
        if op.name == "linalg.generic":
            run.append(op)
        else:
            run = []
    return fused


@dataclass(frozen=True)
class FuseElementwise(Pass):
    """Chains of elementwise linalg.generics on memrefs whose intermediates die at once -> one generic each."""

    name = "linalg-fuse-elementwise"
    summary = ("fuse elementwise linalg.generics one after the other into one loop when only the second reads the "
               "first's result; a scalar fill read by the next generic becomes its scalar operand")

    def run(self, module: ir.Operation) -> None:
        blocks: list[ir.Block] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.func" and len(op.regions[0].blocks):
                blocks.extend(code_blocks(op))
            return ir.WalkResult.ADVANCE

        with module.context:
            module.walk(visit)
            for block in blocks:
                fold_fills(block)
                fuse_block(block)
