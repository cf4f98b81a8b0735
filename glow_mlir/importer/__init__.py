"""ONNX -> glowgraph: ``import_model`` turns an ONNX model into a module holding one glowgraph
``func.func`` whose arguments are the model inputs and whose results are its outputs.

- ``model``: loading and validation (decoding, external data, node order, tensor data, shapes);
- ``builder``: the handler registry keyed by (op_type, since_opset) and the node walk;
- ``handlers``: one small function per ONNX op.
"""

from . import handlers as _handlers  # noqa: F401 - importing it registers every op handler
from .builder import HANDLERS, ImportedModel, check_model, import_model
from .model import TensorSpec, parse_input_shapes

__all__ = ["HANDLERS", "ImportedModel", "TensorSpec", "check_model", "import_model", "parse_input_shapes"]
