"""Buffers, views, copies, fills and random draws; fully connected and matmul; broadcasts and transposes; the binary arithmetic and
activation rows of the elementwise table."""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math, memref

from ...registry import PassError
from ...utils import adjacent_runs
from .arithmetic import _divsi
from .common import (
    ALIGNMENT,
    PACKED_MATMUL_ATTR,
    Lowering,
    Operands,
    _arith_op,
    _binary,
    _constant,
    _dims,
    _expand,
    _is_bool,
    _memref,
    _relu,
    _sigmoid,
    _unary,
    _update,
    elementwise,
    index_constant,
    module_global,
    row_major_strides,
    storage_type,
)


def _alloc(op: ir.OpView, new: Operands) -> ir.Value:
    return memref.alloc(storage_type(op.buffer.type), [], [], alignment=ALIGNMENT)


def _dealloc(op: ir.OpView, new: Operands) -> None:
    # freeing a view or an argument would crash at run time: only alloc_activation's buffers may be freed
    owner = new.buffer.owner
    if not (isinstance(owner, ir.OpView) and owner.operation.name == "memref.alloc"):
        raise PassError(f"'{op.operation.name}' frees a buffer that alloc_activation did not make", op.location)
    memref.dealloc(new.buffer)


def _view(op: ir.OpView, new: Operands) -> ir.Value:
    """A view of a contiguous row-major buffer, offset by the flat position of ``offsets`` in it."""
    src = _memref(new.src)
    _, src_offset = src.get_strides_and_offset()
    offsets = op.offsets or [0] * src.rank
    flat = src_offset + sum(o * s for o, s in zip(offsets, row_major_strides(src.shape)))
    shape = _memref(op.view).shape
    strides = row_major_strides(shape)
    layout = ir.StridedLayoutAttr.get(flat, strides) if flat else None
    result = ir.MemRefType.get(shape, src.element_type, layout=layout)
    return memref.reinterpret_cast(result, new.src, [], [], [], [flat], shape, strides)


def _copy(op: ir.OpView, new: Operands) -> None:
    linalg.copy(new.src, outs=[new.dest])


def _splat(op: ir.OpView, new: Operands) -> None:
    # the verifier made the value an attribute of dest's element type; i1 is stored as a byte 0 or 1
    value = (1 if op.value else 0) if _is_bool(_memref(op.dest).element_type) else op.value
    linalg.fill(_constant(_memref(new.dest).element_type, value), outs=[new.dest])


#: splitmix64: the step between its states (2^64 over the golden ratio) and its finalizer's two multipliers
_GOLDEN, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _i64(value: int) -> ir.Value:
    """An i64 constant of the 64 bits of ``value`` (taken modulo 2^64)."""
    value &= (1 << 64) - 1
    return _constant(ir.IntegerType.get_signless(64), value - (1 << 64) if value >> 63 else value)


def _mix64(x: ir.Value) -> ir.Value:
    """splitmix64's finalizer: 64 well-mixed bits from ``x`` (i64)."""
    x = arith.muli(arith.xori(x, arith.shrui(x, _i64(30))), _i64(_MIX1))
    x = arith.muli(arith.xori(x, arith.shrui(x, _i64(27))), _i64(_MIX2))
    return arith.xori(x, arith.shrui(x, _i64(31)))


def _random_uniform(op: ir.OpView, new: Operands) -> None:
    """dest[i] = 24 bits of splitmix64(key + (i + 1) * step), read as a float in [0, 1), i the flat row-major index
    and key = splitmix64(seed + run * step), run counting the draws of this seed from 0 (a counter in a global of the
    module, bumped here): the ops of one seed (an unrolled loop's copies of one node) draw in turn from one stream.
    Each element's draw is independent of the others', so the generic vectorizes and parallelizes as any
    elementwise op."""
    # the draw count of the seed: state in the module that every random_uniform of the seed shares
    counter = module_global(op.operation, f"glow_random_runs_{op.seed & ((1 << 64) - 1):x}", np.zeros(1, np.int64),
                            constant=False)
    at = [index_constant(0)]
    run = memref.load(counter, at)
    memref.store(arith.addi(run, _i64(1)), counter, at)
    key = _mix64(arith.addi(_i64(op.seed), arith.muli(run, _i64(_GOLDEN))))
    dest = _memref(new.dest)
    strides = row_major_strides(dest.shape)

    def draw() -> ir.Value:
        flat = index_constant(1)
        for d, stride in enumerate(strides):
            flat = arith.addi(flat, arith.muli(linalg.IndexOp(d).result, index_constant(stride)))
        x = arith.addi(key, arith.muli(arith.index_cast(key.type, flat), _i64(_GOLDEN)))
        bits = arith.shrui(_mix64(x), _i64(40))
        f32 = ir.F32Type.get()
        return arith.mulf(arith.uitofp(f32, bits), _constant(f32, 2.0 ** -24))

    elementwise(new.dest, [], draw)


