"""convert-glowir-to-linalg: every glowir program becomes a function of linalg ops on memrefs.

Why memrefs and not linalg on tensors: glowir has already fixed every buffer (that is its purpose, and the static
memory plan will place them), so lowering straight onto those memrefs keeps the plan exact; going through tensors would
throw the buffers away and need a second bufferization that could choose differently.

Buffers are lowered one of two ways, per function:
- memory planned (glowir-plan-memory gave every buffer an ``offset`` and the function its region sizes): the function
  takes the three regions as Glow bundles do, ``(constantWeight, mutableWeight, activations)``, each a
  ``memref<Nxi8>``, and every buffer is a view of its region at its offset (:func:`_planned_buffer`):
    weight_var {offset}         -> memref.view(constantWeight or mutableWeight, offset)
    alloc_activation {offset}   -> memref.view(activations, offset)
    dealloc_activation          -> (nothing: the plan already reuses the memory)
- not planned (a pipeline that skips the plan, e.g. glow-opt on hand-written glowir): one argument per weight var
  (consts, inputs, outputs in declaration order), and the activations come from the heap:
    weight_var                  -> a function argument
    alloc_activation            -> memref.alloc {alignment = 64}
    dealloc_activation(b)       -> memref.dealloc(b)

Some kernels need scratch buffers besides their operands (a padded convolution's or pooling's bordered input, the
per-row statistics of softmax): :data:`SCRATCH` gives their types per instruction. Planned, they are views of the
activations region at the offsets glowir-plan-memory gave them (the instruction's ``scratch_offsets``), so a planned
program allocates nothing at run time; not planned, each is a memref.alloc freed after its instruction.

Rewrites of the other ops, one row each in :data:`LOWERINGS`:
  tensor_view(src){offsets}   -> memref.reinterpret_cast(src), row-major, offset = src's offset + flat offsets
  copy(d, s)                  -> linalg.copy(s -> d)
  splat(d){value}             -> linalg.fill(value -> d)
  fully_connected(d, x, w, b) -> linalg.broadcast(b -> d); linalg.matmul(x, w -> d), accumulating onto the bias
  matmul(d, a, b)             -> linalg.fill(0 -> d); linalg.matmul(a, b -> d)
  batched_add(d, x, s)        -> linalg.generic d[n, i..] = x[n, i..] + s[i..]
  element_*(d, a, b)          -> linalg.generic d[i] = a[i] op b[i] (arith float ops, or signed integer ops)
  relu/sigmoid/tanh(d, s)     -> linalg.generic d[i] = f(s[i])
  transpose(d, s){shuffle}    -> linalg.transpose(s -> d, permutation = shuffle)
  broadcast(d, s)             -> linalg.generic d[i] = s[map(i)]; the map aligns dims right and zeros stretched ones
  conv2d(d, x, w, b)          -> linalg.broadcast(b -> d); x copied into a zero-bordered temporary when padded
                                 (the border filled, the interior copied);
                                 conv_2d_nhwc_hwcf, depthwise_conv_2d_nhwc_hwc(m), a grouped generic, or a blocked
                                 generic on a packed filter [F/B, KH, KW, C, B] (lower_conv2d)
  max_pool / avg_pool(d, x)   -> x in a -inf / 0 border (pads and ceil_mode overhang); d = the first window position's
                                 strided view of it, then max / add of each other position's view (lower_max_pool);
                                 windows over 9 positions: one reduction generic over a [N, OH, OW, KH, KW, C] window
                                 view (a reinterpret_cast with repeated strides) instead;
                                 an average divides by one constant or by a constant [OH, OW] count map (memref.global)
  local_response_norm(d, x)   -> squares in a channel-bordered temporary; window sums (reduction generic);
                                 d = x / (bias + alpha / size * sums) ^ beta
  pad(d, x){pads, value}      -> linalg.fill(value -> d); linalg.copy(x, cropped by negative pads -> subview of d)
  exp/log/sqrt/erf/floor/ceil -> linalg.generic d[i] = math.<op>(s[i]) (erf calls libm's erff)
  neg/abs(d, s)               -> arith.negf / math.absf on floats, 0 - s / math.absi on integers
  element_pow(d, a, b)        -> math.powf
  element_mod(d, a, b){fmod}  -> arith.remf (fmod 1, floats), arith.remsi (fmod 1), remsi moved to b's sign (fmod 0)
  element_cmp_*(d, a, b)      -> arith.cmpf (ordered) / arith.cmpi (signed), the i1 widened to its stored byte
  not/element_and/or          -> arith.xori 1 / andi / ori on the stored bytes
  element_select(d, c, a, b)  -> arith.select(c != 0, a, b)
  cast(d, s){to}              -> fptosi (truncates), sitofp, extsi/trunci; i1 sources widen unsigned; to i1 is != 0
  extract_tensor(d, s){offsets, steps}
                              -> memref.subview(s)[offsets][d's shape][steps]; linalg.copy(subview -> d)
  insert_tensor(d, s){offsets} -> memref.subview(d)[offsets][s's shape][1]; linalg.copy(s -> subview)
  gather(d, data, idx){axis}  -> linalg.generic over d reading idx[j..]:
                                 d[a.., j.., b..] = memref.load data[a.., i, b..],
                                 i = idx[j..] (+ the axis size when negative), clamped into the axis
  reduce_<kind>(d, s){axes}   -> linalg.fill(neutral -> d); linalg.reduce(s -> d) over axes (sum 0, max -inf,
                                 min +inf, prod 1; integers their extremes)
  reduce_l2(d, s){axes}       -> linalg.fill(0 -> d); generic d += s * s; generic d = sqrt(d)
  softmax(d, s){axis}         -> m = max(s) into a scratch row buffer; d = exp(s - m); m = sum(d); d = d / m
  log_softmax(d, s){axis}     -> m = max(s); d = s - m; m = log(sum(exp(d))); d = d - m
  layer_norm(d, s, g, b)      -> mean and 1/sqrt(var + eps) into scratch row buffers (two passes over s);
                                 d = (s - mean) * rstd * g + b
  batch_matmul(d, a, b)       -> linalg.fill(0 -> d); linalg.batch_matmul(a, b -> d)
  arg_max(d, s){axis}         -> generic reduction with two outputs: the running max (scratch) and its index (d)

Every glowir buffer is a contiguous row-major range of memory (a view selects a flat sub-range), so one
``reinterpret_cast`` with row-major strides expresses any view, of a view too; results stay identity-layout
memrefs unless an offset is left, when they carry ``strided<[...], offset: N>`` (linalg takes any memref).

Buffers of i1 become memrefs of i8 (0 or 1): LLVM's memref lowering has no sub-byte loads or stores (the pinned
wheel aborts on them), and a byte per element is numpy's bool layout. Besides data movement, comparisons write
them and logic, select and cast read them, with no arithmetic on them.

Legality is declared: a glowir op with no row, or one left anywhere after the rewrite (outside the entry block of
a program, see :func:`.ir_program.is_program`), is an error naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

import numpy as np
from mlir import ir
from mlir.dialects import arith, linalg, math, memref

from ...dialects import glowir
from ...dialects.cnn_numpy import lrn_window, pool_counts
from ...dialects.optable import mlir_type, numpy_dtype, numpy_to_elements
from ...dialects.shapes import window_extent
from ..registry import Pass, PassError
from .ir_program import OFFSET_ATTR, REGION_SIZE_ATTRS, REGIONS, SCRATCH_ATTR, is_program, memory_layout, size_in_bytes

PREFIX = glowir.DIALECT.name + "."
ALIGNMENT = 64  # bytes: a cache line, and one zmm register for aligned vector loads
INF = float("inf")
#: i1 buffers are stored one byte per element (see the module docstring)
BOOL_STORAGE_BITS = 8
#: marks the generic of a convolution on a packed filter (:func:`blocked_conv`) and holds its strides
BLOCKED_CONV_ATTR = "glow.blocked_conv"


class Operands:
    """The operands of a glowir op by name, as the values that replace them: the adaptor of a conversion pattern.
    The op itself keeps its glowir types (i1 included) for the lowering to consult."""

    def __init__(self, op: ir.OpView, lowered: dict[ir.Value, ir.Value], scratch: Sequence[ir.Value] = ()):
        self._op = op
        self._lowered = lowered
        #: the op's scratch buffers, of the types its :data:`SCRATCH` row gives, in that order
        self.scratch = list(scratch)

    def __getattr__(self, name: str) -> ir.Value:
        return self._lowered[getattr(self._op, name)]


#: A lowering builds the replacement of one glowir op before it, from the op and its lowered operands; it returns
#: the value that replaces the op's result, or None for instructions (they have no result).
Lowering = Callable[[ir.OpView, Operands], "ir.Value | None"]
#: The scalar body of an elementwise generic: the input elements in, the element to store out.
Body = Callable[..., ir.Value]


def _memref(value: ir.Value) -> ir.MemRefType:
    return ir.MemRefType(value.type)


def _is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def storage_type(t: ir.Type) -> ir.MemRefType:
    """The memref that holds a glowir buffer of type ``t``: the same, but i1 elements are stored as bytes."""
    m = ir.MemRefType(t)
    if not _is_bool(m.element_type):
        return m
    return ir.MemRefType.get(m.shape, ir.IntegerType.get_signless(BOOL_STORAGE_BITS), layout=m.layout)


def _constant(element_type: ir.Type, value: float) -> ir.Value:
    """An arith constant of ``element_type`` (float or integer) holding ``value``."""
    if isinstance(element_type, ir.FloatType):
        return arith.constant(element_type, ir.FloatAttr.get(element_type, float(value)))
    return arith.constant(element_type, ir.IntegerAttr.get(element_type, int(value)))


def row_major_strides(shape: Sequence[int]) -> list[int]:
    """The element strides of a contiguous row-major buffer of ``shape``."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


