"""Attention (opsets 23 to 25), RotaryEmbedding and LinearAttention (opset 27) and ai.onnx.preview's FlexAttention,
composed from existing nodes. Attention is batch matmuls, a softmax and the masks as one additive bias.

Q, K and V are [batch, heads, sequence, head_size], or [batch, sequence, heads x head_size] with the numbers of heads
given as attributes. The scores are (Q sqrt(scale)) (K sqrt(scale))^T (the spec's order of the scaling), softcapped
(``softcap tanh(scores / softcap)``) when asked, plus the bias, softmaxed over the keys and multiplied by V. The
bias adds up, each as 0 where a key is attended and -inf where it is not:

- ``attn_mask``: a boolean mask (True attends) or a float bias, right-aligned to [batch, heads, q, kv]; shorter than
  the keys along its last axis, it is padded with False / -inf;
- ``is_causal``: key j is attended from query i iff j <= i + offset, the offset being the past keys' length (or,
  with ``nonpad_kv_seqlen``, that batch's valid keys minus the queries);
- ``left_window_size`` / ``right_window_size`` (opset 25): keys farther than that before / after the query's
  position are masked;
- ``nonpad_kv_seqlen`` (opset 24): the keys past each batch's length are masked.

A query whose bias masks every key gets zero probabilities (and Y = 0), as the spec says, rather than NaN. Past keys
and values are concatenated before K and V (``present_key`` / ``present_value``); grouped-query attention repeats each
K/V head for its group of query heads. ``qk_matmul_output`` gives the scores after the softcap (modes 0 and 1), with
the bias (2) or after the softmax (3).
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from onnx import AttributeProto, TensorProto

from ...dialects import glowgraph as gg
from ..builder import Const, NodeContext, Tensor, dtype_of, onnx_op, shape_of
from ..model import fmt_shape
from .control import UNROLL_MAX, _for_loop, _import
from .core import _concat_all, _expand, _reshape, _splat, _transpose, matmul_of
from .datamove import _box

FLOAT, GRAPH, INT, STRING = AttributeProto.FLOAT, AttributeProto.GRAPH, AttributeProto.INT, AttributeProto.STRING
_F32 = np.dtype(np.float32)
_ATTRS = ("is_causal", "kv_num_heads", "q_num_heads", "qk_matmul_output_mode", "scale", "softcap",
          "softmax_precision")


def _heads_first(ctx: NodeContext, x: Tensor, heads: int | None, what: str) -> Tensor:
    """A 3-D [batch, sequence, heads x size] input as [batch, heads, sequence, size]; a 4-D one as it is."""
    shape = shape_of(x)
    if len(shape) == 4:
        return x
    if heads is None or heads <= 0 or shape[2] % heads:
        raise ctx.error(f"{what} of shape {fmt_shape(shape)} needs q_num_heads and kv_num_heads that divide its "
                        "hidden size")
    return _transpose(ctx, _reshape(ctx, x, [shape[0], shape[1], heads, shape[2] // heads]), [0, 2, 1, 3])


def _full(ctx: NodeContext, shape: list[int], value: float) -> ir.Value:
    return ctx.value(ctx.const(np.broadcast_to(np.float32(value), shape), name=f"{ctx.label}.fill"))


def _bias(ctx: NodeContext, allowed: ir.Value) -> ir.Value:
    """0 where ``allowed`` (a bool tensor) holds, -inf elsewhere."""
    shape = shape_of(allowed)
    return gg.select(allowed, _full(ctx, shape, 0.0), _full(ctx, shape, -np.inf))


def _mask_bias(ctx: NodeContext, mask: Tensor, kv: int) -> ir.Value:
    """The attn_mask as an additive bias, padded to ``kv`` keys."""
    if dtype_of(mask) == np.bool_:
        m = _bias(ctx, ctx.value(mask))
    else:
        ctx.check_element_type(mask, "attn_mask", (_F32, np.dtype(np.bool_)))
        m = ctx.value(mask)
    shape = shape_of(m)
    if not shape or shape[-1] > kv:
        raise ctx.error(f"attn_mask of shape {fmt_shape(shape)} does not fit {kv} keys")
    if shape[-1] < kv:
        m = ctx.value(_concat_all(ctx, [m, _full(ctx, [*shape[:-1], kv - shape[-1]], -np.inf)], len(shape) - 1))
    return m


def _positions(ctx: NodeContext, q: int, kv: int, lengths: Tensor | None, batch: int) -> Tensor:
    """``offset + i - j`` for query i and key j, [q, kv] with a known offset (0), or [batch, 1, q, kv] with the
    per-batch offset ``nonpad_kv_seqlen[b] - q`` (int64)."""
    diff = (np.arange(q).reshape(q, 1) - np.arange(kv).reshape(1, kv)).astype(np.int64)
    if lengths is None:
        return ctx.const(diff)
    n = _expand(ctx, _reshape(ctx, lengths, [batch, 1, 1, 1]), [batch, 1, q, kv])
    return gg.add(n, ctx.value(ctx.const(np.broadcast_to(diff - q, [batch, 1, q, kv]).copy())))


@onnx_op("Attention", since=23, inputs=(3, 6), outputs=(1, 4), attrs=_ATTRS)
@onnx_op("Attention", since=24, inputs=(3, 7), outputs=(1, 4), attrs=_ATTRS)
@onnx_op("Attention", since=25, inputs=(3, 7), outputs=(1, 4), attrs=(*_ATTRS, "left_window_size", "right_window_size"))
def attention(ctx: NodeContext) -> list[Tensor | None]:
    """softmax((Q sqrt(s)) (K sqrt(s))^T, softcapped, + bias) V (see the module docstring)."""
    q_in, k_in, v_in = (ctx.input(i) for i in range(3))
    for x, what in ((q_in, "Q"), (k_in, "K"), (v_in, "V")):
        ctx.check_element_type(x, what, (_F32,))
    ranks = {len(shape_of(x)) for x in (q_in, k_in, v_in)}
    if ranks not in ({3}, {4}):
        raise ctx.error(f"Q, K and V must all be 3-D or all 4-D, got {fmt_shape(shape_of(q_in))}, "
                        f"{fmt_shape(shape_of(k_in))} and {fmt_shape(shape_of(v_in))}")
    three_d = ranks == {3}
    q_heads, kv_heads = ctx.attr("q_num_heads", INT, None), ctx.attr("kv_num_heads", INT, None)
    q = _heads_first(ctx, q_in, q_heads, "Q")
    k = _heads_first(ctx, k_in, kv_heads, "K")
    v = _heads_first(ctx, v_in, kv_heads, "V")
    batch, hq, sq, _ = shape_of(q)
    past_key, past_value = ctx.optional_input(4), ctx.optional_input(5)
    if (past_key is None) != (past_value is None):
        raise ctx.error("past_key and past_value must be given together")
    lengths = ctx.optional_input(6)
    if lengths is not None and past_key is not None:
        raise ctx.error("nonpad_kv_seqlen cannot be combined with past_key and past_value")
    past = 0
    if past_key is not None:
        past = shape_of(past_key)[2]
        k = _concat_all(ctx, [past_key, k], 2)
        v = _concat_all(ctx, [past_value, v], 2)
    present_k, present_v = k, v
    kv = shape_of(k)[2]
    _check_heads_and_precision(ctx, q, k, v)
    mode = ctx.attr("qk_matmul_output_mode", INT, 0)
    if mode not in (0, 1, 2, 3):
        raise ctx.error(f"attribute 'qk_matmul_output_mode' must be 0 to 3, got {mode}")
    if lengths is not None:
        ctx.check_element_type(lengths, "nonpad_kv_seqlen", (np.dtype(np.int64),))
        if shape_of(lengths) != [batch]:
            raise ctx.error(f"nonpad_kv_seqlen must be [{batch}], got {fmt_shape(shape_of(lengths))}")

    # the bias, [batch, hq, sq, kv]
    full = [batch, hq, sq, kv]
    parts: list[ir.Value] = []
    mask = ctx.optional_input(3)
    if mask is not None:
        parts.append(_mask_bias(ctx, mask, kv))
    left, right = ctx.attr("left_window_size", INT, -1), ctx.attr("right_window_size", INT, -1)
    if ctx.attr("is_causal", INT, 0) or left >= 0 or right >= 0:
        # i + offset - j, the offset being the past's length or the batch's valid keys minus the queries
        diff = _positions(ctx, sq, kv, lengths, batch)
        if isinstance(diff, Const):
            diff = ctx.const(diff.array + past)
        allowed = None
        for bound, sign, on in ((0, 1, bool(ctx.attr("is_causal", INT, 0))), (left, -1, left >= 0),
                                (right, 1, right >= 0)):
            if not on:
                continue
            # causal: j <= i + offset, i.e. -(diff) <= 0; left: diff <= left; right: -(diff) <= right
            side = diff if sign < 0 else (ctx.const(-diff.array) if isinstance(diff, Const) else gg.neg(diff))
            if isinstance(side, Const):
                ok = ctx.const(side.array <= bound)
            else:
                ok = gg.cmp_lte(side, _splat(side, bound))
            allowed = ok if allowed is None else (ctx.const(allowed.array & ok.array) if isinstance(ok, Const)
                                                  and isinstance(allowed, Const)
                                                  else gg.and_(ctx.value(allowed), ctx.value(ok)))
        parts.append(_bias(ctx, ctx.value(allowed)))
    if lengths is not None:
        keys = ctx.const(np.broadcast_to(np.arange(kv, dtype=np.int64), [batch, 1, 1, kv]).copy())
        n = _expand(ctx, _reshape(ctx, lengths, [batch, 1, 1, 1]), [batch, 1, 1, kv])
        parts.append(_bias(ctx, gg.cmp_lt(ctx.value(keys), n)))
    bias = None
    for part in parts:
        if len(shape_of(part)) > 4:
            raise ctx.error(f"attn_mask of rank {len(shape_of(part))} does not broadcast to {fmt_shape(full)}")
        part = _expand(ctx, _reshape(ctx, part, [1] * (4 - len(shape_of(part))) + shape_of(part)), full)
        bias = part if bias is None else gg.add(bias, part)

    k, v = _grouped(ctx, k, hq), _grouped(ctx, v, hq)
    scores = _scores(ctx, q, k)
    softcap = ctx.attr("softcap", FLOAT, 0.0)
    if softcap > 0:
        scores = gg.mul(gg.tanh(gg.div(scores, _splat(scores, softcap))), _splat(scores, softcap))
    qk_output = scores
    with_bias = scores if bias is None else gg.add(scores, bias)
    if mode == 2:
        qk_output = with_bias
    probs = gg.softmax(with_bias, axis=3)
    if bias is not None:  # a query whose every key is masked attends to nothing
        row_max = _expand(ctx, _reshape(ctx, gg.reduce_max(bias, axes=[3]), [batch, hq, sq, 1]), full)
        masked = gg.cmp_eq(row_max, _splat(row_max, -np.inf))
        probs = gg.select(masked, _splat(probs, 0.0), probs)
    if mode == 3:
        qk_output = probs
    y = _weighted(ctx, probs, v)
    if three_d:
        y = _reshape(ctx, _transpose(ctx, y, [0, 2, 1, 3]), [batch, sq, hq * shape_of(y)[3]])
    results: list[Tensor | None] = [y, present_k, present_v, qk_output]
    return [r if ctx.has_output(i) else None for i, r in enumerate(results)][:len(ctx.node.output)]


def _check_heads_and_precision(ctx: NodeContext, q: Tensor, k: Tensor, v: Tensor) -> None:
    """K and V [batch, hk, kv, size] and [batch, hk, kv, dv] fit Q [batch, hq, q, size], hq a multiple of hk; the
    node's softmax_precision is FLOAT or DOUBLE (both computed in float32) if given."""
    batch, hq, _, size = shape_of(q)
    hk = shape_of(k)[1]
    if shape_of(k)[0] != batch or shape_of(k)[3] != size or shape_of(v)[:3] != shape_of(k)[:3] or hq % hk:
        raise ctx.error(f"K {fmt_shape(shape_of(k))} and V {fmt_shape(shape_of(v))} do not fit Q "
                        f"{fmt_shape(shape_of(q))} (heads of Q a multiple of those of K and V)")
    precision = ctx.attr("softmax_precision", INT, None)
    if precision not in (None, TensorProto.FLOAT, TensorProto.DOUBLE):
        raise ctx.unsupported(f"softmax_precision {precision}: only FLOAT and DOUBLE (computed in float32) are "
                              "supported")