def fused_activation(op: ir.OpView, dest: ir.Value) -> None:
    """The fused activation of a conv2d or fully_connected instruction, applied to ``dest`` in place once it holds
    the result: relu -> dest = max(dest, 0); clip -> dest = min(max(dest, min), max); none (or absent) -> nothing."""
    kind = op.activation or "none"
    if kind == "none":
        return
    et = _memref(dest).element_type
    if kind == "relu":
        _update(dest, [], [], _relu)
        return
    low, high = _constant(et, op.activation_min), _constant(et, op.activation_max)
    _update(dest, [], [], lambda x: arith.minimumf(arith.maximumf(x, low), high))


def packed_matmul(a: ir.Value, packed: ir.Value, dest: ir.Value) -> None:
    """``dest += a @ w`` with ``w`` packed in column panels, ``[N / P, K, P]`` (cpu-pack-matmul-weights), as one
    linalg.generic over (m, j, p, k) on dest viewed as [M, N / P, P], tagged: the CPU kernel
    (backend/kernels/matmul.py) tiles it as a matmul on B's panels, and without the kernel it still computes the
    product."""
    m, _ = _memref(dest).shape
    panels, _, width = _memref(packed).shape
    dest3 = _expand(dest, [m, panels, width], [[0], [1, 2]])
    maps = [_dims(0, 3, rank=4), _dims(1, 3, 2, rank=4), _dims(0, 1, 2, rank=4)]
    op = linalg.GenericOp([], [a, packed], [dest3], ir.ArrayAttr.get([ir.AffineMapAttr.get(x) for x in maps]),
                          [linalg.IteratorType.parallel] * 3 + [linalg.IteratorType.reduction])
    op.attributes[PACKED_MATMUL_ATTR] = ir.UnitAttr.get()
    et = _memref(dest).element_type
    block = op.regions[0].blocks.append(et, et, et)
    with ir.InsertionPoint(block):
        x, w, acc = block.arguments
        linalg.YieldOp([arith.addf(acc, arith.mulf(x, w))])


def _fully_connected(op: ir.OpView, new: Operands) -> None:
    linalg.broadcast(new.bias, outs=[new.dest], dimensions=[0])
    if _memref(new.weights).rank == 3:
        packed_matmul(new.src, new.weights, new.dest)
    else:
        linalg.matmul(new.src, new.weights, outs=[new.dest])
    fused_activation(op, new.dest)


def _matmul(op: ir.OpView, new: Operands) -> None:
    linalg.fill(_constant(_memref(new.dest).element_type, 0.0), outs=[new.dest])
    if _memref(new.rhs).rank == 3:
        packed_matmul(new.lhs, new.rhs, new.dest)
    else:
        linalg.matmul(new.lhs, new.rhs, outs=[new.dest])


def _batched_add(op: ir.OpView, new: Operands) -> None:
    rank = _memref(new.dest).rank
    identity = ir.AffineMap.get_identity(rank)
    # the slice is indexed by every dim but the batch dim
    slice_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in range(1, rank)])
    elementwise(new.dest, [new.batch, new.slice], _arith_op(op, arith.addf, arith.addi), [identity, slice_map])


def _broadcast(op: ir.OpView, new: Operands) -> None:
    src, dest = _memref(new.src), _memref(new.dest)
    lead = dest.rank - src.rank  # numpy rules: dims align on the right
    exprs = [ir.AffineConstantExpr.get(0) if n == 1 and dest.shape[lead + i] != 1 else ir.AffineDimExpr.get(lead + i)
             for i, n in enumerate(src.shape)]
    elementwise(new.dest, [new.src], lambda x: x, [ir.AffineMap.get(dest.rank, 0, exprs)])


