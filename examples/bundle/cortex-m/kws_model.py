"""A keyword-spotting network of the size microcontrollers run (DS-CNN small, Zhang et al. 2017, "Hello Edge"):
49 x 10 MFCC features, a 10 x 4 stride-2 convolution to 64 channels, four depthwise-separable blocks (3 x 3
depthwise, 1 x 1 pointwise, 64 channels, ReLU), global average pooling, 12 classes. Random weights (seeded): for
footprint and numerics, not accuracy.

    python examples/bundle/cortex-m/kws_model.py OUT.onnx
"""

from __future__ import annotations

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def kws_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    weights, nodes = [], []

    def tensor(name: str, shape: tuple[int, ...], scale: float) -> str:
        weights.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv(x: str, name: str, c: int, f: int, k: tuple[int, int], stride: int, group: int, pads: list[int]) -> str:
        w = tensor(f"{name}_w", (f, c // group, *k), (2.0 / (c // group * k[0] * k[1])) ** 0.5)
        b = tensor(f"{name}_b", (f,), 0.05)
        nodes.append(helper.make_node("Conv", [x, w, b], [f"{name}_c"], kernel_shape=list(k), strides=[stride] * 2,
                                      pads=pads, group=group))
        nodes.append(helper.make_node("Relu", [f"{name}_c"], [name]))
        return name

    x = conv("mfcc", "conv1", 1, 64, (10, 4), 2, 1, [4, 1, 5, 2])
    for i in range(4):
        x = conv(x, f"dw{i}", 64, 64, (3, 3), 1, 64, [1, 1, 1, 1])
        x = conv(x, f"pw{i}", 64, 64, (1, 1), 1, 1, [0, 0, 0, 0])
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"]))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"]))
    nodes.append(helper.make_node("Gemm", ["flat", tensor("fc_w", (12, 64), 0.125), tensor("fc_b", (12,), 0.05)],
                                  ["logits"], transB=1))
    graph = helper.make_graph(nodes, "kws_ds_cnn_s", [helper.make_tensor_value_info("mfcc", TensorProto.FLOAT,
                                                                                      [1, 1, 49, 10])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 12])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    onnx.save(kws_model(), sys.argv[1])
