"""Recurrent layers: LSTM, GRU and RNN, as a loop over their time steps; and CausalConvWithState, the stateful
causal convolution of state-space models (its carry in and out, no loop).

Where the recurrence lives: each node becomes, per direction, one fully_connected that projects the inputs of every
time step at once ([T x B, I] x [I, gates x H], both biases folded in: the GEMM that carries most of the work), then
a loop over the steps (``scf.for`` in the graph, ``glowir.loop`` after bufferization: :meth:`Layer.recur`) whose body
takes step t of the projection (``step_slice``), multiplies the hidden state by R^T, does the gate arithmetic and
writes h into Y at t (``step_insert``, in place). Glow unrolls its LSTM nodes instead; a loop keeps the code, the
compile time and the instruction cache footprint the same whatever the sequence length, and every step runs the same
kernels. A layer of one step, or with sequence lengths shorter than the input (each step then has its own masks),
is unrolled.

Supported: every direction (forward, reverse, bidirectional), layout 0 and 1, initial_h / initial_c, peepholes,
``clip``, ``input_forget``, GRU's ``linear_before_reset``, the activations attributes with their alpha and beta,
every output optional, and ``sequence_lens`` given as a constant: past a sequence's end a step leaves the state as
it is and writes zeros to Y (as onnxruntime does), so a forward direction keeps the state of its last step, and a
reverse one, whose steps past the end come first, starts from the initial state at the sequence's last step. The
weights may be inputs computed at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import arith, scf
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ..builder import NodeContext, Tensor, onnx_op, shape_of
from ..model import fmt_shape
from .cnn import _float32
from .core import _concat_all, _expand, _reshape, _splat, _transpose
from .datamove import _box

FLOAT, INT, STRING, FLOATS, STRINGS = (AttributeProto.FLOAT, AttributeProto.INT, AttributeProto.STRING,
                                       AttributeProto.FLOATS, AttributeProto.STRINGS)
DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}
#: one step of a direction: (x_t, states) -> new states, h first
Cell = Callable[[ir.Value, list[ir.Value]], list[ir.Value]]


# --------------------------------------------------------------------------- activations


def _activation(ctx: NodeContext, name: str, alpha: float | None, beta: float | None) -> Callable[[ir.Value], ir.Value]:
    """The activation function ``name`` of the spec's list, with its alpha and beta (or their defaults)."""
    def scaled(scale: float, x: ir.Value) -> ir.Value:
        return gg.mul(x, _splat(x, scale))

    table: dict[str, Callable[[ir.Value], ir.Value]] = {
        "Sigmoid": gg.sigmoid,
        "Tanh": gg.tanh,
        "Relu": gg.relu,
        "Softsign": lambda x: gg.div(x, gg.add(_splat(x, 1.0), gg.abs_(x))),
        "Softplus": gg.softplus,
        "LeakyRelu": lambda x: gg.leaky_relu(x, alpha=0.01 if alpha is None else alpha),
        "Elu": lambda x: gg.elu(x, alpha=1.0 if alpha is None else alpha),
        "HardSigmoid": lambda x: gg.hard_sigmoid(x, alpha=0.2 if alpha is None else alpha,
                                                 beta=0.5 if beta is None else beta),
        "Affine": lambda x: gg.add(scaled(1.0 if alpha is None else alpha, x), _splat(x, 0.0 if beta is None else beta)),
        "ScaledTanh": lambda x: scaled(1.0 if alpha is None else alpha, gg.tanh(scaled(1.0 if beta is None else beta, x))),
        "ThresholdedRelu": lambda x: gg.select(gg.cmp_lt(_splat(x, 1.0 if alpha is None else alpha), x), x,
                                               _splat(x, 0.0)),
    }
    fn = table.get(name)
    if fn is None:
        raise ctx.unsupported(f"activation '{name}' is not supported (supported: {', '.join(sorted(table))})")
    return fn


#: activations that read alpha, and beta, from the activation_alpha / activation_beta lists
_TAKES_ALPHA = ("LeakyRelu", "Elu", "HardSigmoid", "Affine", "ScaledTanh", "ThresholdedRelu")
_TAKES_BETA = ("HardSigmoid", "Affine", "ScaledTanh")


