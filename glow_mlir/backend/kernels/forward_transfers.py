"""Store-to-load forwarding of vector transfers on buffers: a ``vector.transfer_read`` of the elements that a
``vector.transfer_write`` just before it in the same block wrote takes the written vector instead.

A kernel whose bias or epilogue fused into its register loops (:mod:`.epilogue`) writes the bias into its output tile
and reads it straight back as the accumulators' initial value, once bufferized::

    vector.transfer_write %bias, %tile[%c0, %c0, %c0, %c0]  : vector<1x1x14x32xf32>, memref<1x1x14x32xf32, ...>
    %acc = vector.transfer_read %tile[%c0, %c0, %c0, %c0]   : memref<1x1x14x32xf32, ...>, vector<1x14x32xf32>

Whether LLVM forwards the 28 stores to the 28 loads that follow them depends on what else the function reads: in
resnet18's residual convolutions (the add's skip input one more buffer) it did not, and those loads took about 8% of
the kernel's samples. Here ``%acc`` becomes ``vector.shape_cast %bias`` (or ``%bias`` where the types match): the
accumulators start in registers. The store stays (the tile's later write covers it).

Forwarded only where nothing between the two can write memory (an op that is not known pure, or any write, ends the
scan: another view may alias the buffer), both transfers are unmasked and in bounds, both read and write the
trailing dims of the buffer in order (minor identity maps), at the same index values, and the two vectors cover the
same elements (equal shapes once the leading unit dims that the buffer's rank implies are added).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import vector

from ...passes.registry import Pass

READ, WRITE = "vector.transfer_read", "vector.transfer_write"
#: ops between the write and the read that cannot write memory: the scan passes over them
_PURE_DIALECTS = ("arith.", "math.", "index.")
_PURE_OPS = frozenset({"vector.broadcast", "vector.shape_cast", "vector.extract", "vector.insert", "vector.splat",
                       "vector.transpose", "vector.fma", "vector.contract", "vector.extract_strided_slice",
                       "vector.insert_strided_slice", "vector.load", "affine.apply", "affine.min", "affine.max",
                       "memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.load",
                       "memref.cast", "memref.reinterpret_cast", "ub.poison", READ})


def _pure(op: ir.Operation) -> bool:
    return op.name in _PURE_OPS or op.name.startswith(_PURE_DIALECTS)


def _in_bounds(op: ir.Operation) -> bool:
    return all(ir.BoolAttr(a).value for a in ir.ArrayAttr(op.attributes["in_bounds"]))


def _transfer(op: ir.Operation) -> tuple[ir.Value, list[ir.Value], list[int]] | None:
    """(buffer, indices, shape in the buffer's rank of the elements it moves) of an unmasked, in-bounds transfer on a
    memref whose map is a minor identity (it neither transposes nor broadcasts); else None."""
    t = op.opview  # vector.TransferReadOp or TransferWriteOp: both name them so
    if t.mask is not None or not isinstance(t.base.type, ir.MemRefType) or not _in_bounds(op):
        return None
    rank = ir.MemRefType(t.base.type).rank
    moved = op.results[0] if op.name == READ else t.valueToStore
    shape = ir.VectorType(moved.type).shape
    if len(shape) > rank or (ir.AffineMapAttr(op.attributes["permutation_map"]).value
                             != ir.AffineMap.get_minor_identity(rank, len(shape))):
        return None
    return t.base, list(t.indices), [1] * (rank - len(shape)) + list(shape)


def forward_block(block: ir.Block) -> None:
    """Forward within ``block`` (not its nested regions)."""
    last: ir.Operation | None = None
    for op in list(block.operations):
        op = op.operation
        if op.name == WRITE:
            last = op
            continue
        if op.name == READ and last is not None and (read := _transfer(op)) and read == _transfer(last):
            stored, result = last.opview.valueToStore, op.results[0]
            with ir.InsertionPoint(op), op.location:
                value = stored if stored.type == result.type else vector.shape_cast(result.type, stored)
            result.replace_all_uses_with(value)
            op.erase()
            continue
        if not _pure(op):
            last = None


class ForwardTransfers(Pass):
    """Forward each vector.transfer_write on a buffer to a transfer_read of the same elements right after it."""

    name = "cpu-forward-transfers"
    summary = ("a vector.transfer_read of what a transfer_write just before it in the block wrote takes the written "
               "vector (a fused kernel's bias: the accumulators start in registers, not loaded back from the tile)")

    def run(self, module: ir.Operation) -> None:
        parents: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if len(op.regions):
                parents.append(op)
            return ir.WalkResult.ADVANCE

        with module.context:
            module.walk(visit)
            for op in parents:  # collected first: forwarding erases reads
                for region in op.regions:
                    for block in region.blocks:
                        forward_block(block)
