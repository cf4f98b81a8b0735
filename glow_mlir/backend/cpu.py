"""The CPU backend's choices: which nodes it keeps unlowered (Glow's shouldLower) and
its code generation pipeline."""

from __future__ import annotations

from ..passes import pipelines
from ..passes.lowering.lower_nodes import LowerNodes
from ..passes.pipeline import Element, parse_pipeline

#: node kinds with a CPU kernel of their own, kept out of node lowering
KEEP_NODES: tuple[str, ...] = (
    "fully_connected",  # the kernel writes the bias as the matmul's initial value: one pass over the output
    # One kernel each, with small per-row scratch buffers for the statistics: lowered, they would put a full-size
    # temporary (x - max, exp, x - mean, ...) between every pair of primitives and read the input several times more.
    "softmax",  # max, exp and sum, then a division: max-subtracted, so exp cannot overflow
    "log_softmax",  # max, sum of exp, one log per row
    "layer_norm",  # mean, then variance from x - mean (two passes: no E[x^2] - E[x]^2 cancellation), then normalize
    "reduce_l2",  # the squares are summed as they are read: no x * x temporary
)


def node_lowering() -> list[Element]:
    """The node-lowering pipeline with this backend's keep list."""
    elements = pipelines.elements("node-lowering")
    return [LowerNodes(keep=KEEP_NODES) if isinstance(e, LowerNodes) else e for e in elements]


def codegen() -> list[Element]:
    """glowir -> LLVM dialect."""
    return parse_pipeline(",".join(spec for spec, _ in pipelines.CODEGEN))