def _activations(ctx: NodeContext, defaults: Sequence[str], directions: int) -> list[list[Callable]]:
    """Per direction, the node's activation functions (its ``activations`` attribute or the defaults)."""
    names = [a.decode() if isinstance(a, bytes) else a for a in ctx.attr("activations", STRINGS, [])]
    if not names:
        names = list(defaults) * directions
    if len(names) != len(defaults) * directions:
        raise ctx.error(f"attribute 'activations' must name {len(defaults) * directions} functions "
                        f"({len(defaults)} per direction), got {len(names)}")
    alphas = list(ctx.attr("activation_alpha", FLOATS, []))
    betas = list(ctx.attr("activation_beta", FLOATS, []))
    found = []
    for name in names:
        alpha = alphas.pop(0) if name in _TAKES_ALPHA and alphas else None
        beta = betas.pop(0) if name in _TAKES_BETA and betas else None
        found.append(_activation(ctx, name, alpha, beta))
    return [found[d * len(defaults):(d + 1) * len(defaults)] for d in range(directions)]


# --------------------------------------------------------------------------- shared


class Layer:
    """What every recurrent node reads: its inputs in time-major layout, per-direction weights and states."""

    def __init__(self, ctx: NodeContext, gates: int, defaults: Sequence[str], states: int):
        self.ctx = ctx
        x = ctx.input(0)
        ctx.check_element_type(x, "X", (np.dtype(np.float32),))
        if len(shape_of(x)) != 3:
            raise ctx.error(f"X must be 3-D, got {fmt_shape(shape_of(x))}")
        self.layout = ctx.attr("layout", INT, 0)
        if self.layout not in (0, 1):
            raise ctx.error(f"attribute 'layout' must be 0 or 1, got {self.layout}")
        self.x = _transpose(ctx, x, [1, 0, 2]) if self.layout else x  # [T, B, I]
        self.steps, self.batch, self.inputs = shape_of(self.x)
        direction = ctx.attr("direction", STRING, b"forward").decode(errors="replace")
        if direction not in DIRECTIONS:
            raise ctx.error(f"attribute 'direction' must be forward, reverse or bidirectional, got '{direction}'")
        self.direction, self.directions = direction, DIRECTIONS[direction]
        w, r = ctx.input(1), ctx.input(2)
        hidden = shape_of(r)[-1] if len(shape_of(r)) == 3 else 0
        self.hidden = ctx.attr("hidden_size", INT, hidden)
        h, d = self.hidden, self.directions
        for t, what, want in ((w, "W", [d, gates * h, self.inputs]), (r, "R", [d, gates * h, h])):
            ctx.check_element_type(t, what, (np.dtype(np.float32),))
            if shape_of(t) != want:
                raise ctx.error(f"{what} must have shape {fmt_shape(want)} (directions x {gates} gates x "
                                f"hidden_size, ...), got {fmt_shape(shape_of(t))}")
        self.w, self.r, self.gates = w, r, gates
        self.b = self._optional(3, "B", [d, 2 * gates * h])
        self.lengths = self._sequence_lens()
        # initial states are [directions, batch, hidden] ([batch, directions, hidden] in layout 1)
        state = [self.batch, d, h] if self.layout else [d, self.batch, h]
        self.initial = [self._optional(5 + k, name, state) for k, name in enumerate(("initial_h", "initial_c")[:states])]
        if self.layout:
            self.initial = [None if t is None else _transpose(ctx, t, [1, 0, 2]) for t in self.initial]
        self.activations = _activations(ctx, defaults, d)
        clip = ctx.attr("clip", FLOAT, None)
        if clip is not None and not clip > 0:
            raise ctx.error(f"attribute 'clip' must be positive, got {clip}")
        self.clip = clip

    def _optional(self, i: int, what: str, shape: list[int]) -> Tensor | None:
        t = self.ctx.optional_input(i)
        if t is None:
            return None
        self.ctx.check_element_type(t, what, (np.dtype(np.float32),))
        if shape_of(t) != shape:
            raise self.ctx.error(f"{what} must have shape {fmt_shape(shape)}, got {fmt_shape(shape_of(t))}")
        return t

    def _sequence_lens(self) -> np.ndarray | None:
        """The constant sequence lengths when some is shorter than the input (None: all full)."""
        if self.ctx.optional_input(4) is None:
            return None
        lengths = self.ctx.constant_input(4, "sequence_lens").reshape(-1).astype(np.int64)
        if lengths.shape != (self.batch,) or (lengths < 1).any() or (lengths > self.steps).any():
            raise self.ctx.error(f"sequence_lens {lengths.tolist()} must give one length in [1, {self.steps}] per "
                                 f"batch entry ({self.batch})")
        if (lengths == self.steps).all():
            return None
        return lengths

    # the pieces of a direction

    def weights(self, t: Tensor, d: int) -> Tensor:
        """Direction ``d`` of a [directions, rows, cols] tensor, transposed to [cols, rows] for ``x @ w``."""
        rows, cols = shape_of(t)[1:]
        one = _reshape(self.ctx, _box(self.ctx, t, [d, 0, 0], [1, rows, cols]), [rows, cols])
        return _transpose(self.ctx, one, [1, 0])

    def bias(self, d: int, part: int) -> Tensor | None:
        """Wb (part 0) or Rb (part 1) of direction ``d``, [gates x hidden], or None without B."""
        if self.b is None:
            return None
        n = self.gates * self.hidden
        return _reshape(self.ctx, _box(self.ctx, self.b, [d, part * n], [1, n]), [n])

    def state(self, k: int, d: int) -> ir.Value:
        """Initial state ``k`` (0: h, 1: c) of direction ``d``: [batch, hidden], zeros when not given."""
        t = self.initial[k] if k < len(self.initial) else None
        shape = [self.batch, self.hidden]
        if t is None:
            return self.ctx.value(self.ctx.const(np.zeros(shape, np.float32), name=f"{self.ctx.label}.zero_state"))
        return self.ctx.value(_reshape(self.ctx, _box(self.ctx, t, [d, 0, 0], [1, *shape]), shape))

    def projected(self, d: int, bias: Tensor | None) -> ir.Value:
        """The input projection of every step at once: [T x B, I] x W^T + bias -> [T, B, gates x hidden]."""
        n = self.gates * self.hidden
        flat = self.ctx.value(_reshape(self.ctx, self.x, [self.steps * self.batch, self.inputs]))
        if bias is None:
            bias = self.ctx.const(np.zeros([n], np.float32), name=f"{self.ctx.label}.zero_bias")
        y = gg.fully_connected(flat, self.ctx.value(self.weights(self.w, d)), self.ctx.value(bias))
        return self.ctx.value(_reshape(self.ctx, y, [self.steps, self.batch, n]))

    def step_input(self, projected: ir.Value, t: int) -> ir.Value:
        n = self.gates * self.hidden
        box = _box(self.ctx, projected, [t, 0, 0], [1, self.batch, n])
        return self.ctx.value(_reshape(self.ctx, box, [self.batch, n]))

    def gate(self, v: ir.Value, k: int) -> ir.Value:
        """Gate ``k``'s columns of a [batch, gates x hidden] value."""
        h = self.hidden
        return self.ctx.value(_box(self.ctx, v, [0, k * h], [self.batch, h]))

    def clipped(self, v: ir.Value) -> ir.Value:
        return v if self.clip is None else gg.clip(v, min=-self.clip, max=self.clip)

    def order(self, d: int) -> list[int]:
        return list(range(self.steps))[::-1] if self.reversed(d) else list(range(self.steps))

    def masked(self, t: int, new: ir.Value, old: ir.Value) -> tuple[ir.Value, ir.Value]:
        """(state, output) at step ``t``: past a sequence's end the state stays and the output is zero."""
        if self.lengths is None or (self.lengths > t).all():
            return new, new
        live = (self.lengths > t).reshape(self.batch, 1)
        mask = _expand(self.ctx, self.ctx.const(live, name=f"{self.ctx.label}.live{t}"), [self.batch, self.hidden])
        return gg.select(mask, new, old), gg.select(mask, new, _splat(new, 0.0))

    def recur(self, d: int, projected: ir.Value, states: list[ir.Value], cell: Cell) -> tuple[ir.Value, list[ir.Value]]:
        """Direction ``d`` over every step: ``cell(x_t, states) -> new states`` (h first; x_t the step's [B, gates x H]
        projection) from ``states``; returns h of every step stacked [T, B, H] and the last states. A loop in the
        graph (one body whatever T), unrolled for one step or with sequence lengths."""
        if self.lengths is not None or self.steps == 1:
            return self._unrolled(d, projected, states, cell)
        ctx, steps = self.ctx, self.steps
        index = ir.IndexType.get()
        zero, one, bound = (arith.constant(index, v) for v in (0, 1, steps))
        stack = ctx.value(ctx.const(np.broadcast_to(np.zeros((), np.float32), [steps, self.batch, self.hidden]),
                                    name=f"{ctx.label}.Y{d}"))
        loop = scf.ForOp(zero, bound, one, [*states, stack])
        with ir.InsertionPoint(loop.body):
            args = list(loop.body.arguments)
            t = gg.iteration(args[0])
            if self.reversed(d):
                t = gg.sub(ctx.value(ctx.const(np.array(steps - 1, np.int64), name=f"{ctx.label}.last")), t)
            new = cell(gg.step_slice(projected, t), args[1:-1])
            scf.YieldOp([*new, gg.step_insert(args[-1], new[0], t)])
        results = list(loop.results)
        return results[-1], results[:-1]

    def _unrolled(self, d: int, projected: ir.Value, states: list[ir.Value], cell: Cell) -> tuple[ir.Value,
                                                                                                  list[ir.Value]]:
        """:meth:`recur` with one copy of the cell per step: past a sequence's end each state stays as it is and
        the step's output is zero."""
        outs: list[ir.Value | None] = [None] * self.steps
        for t in self.order(d):
            new = cell(self.step_input(projected, t), states)
            masked = [self.masked(t, n, o) for n, o in zip(new, states, strict=True)]
            states, outs[t] = [m[0] for m in masked], masked[0][1]
        y = _concat_all(self.ctx, [_reshape(self.ctx, o, [1, self.batch, self.hidden]) for o in outs], 0)
        return self.ctx.value(y), states

    def reversed(self, d: int) -> bool:
        return self.direction == "reverse" or (self.direction == "bidirectional" and d == 1)

    def outputs(self, ys: list[ir.Value], finals: list[list[ir.Value]]) -> list[Tensor | None]:
        """Y [T, D, B, H] (layout 1: [B, T, D, H]) from each direction's [T, B, H] and the final states [D, B, H]
        (layout 1: [B, D, H]), each only when the node uses it."""
        ctx = self.ctx
        used = [bool(name) for name in ctx.node.output]
        results: list[Tensor | None] = []
        per_step = [self.batch, self.hidden]
        if used[0]:
            y = _concat_all(ctx, [_reshape(ctx, ys[d], [self.steps, 1, *per_step]) for d in range(self.directions)],
                            1)
            results.append(_transpose(ctx, y, [2, 0, 1, 3]) if self.layout else y)
        else:
            results.append(None)
        for k in range(len(finals)):
            if k + 1 < len(used) and used[k + 1]:
                last = _concat_all(ctx, [_reshape(ctx, finals[k][d], [1, *per_step]) for d in range(self.directions)],
                                   0)
                results.append(_transpose(ctx, last, [1, 0, 2]) if self.layout else last)
            elif k + 1 < len(ctx.node.output):
                results.append(None)
        return results


