"""The CPU backend's choices: which nodes it keeps unlowered (Glow's shouldLower) and
its code generation pipeline."""

from __future__ import annotations

from ..passes import pipelines
from ..passes.lowering.lower_nodes import LowerNodes
from ..passes.pipeline import Element, parse_pipeline

#: node kinds with a CPU kernel of their own, kept out of node lowering
KEEP_NODES: tuple[str, ...] = (
    "fully_connected",  # the kernel writes the bias as the matmul's initial value: one pass over the output
)


def node_lowering() -> list[Element]:
    """The node-lowering pipeline with this backend's keep list."""
    elements = pipelines.elements("node-lowering")
    return [LowerNodes(keep=KEEP_NODES) if isinstance(e, LowerNodes) else e for e in elements]


def codegen() -> list[Element]:
    """glowir -> LLVM dialect."""
    return parse_pipeline(",".join(spec for spec, _ in pipelines.CODEGEN))
