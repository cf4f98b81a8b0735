"""The optimizers of ai.onnx.preview.training: Adagrad, Adam and Momentum, one update step of n tensors at once.

Each takes the learning rate R and the step count T (scalars, known or given at run time), then its per-tensor inputs
grouped by kind (the n tensors X, then the n gradients G, then the n states), and gives the updated tensors, then the
updated states, in the same grouping. The updates are elementwise, in float32 (T as a float), as the spec writes them:

- Adagrad: g = norm_coefficient X + G; H' = H + g^2; X' = X - R / (1 + T decay_factor) g / (sqrt(H') + epsilon).
- Adam: g as above; V' = alpha V + (1 - alpha) g; H' = beta H + (1 - beta) g^2; R' = R sqrt(1 - beta^T) /
  (1 - alpha^T) for T > 0, else R; X' = (1 - norm_coefficient_post) (X - R' V' / (sqrt(H') + epsilon)).
- Momentum: g as above; V' = alpha V + b g, b = beta for T > 0, else 1; standard: X' = X - R V'; nesterov:
  X' = X - R (g + alpha V').
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir
from onnx import AttributeProto

from ...dialects import glowgraph as gg
from ..builder import NodeContext, Tensor, onnx_op, shape_of
from ..model import fmt_shape
from .core import _expand, _reshape, _splat
from .elementwise import _convert

FLOAT, STRING = AttributeProto.FLOAT, AttributeProto.STRING
DOMAIN = "ai.onnx.preview.training"
_F32 = np.dtype(np.float32)


class _Step:
    """The scalars of one update step, broadcast to each tensor's shape on demand."""

    def __init__(self, ctx: NodeContext, groups: int):
        self.ctx = ctx
        n = len(ctx.node.input) - 2
        if n <= 0 or n % groups:
            raise ctx.error(f"takes R, T and {groups} inputs per tensor, got {len(ctx.node.input)} inputs")
        self.n = n // groups
        if len(ctx.node.output) > (groups - 1) * self.n:
            raise ctx.error(f"gives at most {(groups - 1) * self.n} outputs for {self.n} tensors, got "
                            f"{len(ctx.node.output)}")
        r, t = ctx.input(0), ctx.input(1)
        ctx.check_element_type(r, "R", (_F32,))
        ctx.check_element_type(t, "T", (np.dtype(np.int64),))
        for x, what in ((r, "R"), (t, "T")):
            if int(np.prod(shape_of(x))) != 1:
                raise ctx.error(f"{what} must hold one value, got shape {fmt_shape(shape_of(x))}")
        self.r = ctx.value(_reshape(ctx, r, []))
        self.t = ctx.value(_reshape(ctx, _convert(ctx, t, _F32), []))

    def tensors(self, kind: int) -> list[ir.Value]:
        """The n inputs of group ``kind`` (0: X, 1: G, then the states), each a float32 tensor of X's shape."""
        values = []
        for i in range(self.n):
            x = self.ctx.input(2 + kind * self.n + i)
            self.ctx.check_element_type(x, f"input #{2 + kind * self.n + i}", (_F32,))
            if shape_of(x) != shape_of(self.ctx.input(2 + i)):
                raise self.ctx.error(f"input #{2 + kind * self.n + i} is {fmt_shape(shape_of(x))}, its tensor "
                                     f"{fmt_shape(shape_of(self.ctx.input(2 + i)))}")
            values.append(self.ctx.value(x))
        return values

    def scalar(self, v: ir.Value, like: ir.Value) -> ir.Value:
        """Scalar ``v`` broadcast to ``like``'s shape."""
        return _expand(self.ctx, v, shape_of(like))

    def when_started(self, started: ir.Value, initial: ir.Value) -> ir.Value:
        """``started`` where T > 0, else ``initial`` (scalars)."""
        positive = gg.cmp_lt(_splat(self.t, 0.0), self.t)
        return gg.select(positive, started, initial)

    def outputs(self, groups: list[list[ir.Value]]) -> list[Tensor]:
        """The node's outputs: each group's n values in turn, as many as the node names."""
        flat = [v for group in groups for v in group]
        return flat[:len(self.ctx.node.output)]


def _regularized(ctx: NodeContext, x: ir.Value, g: ir.Value) -> ir.Value:
    """norm_coefficient X + G."""
    norm = ctx.attr("norm_coefficient", FLOAT, 0.0)
    return g if norm == 0 else gg.add(gg.mul(_splat(x, norm), x), g)


def _per_tensor(step: _Step, kinds: int, update: Callable[..., tuple[ir.Value, ...]]) -> list[list[ir.Value]]:
    """``update(x, g, *states)`` of each tensor, its results regrouped by kind."""
    columns = [step.tensors(k) for k in range(kinds)]
    results = [update(*row) for row in zip(*columns, strict=True)]
    return [list(group) for group in zip(*results, strict=True)]