# --------------------------------------------------------------------------- the nodes

_RNN_ATTRS = ("activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size")


@onnx_op("LSTM", since=7, inputs=(3, 8), outputs=(0, 3), attrs=(*_RNN_ATTRS, "input_forget"))
@onnx_op("LSTM", since=14, inputs=(3, 8), outputs=(0, 3), attrs=(*_RNN_ATTRS, "input_forget", "layout"))
def lstm(ctx: NodeContext) -> list[Tensor | None]:
    """i = f(Xi + Hi + Pi*c), f = f(Xf + Hf + Pf*c), c~ = g(Xc + Hc), c = f*c + i*c~, o = f(Xo + Ho + Po*c),
    h = o * h(c); gates in the order i, o, f, c (W, R, B), peepholes P [directions, 3 x hidden] in i, o, f."""
    layer = Layer(ctx, 4, ("Sigmoid", "Tanh", "Tanh"), states=2)
    couple = ctx.attr("input_forget", INT, 0)
    if couple not in (0, 1):
        raise ctx.error(f"attribute 'input_forget' must be 0 or 1, got {couple}")
    peepholes = layer._optional(7, "P", [layer.directions, 3 * layer.hidden])
    ys, hs, cs = [], [], []
    for d in range(layer.directions):
        f_act, g_act, h_act = layer.activations[d]
        wb, rb = layer.bias(d, 0), layer.bias(d, 1)
        bias = None if wb is None else gg.add(ctx.value(wb), ctx.value(rb))
        projected = layer.projected(d, bias)
        rt = layer.weights(layer.r, d)
        peep = [None] * 3
        if peepholes is not None:
            for k in range(3):
                row = _reshape(ctx, _box(ctx, peepholes, [d, k * layer.hidden], [1, layer.hidden]), [layer.hidden])
                peep[k] = ctx.value(_expand(ctx, row, [layer.batch, layer.hidden]))
        r_t = ctx.value(rt)

        def cell(x: ir.Value, states: list[ir.Value], f_act=f_act, g_act=g_act, h_act=h_act, r_t=r_t,
                 peep=peep) -> list[ir.Value]:
            h, c = states
            gates = gg.add(x, gg.matmul(h, r_t))

            def pre(gate: int) -> ir.Value:  # gate (i, o, f, c) sliced right before its first use: a slice next
                return layer.clipped(layer.gate(gates, gate))  # to its reader fuses into it (linalg-fuse-elementwise)

            i_pre = pre(0) if peep[0] is None else gg.add(pre(0), gg.mul(peep[0], c))
            i = f_act(i_pre)
            if couple:
                f = gg.sub(_splat(i, 1.0), i)
            else:
                f = f_act(pre(2) if peep[2] is None else gg.add(pre(2), gg.mul(peep[2], c)))
            c_new = gg.add(gg.mul(f, c), gg.mul(i, g_act(pre(3))))
            o_pre = pre(1) if peep[1] is None else gg.add(pre(1), gg.mul(peep[1], c_new))
            return [gg.mul(f_act(o_pre), h_act(c_new)), c_new]

        y, (h, c) = layer.recur(d, projected, [layer.state(0, d), layer.state(1, d)], cell)
        ys.append(y)
        hs.append(h)
        cs.append(c)
    return layer.outputs(ys, [hs, cs])


