"""Write the bundled example: Glow's tutorial network, Linear(10, 5) + Sigmoid on a [3, 10] input,
with seeded weights, and an .io.npz holding one input and the onnx.reference output."""

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

HERE = Path(__file__).resolve().parent


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(2018)
    weight = rng.uniform(-0.3, 0.3, size=(5, 10)).astype(np.float32)
    bias = rng.uniform(-0.3, 0.3, size=(5,)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["input_1", "linear.weight", "linear.bias"], ["linear_out"], name="linear",
                             transB=1),
            helper.make_node("Sigmoid", ["linear_out"], ["output_1"], name="sigmoid"),
        ],
        "linear_sigmoid",
        [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, [3, 10])],
        [helper.make_tensor_value_info("output_1", TensorProto.FLOAT, [3, 5])],
        initializer=[numpy_helper.from_array(weight, "linear.weight"), numpy_helper.from_array(bias, "linear.bias")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="glow_mlir-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main() -> None:
    model = build()
    onnx.save(model, HERE / "linear_sigmoid.onnx")
    x = np.random.default_rng(7).standard_normal((3, 10)).astype(np.float32)
    (y,) = ReferenceEvaluator(model).run(None, {"input_1": x})
    np.savez(HERE / "linear_sigmoid.io.npz", in_input_1=x, out_output_1=y)


if __name__ == "__main__":
    main()