def elementwise(dest: ir.Value, ins: Sequence[ir.Value], body: Body,
                in_maps: Sequence[ir.AffineMap] | None = None) -> linalg.GenericOp:
    """``dest[i] = body(*(x[map(i)] for x in ins))`` as a parallel linalg.generic over dest's index space.

    ``in_maps`` default to the identity (operands of dest's shape); the body gets the input elements only."""
    rank = _memref(dest).rank
    identity = ir.AffineMap.get_identity(rank)
    maps = [*(in_maps if in_maps is not None else [identity] * len(ins)), identity]
    op = linalg.GenericOp([], list(ins), [dest], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          [linalg.IteratorType.parallel] * rank)
    block = op.regions[0].blocks.append(*(_memref(v).element_type for v in (*ins, dest)))
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*list(block.arguments)[: len(ins)])])
    return op


def _arith_op(op: ir.OpView, float_op: Body, int_op: Body) -> Body:
    """The float or the signed-integer arith op for ``op``'s element type; i1 has no arithmetic in glowir."""
    et = _memref(op.operands[0]).element_type
    if _is_bool(et):
        raise PassError(f"'{op.operation.name}' has no lowering for i1 buffers (glowir has no boolean arithmetic)",
                        op.location)
    return float_op if isinstance(et, ir.FloatType) else int_op


def _binary(float_op: Body, int_op: Body) -> Lowering:
    """Elementwise ``dest = lhs op rhs``."""

    def lower(op: ir.OpView, new: Operands) -> None:
        elementwise(new.dest, [new.lhs, new.rhs], _arith_op(op, float_op, int_op))

    return lower


def _unary(fn: Body) -> Lowering:
    """Elementwise ``dest = fn(src)`` on floats (the op table admits only float types)."""

    def lower(op: ir.OpView, new: Operands) -> None:
        elementwise(new.dest, [new.src], fn)

    return lower


def _relu(x: ir.Value) -> ir.Value:
    return arith.maximumf(x, _constant(x.type, 0.0))


def _sigmoid(x: ir.Value) -> ir.Value:
    # 1 / (1 + exp(-x)): exp overflows to inf for very negative x, and 1 / inf = 0 is the right limit
    one = _constant(x.type, 1.0)
    return arith.divf(one, arith.addf(one, math.exp(arith.negf(x))))


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


def _fully_connected(op: ir.OpView, new: Operands) -> None:
    linalg.broadcast(new.bias, outs=[new.dest], dimensions=[0])
    linalg.matmul(new.src, new.weights, outs=[new.dest])
    fused_activation(op, new.dest)


def _matmul(op: ir.OpView, new: Operands) -> None:
    linalg.fill(_constant(_memref(new.dest).element_type, 0.0), outs=[new.dest])
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


def _transpose(op: ir.OpView, new: Operands) -> None:
    linalg.transpose(new.src, outs=[new.dest], permutation=op.shuffle)


# --- convolution, pooling and normalization (NHWC) ---


def _expand(value: ir.Value, shape: Sequence[int], reassociation: Sequence[Sequence[int]]) -> ir.Value:
    """``value`` (a contiguous row-major buffer) viewed under a shape that splits some of its dims."""
    src = _memref(value)
    _, offset = src.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(offset, row_major_strides(shape)) if offset else None
    return memref.expand_shape(ir.MemRefType.get(list(shape), src.element_type, layout=layout), value,
                               [list(r) for r in reassociation], [], list(shape))


def _collapse(value: ir.Value, shape: Sequence[int], reassociation: Sequence[Sequence[int]]) -> ir.Value:
    """``value`` (a contiguous row-major buffer) viewed under a shape that merges some of its dims."""
    src = _memref(value)
    _, offset = src.get_strides_and_offset()
    layout = ir.StridedLayoutAttr.get(offset, row_major_strides(shape)) if offset else None
    return memref.collapse_shape(ir.MemRefType.get(list(shape), src.element_type, layout=layout), value,
                                 [list(r) for r in reassociation])