@onnx_op("GRU", since=7, inputs=(3, 6), outputs=(0, 2), attrs=(*_RNN_ATTRS, "linear_before_reset"))
@onnx_op("GRU", since=14, inputs=(3, 6), outputs=(0, 2), attrs=(*_RNN_ATTRS, "linear_before_reset", "layout"))
def gru(ctx: NodeContext) -> list[Tensor | None]:
    """z = f(Xz + Hz), r = f(Xr + Hr), h~ = g(Xh + (r*h) Rh^T + Rbh) (linear_before_reset: g(Xh + r*(h Rh^T +
    Rbh))), h = (1 - z) * h~ + z * h; gates in the order z, r, h."""
    layer = Layer(ctx, 3, ("Sigmoid", "Tanh"), states=1)
    before = ctx.attr("linear_before_reset", INT, 0)
    if before not in (0, 1):
        raise ctx.error(f"attribute 'linear_before_reset' must be 0 or 1, got {before}")
    hid = layer.hidden
    ys, hs = [], []
    for d in range(layer.directions):
        f_act, g_act = layer.activations[d]
        wb, rb = layer.bias(d, 0), layer.bias(d, 1)
        # Rb of z and r joins the projection; Rbh stays apart (it sits inside the reset with linear_before_reset)
        bias, rbh = None, None
        if wb is not None:
            rb_zr = _box(ctx, rb, [0], [2 * hid])
            zeros = ctx.const(np.zeros([hid], np.float32), name=f"{ctx.label}.zero_rbh")
            bias = gg.add(ctx.value(wb), gg.concat(ctx.value(rb_zr), ctx.value(zeros), axis=0))
            rbh = ctx.value(_expand(ctx, _box(ctx, rb, [2 * hid], [hid]), [layer.batch, hid]))
        projected = layer.projected(d, bias)
        rt = layer.weights(layer.r, d)  # [hidden, 3 x hidden]
        rt_zr = _box(ctx, rt, [0, 0], [hid, 2 * hid])
        rt_h = _box(ctx, rt, [0, 2 * hid], [hid, hid])
        rt_zr, rt_h = ctx.value(rt_zr), ctx.value(rt_h)

        def cell(x: ir.Value, states: list[ir.Value], f_act=f_act, g_act=g_act, rt_zr=rt_zr, rt_h=rt_h,
                 rbh=rbh) -> list[ir.Value]:
            (h,) = states
            zr = gg.add(ctx.value(_box(ctx, x, [0, 0], [layer.batch, 2 * hid])), gg.matmul(h, rt_zr))
            z = f_act(layer.clipped(layer.gate(zr, 0)))
            r = f_act(layer.clipped(layer.gate(zr, 1)))
            xh = layer.gate(x, 2)
            if before:
                recurrent = gg.matmul(h, rt_h)
                if rbh is not None:
                    recurrent = gg.add(recurrent, rbh)
                pre = gg.add(xh, gg.mul(r, recurrent))
            else:
                pre = gg.add(xh, gg.matmul(gg.mul(r, h), rt_h))
                if rbh is not None:
                    pre = gg.add(pre, rbh)
            candidate = g_act(layer.clipped(pre))
            return [gg.add(gg.mul(gg.sub(_splat(z, 1.0), z), candidate), gg.mul(z, h))]

        y, (h,) = layer.recur(d, projected, [layer.state(0, d)], cell)
        ys.append(y)
        hs.append(h)
    return layer.outputs(ys, [hs])