def _collapsed(v: ir.Value, reassociation: list[list[int]]) -> ir.Value | None:
    """``v`` with each group of dims collapsed into one (a view), or None where a group is not contiguous."""
    t = ir.MemRefType(v.type)
    strides, offset = t.get_strides_and_offset()
    for group in reassociation:
        if any(strides[d] != strides[d + 1] * t.shape[d + 1] for d in group[:-1]):
            return None
    shape = [int(np.prod([t.shape[d] for d in group])) for group in reassociation]
    identity = t == ir.MemRefType.get(t.shape, t.element_type)
    layout = None if identity else ir.StridedLayoutAttr.get(offset, [strides[g[-1]] for g in reassociation])
    return memref.collapse_shape(ir.MemRefType.get(shape, t.element_type, layout=layout), v, reassociation)


#: a transpose onto fewer innermost elements than this whose input's innermost dim becomes the output's next one
#: (NCHW -> NHWC of an RGB image) interleaves rows into pixels on every target: 4, the f32 lanes of the narrowest
#: vectors (SSE, NEON). More channels, up to a target's lanes, interleave too, but through the collapsed transpose:
#: from as many as the lanes on, the blocks transposed in registers take it, over the image's H x W pixels as one
#: dim (whole blocks where they divide it), where the uncollapsed one would end each image row with a masked block
INTERLEAVED_CHANNELS = 4


def _transpose(op: ir.OpView, new: Operands) -> None:
    """A transpose over the fewest dims: runs of dims it keeps together collapse into one on both sides (NCHW ->
    NHWC is [1, C, H*W] -> [1, H*W, C]), so that the two dims it swaps are the innermost of each side where they
    were apart (the kernels then transpose blocks of them in registers). One that interleaves rows into pixels
    (:data:`INTERLEAVED_CHANNELS`) is an elementwise copy over the buffers as they are instead: the CPU kernel takes
    it as runs of pixels either way (backend/kernels/interleave.py), and linalg-fuse-elementwise can join it to the
    copy into a convolution's bordered input after it (a network's first layer), one pass over the image, not two."""
    perm = list(op.shuffle)
    dest_shape = _memref(new.dest).shape
    if len(perm) >= 2 and dest_shape[-1] < INTERLEAVED_CHANNELS and perm[-2] == len(perm) - 1:
        reads = ir.AffineMap.get(len(perm), 0, [ir.AffineDimExpr.get(perm.index(d)) for d in range(len(perm))])
        elementwise(new.dest, [new.src], lambda x: x, [reads])
        return
    groups = adjacent_runs(perm)  # runs of input dims, in output order
    if len(groups) < len(perm):
        by_input = sorted(groups)
        src = _collapsed(new.src, by_input)
        dest = _collapsed(new.dest, [list(range(sum(len(g) for g in groups[:k]), sum(len(g) for g in groups[:k + 1])))
                                     for k in range(len(groups))])
        if src is not None and dest is not None:
            linalg.transpose(src, outs=[dest], permutation=[by_input.index(g) for g in groups])
            return
    linalg.transpose(new.src, outs=[new.dest], permutation=perm)


#: this family's rows of the lowering table (:data:`.program.LOWERINGS`)
LOWERINGS: dict[str, Lowering] = {
    "alloc_activation": _alloc,
    "dealloc_activation": _dealloc,
    "tensor_view": _view,
    "copy": _copy,
    "splat": _splat,
    "random_uniform": _random_uniform,
    "fully_connected": _fully_connected,
    "matmul": _matmul,
    "batched_add": _batched_add,
    "element_add": _binary(arith.addf, arith.addi),
    "element_sub": _binary(arith.subf, arith.subi),
    "element_mul": _binary(arith.mulf, arith.muli),
    "element_div": _binary(arith.divf, _divsi),
    "element_max": _binary(arith.maximumf, arith.maxsi),
    "element_min": _binary(arith.minimumf, arith.minsi),
    "relu": _unary(_relu),
    "sigmoid": _unary(_sigmoid),
    "tanh": _unary(math.tanh),
    "transpose": _transpose,
    "broadcast": _broadcast,
}