def _padded_type(src: ir.MemRefType, pads: Sequence[int], overhang: Sequence[int] = (0, 0)) -> list[ir.MemRefType]:
    """The scratch buffer holding the NHWC ``src`` inside a border: pads [top, left, bottom, right], the bottom and
    right grown by ``overhang``; none when there is no border (the kernel reads ``src`` itself)."""
    if not any(pads) and not any(overhang):
        return []
    top, left, bottom, right = pads
    n, h, w, c = src.shape
    return [ir.MemRefType.get([n, top + h + bottom + overhang[0], left + w + right + overhang[1], c], src.element_type)]


def _padded(new: Operands, src: ir.Value, pads: Sequence[int], value: float) -> ir.Value:
    """``src`` inside a border of ``value`` in the op's scratch buffer (:func:`_padded_type`), or ``src`` itself
    when there is none."""
    if not new.scratch:
        return src
    temp = new.scratch[0]
    top, left = pads[0], pads[1]
    m = _memref(src)
    n, h, w, c = m.shape
    _, height, width, _ = _memref(temp).shape
    fill = _constant(m.element_type, value)
    # the interior first, as an elementwise copy right after whatever wrote src: linalg-outline-kernels may then make
    # it the last update of that kernel, which writes the interior directly (src is never written)
    interior = memref.subview(temp, [0, top, left, 0], [n, h, w, c], [1, 1, 1, 1])
    _update(interior, [src], [ir.AffineMap.get_identity(4)], lambda value, _: value)
    # only the border is filled: the rows above and below, then the columns left and right of the interior rows
    for offsets, sizes in (([0, 0, 0, 0], [n, top, width, c]), ([0, top + h, 0, 0], [n, height - top - h, width, c]),
                           ([0, top, 0, 0], [n, h, left, c]), ([0, top, left + w, 0], [n, h, width - left - w, c])):
        if all(sizes):
            linalg.fill(fill, outs=[memref.subview(temp, offsets, sizes, [1, 1, 1, 1])])
    return temp


def _update(dest: ir.Value, ins: Sequence[ir.Value], in_maps: Sequence[ir.AffineMap], body: Body) -> None:
    """``dest[i] = body(*(x[map(i)] for x in ins), dest[i])``: an elementwise update of dest in place."""
    rank = _memref(dest).rank
    maps = [*in_maps, ir.AffineMap.get_identity(rank)]
    op = linalg.GenericOp([], list(ins), [dest], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          [linalg.IteratorType.parallel] * rank)
    block = op.regions[0].blocks.append(*(_memref(v).element_type for v in (*ins, dest)))
    with ir.InsertionPoint(block):
        linalg.YieldOp([body(*block.arguments)])


def _dims(*positions: int, rank: int) -> ir.AffineMap:
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(p) for p in positions])


def _grouped_conv(src: ir.Value, filt: ir.Value, dest: ir.Value, group: int, strides: Sequence[int],
                  dilations: Sequence[int]) -> None:
    """A grouped convolution on an HWCF filter as one linalg.generic over (n, oh, ow, g, f, kh, kw, c): channels split
    into [group, C/group] and filters into [group, F/group] by free expand_shapes of the contiguous buffers.

    Why not ``linalg.conv_2d_nhwgc_gfhwc``: it wants the filter as [G, F/G, KH, KW, C/G], which would be a second
    filter layout in glowgraph or a transpose on every run; this generic reads HWCF as it is, and tiling and
    vectorization treat it as they treat the named convolutions."""
    n, hp, wp, _ = _memref(src).shape
    kh, kw, cg, f = _memref(filt).shape
    _, oh, ow, _ = _memref(dest).shape
    fg = f // group
    src5 = _expand(src, [n, hp, wp, group, cg], [[0], [1], [2], [3, 4]])
    filt5 = _expand(filt, [kh, kw, cg, group, fg], [[0], [1], [2], [3, 4]])
    dest5 = _expand(dest, [n, oh, ow, group, fg], [[0], [1], [2], [3, 4]])
    d = [ir.AffineDimExpr.get(i) for i in range(8)]  # n, oh, ow, g, f, kh, kw, c
    src_map = ir.AffineMap.get(8, 0, [d[0], d[1] * strides[0] + d[5] * dilations[0],
                                      d[2] * strides[1] + d[6] * dilations[1], d[3], d[7]])
    maps = [src_map, _dims(5, 6, 7, 3, 4, rank=8), _dims(0, 1, 2, 3, 4, rank=8)]
    op = linalg.GenericOp([], [src5, filt5], [dest5], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          [linalg.IteratorType.parallel] * 5 + [linalg.IteratorType.reduction] * 3)
    et = _memref(dest).element_type
    block = op.regions[0].blocks.append(et, et, et)
    with ir.InsertionPoint(block):
        x, w, acc = block.arguments
        linalg.YieldOp([arith.addf(acc, arith.mulf(x, w))])


def blocked_conv(src: ir.Value, filt: ir.Value, dest: ir.Value, strides: Sequence[int]) -> None:
    """A convolution on a filter packed in blocks of B output channels, ``[F / B, KH, KW, C, B]`` (each block
    contiguous: see cpu-pack-conv-filters), as one linalg.generic over (n, oh, ow, j, b, kh, kw, c) on dest viewed as
    [N, OH, OW, F / B, B], tagged with its strides: the CPU kernel (backend/kernels/conv.py) runs it as one
    conv_2d_nhwc_hwcf per block, and without the kernel it still computes the convolution."""
    n, _, _, _ = _memref(src).shape
    blocks, _, _, _, b = _memref(filt).shape
    _, oh, ow, _ = _memref(dest).shape
    dest5 = _expand(dest, [n, oh, ow, blocks, b], [[0], [1], [2], [3, 4]])
    d = [ir.AffineDimExpr.get(i) for i in range(8)]  # n, oh, ow, j, b, kh, kw, c
    src_map = ir.AffineMap.get(8, 0, [d[0], d[1] * strides[0] + d[5], d[2] * strides[1] + d[6], d[7]])
    maps = [src_map, _dims(3, 5, 6, 7, 4, rank=8), _dims(0, 1, 2, 3, 4, rank=8)]
    op = linalg.GenericOp([], [src, filt], [dest5], ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          [linalg.IteratorType.parallel] * 5 + [linalg.IteratorType.reduction] * 3)
    op.attributes[BLOCKED_CONV_ATTR] = ir.DenseI64ArrayAttr.get(list(strides))
    et = _memref(dest).element_type
    block = op.regions[0].blocks.append(et, et, et)
    with ir.InsertionPoint(block):
        x, w, acc = block.arguments
        linalg.YieldOp([arith.addf(acc, arith.mulf(x, w))])