def _grouped(ctx: NodeContext, t: Tensor, heads: int) -> Tensor:
    """K or V [batch, hk, kv, size] for ``heads`` query heads (grouped-query attention): each K/V head serves
    heads / hk query heads, in order (h0, h0, h1, h1, ...)."""
    batch, hk, kv, size = shape_of(t)
    if hk == heads:
        return t
    return _reshape(ctx, _expand(ctx, _reshape(ctx, t, [batch, hk, 1, kv, size]), [batch, hk, heads // hk, kv, size]),
                    [batch, heads, kv, size])


def _scores(ctx: NodeContext, q: Tensor, k: Tensor) -> ir.Value:
    """(Q sqrt(scale)) (K sqrt(scale))^T, [batch, heads, q, kv], with the node's ``scale`` (default 1 / sqrt of the
    head size; its square root taken in float32, as the spec's reference does)."""
    batch, hq, sq, size = shape_of(q)
    kv = shape_of(k)[2]
    scale = ctx.attr("scale", FLOAT, None)
    root = float(np.sqrt(np.float32(1.0 / np.sqrt(size) if scale is None else scale)))
    qs = gg.mul(ctx.value(q), _splat(ctx.value(q), root))
    ks = gg.mul(ctx.value(k), _splat(ctx.value(k), root))
    kt = _transpose(ctx, ks, [0, 1, 3, 2])
    scores = gg.batch_matmul(ctx.value(_reshape(ctx, qs, [batch * hq, sq, size])),
                             ctx.value(_reshape(ctx, kt, [batch * hq, size, kv])))
    return ctx.value(_reshape(ctx, scores, [batch, hq, sq, kv]))


def _weighted(ctx: NodeContext, probs: ir.Value, v: Tensor) -> Tensor:
    """probs [batch, heads, q, kv] times V [batch, heads, kv, dv]: [batch, heads, q, dv]."""
    batch, hq, sq, kv = shape_of(probs)
    dv = shape_of(v)[3]
    y = gg.batch_matmul(ctx.value(_reshape(ctx, probs, [batch * hq, sq, kv])),
                        ctx.value(_reshape(ctx, v, [batch * hq, kv, dv])))
    return _reshape(ctx, y, [batch, hq, sq, dv])


@onnx_op("FlexAttention", since=1, domain="ai.onnx.preview", inputs=(3, 3),
         attrs=("prob_mod", "scale", "score_mod", "softmax_precision"))
def flex_attention(ctx: NodeContext) -> Tensor:
    """softmax(score_mod((Q sqrt(scale)) (K sqrt(scale))^T)), then prob_mod, times V (ai.onnx.preview): Q, K and V
    4-D, grouped-query attention as in Attention; ``score_mod`` and ``prob_mod`` are subgraphs of one tensor in and
    one of the same type out, imported in place on the scores and on the probabilities."""
    q, k, v = (ctx.input(i) for i in range(3))
    for x, what in ((q, "Q"), (k, "K"), (v, "V")):
        ctx.check_element_type(x, what, (_F32,))
        if len(shape_of(x)) != 4:
            raise ctx.error(f"{what} must be 4-D [batch, heads, sequence, head size], got {fmt_shape(shape_of(x))}")
    hq = shape_of(q)[1]
    _check_heads_and_precision(ctx, q, k, v)
    scores = _modified(ctx, "score_mod", _scores(ctx, q, _grouped(ctx, k, hq)))
    probs = _modified(ctx, "prob_mod", gg.softmax(scores, axis=3))
    return _weighted(ctx, probs, _grouped(ctx, v, hq))


def _modified(ctx: NodeContext, name: str, x: ir.Value) -> ir.Value:
    """``x`` through the subgraph attribute ``name`` if the node has it: one input, one output of ``x``'s type."""
    graph = ctx.attr(name, GRAPH, None)
    if graph is None:
        return x
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise ctx.error(f"{name} must have one input and one output, got {len(graph.input)} and "
                        f"{len(graph.output)}")
    (out,) = _import(ctx, graph, {graph.input[0].name: x})
    out = ctx.value(out)
    if out.type != x.type:
        raise ctx.error(f"{name} must keep its input's shape and type: {fmt_shape(shape_of(x))} {dtype_of(x)} in, "
                        f"{fmt_shape(shape_of(out))} {dtype_of(out)} out")
    return out


@onnx_op("RotaryEmbedding", since=23, inputs=(3, 4), attrs=("interleaved", "num_heads", "rotary_embedding_dim"))
def rotary_embedding(ctx: NodeContext) -> Tensor:
    """The first ``rotary_embedding_dim`` (default: all) features of each head rotated by the cos and sin caches at
    each position: (x1, x2) -> (cos x1 - sin x2, sin x1 + cos x2), the pairs being the two halves of those features,
    or their even and odd ones (``interleaved``); the caches are [positions, dim / 2] read at ``position_ids``, or
    already [batch, sequence, dim / 2]. X is [batch, heads, sequence, size], or [batch, sequence, heads x size]."""
    x = ctx.input(0)
    ctx.check_element_type(x, "input", (_F32,))
    shape = shape_of(x)
    if len(shape) == 4:
        batch, heads, seq, size = shape
        work = _transpose(ctx, x, [0, 2, 1, 3])
    elif len(shape) == 3:
        heads = ctx.attr("num_heads", INT, 0)
        if heads <= 0 or shape[2] % heads:
            raise ctx.error(f"a 3-D input {fmt_shape(shape)} needs num_heads that divides its hidden size")
        batch, seq, size = shape[0], shape[1], shape[2] // heads
        work = _reshape(ctx, x, [batch, seq, heads, size])
    else:
        raise ctx.error(f"the input must be 3-D or 4-D, got {fmt_shape(shape)}")
    dim = ctx.attr("rotary_embedding_dim", INT, 0) or size
    if dim % 2 or dim > size:
        raise ctx.error(f"rotary_embedding_dim {dim} must be even and at most the head size {size}")
    half = dim // 2
    caches = []
    positions = ctx.optional_input(3)
    for i, what in ((1, "cos_cache"), (2, "sin_cache")):
        cache = ctx.input(i)
        ctx.check_element_type(cache, what, (_F32,))
        if positions is not None:
            cache = gg.gather(ctx.value(cache), ctx.value(positions), axis=0)
        if shape_of(cache) != [batch, seq, half]:
            raise ctx.error(f"{what} gives {fmt_shape(shape_of(cache))} at the positions, not [{batch}, {seq}, "
                            f"{half}] (rotary_embedding_dim / 2 per position)")
        caches.append(ctx.value(_expand(ctx, _reshape(ctx, cache, [batch, seq, 1, half]), [batch, seq, heads, half])))
    cos, sin = caches
    four = [batch, seq, heads]
    if ctx.attr("interleaved", INT, 0):
        x1, x2 = (ctx.value(_box(ctx, work, [0, 0, 0, k], [*four, half], [1, 1, 1, 2])) for k in (0, 1))
    else:
        x1, x2 = (ctx.value(_box(ctx, work, [0, 0, 0, k * half], [*four, half])) for k in (0, 1))
    real = gg.sub(gg.mul(cos, x1), gg.mul(sin, x2))
    imag = gg.add(gg.mul(sin, x1), gg.mul(cos, x2))
    if ctx.attr("interleaved", INT, 0):
        rotated = _reshape(ctx, _concat_all(ctx, [_reshape(ctx, real, [*four, half, 1]),
                                                  _reshape(ctx, imag, [*four, half, 1])], 4), [*four, dim])
    else:
        rotated = _concat_all(ctx, [real, imag], 3)
    if dim < size:
        rotated = _concat_all(ctx, [rotated, _box(ctx, work, [0, 0, 0, dim], [*four, size - dim])], 3)
    if len(shape) == 3:
        return _reshape(ctx, rotated, shape)
    return _transpose(ctx, rotated, [0, 2, 1, 3])


# --------------------------------------------------------------------------- LinearAttention

_RULES = ("linear", "gated", "delta", "gated_delta")


def _time_first(ctx: NodeContext, x: Tensor, heads: int, what: str) -> Tensor:
    """[B, T, H D] as [T, B, H, D] (time first: a loop reads one step at a time)."""
    b, t, hd = shape_of(x)
    if hd % heads:
        raise ctx.error(f"{what}'s last dim {hd} is not a multiple of its {heads} heads")
    return _transpose(ctx, _reshape(ctx, x, [b, t, heads, hd // heads]), [1, 0, 2, 3])


@onnx_op("LinearAttention", since=27, inputs=(3, 6), outputs=(1, 2),
         attrs=("chunk_size", "kv_num_heads", "q_num_heads", "scale", "update_rule"))
def linear_attention(ctx: NodeContext) -> list[Tensor]:
    """The recurrent state S [B, H_kv, d_k, d_v] (past_state, else zeros) updated token by token,
    S = exp(g_t) S (gated rules; decay g per head or per key dim) + k_t (beta_t (v_t - (exp(g_t) S)^T k_t)) (delta
    rules; v_t itself otherwise), and o_t = scale q_t^T S read by each query head from its KV head's state (grouped
    query heads share one). A loop over the tokens in the graph (unrolled up to a few); ``chunk_size`` is a hint
    for chunked GPU kernels that does not change the result."""
    query, key, value = (ctx.input(i) for i in range(3))
    for x, what in ((query, "query"), (key, "key"), (value, "value")):
        ctx.check_element_type(x, what, (_F32,))
        if len(shape_of(x)) != 3:
            raise ctx.error(f"{what} must be [B, T, H D], got {fmt_shape(shape_of(x))}")
    hq, hkv = ctx.attr("q_num_heads", INT, 0), ctx.attr("kv_num_heads", INT, 0)
    if hq <= 0 or hkv <= 0 or hq % hkv:
        raise ctx.error(f"q_num_heads ({hq}) must be a positive multiple of kv_num_heads ({hkv})")
    rule = ctx.attr("update_rule", STRING, b"gated_delta").decode(errors="replace")
    if rule not in _RULES:
        raise ctx.error(f"attribute 'update_rule' must be one of {', '.join(_RULES)}, got '{rule}'")
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    past, decay, beta = (ctx.optional_input(i) for i in (3, 4, 5))
    if gating != (decay is not None) or delta != (beta is not None):
        raise ctx.error(f"update rule '{rule}' {'takes' if gating else 'takes no'} decay and "
                        f"{'takes' if delta else 'takes no'} beta")
    b, t, _ = shape_of(query)
    q, k, v = _time_first(ctx, query, hq, "query"), _time_first(ctx, key, hkv, "key"), \
        _time_first(ctx, value, hkv, "value")
    dk, dv = shape_of(q)[-1], shape_of(v)[-1]
    if shape_of(k)[-1] != dk or shape_of(k)[:2] != [t, b] or shape_of(v)[:2] != [t, b]:
        raise ctx.error(f"query, key and value {[fmt_shape(shape_of(x)) for x in (query, key, value)]} must share "
                        "B and T and the key size")
    state_shape = [b, hkv, dk, dv]
    scale = ctx.attr("scale", FLOAT, 0.0) or 1.0 / float(np.sqrt(dk))
    streams = [q, k, v]
    if gating:
        last = shape_of(decay)[-1] if len(shape_of(decay)) == 3 else -1
        if shape_of(decay)[:2] != [b, t] or last not in (hkv, hkv * dk):
            raise ctx.error(f"decay {fmt_shape(shape_of(decay))} must be [B, T, H_kv] or [B, T, H_kv d_k]")
        streams.append(gg.exp(ctx.value(_time_first(ctx, decay, hkv, "decay"))))  # [T, B, H_kv, 1 or d_k]
    if delta:
        last = shape_of(beta)[-1] if len(shape_of(beta)) == 3 else -1
        if shape_of(beta)[:2] != [b, t] or last not in (hkv, 1):
            raise ctx.error(f"beta {fmt_shape(shape_of(beta))} must be [B, T, H_kv] or [B, T, 1]")
        rate = _transpose(ctx, _reshape(ctx, beta, [b, t, last, 1]), [1, 0, 2, 3])
        streams.append(_expand(ctx, rate, [t, b, hkv, 1]))
    if past is not None and shape_of(past) != state_shape:
        raise ctx.error(f"past_state {fmt_shape(shape_of(past))} must be {fmt_shape(state_shape)}")
    state = ctx.value(past if past is not None else ctx.const(np.zeros(state_shape, np.float32),
                                                              name=f"{ctx.label}.state"))
    group = hq // hkv

    def token(s: ir.Value, x: list[ir.Value]) -> tuple[ir.Value, ir.Value]:
        """One token's (new state, output [B, H_q, d_v]) from its q, k, v (and exp(g), beta) slices."""
        q_t, k_t, v_t = x[0], x[1], x[2]
        rest = x[3:]
        if gating:
            growth = rest.pop(0)
            s = gg.mul(s, _expand(ctx, _reshape(ctx, growth, [b, hkv, shape_of(growth)[-1], 1]), state_shape))
        if delta:
            rate = rest.pop(0)  # [B, H_kv, 1]
            retrieved = _reshape(ctx, matmul_of(ctx, _reshape(ctx, k_t, [b, hkv, 1, dk]), s), [b, hkv, dv])
            v_t = gg.mul(ctx.value(_expand(ctx, rate, [b, hkv, dv])), gg.sub(v_t, ctx.value(retrieved)))
        outer = gg.mul(_expand(ctx, _reshape(ctx, k_t, [b, hkv, dk, 1]), state_shape),
                       _expand(ctx, _reshape(ctx, v_t, [b, hkv, 1, dv]), state_shape))
        s = gg.add(s, outer)
        read = s if group == 1 else ctx.value(_reshape(ctx, _expand(ctx, _reshape(ctx, s, [b, hkv, 1, dk, dv]),
                                                                     [b, hkv, group, dk, dv]), [b, hq, dk, dv]))
        o_t = _reshape(ctx, matmul_of(ctx, _reshape(ctx, q_t, [b, hq, 1, dk]), read), [b, hq, dv])
        return s, gg.mul(ctx.value(o_t), _splat(ctx.value(o_t), scale))

    fronts = [ctx.value(x) for x in streams]
    if t <= UNROLL_MAX:
        outputs = []
        for i in range(t):
            sliced = [ctx.value(_reshape(ctx, _box(ctx, x, [i, 0, 0, 0], [1, *shape_of(x)[1:]]), shape_of(x)[1:]))
                      for x in fronts]
            state, o_t = token(state, sliced)
            outputs.append(_reshape(ctx, o_t, [1, b, hq, dv]))
        stacked = _concat_all(ctx, outputs, axis=0)
    else:
        def step(i: ir.Value, args: list[ir.Value]) -> tuple[list[ir.Value], list[ir.Value]]:
            new, o_t = token(args[0], [gg.step_slice(x, i) for x in fronts])
            return [new], [ctx.value(o_t)]

        (state,), (stacked,) = _for_loop(ctx, t, [state], step, [False])
    output = _reshape(ctx, _transpose(ctx, stacked, [1, 0, 2, 3]), [b, t, hq * dv])
    return [output, state]
