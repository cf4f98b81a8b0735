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
  with ``io-arguments`` (what the in-process runtime calls) the inputs and outputs are arguments of their own after
  ``(constantWeight, activations)`` instead, so that the caller's arrays are used where they are; a program that
  writes one of its inputs is then an error;
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
                                 (weights packed in panels [N/P, K, P]: the generic of :func:`packed_matmul`)
  matmul(d, a, b)             -> linalg.fill(0 -> d); linalg.matmul(a, b -> d)
  batched_add(d, x, s)        -> linalg.generic d[n, i..] = x[n, i..] + s[i..]
  element_*(d, a, b)          -> linalg.generic d[i] = a[i] op b[i] (arith float ops, or signed integer ops)
  relu/sigmoid/tanh(d, s)     -> linalg.generic d[i] = f(s[i])
  transpose(d, s){shuffle}    -> linalg.transpose(s -> d, permutation = shuffle) over the fewest dims; onto fewer than
                                 4 innermost elements from the input's innermost dim (NCHW -> NHWC of an image):
                                 linalg.generic d[i] = s[perm(i)] over the buffers as they are
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
  scatter_nd(d, data, idx, u){reduction}
                              -> linalg.copy(data -> d); scf.for loops over idx's rows (in order: updates may
                                 collide), each row's k entries made non-negative and checked inside their dims
                                 (scf.if: outside writes nothing), then d[row, r..] = u[j, r..] (or combined)
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

The lowerings live by family, each module with its rows of the table: ``basic`` (buffers, copies, matmul, broadcasts,
transposes, binary arithmetic, activations), ``cnn`` (convolution, pooling, LRN, pad), ``arithmetic`` (elementwise
math, comparisons, logic, casts), ``reductions`` (reductions, softmax, layer_norm, batch_matmul, arg_max),
``datamove`` (extract, insert, gather, scatter_nd); ``common`` holds what they share and ``program`` the pass that
merges the tables (:data:`LOWERINGS`, :data:`SCRATCH`) and rewrites each program.

Legality is declared: a glowir op with no row, or one left anywhere after the rewrite (outside the entry block of
a program, see :func:`.ir_program.is_program`), is an error naming the op.
"""

from __future__ import annotations

from .basic import packed_matmul
from .cnn import BLOCKED_CONV_ATTR, SHIFTED_POSITIONS, blocked_conv, channel_slice, lower_conv2d
from .common import (
    ALIGNMENT,
    BOOL_STORAGE_BITS,
    INT8_CONV_ATTR,
    INT8_DEPTHWISE_ATTR,
    INT8_REQUANT_ATTR,
    PACKED_MATMUL_ATTR,
    PREFIX,
    SPREAD_ATTR,
    Operands,
    elementwise,
    index_constant,
    row_major_strides,
    storage_type,
)
from .program import LOWERINGS, SCRATCH, ConvertIRToLinalg, check_legal, convert_program, scratch_types

__all__ = ["ALIGNMENT", "BLOCKED_CONV_ATTR", "BOOL_STORAGE_BITS", "INT8_CONV_ATTR", "INT8_DEPTHWISE_ATTR",
           "INT8_REQUANT_ATTR", "LOWERINGS", "PACKED_MATMUL_ATTR", "PREFIX", "SCRATCH", "SHIFTED_POSITIONS",
           "SPREAD_ATTR", "ConvertIRToLinalg", "Operands", "blocked_conv", "channel_slice", "check_legal",
           "convert_program", "elementwise", "index_constant", "lower_conv2d", "packed_matmul", "row_major_strides",
           "scratch_types", "storage_type"]