@onnx_op("RNN", since=7, inputs=(3, 6), outputs=(0, 2), attrs=_RNN_ATTRS)
@onnx_op("RNN", since=14, inputs=(3, 6), outputs=(0, 2), attrs=(*_RNN_ATTRS, "layout"))
def rnn(ctx: NodeContext) -> list[Tensor | None]:
    """h = f(X W^T + h R^T + Wb + Rb)."""
    layer = Layer(ctx, 1, ("Tanh",), states=1)
    ys, hs = [], []
    for d in range(layer.directions):
        (f_act,) = layer.activations[d]
        wb, rb = layer.bias(d, 0), layer.bias(d, 1)
        projected = layer.projected(d, None if wb is None else gg.add(ctx.value(wb), ctx.value(rb)))
        rt = layer.weights(layer.r, d)
        r_t = ctx.value(rt)

        def cell(x: ir.Value, states: list[ir.Value], f_act=f_act, r_t=r_t) -> list[ir.Value]:
            return [f_act(layer.clipped(gg.add(x, gg.matmul(states[0], r_t))))]

        y, (h,) = layer.recur(d, projected, [layer.state(0, d)], cell)
        ys.append(y)
        hs.append(h)
    return layer.outputs(ys, [hs])


__all__ = ["Layer", "gru", "lstm", "rnn"]