@onnx_op("Adagrad", since=1, domain=DOMAIN, inputs=(5, None), outputs=(1, None),
         attrs=("decay_factor", "epsilon", "norm_coefficient"))
def adagrad(ctx: NodeContext) -> list[Tensor]:
    """X' and H' of each tensor (see the module docstring)."""
    step = _Step(ctx, 3)
    decay, epsilon = ctx.attr("decay_factor", FLOAT, 0.0), ctx.attr("epsilon", FLOAT, 1e-6)
    rate = gg.div(step.r, gg.add(_splat(step.t, 1.0), gg.mul(step.t, _splat(step.t, decay))))

    def update(x: ir.Value, g: ir.Value, h: ir.Value) -> tuple[ir.Value, ir.Value]:
        g = _regularized(ctx, x, g)
        h_new = gg.add(h, gg.mul(g, g))
        root = gg.add(gg.sqrt(h_new), _splat(h_new, epsilon))
        return gg.sub(x, gg.div(gg.mul(step.scalar(rate, x), g), root)), h_new

    return step.outputs(_per_tensor(step, 3, update))


@onnx_op("Adam", since=1, domain=DOMAIN, inputs=(6, None), outputs=(1, None),
         attrs=("alpha", "beta", "epsilon", "norm_coefficient", "norm_coefficient_post"))
def adam(ctx: NodeContext) -> list[Tensor]:
    """X', V' and H' of each tensor (see the module docstring)."""
    step = _Step(ctx, 4)
    alpha, beta = ctx.attr("alpha", FLOAT, 0.9), ctx.attr("beta", FLOAT, 0.999)
    epsilon, post = ctx.attr("epsilon", FLOAT, 1e-6), ctx.attr("norm_coefficient_post", FLOAT, 0.0)
    t = step.t

    def power(base: float) -> ir.Value:  # base ** T
        return gg.pow_(_splat(t, base), t)

    corrected = gg.div(gg.mul(step.r, gg.sqrt(gg.sub(_splat(t, 1.0), power(beta)))),
                       gg.sub(_splat(t, 1.0), power(alpha)))
    rate = step.when_started(corrected, step.r)

    def update(x: ir.Value, g: ir.Value, v: ir.Value, h: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
        g = _regularized(ctx, x, g)
        v_new = gg.add(gg.mul(_splat(v, alpha), v), gg.mul(_splat(g, 1.0 - alpha), g))
        h_new = gg.add(gg.mul(_splat(h, beta), h), gg.mul(_splat(g, 1.0 - beta), gg.mul(g, g)))
        root = gg.add(gg.sqrt(h_new), _splat(h_new, epsilon))
        x_new = gg.sub(x, gg.mul(step.scalar(rate, x), gg.div(v_new, root)))
        return (x_new if post == 0 else gg.mul(_splat(x_new, 1.0 - post), x_new)), v_new, h_new

    return step.outputs(_per_tensor(step, 4, update))


@onnx_op("Momentum", since=1, domain=DOMAIN, inputs=(5, None), outputs=(1, None),
         attrs=("alpha", "beta", "mode", "norm_coefficient"))
def momentum(ctx: NodeContext) -> list[Tensor]:
    """X' and V' of each tensor (see the module docstring)."""
    for name in ("alpha", "beta", "mode", "norm_coefficient"):
        if not any(a.name == name for a in ctx.node.attribute):
            raise ctx.error(f"attribute '{name}' is required")
    mode = ctx.attr("mode", STRING, b"standard").decode(errors="replace")
    if mode not in ("standard", "nesterov"):
        raise ctx.error(f"attribute 'mode' must be 'standard' or 'nesterov', got '{mode}'")
    step = _Step(ctx, 3)
    alpha, beta = ctx.attr("alpha", FLOAT, 0.0), ctx.attr("beta", FLOAT, 0.0)
    weight = step.when_started(_splat(step.t, beta), _splat(step.t, 1.0))

    def update(x: ir.Value, g: ir.Value, v: ir.Value) -> tuple[ir.Value, ir.Value]:
        g = _regularized(ctx, x, g)
        v_new = gg.add(gg.mul(_splat(v, alpha), v), gg.mul(step.scalar(weight, g), g))
        rate = step.scalar(step.r, x)
        if mode == "standard":
            return gg.sub(x, gg.mul(rate, v_new)), v_new
        return gg.sub(x, gg.mul(rate, gg.add(g, gg.mul(_splat(v_new, alpha), v_new)))), v_new

    return step.outputs(_per_tensor(step, 3, update))
