"""linalg-fuse-elementwise: consecutive elementwise linalg.generics over one index space become one loop nest, when
what the first writes is read only by the second (Glow's CPU backend "stacks" data-parallel instructions the same
way)::

    generic ins(%x) outs(%t) {f}; generic ins(%t, %y) outs(%d) {g}      (%t a temporary that nothing else uses)
      -> generic ins(%x, %y) outs(%d) {g(f(x), y)}                      (%t is not written at all)
    generic ins(%d, %s) outs(%d) {add}; generic outs(%d) {relu}         (%d rewritten whole by the second)
      -> generic ins(%d, %s) outs(%d) {relu(add)}

Why on linalg on memrefs and not on glowir: a glowir instruction has no body, so a fused chain has no glowir spelling
short of a new region-carrying instruction (which IRDL rows cannot declare); a linalg.generic is exactly a loop nest
with a body, so the chain becomes one generic that the kernel outliner, the epilogue fusion of cpu-tile-kernels and
the loop lowering all treat as any other. The memory plan is fixed by then and fusion only drops writes, so no buffer
changes. It runs after convert-glowir-to-linalg and before linalg-outline-kernels (one kernel per fused chain).

The first op's result is dead after the second when the second rewrites the same buffer whole, or when it is a
temporary (:func:`.linalg_buffers.is_temporary`) whose only users are the two ops (and its dealloc): a planned
temporary is a view of the activations region, and the plan gives memory to another buffer only once this one is
dead. Both ops must be :func:`.linalg_buffers.parallel_generic` over the same shape with only pure view ops between
them; the buffers they write must be read only at the identity map (no element is then read after a later iteration
wrote it), and any two of their buffers must be the same value or provably disjoint; a buffer a body loads from
itself (a gather's data) must be disjoint from both written ones.
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


def fuse_block(block: ir.Block) -> int:
    """Fuse the chains of elementwise generics in ``block``; returns how many ops were fused away."""
    fused = 0
    previous: ir.Operation | None = None
    footprints: dict[ir.Value, Footprint | None] = {}
    for op in [o.operation for o in block.operations]:
        if op.name in PURE_OPS:
            continue
        if previous is not None and fusable(previous, op, footprints):
            op = fuse(previous, op)
            fused += 1
        previous = op if op.name == "linalg.generic" else None
    return fused


@dataclass(frozen=True)
class FuseElementwise(Pass):
    """Chains of elementwise linalg.generics on memrefs whose intermediates die at once -> one generic each."""

    name = "linalg-fuse-elementwise"
    summary = "fuse consecutive elementwise linalg.generics into one loop when only the second reads the first's result"

    def run(self, module: ir.Operation) -> None:
        blocks: list[ir.Block] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "func.func" and len(op.regions[0].blocks):
                blocks.extend(code_blocks(op))
            return ir.WalkResult.ADVANCE

        with module.context:
            module.walk(visit)
            for block in blocks:
                fuse_block(block)