def lower_conv2d(op: ir.OpView, new: Operands) -> None:
    """conv2d(dest, src, filter, bias): the bias broadcast into dest as the initial value, then the convolution
    accumulating onto it, reading src through a zero-padded temporary when there are pads:
      group 1                      -> linalg.conv_2d_nhwc_hwcf
      depthwise (group = C = F)    -> linalg.depthwise_conv_2d_nhwc_hwc on the filter viewed as [KH, KW, C]
      depthwise with a multiplier  -> linalg.depthwise_conv_2d_nhwc_hwcm ([KH, KW, C, F/C] and dest [.., C, F/C])
      any other group count        -> one linalg.generic (:func:`_grouped_conv`)
      a packed filter (rank 5)     -> one linalg.generic over the filter's blocks (:func:`blocked_conv`)
    The one place convolutions are lowered: a fast kernel (tiled and vectorized) replaces this function."""
    dest, filt = new.dest, new.filter
    strides, dilations, group = op.strides, op.dilations, op.group
    # the padding first: the bias broadcast then sits right before the convolution, which the kernel takes as its init
    src = _padded(new, new.src, op.pads, 0.0)
    linalg.broadcast(new.bias, outs=[dest], dimensions=[0, 1, 2])
    if _memref(filt).rank == 5:
        blocked_conv(src, filt, dest, strides)
        fused_activation(op, dest)
        return
    n, oh, ow, f = _memref(dest).shape
    kh, kw, cg, _ = _memref(filt).shape
    c = _memref(src).shape[3]
    if group == 1:
        linalg.conv_2d_nhwc_hwcf(src, filt, outs=[dest], strides=strides, dilations=dilations)
    elif group == c and cg == 1:
        hwc = _collapse(filt, [kh, kw, f], [[0], [1], [2, 3]])
        if f == c:
            linalg.depthwise_conv_2d_nhwc_hwc(src, hwc, outs=[dest], strides=strides, dilations=dilations)
        else:
            hwcm = _expand(hwc, [kh, kw, c, f // c], [[0], [1], [2, 3]])
            dest5 = _expand(dest, [n, oh, ow, c, f // c], [[0], [1], [2], [3, 4]])
            linalg.depthwise_conv_2d_nhwc_hwcm(src, hwcm, outs=[dest5], strides=strides, dilations=dilations)
    else:
        _grouped_conv(src, filt, dest, group, strides, dilations)
    fused_activation(op, dest)


def _overhang(op: ir.OpView, hw: Sequence[int], out: Sequence[int]) -> list[int]:
    """How far the last windows of a pool reach past the bottom and right pads (ceil_mode)."""
    pads = op.pads
    return [max(0, (out[i] - 1) * op.strides[i] + window_extent(op.kernels[i], op.dilations[i])
                - hw[i] - pads[i] - pads[i + 2]) for i in range(2)]


def _pool_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """A pooling's bordered input (pads and ceil_mode overhang), if it has a border."""
    src, dest = _memref(op.src), _memref(op.dest)
    return _padded_type(src, op.pads, _overhang(op, src.shape[1:3], dest.shape[1:3]))


#: pooling windows of at most this many positions are lowered as one elementwise update per position; larger ones
#: (a global average pool over 28x28 is 784 positions) as one reduction over a window view, whose size does not grow
#: with the window (784 updates made 784 ops for every later pass)
SHIFTED_POSITIONS = 9


def _pool(op: ir.OpView, new: Operands, pad_value: float, combine: Callable[[ir.Value, ir.Value], ir.Value]) -> None:
    """dest = the first window position of src (in a border of ``pad_value``: pads and overhang), then
    ``dest = combine(view, dest)`` for each other position, where a position's view is the strided box of src that
    it reads for every output element; windows of more than :data:`SHIFTED_POSITIONS` positions are one reduction
    (:func:`_window_reduce`).

    Why not linalg.pooling_nhwc_max/sum: their window dims are reductions inside each output element, which the
    vectorizer of the remaining ops (cpu-vectorize-rest) leaves scalar; the shifted views are KH x KW elementwise
    updates whose innermost dim is the contiguous channels, so each is a vector loop."""
    dest = new.dest
    n, oh, ow, c = _memref(dest).shape
    src = _padded(new, new.src, op.pads, pad_value)
    (sh, sw), (dh, dw) = op.strides, op.dilations
    if op.kernels[0] * op.kernels[1] > SHIFTED_POSITIONS:
        _window_reduce(src, dest, op.kernels, (sh, sw), (dh, dw), pad_value, combine)
        return
    identity = ir.AffineMap.get_identity(4)
    for k, (i, j) in enumerate((i, j) for i in range(op.kernels[0]) for j in range(op.kernels[1])):
        view = _subview(src, [0, i * dh, j * dw, 0], [n, oh, ow, c], [1, sh, sw, 1])
        if k == 0:
            linalg.copy(view, outs=[dest])
        else:
            _update(dest, [view], [identity], combine)


def _window_reduce(src: ir.Value, dest: ir.Value, kernels: Sequence[int], strides: Sequence[int],
                   dilations: Sequence[int], neutral: float, combine: Callable[[ir.Value, ir.Value], ir.Value]) -> None:
    """dest = neutral; dest[n, y, x, c] = combine over (i, j) of src[n, y * sh + i * dh, x * sw + j * dw, c], as one
    reduction generic over the window view ``[N, OH, OW, KH, KW, C]`` of src (a reinterpret_cast whose strides
    repeat src's rows and columns): every operand is then read at a projection of the loop dims, which the vectorizer
    takes, with the channels innermost."""
    n, oh, ow, c = _memref(dest).shape
    m = _memref(src)
    (sn, sy, sx, sc), offset = m.get_strides_and_offset()
    shape = [n, oh, ow, kernels[0], kernels[1], c]
    view_strides = [sn, sy * strides[0], sx * strides[1], sy * dilations[0], sx * dilations[1], sc]
    layout = ir.StridedLayoutAttr.get(offset, view_strides)
    window = memref.reinterpret_cast(ir.MemRefType.get(shape, m.element_type, layout=layout), src, [], [], [],
                                     [offset], shape, view_strides)
    linalg.fill(_constant(m.element_type, neutral), outs=[dest])
    _reduce_into(dest, window, [3, 4], combine)


def lower_max_pool(op: ir.OpView, new: Operands) -> None:
    """max_pool(dest, src) -> dest = max over the window positions' strided views of src bordered by -inf."""
    _pool(op, new, -INF, arith.maximumf)


def _global_constant(anchor: ir.Operation, base: str, value: np.ndarray) -> ir.Value:
    """A private constant ``memref.global`` holding ``value``, declared in the module of ``anchor``, and read
    (``memref.get_global``) at the current insertion point."""
    module = anchor
    while module.name != "builtin.module":
        module = module.parent
    table = ir.SymbolTable(module)
    name, k = base, 0
    while name in table:
        k += 1
        name = f"{base}_{k}"
    mtype = ir.MemRefType.get(list(value.shape), mlir_type(value.dtype))
    with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        memref.GlobalOp(name, ir.TypeAttr.get(mtype), sym_visibility="private", initial_value=numpy_to_elements(value),
                        constant=True, alignment=ALIGNMENT)
    return memref.get_global(mtype, name)


def lower_avg_pool(op: ir.OpView, new: Operands) -> None:
    """avg_pool(dest, src) -> dest = sum over the window positions' strided views of src bordered by zeros; then dest
    divided by each window's count: one constant when all windows count alike, else a constant [OH, OW] map
    (a private memref.global) of the counts, known at compile time."""
    _pool(op, new, 0.0, arith.addf)
    src_type, dest_type = _memref(new.src), _memref(new.dest)
    et = dest_type.element_type
    counts = pool_counts(src_type.shape[1:3], op.kernels, op.strides, op.pads, op.dilations, dest_type.shape[1:3],
                         bool(op.count_include_pad))
    if np.all(counts == counts.flat[0]):
        count = _constant(et, float(counts.flat[0]))
        _update(new.dest, [], [], lambda total: arith.divf(total, count))
        return
    table = _global_constant(op.operation, "__glow_pool_counts", counts.astype(numpy_dtype(et)))
    _update(new.dest, [table], [_dims(1, 2, rank=4)], lambda n, total: arith.divf(total, n))


def _lrn_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """The squares, bordered along the channels, and their window sums."""
    src = _memref(op.src)
    n, h, w, c = src.shape
    before, after = lrn_window(op.size)
    return [ir.MemRefType.get([n, h, w, before + c + after], src.element_type),
            ir.MemRefType.get(src.shape, src.element_type)]


def lower_local_response_norm(op: ir.OpView, new: Operands) -> None:
    """local_response_norm(dest, src): squares into a zero-bordered channel scratch buffer, their window sums into a
    second one (a reduction generic), then dest = src / (bias + alpha / size * sums) ^ beta. dest is written last,
    from src and scratch buffers only, so it may share src's buffer."""
    src_type = _memref(new.src)
    et = src_type.element_type
    n, h, w, c = src_type.shape
    before, _ = lrn_window(op.size)
    squares, sums = new.scratch
    linalg.fill(_constant(et, 0.0), outs=[squares])
    elementwise(memref.subview(squares, [0, 0, 0, before], [n, h, w, c], [1, 1, 1, 1]), [new.src],
                lambda x: arith.mulf(x, x))
    linalg.fill(_constant(et, 0.0), outs=[sums])
    # over (n, h, w, c, j): channel c sums the squares at c + j of the bordered temporary, j < size; as in the
    # pooling ops, an operand of the window's shape (never read) gives j its bounds
    window = memref.alloca(ir.MemRefType.get([op.size], et), [], [])
    d = [ir.AffineDimExpr.get(i) for i in range(5)]
    maps = [ir.AffineMap.get(5, 0, [d[0], d[1], d[2], d[3] + d[4]]), _dims(4, rank=5), _dims(0, 1, 2, 3, rank=5)]
    window_sum = linalg.GenericOp([], [squares, window], [sums],
                                  ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                                  [linalg.IteratorType.parallel] * 4 + [linalg.IteratorType.reduction])
    block = window_sum.regions[0].blocks.append(et, et, et)
    with ir.InsertionPoint(block):
        square, _, total = block.arguments
        linalg.YieldOp([arith.addf(total, square)])
    bias, scale, beta = (_constant(et, v) for v in (op.bias, op.alpha / op.size, op.beta))
    elementwise(new.dest, [new.src, sums],
                lambda x, s: arith.divf(x, math.powf(arith.addf(bias, arith.mulf(scale, s)), beta)))


def lower_pad(op: ir.OpView, new: Operands) -> None:
    """pad(dest, src){pads, value} -> linalg.fill(value -> dest); linalg.copy of src (cropped by negative pads) into
    the interior of dest."""
    src_shape = _memref(new.src).shape
    rank = len(src_shape)
    linalg.fill(_constant(_memref(new.dest).element_type, op.value), outs=[new.dest])
    begins, ends = op.pads[:rank], op.pads[rank:]
    sizes = [d - max(0, -b) - max(0, -e) for d, b, e in zip(src_shape, begins, ends)]
    ones = [1] * rank
    src = new.src
    if any(b < 0 or e < 0 for b, e in zip(begins, ends)):
        src = memref.subview(src, [max(0, -b) for b in begins], sizes, ones)
    linalg.copy(src, outs=[memref.subview(new.dest, [max(0, b) for b in begins], sizes, ones)])


# --- elementwise math, activations, comparisons and casts ---

_FloatPred, _IntPred = arith.CmpFPredicate, arith.CmpIPredicate


def _byte() -> ir.Type:
    return ir.IntegerType.get_signless(BOOL_STORAGE_BITS)


def _to_storage(flag: ir.Value) -> ir.Value:
    """An i1 result as the byte that stores it (0 or 1)."""
    return arith.extui(_byte(), flag)


def _from_storage(byte: ir.Value) -> ir.Value:
    """A stored boolean byte as an i1."""
    return arith.cmpi(_IntPred.ne, byte, _constant(byte.type, 0))


def _numeric_unary(float_op: Body, int_op: Body) -> Lowering:
    """Elementwise ``dest = fn(src)`` on floats or integers."""

    def lower(op: ir.OpView, new: Operands) -> None:
        elementwise(new.dest, [new.src], _arith_op(op, float_op, int_op))

    return lower


def _negi(x: ir.Value) -> ir.Value:
    return arith.subi(_constant(x.type, 0), x)


def _safe_divisor(b: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(b with 0 and -1 replaced by 1, whether b was -1). Integer division by 0 and INT_MIN / -1 trap (SIGFPE)
    and would kill the process; ONNX leaves them undefined, so x / 0 gives x, x % 0 gives 0, and -1 divides
    by negation (wrapping, as two's complement does), never a crash."""
    one, minus_one = _constant(b.type, 1), _constant(b.type, -1)
    is_minus_one = arith.cmpi(_IntPred.eq, b, minus_one)
    trap = arith.ori(arith.cmpi(_IntPred.eq, b, _constant(b.type, 0)), is_minus_one)
    return arith.select(trap, one, b), is_minus_one


def _divsi(a: ir.Value, b: ir.Value) -> ir.Value:
    safe, is_minus_one = _safe_divisor(b)
    return arith.select(is_minus_one, _negi(a), arith.divsi(a, safe))


def _remsi(a: ir.Value, b: ir.Value) -> ir.Value:
    safe, is_minus_one = _safe_divisor(b)
    return arith.select(is_minus_one, _constant(a.type, 0), arith.remsi(a, safe))


def _floor_modi(a: ir.Value, b: ir.Value) -> ir.Value:
    # remsi has the sign of a; a non-zero remainder whose sign differs from b's moves by b to take b's sign
    r = _remsi(a, b)
    zero = _constant(r.type, 0)
    signs_differ = arith.xori(arith.cmpi(_IntPred.slt, r, zero), arith.cmpi(_IntPred.slt, b, zero))
    fix = arith.andi(signs_differ, arith.cmpi(_IntPred.ne, r, zero))
    return arith.select(fix, arith.addi(r, b), r)


def _pow(op: ir.OpView, new: Operands) -> None:
    elementwise(new.dest, [new.lhs, new.rhs], math.powf)  # the op table admits only floats


def _mod(op: ir.OpView, new: Operands) -> None:
    # the verifier allows fmod 0 (the divisor's sign) only on integers
    body = _arith_op(op, arith.remf, _remsi if op.fmod else _floor_modi)
    elementwise(new.dest, [new.lhs, new.rhs], body)


def _compare(float_pred: arith.CmpFPredicate, int_pred: arith.CmpIPredicate) -> Lowering:
    """``dest = lhs pred rhs`` stored as a byte. Floats compare ordered (NaN is unequal and unordered, as in
    numpy); integers signed; i1 operands, stored as bytes 0 and 1, compare as those bytes."""

    def lower(op: ir.OpView, new: Operands) -> None:
        is_float = isinstance(_memref(new.lhs).element_type, ir.FloatType)

        def body(a: ir.Value, b: ir.Value) -> ir.Value:
            return _to_storage(arith.cmpf(float_pred, a, b) if is_float else arith.cmpi(int_pred, a, b))

        elementwise(new.dest, [new.lhs, new.rhs], body)

    return lower


def _select(op: ir.OpView, new: Operands) -> None:
    elementwise(new.dest, [new.cond, new.lhs, new.rhs], lambda c, a, b: arith.select(_from_storage(c), a, b))


def _not(op: ir.OpView, new: Operands) -> None:
    elementwise(new.dest, [new.src], lambda x: arith.xori(x, _constant(x.type, 1)))


def _logical(fn: Body) -> Lowering:
    """``dest = lhs fn rhs`` on stored booleans: bitwise ops on bytes 0 and 1 are the logical ones."""

    def lower(op: ir.OpView, new: Operands) -> None:
        elementwise(new.dest, [new.lhs, new.rhs], fn)

    return lower


def _cast_body(src: ir.Type, dest: ir.Type) -> Body:
    """Convert one element of glowir type ``src`` to ``dest`` (i1 arrives and leaves as a stored byte)."""
    src_float, dest_float = isinstance(src, ir.FloatType), isinstance(dest, ir.FloatType)
    if src == dest:
        return lambda x: x
    if _is_bool(dest):  # != 0; a float NaN is true, as numpy's astype(bool) has it
        return lambda x: _to_storage(arith.cmpf(_FloatPred.UNE, x, _constant(x.type, 0)) if src_float
                                     else arith.cmpi(_IntPred.ne, x, _constant(x.type, 0)))
    if src_float:
        return lambda x: arith.fptosi(dest, x)  # truncates toward zero, like ONNX Cast
    # integers: i1 (a byte 0 or 1) widens unsigned, the others signed
    if dest_float:
        return lambda x: (arith.uitofp if _is_bool(src) else arith.sitofp)(dest, x)
    if ir.IntegerType(dest).width < ir.IntegerType(src).width:
        return lambda x: arith.trunci(dest, x)
    return lambda x: (arith.extui if _is_bool(src) else arith.extsi)(dest, x)


def _cast(op: ir.OpView, new: Operands) -> None:
    elementwise(new.dest, [new.src], _cast_body(_memref(op.src).element_type, _memref(op.dest).element_type))


# --- reductions, softmax, normalization and batched matmul ---
# A reduction is a linalg op over the source's index space whose output map drops the reduced dims; its output starts
# at the reduction's neutral element. Kernels that need per-row statistics (softmax, layer_norm, arg_max) keep them in
# scratch buffers of the reduced shape (:data:`SCRATCH`).

#: reduction kind -> its neutral element, for float and for signed integer elements
_NEUTRAL: dict[str, tuple[float, Callable[[int], int]]] = {
    "sum": (0.0, lambda bits: 0),
    "max": (float("-inf"), lambda bits: -(1 << (bits - 1))),
    "min": (float("inf"), lambda bits: (1 << (bits - 1)) - 1),
    "prod": (1.0, lambda bits: 1),
}


def _neutral(kind: str, element_type: ir.Type) -> ir.Value:
    """The element that ``kind`` leaves unchanged, as a constant of ``element_type``."""
    value, integer = _NEUTRAL[kind]
    if isinstance(element_type, ir.FloatType):
        return _constant(element_type, value)
    return _constant(element_type, integer(ir.IntegerType(element_type).width))


def _projection(rank: int, kept: Sequence[int]) -> ir.AffineMap:
    """(d0, ..., d{rank-1}) -> (the kept dims)."""
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in kept])


def _generic(ins: Sequence[ir.Value], outs: Sequence[ir.Value], maps: Sequence[ir.AffineMap],
             reduced: Sequence[int], body: Callable[..., Sequence[ir.Value]]) -> linalg.GenericOp:
    """A linalg.generic over the index space of ``maps`` (reduction iterators on ``reduced``); ``body`` gets the
    elements of the ins and then of the outs, and returns the elements to store in the outs."""
    rank = maps[0].n_dims
    iterators = [linalg.IteratorType.reduction if d in reduced else linalg.IteratorType.parallel for d in range(rank)]
    op = linalg.GenericOp([], list(ins), list(outs), ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
                          iterators)
    block = op.regions[0].blocks.append(*(_memref(v).element_type for v in (*ins, *outs)))
    with ir.InsertionPoint(block):
        linalg.YieldOp(list(body(*block.arguments)))
    return op


def _in_place(buffer: ir.Value, fn: Body, ins: Sequence[ir.Value] = (),
              in_maps: Sequence[ir.AffineMap] = ()) -> None:
    """``buffer[i] = fn(*ins[map(i)], buffer[i])``: a parallel generic with ``buffer`` as its only output."""
    identity = ir.AffineMap.get_identity(_memref(buffer).rank)
    _generic(ins, [buffer], [*in_maps, identity], [], lambda *xs: [fn(*xs)])


def _stats_type(src: ir.MemRefType, kept: Sequence[int]) -> ir.MemRefType:
    """A buffer of ``src``'s shape restricted to the ``kept`` dims, for per-row statistics."""
    return ir.MemRefType.get([src.shape[d] for d in kept], src.element_type)


def _row_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """One statistic per row along the op's axis (softmax, log_softmax, arg_max)."""
    src = _memref(op.src)
    return [_stats_type(src, [d for d in range(src.rank) if d != op.axis])]


def _layer_norm_scratch(op: ir.OpView) -> list[ir.MemRefType]:
    """The mean and the reciprocal standard deviation of each row (the dims before the axis)."""
    src = _memref(op.src)
    return [_stats_type(src, range(op.axis))] * 2


def _reduce_into(acc: ir.Value, src: ir.Value, reduced: Sequence[int], combine: Callable[..., ir.Value],
                 ins: Sequence[ir.Value] = (), in_maps: Sequence[ir.AffineMap] = ()) -> None:
    """``acc[kept] = combine(src[i], *ins[map(i)], acc[kept])`` over every index i of src, reducing ``reduced``."""
    rank = _memref(src).rank
    kept = [d for d in range(rank) if d not in reduced]
    maps = [ir.AffineMap.get_identity(rank), *in_maps, _projection(rank, kept)]
    _generic([src, *ins], [acc], maps, reduced, lambda *xs: [combine(*xs)])


def _reduce(kind: str, float_op: Body, int_op: Body) -> Lowering:
    """``dest = fill(neutral); linalg.reduce(src -> dest) over axes``."""

    def lower(op: ir.OpView, new: Operands) -> None:
        combine = _arith_op(op, float_op, int_op)
        linalg.fill(_neutral(kind, _memref(new.dest).element_type), outs=[new.dest])
        reduce = linalg.ReduceOp([], [new.src], [new.dest], op.axes)
        element_type = _memref(new.dest).element_type
        block = reduce.regions[0].blocks.append(element_type, element_type)
        with ir.InsertionPoint(block):
            linalg.YieldOp([combine(*block.arguments)])

    return lower


def _reduce_l2(op: ir.OpView, new: Operands) -> None:
    """dest = 0; dest += src * src over the axes; dest = sqrt(dest)."""
    linalg.fill(_neutral("sum", _memref(new.dest).element_type), outs=[new.dest])
    _reduce_into(new.dest, new.src, op.axes, lambda x, acc: arith.addf(acc, arith.mulf(x, x)))
    _in_place(new.dest, math.sqrt)


def _rows(op: ir.OpView, new: Operands) -> tuple[list[int], ir.AffineMap]:
    """For a kernel along one axis: the kept dims and the map from the source's index space to a row statistic."""
    rank = _memref(new.src).rank
    kept = [d for d in range(rank) if d != op.axis]
    return kept, _projection(rank, kept)


def _row_max(op: ir.OpView, new: Operands) -> tuple[ir.Value, ir.AffineMap]:
    """A scratch buffer holding the max of every row along the axis, and the map that reads it."""
    _, row = _rows(op, new)
    peak = new.scratch[0]
    linalg.fill(_neutral("max", _memref(peak).element_type), outs=[peak])
    _reduce_into(peak, new.src, [op.axis], arith.maximumf)
    return peak, row


def _softmax(op: ir.OpView, new: Operands) -> None:
    """m = max(src); dest = exp(src - m); s = sum(dest); dest = dest / s (s reuses m's buffer)."""
    stat, row = _row_max(op, new)
    identity = ir.AffineMap.get_identity(_memref(new.src).rank)
    _generic([new.src, stat], [new.dest], [identity, row, identity], [],
             lambda x, m, _: [math.exp(arith.subf(x, m))])
    linalg.fill(_neutral("sum", _memref(stat).element_type), outs=[stat])
    _reduce_into(stat, new.dest, [op.axis], arith.addf)
    _in_place(new.dest, lambda s, e: arith.divf(e, s), [stat], [row])


def _log_softmax(op: ir.OpView, new: Operands) -> None:
    """m = max(src); dest = src - m; s = log(sum(exp(dest))); dest = dest - s (s reuses m's buffer)."""
    stat, row = _row_max(op, new)
    _in_place(new.dest, lambda x, m, _: arith.subf(x, m), [new.src, stat],
              [ir.AffineMap.get_identity(_memref(new.src).rank), row])
    linalg.fill(_neutral("sum", _memref(stat).element_type), outs=[stat])
    _reduce_into(stat, new.dest, [op.axis], lambda d, acc: arith.addf(acc, math.exp(d)))
    _in_place(stat, math.log)
    _in_place(new.dest, lambda s, d: arith.subf(d, s), [stat], [row])


def _layer_norm(op: ir.OpView, new: Operands) -> None:
    """mean = sum(src) / n; r = 1 / sqrt(sum((src - mean)^2) / n + epsilon); dest = (src - mean) * r * scale + bias,
    the statistics over the dims from axis on (n elements) kept in two scratch buffers."""
    src = _memref(new.src)
    rank, axis, et = src.rank, op.axis, src.element_type
    kept, normalized = list(range(axis)), list(range(axis, rank))
    row, per_element = _projection(rank, kept), _projection(rank, normalized)
    identity = ir.AffineMap.get_identity(rank)
    n = _constant(et, float(prod(src.shape[axis:])))
    mean, rstd = new.scratch
    for stat in (mean, rstd):
        linalg.fill(_neutral("sum", et), outs=[stat])
    _reduce_into(mean, new.src, normalized, arith.addf)
    _in_place(mean, lambda s: arith.divf(s, n))

    def square(x: ir.Value, mu: ir.Value, acc: ir.Value) -> ir.Value:
        d = arith.subf(x, mu)
        return arith.addf(acc, arith.mulf(d, d))

    _reduce_into(rstd, new.src, normalized, square, [mean], [row])
    epsilon = _constant(et, op.epsilon)
    one = _constant(et, 1.0)
    _in_place(rstd, lambda v: arith.divf(one, math.sqrt(arith.addf(arith.divf(v, n), epsilon))))

    def normalize(x: ir.Value, mu: ir.Value, r: ir.Value, g: ir.Value, b: ir.Value, _: ir.Value) -> list[ir.Value]:
        return [arith.addf(arith.mulf(arith.mulf(arith.subf(x, mu), r), g), b)]

    _generic([new.src, mean, rstd, new.scale, new.bias], [new.dest],
             [identity, row, row, per_element, per_element, identity], [], normalize)


def _batch_matmul(op: ir.OpView, new: Operands) -> None:
    linalg.fill(_constant(_memref(new.dest).element_type, 0.0), outs=[new.dest])
    linalg.batch_matmul(new.lhs, new.rhs, outs=[new.dest])


def _arg_max(op: ir.OpView, new: Operands) -> None:
    """One reduction with two outputs, the running max (a scratch buffer) and its index (dest). NaN wins as in
    numpy: the first one, or the last with select_last."""
    src = _memref(new.src)
    _, row = _rows(op, new)
    peak = new.scratch[0]
    linalg.fill(_neutral("max", src.element_type), outs=[peak])
    linalg.fill(_constant(_memref(new.dest).element_type, 0), outs=[new.dest])
    is_float = isinstance(src.element_type, ir.FloatType)
    last = bool(op.select_last)

    def better(x: ir.Value, best: ir.Value) -> ir.Value:
        if not is_float:
            return arith.cmpi(arith.CmpIPredicate.sge if last else arith.CmpIPredicate.sgt, x, best)
        greater = arith.cmpf(arith.CmpFPredicate.OGE if last else arith.CmpFPredicate.OGT, x, best)
        nan = arith.cmpf(arith.CmpFPredicate.UNO, x, x)
        if not last:  # the first NaN stays: a later one does not replace it
            nan = arith.andi(nan, arith.cmpf(arith.CmpFPredicate.ORD, best, best))
        return arith.ori(greater, nan)

    def body(x: ir.Value, best: ir.Value, index: ir.Value) -> list[ir.Value]:
        here = arith.index_cast(_memref(new.dest).element_type, linalg.IndexOp(op.axis).result)
        take = better(x, best)
        return [arith.select(take, x, best), arith.select(take, here, index)]

    _generic([new.src], [peak, new.dest], [ir.AffineMap.get_identity(src.rank), row, row], [op.axis], body)

# --- data movement and shapes ---


def _subview(source: ir.Value, offsets: Sequence[int], sizes: Sequence[int], steps: Sequence[int]) -> ir.Value:
    """The strided box of ``source`` (any strided memref) at ``offsets``; negative steps walk backwards."""
    src = _memref(source)
    strides, offset = src.get_strides_and_offset()
    start = offset + sum(o * s for o, s in zip(offsets, strides))
    layout = ir.StridedLayoutAttr.get(start, [s * k for s, k in zip(strides, steps)])
    return memref.subview(source, list(offsets), list(sizes), list(steps),
                          result_type=ir.MemRefType.get(list(sizes), src.element_type, layout=layout))


def _extract_tensor(op: ir.OpView, new: Operands) -> None:
    shape = _memref(new.dest).shape
    box = _subview(new.src, op.offsets, shape, op.steps or [1] * len(shape))
    linalg.copy(box, outs=[new.dest])


def _insert_tensor(op: ir.OpView, new: Operands) -> None:
    shape = _memref(new.src).shape
    linalg.copy(new.src, outs=[_subview(new.dest, op.offsets, shape, [1] * len(shape))])


def _gather(op: ir.OpView, new: Operands) -> None:
    data, indices, dest = _memref(new.data), _memref(new.indices), _memref(new.dest)
    axis, q = op.axis, indices.rank
    # indices[j..] sits at dims axis .. axis + q - 1 of dest
    idx_map = ir.AffineMap.get(dest.rank, 0, [ir.AffineDimExpr.get(axis + j) for j in range(q)])

    def body(i: ir.Value) -> ir.Value:
        index = ir.IndexType.get()
        n, zero, last = (arith.constant(index, v) for v in (data.shape[axis], 0, data.shape[axis] - 1))
        i = arith.index_cast(index, i)
        i = arith.select(arith.cmpi(arith.CmpIPredicate.slt, i, zero), arith.addi(i, n), i)
        # an index out of [-n, n) is an error in ONNX; without a way to trap, it is clamped so no load leaves data
        i = arith.minsi(arith.maxsi(i, zero), last)
        dims = [linalg.IndexOp(d).result for d in range(dest.rank)]
        return memref.load(new.data, dims[:axis] + [i] + dims[axis + q:])

    elementwise(new.dest, [new.indices], body, [idx_map])


#: glowir op name -> its lowering. weight_var has no row: it becomes an argument in :func:`convert_program`.
LOWERINGS: dict[str, Lowering] = {
    "alloc_activation": _alloc,
    "dealloc_activation": _dealloc,
    "tensor_view": _view,
    "copy": _copy,
    "splat": _splat,
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

    # --- convolution, pooling and normalization (NHWC) ---
    "conv2d": lower_conv2d,
    "max_pool": lower_max_pool,
    "avg_pool": lower_avg_pool,
    "local_response_norm": lower_local_response_norm,
    "pad": lower_pad,

    # --- elementwise math, activations, comparisons and casts ---
    "exp": _unary(math.exp),
    "log": _unary(math.log),
    "sqrt": _unary(math.sqrt),
    "erf": _unary(math.erf),
    "floor": _unary(math.floor),
    "ceil": _unary(math.ceil),
    "neg": _numeric_unary(arith.negf, _negi),
    "abs": _numeric_unary(math.absf, math.absi),
    "element_pow": _pow,
    "element_mod": _mod,
    "element_cmp_eq": _compare(_FloatPred.OEQ, _IntPred.eq),
    "element_cmp_lt": _compare(_FloatPred.OLT, _IntPred.slt),
    "element_cmp_lte": _compare(_FloatPred.OLE, _IntPred.sle),
    "not": _not,
    "element_and": _logical(arith.andi),
    "element_or": _logical(arith.ori),
    "element_select": _select,
    "cast": _cast,

    # --- data movement and shapes ---
    "extract_tensor": _extract_tensor,
    "insert_tensor": _insert_tensor,
    "gather": _gather,

    # --- reductions, softmax, normalization and batched matmul ---
    "reduce_sum": _reduce("sum", arith.addf, arith.addi),
    "reduce_max": _reduce("max", arith.maximumf, arith.maxsi),
    "reduce_min": _reduce("min", arith.minimumf, arith.minsi),
    "reduce_prod": _reduce("prod", arith.mulf, arith.muli),
    "reduce_l2": _reduce_l2,
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "layer_norm": _layer_norm,
    "batch_matmul": _batch_matmul,
    "arg_max": _arg_max,
}


#: glowir instruction -> the scratch buffers its lowering takes (``Operands.scratch``), in that order. Each lives
#: during its instruction only: glowir-plan-memory places them in the activations region with the activations.
SCRATCH: dict[str, Callable[[ir.OpView], list[ir.MemRefType]]] = {
    "conv2d": lambda op: _padded_type(_memref(op.src), op.pads),
    "max_pool": _pool_scratch,
    "avg_pool": _pool_scratch,
    "local_response_norm": _lrn_scratch,
    "softmax": _row_scratch,
    "log_softmax": _row_scratch,
    "layer_norm": _layer_norm_scratch,
    "arg_max": _row_scratch,
}


def scratch_types(op: ir.Operation) -> list[ir.MemRefType]:
    """The scratch buffers the lowering of ``op`` takes (none for most instructions)."""
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


def convert_program(func_op: ir.Operation) -> None:
    """Rewrite one program in place: buffers become region views (planned) or arguments and allocations, every
    other glowir op its lowering."""
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
    lowered: dict[ir.Value, ir.Value] = {}
    if planned:
        sizes = dict(zip(REGIONS, layout.sizes()))
        regions = {r: block.add_argument(ir.MemRefType.get([sizes[r]], ir.IntegerType.get_signless(8)),
                                         func_op.location) for r in REGIONS}
        names = ir.ArrayAttr.get([ir.StringAttr.get(r) for r in REGIONS])
    else:
        lowered.update((op.results[0], block.add_argument(storage_type(op.results[0].type), op.location))
                       for op in weights)
        names = ir.ArrayAttr.get([ir.StringAttr.get(op.opview.name) for op in weights])
    for op in ops:
        if planned and op.name in (PREFIX + "weight_var", PREFIX + "alloc_activation"):
            with ir.InsertionPoint(op), op.location:
                lowered[op.results[0]] = _planned_buffer(op, regions, sizes)
            continue
        if op.name == PREFIX + "weight_var" or (planned and op.name == PREFIX + "dealloc_activation"):
            continue
        lowering = LOWERINGS.get(op.name.removeprefix(PREFIX))
        if lowering is None:
            raise PassError(f"'{op.name}' has no lowering to linalg", op.location)
        with ir.InsertionPoint(op), op.location:
            scratch = _scratch_buffers(op, regions["activations"] if planned else None)
            replacement = lowering(op.opview, Operands(op.opview, lowered, scratch))
            if not planned:
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

    def run(self, module: ir.Operation) -> None:
        with module.context, module.location:
            for op in module.regions[0].blocks[0].operations:
                if op.operation.name == "func.func" and is_program(op.operation):
                    convert_program(op.operation)
            check_legal(module)
