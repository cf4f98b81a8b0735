"""From a profile to the graph's quantization parameters: each value of the optimized glowgraph that computes an
ONNX value of the profile gets ``glowgraph.qparams`` (scale, offset), which glowgraph-quantize reads.

Which ONNX value a node computes is told by its location: the importer gives every node it builds for an ONNX node
that node's label, and a graph rewrite builds its replacement at the location of the node it replaces (a convolution
that took in the batch norm and the relu after it has the relu's location, and computes the relu's output). Of the
nodes at one location, the value of the ONNX output is the one used elsewhere (by nodes at another location or by
the function's return), looking through the layout views (reshape, transpose) around it, which keep the values;
the others are intermediates of a node's expansion and get no parameters. A node of an op type kept in float (or
that took in one, :data:`_ORIGINS`) gets ``glowgraph.keep_float`` too: it stays float, and the int8 nodes that read
it quantize its value by its parameters. Values are keyed by their ONNX names
(:mod:`.profile`), so the graph rewrites that ran before, and the batch size, do not change the key. The network's
outputs are calibrated by their whole range (minmax) whatever the method: a method that clips (kl, mse, percentile)
would clip the logits themselves, where equal clipped values change the top-1.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from mlir import ir

from ..dialects.glowgraph import NAME_ATTR
from ..errors import GlowError
from ..importer.model import LoadedModel
from ..passes.graph.quantize import KEEP_FLOAT_ATTR, QPARAMS_ATTR, VIEWS, params_attr, set_argument_params
from ..passes.utils import functions
from .params import CALIBRATIONS, SCHEMAS, QuantParams, calibrate, choose
from .profile import Profile, TensorProfile

#: the ONNX op types a glowgraph node kind may hold: a convolution with a relu folded in has the relu's location, and
#: is kept in float when either Conv or Relu is
_ORIGINS = {"conv2d": ("Conv",), "fully_connected": ("Gemm", "MatMul"), "matmul": ("MatMul", "Gemm"),
            "add": ("Add", "Sum"), "relu": ("Relu",), "clip": ("Clip",), "max_pool": ("MaxPool",),
            "concat": ("Concat",), "avg_pool": ("AveragePool", "GlobalAveragePool")}


@dataclass(frozen=True)
class QuantizationOptions:
    """How ``compile`` quantizes: the profile, Glow's schema, the calibration method, weights per output channel,
    and the ONNX op types kept in float (Glow's -keep-original-precision-for-nodes)."""

    profile: Profile
    schema: str = "asymmetric"
    calibration: str = "minmax"
    channelwise: bool = False
    keep_float: tuple[str, ...] = field(default_factory=tuple)
    #: the values that keep their whole range as network outputs (None: whatever reaches the function's results);
    #: a model with probes on its values (the measured report) names its own outputs here
    model_outputs: tuple[str, ...] | None = None
    #: the parameters computed so far, by (value, calibration): KL calibration takes a fraction of a second a value
    _params: dict = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.schema not in SCHEMAS:
            raise GlowError(f"unknown quantization schema '{self.schema}' (schemas: {', '.join(SCHEMAS)})")
        if self.calibration not in CALIBRATIONS:
            raise GlowError(f"unknown quantization calibration '{self.calibration}' (methods: "
                            f"{', '.join(CALIBRATIONS)})")

    def params(self, name: str, calibration: str | None = None) -> QuantParams | None:
        """The parameters of the profiled value ``name`` (by ``calibration``, default this one's); None for a value
        the calibration never saw finite."""
        method = calibration or self.calibration
        if (name, method) not in self._params:
            values: TensorProfile | None = self.profile.values.get(name)
            finite = values is not None and math.isfinite(values.min) and math.isfinite(values.max)
            self._params[name, method] = choose(*calibrate(values.histogram, values.min, values.max, method),
                                                self.schema) if finite else None
        return self._params[name, method]

    def digest(self) -> str:
        """What the generated code depends on, for the compile cache: every value's parameters and the options."""
        table = {name: None if (p := self.params(name)) is None else [p.scale, p.offset]
                 for name in sorted(self.profile.values)}
        text = json.dumps([table, self.schema, self.calibration, self.channelwise, sorted(self.keep_float),
                           None if self.model_outputs is None else sorted(self.model_outputs)])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _reach(op: ir.Operation, label: str) -> tuple[bool, bool]:
    """Whether ``op``'s result reaches, through views, a node at another location or the function's return; and
    whether it reaches the return."""
    stack, escapes, output = [op.results[0]], False, False
    while stack:
        value = stack.pop()
        for use in value.uses:
            user = use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner
            output = output or user.name == "func.return"
            escapes = escapes or user.name == "func.return" or _label(user.location) != label
            if user.name in VIEWS:
                stack.append(user.results[0])
    return escapes, output


def _label(loc: ir.Location) -> str | None:
    return loc.name_str if loc.is_a_name() else None


def annotate(module: ir.Module, loaded: LoadedModel, options: QuantizationOptions) -> int:
    """Put ``glowgraph.qparams`` on the values of ``module``'s functions that compute a profiled ONNX value of
    ``loaded`` (and on its profiled arguments); returns how many values got them."""
    options.profile.check(loaded)
    outputs = {label: [o for o in node.output if o] for label, node in loaded.nodes}
    kinds = {label: node.op_type for label, node in loaded.nodes}
    keep = set(options.keep_float)
    count = 0
    with module.context:
        for func in functions(module.operation):
            count += _annotate_arguments(func, options)
            for op in func.regions[0].blocks[0].operations:
                op = op.operation
                label = _label(op.location)
                names = outputs.get(label) if label is not None else None
                if not names or len(names) != 1 or len(op.results) != 1:
                    continue
                escapes, output = _reach(op, label)
                if op.name in VIEWS or not escapes:
                    continue
                if kinds[label] in keep or keep.intersection(_ORIGINS.get(op.name.split(".", 1)[-1], ())):
                    op.attributes[KEEP_FLOAT_ATTR] = ir.UnitAttr.get()
                # a network output keeps its whole range: clipped logits could tie, and change the top-1
                if options.model_outputs is not None:
                    output = names[0] in options.model_outputs
                params = options.params(names[0], "minmax" if output else None)
                if params is not None:
                    op.attributes[QPARAMS_ATTR] = params_attr((params.scale, params.offset))
                    count += 1
    return count


def _annotate_arguments(func: ir.Operation, options: QuantizationOptions) -> int:
    """``glowgraph.qparams`` on the arguments whose model input the profile has; returns how many."""
    if "arg_attrs" not in func.attributes:
        return 0
    found = {}
    for index, attrs in enumerate(ir.ArrayAttr(func.attributes["arg_attrs"])):
        entries = {n.name: n.attr for n in ir.DictAttr(attrs)}
        params = options.params(ir.StringAttr(entries[NAME_ATTR]).value) if NAME_ATTR in entries else None
        if params is not None:
            found[index] = (params.scale, params.offset)
    set_argument_params(func, found)
    return len(found)


def keep_float_list(text: Sequence[str] | str | None) -> tuple[str, ...]:
    """ONNX op types from a list or a comma-separated string."""
    if text is None:
        return ()
    items = text.split(",") if isinstance(text, str) else list(text)
    return tuple(t.strip() for t in items if t.strip())


def has_qdq_pairs(model: LoadedModel) -> bool:
    """Whether the model quantizes values with ONNX ops (QuantizeLinear, QLinearConv): a QDQ or QOperator model,
    whose quantize/dequantize pairs glowgraph-qdq-to-params may make int8 islands."""
    return any(node.op_type in ("QuantizeLinear", "QLinearConv") for _, node in model.nodes)
