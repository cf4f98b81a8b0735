"""glowgraph-merge-pad-into-conv: a zero Pad before a convolution becomes the convolution's own pads.

Models exported with explicit padding (TensorFlow's SAME padding, asymmetric pads) import as Pad, then the layout
transpose, then conv2d. The convolution reads a zero border it makes itself for free, where the Pad node copies the
whole input into a larger buffer first. The Pad is in the model's layout (NCHW), so its pads are mapped through the
transpose that follows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from ...dialects import glowgraph as gg
from .patterns import PatternPass, attr, defined_by, replace


def spatial_pads(pad: ir.Operation, shuffle: list[int]) -> list[int] | None:
    """The conv2d pads [top, left, bottom, right] of a zero ``pad`` seen through a transpose by ``shuffle`` (the
    identity for none), when it pads only dims 1 and 2 of the NHWC result and crops nothing; else None."""
    pads, rank = attr(pad, "pads", "i64s"), len(shuffle)
    if rank != 4 or attr(pad, "value", "scalar") != 0 or any(p < 0 for p in pads):
        return None
    before = [pads[shuffle[i]] for i in range(rank)]
    after = [pads[rank + shuffle[i]] for i in range(rank)]
    if before[0] or before[3] or after[0] or after[3]:
        return None
    return [before[1], before[2], after[1], after[2]]


def pad_into_conv(op: ir.Operation) -> bool:
    """Conv2d(Pad(x)){pads} -> Conv2d(x){pads + p} and Conv2d(Transpose(Pad(x))){pads} ->
    Conv2d(Transpose(x)){pads + p}, for a Pad of zeros on the spatial dims (p: its pads in NHWC order)."""
    if op.name != "glowgraph.conv2d":
        return False
    source, transpose = op.operands[0], defined_by(op.operands[0], "transpose")
    shuffle = [0, 1, 2, 3]
    if transpose is not None:
        source, shuffle = transpose.operands[0], attr(transpose, "shuffle", "i64s")
    pad = defined_by(source, "pad")
    if pad is None:
        return False
    extra = spatial_pads(pad, shuffle)
    if extra is None:
        return False
    x = pad.operands[0]
    if transpose is not None:
        x = gg.transpose(x, shuffle=shuffle, loc=transpose.location)
    attrs = dict(op.attributes.items())  # strides, dilations, group, and a fused activation if there is one
    attrs["pads"] = [p + q for p, q in zip(attr(op, "pads", "i64s"), extra)]
    replace(op, [gg.conv2d(x, op.operands[1], op.operands[2], **attrs)])
    return True


PATTERNS = (pad_into_conv,)


@dataclass(frozen=True)
class MergePadIntoConv(PatternPass):
    """Conv2d(Pad(x)) -> Conv2d(x) with the pads added to its own, through the layout transpose too."""

    name = "glowgraph-merge-pad-into-conv"
    summary = "Merge zero padding of the spatial dims into the following convolution's pads"

    patterns = PATTERNS
