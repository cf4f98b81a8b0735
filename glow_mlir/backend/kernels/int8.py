"""The int8 convolution kernels on dot-product instructions, and the filter layouts they read.

x86's VNNI ``vpdpbusd acc, a, b`` adds to each 32-bit lane of ``acc`` the four products of the lane's unsigned bytes
of ``a`` and signed bytes of ``b``: 4 x L multiply-adds in one instruction (L = 16 lanes on AVX-512, 8 with AVX-VNNI
on ymm), against L for a float FMA.

Group-1 convolutions: the kernel broadcasts four input channels of one pixel (read as unsigned: the int8 value + 128,
an xor of the sign bits) to every lane and takes ``b`` from the filter packed as ``[F/L, KH, KW, Cp/4, L, 4]``
(dialects/quantized.py pack_filter): lane j holds output channel j's four weights. Output channels that are not whole
zmm blocks but whole ymm blocks (24) run on ymm registers on an AVX-512 target. Without VNNI (AVX2, AVX-512F/BW) the
same kernel runs on ``vpmaddwd``: two input channels as an int16 pair (the lowering widens the input once into its
bordered scratch), broadcast, times the filter packed as int16 pairs ``[F/L, KH, KW, Cp/2, L, 2]``, then added to
the int32 accumulators: 2 x L multiply-adds in two instructions, exact (vpmaddubsw's u8 x s8 pairs would saturate
int16).

Depthwise convolutions (VNNI on zmm): a lane takes one channel's four taps of a filter row, the filter packed as
``[KH, KW/4, 1, C, 4]`` (pack_depthwise; zero taps past KW). Per output pixel and chunk of 64, 32 or 16 channels,
the four tap vectors of a filter row are interleaved by bytes, then by 16-bit pairs (punpck, within 128-bit lanes),
into four vectors whose lane (L, j) of vector k holds the taps of channel 16 L + 4 k + j: one vpdpbusd each against
the weights put in the same order once per output row; the sums go back to channel order before the epilogue.

Both end in registers: the accumulators start from the bias (or zero, the bias added at the end) and are requantized
(``params.requantize``: the 64-bit products of the even and odd 32-bit lanes by ``vpmuldq``, :class:`_Requantizer`)
and stored as int8; the int32 buffer, bias broadcast and requantization generic the lowering built go.

- ``cpu-pack-int8-weights`` (node lowering, on glowgraph): the constant filter of each group-1 qconv2d whose output
  channels are whole blocks of L is packed at compile time (for VNNI ``128 * sum(w)`` taken out of its bias: the
  kernel adds 128 to every input); a qfully_connected becomes a 1x1 qconv2d over its rows first; a depthwise one of
  whole blocks of 16 channels takes its taps in quads on zmm VNNI. For x86 targets (:func:`dot_of`).
- ``cpu-int8-kernels`` (codegen): the generic a packed qconv2d lowers to (``glow.int8_conv``) becomes loops over
  (image, output row, filter blocks of ``nv`` vectors, tiles of ``rows`` output pixels) with ``rows x nv``
  accumulator registers carried through the (kh, kw, channel group) loops: per step ``nv`` filter loads,
  ``rows`` broadcasts and ``rows x nv`` dot products. ``nv`` and ``rows`` follow the target's register count
  (:func:`register_tile`): the accumulators, the filter vectors and the broadcast fit. A ``glow.int8_depthwise``
  generic becomes loops over (image, output row, chunk, output pixel). On several threads the output rows are the
  tasks of an scf.forall.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, llvm, memref, scf, vector

from ...dialects import glowgraph as gg
from ...dialects.quantized import UNSIGNED_SHIFT, pack_depthwise, pack_filter
from ...passes.conversion.ir_to_linalg import INT8_CONV_ATTR, INT8_DEPTHWISE_ATTR, INT8_REQUANT_ATTR
from ...passes.conversion.ir_to_linalg import index_constant as _index
from ...passes.graph.patterns import attr, constant, known, replace
from ..target import Target


def vpdpbusd(lanes: int) -> str:
    """The vpdpbusd intrinsic on ``lanes`` 32-bit lanes (LLVM 22: <L x i32>, <4L x i8>, <4L x i8>)."""
    return f"llvm.x86.avx512.vpdpbusd.{32 * lanes}"


#: the vpdpbusd intrinsic for each register width of the group-1 kernel, in 32-bit lanes (zmm, ymm)
VNNI = {lanes: vpdpbusd(lanes) for lanes in (16, 8)}
#: the vpmaddwd intrinsic for each width: <2L x i16>, <2L x i16> -> <L x i32>, pairs of products summed
PAIRS = {16: "llvm.x86.avx512.pmaddw.d.512", 8: "llvm.x86.avx2.pmadd.wd"}


@dataclass(frozen=True)
class Dot:
    """The int8 multiply-add of a target: ``group`` input channels per 32-bit lane (4: vpdpbusd on u8 x s8; 2:
    vpmaddwd on int16 pairs), the lanes of its widest register, the register count."""

    group: int
    lanes: int
    registers: int

    @property
    def intrinsics(self) -> dict[int, str]:
        return VNNI if self.group == 4 else PAIRS

    def lanes_for(self, channels: int) -> int | None:
        """The register width (in lanes) whose blocks ``channels`` output channels fill: the widest, else ymm on an
        AVX-512 target (24 channels: three ymm blocks); None when neither divides them."""
        return next((n for n in self.intrinsics if n <= self.lanes and channels % n == 0), None)


def dot_of(target: Target) -> Dot | None:
    """The int8 multiply-add the target has: AVX-512 VNNI on zmm (and ymm), AVX-VNNI on ymm; else on an x86 with
    AVX2 or AVX-512 vpmaddwd on sign-extended pairs (exact: vpmaddubsw's u8 x s8 pairs would saturate int16 at
    2 x 255 x 127); None for other targets (the generic convolution)."""
    if "avx512vnni" in target.int8_dot and target.vector_bits >= 512:
        return Dot(4, 16, target.vector_registers)
    if "avx512vnni" in target.int8_dot or "avxvnni" in target.int8_dot:
        return Dot(4, 8, target.vector_registers)
    if target.triple.startswith(("x86_64", "i686", "i386")) and target.vector_bits >= 256:
        return Dot(2, target.vector_bits // 32, target.vector_registers)
    return None


def register_tile(out_width: int, blocks: int, dot: Dot) -> tuple[int, int]:
    """(rows, nv): output pixels and filter vectors of one register tile. Two filter vectors where the blocks
    pair up; as many pixels as the registers hold beside the nv filter vectors, the broadcast and (for pairs) the
    product, at most the row."""
    nv = 2 if blocks % 2 == 0 else 1
    spare = 2 if dot.group == 4 else 3
    rows = max(1, (dot.registers - nv - spare) // nv)
    return min(rows, out_width), nv


# --------------------------------------------------------------------------- the filter layout (glowgraph)


def _packed(w: np.ndarray, b: np.ndarray, dot: Dot) -> tuple[np.ndarray, np.ndarray] | None:
    """An HWCF int8 filter packed for ``dot`` and its bias (for VNNI less 128 * sum(w)); None when the output
    channels are not whole blocks or the corrected bias leaves int32."""
    lanes = dot.lanes_for(w.shape[3])
    if lanes is None:
        return None
    if dot.group == 2:
        return pack_filter(w, lanes, 2), b.astype(np.int32)
    bias = b.astype(np.int64) - UNSIGNED_SHIFT * w.astype(np.int64).reshape(-1, w.shape[3]).sum(axis=0)
    if np.abs(bias).max(initial=0) >= 2**31:
        return None
    return pack_filter(w, lanes), bias.astype(np.int32)


def pack_qconv(op: ir.Operation, dot: Dot) -> bool:
    """A group-1 qconv2d with constant filter and bias, whole blocks of output channels: its filter packed and its
    bias corrected (the constants built at the insertion point, before ``op``). Returns whether it did."""
    w, b = known(op.operands[1]), known(op.operands[2])
    if w is None or b is None or w.ndim != 4 or attr(op, "group", "i64") != 1:
        return False
    packed = _packed(w, b, dot)
    if packed is None:
        return False
    op.operands[1], op.operands[2] = constant(packed[0]), constant(packed[1])
    return True


def pack_depthwise_qconv(op: ir.Operation, dot: Dot) -> bool:
    """A depthwise qconv2d (group = C, one filter per channel) with constant filter and bias, whole blocks of 16
    channels, on zmm VNNI: its filter's rows in tap quads ``[KH, KW/4, 1, C, 4]``, its bias less 128 * sum(w), its
    right pad grown by the columns of the zero taps (the output width kept). Returns whether it did."""
    w, b = known(op.operands[1]), known(op.operands[2])
    if w is None or b is None or w.ndim != 4 or dot.group != 4 or dot.lanes != 16:
        return False
    _, kw, one, c = w.shape
    channels = ir.RankedTensorType(op.operands[0].type).shape[-1]
    if one != 1 or c != channels or attr(op, "group", "i64") != c or c % 16:
        return False
    bias = b.astype(np.int64) - UNSIGNED_SHIFT * w.astype(np.int64).reshape(-1, c).sum(axis=0)
    if np.abs(bias).max(initial=0) >= 2**31:
        return False
    top, left, bottom, right = attr(op, "pads", "i64s") or [0, 0, 0, 0]
    dilation = (attr(op, "dilations", "i64s") or [1, 1])[1]
    grown = right + (-kw % 4) * dilation
    op.operands[1], op.operands[2] = constant(pack_depthwise(w)), constant(bias.astype(np.int32))
    op.attributes["pads"] = ir.DenseI64ArrayAttr.get([top, left, bottom, grown])
    return True


def fully_connected_as_conv(op: ir.Operation, dot: Dot) -> bool:
    """qfully_connected(x [N,K], w [K,M], b) -> reshape(qconv2d(reshape(x) [1,1,N,K], w [1,1,K,M])) with its
    filter packed, when M is whole blocks."""
    w, b = known(op.operands[1]), known(op.operands[2])
    packed = None if w is None or b is None or w.ndim != 2 else _packed(w.reshape(1, 1, *w.shape), b, dot)
    if packed is None:
        return False
    n, k = ir.RankedTensorType(op.operands[0].type).shape
    x = gg.reshape(op.operands[0], shape=[1, 1, n, k])
    conv = gg.qconv2d(x, constant(packed[0]), constant(packed[1]), strides=[1, 1], pads=[0, 0, 0, 0],
                      dilations=[1, 1], group=1, input_offset=0, **dict(op.attributes.items()))
    replace(op, [gg.reshape(conv, shape=[n, w.shape[1]])])
    return True


# --------------------------------------------------------------------------- the kernel (linalg on memrefs)


def _affine(a: ir.Value, scale: int, b: ir.Value, scale_b: int, offset: int = 0) -> ir.Value:
    """a * scale + b * scale_b + offset on index values."""
    total = arith.addi(arith.muli(a, _index(scale)), arith.muli(b, _index(scale_b)))
    return arith.addi(total, _index(offset)) if offset else total


@dataclass(frozen=True)
class Epilogue:
    """The ends of a convolution the lowering built whole (quantized.packed_conv): the accumulators start from
    ``bias`` [F] and end requantized (per-channel i32 ``multipliers`` and ``shifts``; offset, min, max and the
    smallest shift in ``clamp``)
    into the int8 ``dest`` [N, OH, OW, F]; ``replaced``: the ops the kernel takes the place of (the bias broadcast,
    the requantization, the int32 buffer's alloc, view and dealloc)."""

    bias: ir.Value
    multipliers: ir.Value
    shifts: ir.Value
    dest: ir.Value
    clamp: tuple[int, int, int, int]
    replaced: tuple[ir.Operation, ...]


def epilogue_of(op: ir.Operation) -> Epilogue | None:
    """The bias broadcast and the requantization around the tagged generic ``op`` on an int32 buffer of its own,
    when the buffer has no other use; None otherwise (the kernel then loads and stores the accumulators)."""
    expand = op.operands[2].owner
    if isinstance(expand, (ir.Operation, ir.OpView)) and expand.name == "memref.alloc":
        expand = None  # the generic writes the buffer itself (depthwise)
    elif not isinstance(expand, (ir.Operation, ir.OpView)) or expand.name != "memref.expand_shape":
        return None
    acc = op.operands[2] if expand is None else expand.operands[0]
    alloc = acc.owner
    if not isinstance(alloc, (ir.Operation, ir.OpView)) or alloc.name != "memref.alloc":
        return None
    found: dict[str, ir.Operation] = {}
    for use in acc.uses:
        user = use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner
        if user.name == "linalg.generic" and INT8_REQUANT_ATTR in user.attributes and use.operand_number == 0:
            kind = "requant"
        elif user.name == "linalg.broadcast" and use.operand_number == 1:
            kind = "bias"
        elif user.name in ("memref.dealloc", "memref.expand_shape") or user == op:
            kind = user.name
        else:
            return None
        if kind in found and found[kind] != user:
            return None
        found[kind] = user
    if "requant" not in found or "bias" not in found or \
            (expand is not None and len(list(expand.results[0].uses)) != 1):
        return None
    requant, broadcast = found["requant"], found["bias"]
    clamp = tuple(int(v) for v in ir.DenseI64ArrayAttr(requant.attributes[INT8_REQUANT_ATTR]))
    replaced = (broadcast, requant, *(found[k] for k in ("memref.dealloc",) if k in found),
                *((expand,) if expand is not None else ()), alloc.operation if isinstance(alloc, ir.OpView) else alloc)
    return Epilogue(broadcast.operands[0], requant.operands[1], requant.operands[2], requant.operands[3], clamp,
                    replaced)


def _tile(src: ir.Value, filt: ir.Value, acc5: ir.Value, n: ir.Value, oh: ir.Value, fb: ir.Value, ow0: ir.Value,
          rows: int, nv: int, geometry: list[int], dot: Dot, ends: Epilogue | None = None) -> None:
    """One register tile: ``rows`` output pixels from ``ow0`` x ``nv`` filter blocks from ``fb * nv``; with
    ``ends`` the accumulators start from the bias and are requantized into the int8 destination, else they are
    loaded from and stored to ``acc5``."""
    sh, sw, dh, dw = geometry
    _, kh_n, kw_n, c4_n, width = ir.MemRefType(filt.type).shape
    element = ir.MemRefType(filt.type).element_type
    group = dot.group  # the filter's layout is the dot's (matches)
    lanes = width // group
    i32, i8, i16 = (ir.IntegerType.get_signless(b) for b in (32, 8, 16))
    acc_t = ir.VectorType.get([lanes], i32)
    bytes_t = ir.VectorType.get([width], element)  # the intrinsic's narrow operands (<64 x i8> on zmm with VNNI)
    intrinsic = dot.intrinsics[lanes]
    zero = _index(0)
    blocks = [arith.addi(arith.muli(fb, _index(nv)), _index(v)) for v in range(nv)]
    pixels = [arith.addi(ow0, _index(p)) for p in range(rows)]
    channels = [arith.muli(b, _index(lanes)) for b in blocks]
    if ends is None:
        accs = [vector.load(acc_t, acc5, [n, oh, pixels[p], blocks[v], zero]) for p in range(rows) for v in range(nv)]
    else:
        biases = [vector.load(acc_t, ends.bias, [channels[v]]) for v in range(nv)]
        accs = [biases[v] for _ in range(rows) for v in range(nv)]
    sign = arith.constant(i32, -0x7F7F7F80)  # 0x80808080: the int8 + 128 of four bytes at once
    y0 = arith.muli(oh, _index(sh))
    xs = [arith.muli(pixels[p], _index(sw)) for p in range(rows)]

    def loop(count: int, carried: list[ir.Value], body) -> list[ir.Value]:
        step = scf.ForOp(zero, _index(count), _index(1), carried)
        with ir.InsertionPoint(step.body):
            scf.YieldOp(body(step.induction_variable, list(step.inner_iter_args)))
        return list(step.results)

    def over_kh(kh: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
        y = arith.addi(y0, arith.muli(kh, _index(dh)))
        return loop(kw_n, carried, lambda kw, c: over_kw(kh, kw, y, c))

    def over_kw(kh: ir.Value, kw: ir.Value, y: ir.Value, carried: list[ir.Value]) -> list[ir.Value]:
        shift = arith.muli(kw, _index(dw))
        columns = [arith.addi(x, shift) for x in xs]
        return loop(c4_n, carried, lambda c4, c: over_channels(kh, kw, c4, y, columns, c))

    def over_channels(kh, kw, c4, y, columns, carried):
        weights = []
        for v in range(nv):
            weights.append(vector.load(bytes_t, filt, [blocks[v], kh, kw, c4, zero]))
        channel = arith.muli(c4, _index(group))
        out = list(carried)
        for p in range(rows):
            # four int8 channels, or two widened to an int16 pair (the lowering widened the input)
            inputs = vector.load(ir.VectorType.get([group], i8 if group == 4 else i16), src,
                                 [n, y, columns[p], channel])
            word = vector.extract(vector.bitcast(ir.VectorType.get([1], i32), inputs), [], [0])
            if group == 4:  # four int8 channels read as unsigned
                word = arith.xori(word, sign)
            broadcast = vector.bitcast(bytes_t, vector.broadcast(acc_t, word))
            for v in range(nv):
                k = p * nv + v
                if group == 4:
                    out[k] = llvm.call_intrinsic(acc_t, intrinsic, [out[k], broadcast, weights[v]], [], [])
                else:
                    pairs = llvm.call_intrinsic(acc_t, intrinsic, [broadcast, weights[v]], [], [])
                    out[k] = arith.addi(out[k], pairs)
        return out

    accs = loop(kh_n, accs, over_kh)
    if ends is None:
        for p in range(rows):
            for v in range(nv):
                vector.store(accs[p * nv + v], acc5, [n, oh, pixels[p], blocks[v], zero])
        return
    scales = [_Requantizer(vector.load(acc_t, ends.multipliers, [channels[v]]),
                           vector.load(acc_t, ends.shifts, [channels[v]]), ends.clamp) for v in range(nv)]
    for p in range(rows):
        for v in range(nv):
            vector.store(scales[v](accs[p * nv + v]), ends.dest, [n, oh, pixels[p], channels[v]])


def _i64(value: int, t: ir.Type) -> ir.Value:
    return arith.constant(t, ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(ir.VectorType(t).element_type,
                                                                                   value)))


class _Requantizer:
    """The epilogue's requantization of one block's accumulators (``params.requantize`` on L lanes): the 64-bit
    products of the even and of the odd 32-bit lanes each by one ``vpmuldq`` (the lanes viewed as L/2 x i64, the
    even ones sign-extended in place, the odd ones shifted down), plus ``2^(right-1)``, shifted right per lane (a
    logical shift of the product lifted by 2^62); the
    two halves joined back into 32-bit lanes (exact: with every right shift at least 31 the results fit, otherwise
    they are clamped in 64 bits first), clamped, offset, narrowed to int8. The per-channel operands are made once per
    register tile; no lane is widened to 64 bits by a shuffle."""

    def __init__(self, multipliers: ir.Value, shifts: ir.Value, clamp: tuple[int, int, int, int]):
        lanes = ir.VectorType(multipliers.type).shape[0]
        self.wide = ir.VectorType.get([lanes // 2], ir.IntegerType.get_signless(64))
        self.narrow = ir.VectorType.get([lanes], ir.IntegerType.get_signless(8))
        self.lanes_t = multipliers.type
        self.offset, self.lo, self.hi, smallest = clamp
        self.c32 = _i64(32, self.wide)
        one, top = _i64(1, self.wide), _i64(1 << 62, self.wide)
        self.m = self._halves(multipliers)
        self.right = self._halves(shifts)
        # (p + 2^(r-1)) >> r (arithmetic) as ((p + 2^(r-1) + 2^62) >>> r) - 2^(62-r): |p| < 2^62, so the sum is
        # positive and below 2^64, and a logical shift (vpsrlvq, which AVX2 has, unlike vpsravq) is exact
        self.bias = [arith.addi(arith.shli(one, arith.subi(r, one)), top) for r in self.right]
        self.lift = [arith.shrui(top, r) for r in self.right]
        self.wide_clamp = smallest < 31  # a multiplier >= 1: a product may leave 32 bits after the shift
        i32 = ir.IntegerType.get_signless(32)
        self.bounds = [arith.constant(self.lanes_t, ir.DenseElementsAttr.get_splat(self.lanes_t, ir.IntegerAttr.get(
            i32, v))) for v in (self.lo - self.offset, self.hi - self.offset, self.offset)]

    def _halves(self, lanes: ir.Value) -> list[ir.Value]:
        """The even and the odd 32-bit lanes of ``lanes``, each sign-extended into a 64-bit lane."""
        wide = vector.bitcast(self.wide, lanes)
        return [arith.shrsi(arith.shli(wide, self.c32), self.c32), arith.shrsi(wide, self.c32)]

    def __call__(self, acc: ir.Value) -> ir.Value:
        parts = []
        for x, m, right, bias, lift in zip(self._halves(acc), self.m, self.right, self.bias, self.lift):
            q = arith.subi(arith.shrui(arith.addi(arith.muli(x, m), bias), right), lift)
            if self.wide_clamp:
                q = arith.maxsi(arith.minsi(q, _i64(self.hi - self.offset, self.wide)),
                                _i64(self.lo - self.offset, self.wide))
            parts.append(q)
        even = arith.andi(parts[0], _i64(0xFFFFFFFF, self.wide))
        joined = vector.bitcast(self.lanes_t, arith.ori(even, arith.shli(parts[1], self.c32)))
        lo, hi, offset = self.bounds
        return arith.trunci(self.narrow, arith.addi(arith.maxsi(arith.minsi(joined, hi), lo), offset))


def make_kernel(op: ir.Operation, dot: Dot, threads: int = 1, parallel_flops: int = 0) -> None:
    """Replace the tagged generic ``op`` (src, packed filter -> acc viewed [N, OH, OW, F/L, L]) by the loops of
    :func:`_tile` over the output rows: per row, the main tiles, then one tile of what is left of it. With
    ``threads`` above 1 and at least ``parallel_flops`` of work, the rows are the tasks of an scf.forall, a
    contiguous run of rows each (rows write disjoint outputs)."""
    src, filt = op.operands[0], op.operands[1]
    acc5 = op.operands[2]
    ends = epilogue_of(op)
    geometry = list(ir.DenseI64ArrayAttr(op.attributes[INT8_CONV_ATTR]))
    n_n, oh_n, ow_n, blocks, lanes = ir.MemRefType(acc5.type).shape
    rows, nv = register_tile(ow_n, blocks, dot)
    main, rest = ow_n // rows, ow_n % rows
    _, kh_n, kw_n, groups, _, group = ir.MemRefType(filt.type).shape
    flops = 2 * n_n * oh_n * ow_n * blocks * lanes * kh_n * kw_n * groups * group
    tasks = min(threads, n_n * oh_n) if flops >= parallel_flops else 1
    with ir.InsertionPoint(op), op.location:
        # each (block, kh, kw, channel group)'s L x g weights as one row: the loads are 1-D vectors
        shape = ir.MemRefType(filt.type).shape
        filt = memref.collapse_shape(ir.MemRefType.get([*shape[:4], shape[4] * shape[5]],
                                                       ir.MemRefType(filt.type).element_type),
                                     filt, [[0], [1], [2], [3], [4, 5]])
        zero, one = _index(0), _index(1)

        def output_row(n: ir.Value, oh: ir.Value) -> None:
            fblock = scf.ForOp(zero, _index(blocks // nv), one)
            with ir.InsertionPoint(fblock.body):
                tiles = scf.ForOp(zero, _index(main), one)
                with ir.InsertionPoint(tiles.body):
                    ow0 = arith.muli(tiles.induction_variable, _index(rows))
                    _tile(src, filt, acc5, n, oh, fblock.induction_variable, ow0, rows, nv, geometry, dot, ends)
                    scf.YieldOp([])
                if rest:
                    _tile(src, filt, acc5, n, oh, fblock.induction_variable, _index(main * rows), rest, nv,
                          geometry, dot, ends)
                scf.YieldOp([])

        _over_rows(n_n, oh_n, tasks, output_row)
    op.erase()
    for done in ends.replaced if ends else ():
        done.erase()


# --------------------------------------------------------------------------- the depthwise kernel


def _unpack(a: ir.Value, b: ir.Value, width: int, half: int) -> ir.Value:
    """The elements of ``a`` and ``b`` (vectors of ``width`` elements of one size) interleaved within each 128-bit
    lane, from the lane's low (``half`` 0) or high (1) half: x86's punpckl / punpckh."""
    per_lane = 16 * 8 // ir.IntegerType(ir.VectorType(a.type).element_type).width
    mask = []
    for lane in range(width // per_lane):
        for i in range(per_lane // 2):
            k = lane * per_lane + half * per_lane // 2 + i
            mask += [k, width + k]
    return vector.shuffle(a, b, mask)


def _quads(taps: list[ir.Value], width: int) -> list[ir.Value]:
    """Four vectors of ``width`` bytes (one filter row's four taps, ``width`` channels each) as four vectors whose
    32-bit lane (L, j) of vector k holds the four taps of channel 16 L + 4 k + j."""
    i8, i16 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(16)
    words = ir.VectorType.get([width // 2], i16)
    pairs = [vector.bitcast(words, _unpack(taps[0], taps[1], width, h)) for h in (0, 1)]
    others = [vector.bitcast(words, _unpack(taps[2], taps[3], width, h)) for h in (0, 1)]
    quads = [_unpack(pairs[h], others[h], width // 2, k) for h in (0, 1) for k in (0, 1)]
    return [vector.bitcast(ir.VectorType.get([width], i8), q) for q in quads]


def _quad_order(width: int) -> list[int]:
    """The channel of each 32-bit lane of the four vectors :func:`_quads` makes, vector after vector."""
    return [16 * lane + 4 * k + j for k in range(4) for lane in range(width // 16) for j in range(4)]


def _depthwise_row(src: ir.Value, filt: ir.Value, n: ir.Value, oh: ir.Value, ow_n: int, channels: int,
                   geometry: list[int], ends: Epilogue) -> None:
    """One output row of a depthwise convolution on a filter in tap quads: a loop over the chunks of 64 channels
    (zmm), then one chunk of 32 (ymm) and one of 16 (xmm) for what is left (:func:`_depthwise_chunk`)."""
    zero, one = _index(0), _index(1)
    whole = channels // 64
    if whole:
        chunks = scf.ForOp(zero, _index(whole), one)
        with ir.InsertionPoint(chunks.body):
            c0 = arith.muli(chunks.induction_variable, _index(64))
            _depthwise_chunk(src, filt, n, oh, ow_n, c0, 64, geometry, ends)
            scf.YieldOp([])
    first = 64 * whole
    for width in (32, 16):
        if channels - first >= width:
            _depthwise_chunk(src, filt, n, oh, ow_n, _index(first), width, geometry, ends)
            first += width


def _depthwise_chunk(src: ir.Value, filt: ir.Value, n: ir.Value, oh: ir.Value, ow_n: int, c0: ir.Value, width: int,
                     geometry: list[int], ends: Epilogue) -> None:
    """The chunk of ``width`` channels from ``c0`` of one output row: its weights in quad order, then per output
    pixel four dot-product accumulators, the taps of each filter row interleaved into them, the sums put back in
    channel order, requantized and stored."""
    sh, sw, dh, dw = geometry
    kh_n, q_n = ir.MemRefType(filt.type).shape[:2]
    i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    zero, one = _index(0), _index(1)
    quarter = ir.VectorType.get([width // 4], i32)
    bytes_t = ir.VectorType.get([width], i8)
    order = _quad_order(width)
    weights = {}
    for kh in range(kh_n):
        for q in range(q_n):
            natural = vector.bitcast(ir.VectorType.get([width], i32), vector.load(
                ir.VectorType.get([4 * width], i8), filt, [_index(kh), _index(q), arith.muli(c0, _index(4))]))
            for k in range(4):
                picked = vector.shuffle(natural, natural, order[k * width // 4:(k + 1) * width // 4])
                weights[kh, q, k] = vector.bitcast(bytes_t, picked)
    blocks = width // 16
    channel = [arith.addi(c0, _index(16 * b)) for b in range(blocks)]
    lanes16 = ir.VectorType.get([16], i32)
    biases = [vector.load(lanes16, ends.bias, [channel[b]]) for b in range(blocks)]
    scales = [_Requantizer(vector.load(lanes16, ends.multipliers, [channel[b]]),
                           vector.load(lanes16, ends.shifts, [channel[b]]), ends.clamp) for b in range(blocks)]
    intrinsic = vpdpbusd(width // 4)
    pixels = scf.ForOp(zero, _index(ow_n), one)
    with ir.InsertionPoint(pixels.body):
        ow = pixels.induction_variable
        accs = [arith.constant(quarter, ir.DenseElementsAttr.get_splat(quarter, ir.IntegerAttr.get(i32, 0)))
                for _ in range(4)]
        x0 = arith.muli(ow, _index(sw))
        for kh in range(kh_n):
            ih = arith.addi(arith.muli(oh, _index(sh)), _index(kh * dh))
            for q in range(q_n):
                taps = [vector.load(bytes_t, src, [n, ih, arith.addi(x0, _index((4 * q + t) * dw)), c0])
                        for t in range(4)]
                for k, quad in enumerate(_quads(taps, width)):
                    accs[k] = llvm.call_intrinsic(quarter, intrinsic, [accs[k], quad, weights[kh, q, k]], [], [])
        flat = width // 4
        for b in range(blocks):
            pick = [4 * b + j for j in range(4)] + [flat + 4 * b + j for j in range(4)]
            low, high = vector.shuffle(accs[0], accs[1], pick), vector.shuffle(accs[2], accs[3], pick)
            sums = arith.addi(vector.shuffle(low, high, list(range(16))), biases[b])
            vector.store(scales[b](sums), ends.dest, [n, oh, ow, channel[b]])
        scf.YieldOp([])


def make_depthwise_kernel(op: ir.Operation, threads: int = 1, parallel_flops: int = 0) -> bool:
    """Replace the tagged depthwise generic ``op`` and its bias broadcast and requantization by the loops of
    :func:`_depthwise_row` over the output rows (the tasks of an scf.forall on several threads, as
    :func:`make_kernel`). Returns False (the generic stays) when its ends are not the lowering's."""
    ends = epilogue_of(op)
    if ends is None:
        return False
    src, filt = op.operands[0], op.operands[1]
    geometry = list(ir.DenseI64ArrayAttr(op.attributes[INT8_DEPTHWISE_ATTR]))
    n_n, oh_n, ow_n, c = ir.MemRefType(op.operands[2].type).shape
    kh_n, q_n = ir.MemRefType(filt.type).shape[:2]
    flops = 2 * n_n * oh_n * ow_n * c * kh_n * q_n * 4
    tasks = min(threads, n_n * oh_n) if flops >= parallel_flops else 1
    with ir.InsertionPoint(op), op.location:
        shape = ir.MemRefType(filt.type).shape
        flat = memref.collapse_shape(ir.MemRefType.get([shape[0], shape[1], shape[3] * shape[4]],
                                                       ir.MemRefType(filt.type).element_type),
                                     filt, [[0], [1], [2, 3, 4]])
        _over_rows(n_n, oh_n, tasks, lambda n, oh: _depthwise_row(src, flat, n, oh, ow_n, c, geometry, ends))
    op.erase()
    for done in ends.replaced:
        done.erase()
    return True


def _over_rows(n_n: int, oh_n: int, tasks: int, row) -> None:
    """``row(n, oh)`` for every output row: two loops, or with ``tasks`` above 1 an scf.forall of that many runs
    of consecutive rows."""
    zero, one = _index(0), _index(1)
    if tasks <= 1:
        outer = scf.ForOp(zero, _index(n_n), one)
        with ir.InsertionPoint(outer.body):
            inner = scf.ForOp(zero, _index(oh_n), one)
            with ir.InsertionPoint(inner.body):
                row(outer.induction_variable, inner.induction_variable)
                scf.YieldOp([])
            scf.YieldOp([])
        return
    total = n_n * oh_n
    run = -(-total // tasks)
    forall = scf.ForallOp([0], [-(-total // run)], [1])
    with ir.InsertionPoint(forall.body):
        first = arith.muli(forall.induction_variables[0], _index(run))
        last = arith.minui(arith.addi(first, _index(run)), _index(total))
        rows = scf.ForOp(first, last, one)
        with ir.InsertionPoint(rows.body):
            r = rows.induction_variable
            row(arith.divui(r, _index(oh_n)), arith.remui(r, _index(oh_n)))
            scf.YieldOp([])
        scf.InParallelOp()


def matches_depthwise(op: ir.Operation, dot: Dot) -> bool:
    """Whether ``op`` is a depthwise int8 convolution on a filter in tap quads that ``dot`` runs (zmm VNNI)."""
    return op.name == "linalg.generic" and INT8_DEPTHWISE_ATTR in op.attributes and dot.group == 4 \
        and dot.lanes == 16


def matches(op: ir.Operation, dot: Dot) -> bool:
    """Whether ``op`` is a packed int8 convolution whose filter layout suits ``dot`` (its grouping, at most its
    widest register): a layout packed for another target stays the generic that computes it anyway."""
    if op.name != "linalg.generic" or INT8_CONV_ATTR not in op.attributes:
        return False
    filt = ir.MemRefType(op.operands[1].type)
    group = 4 if str(filt.element_type) == "i8" else 2
    return group == dot.group and filt.shape[4] <= dot.lanes and filt.shape[4] in dot.intrinsics