@onnx_op("CausalConvWithState", since=27, inputs=(2, 4), outputs=(1, 2), attrs=("activation",))
def causal_conv_with_state(ctx: NodeContext) -> list[Tensor]:
    """A causal depthwise 1-D convolution with its carry: the input [B, C, L] after past_state [B, C, k - 1] (zeros
    without one) convolved with weight [C, 1, k] (valid), plus bias, then SiLU where ``activation`` says silu or
    swish; present_state the last k - 1 positions of the joined input. The k taps are k multiply-adds of shifted
    views (k is a handful: 4 in Mamba and Gated DeltaNet)."""
    x, weight = ctx.input(0), ctx.input(1)
    _float32(ctx, x, weight)
    shape, wshape = shape_of(x), shape_of(weight)
    if len(shape) != 3 or len(wshape) != 3 or wshape[:2] != [shape[1], 1]:
        raise ctx.error(f"input {fmt_shape(shape)} and weight {fmt_shape(wshape)} must be [B, C, L] and [C, 1, k]")
    activation = ctx.attr("activation", STRING, b"none").decode(errors="replace")
    if activation not in ("none", "silu", "swish"):
        raise ctx.error(f"attribute 'activation' must be none, silu or swish, got '{activation}'")
    (b, c, length), k = shape, wshape[2]
    past = ctx.optional_input(3)
    if past is not None and shape_of(past) != [b, c, k - 1]:
        raise ctx.error(f"past_state {fmt_shape(shape_of(past))} must be [B, C, k - 1] = {fmt_shape([b, c, k - 1])}")
    if k > 1:
        carry = past if past is not None else ctx.const(np.zeros([b, c, k - 1], np.float32), name=f"{ctx.label}.zeros")
        joined = gg.concat(ctx.value(carry), ctx.value(x), axis=2)
    else:
        joined = ctx.value(x)
    total = None
    for j in range(k):
        window = _box(ctx, joined, [0, 0, j], [b, c, length])
        tap = gg.broadcast(ctx.value(_reshape(ctx, _box(ctx, weight, [0, 0, j], [c, 1, 1]), [1, c, 1])),
                           shape=[b, c, length])
        term = gg.mul(ctx.value(window), tap)
        total = term if total is None else gg.add(total, term)
    bias = ctx.optional_input(2)
    if bias is not None:
        if shape_of(bias) != [c]:
            raise ctx.error(f"bias {fmt_shape(shape_of(bias))} must hold one value per channel ({c})")
        total = gg.add(total, gg.broadcast(ctx.value(_reshape(ctx, bias, [1, c, 1])), shape=[b, c, length]))
    if activation != "none":
        total = gg.mul(total, gg.sigmoid(total))
    present = _box(ctx, joined, [0, 0, length], [b, c, k - 1]) if k > 1 else \
        ctx.const(np.zeros([b, c, 0], np.float32), name=ctx.label)
    return [total, present]
