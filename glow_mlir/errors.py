"""The exceptions glow_mlir raises for bad input. Each message is one line, for people:
it names the model, the node and the op at fault."""

from __future__ import annotations


class GlowError(Exception):
    """Base of every error glow_mlir reports to a user (tools print it and exit 1)."""


class ModelError(GlowError):
    """The model file or ModelProto is unreadable, malformed or inconsistent."""


class UnsupportedError(GlowError):
    """The model uses ONNX ops, attributes or element types glow_mlir does not support."""


class NonConstantInputError(UnsupportedError):
    """A node needs the value of an input at compile time (a shape, axes...) and the model does not give it as a
    constant or an initializer. ``value`` is the ONNX name of that input: a caller that knows its value (the ONNX
    backend, given the actual inputs) can bind it as an initializer and compile again."""

    def __init__(self, message: str, value: str):
        super().__init__(message)
        self.value = value


class InputError(GlowError):
    """Inputs given to a compiled model do not match its signature."""


class ProfileError(GlowError):
    """A quantization profile is unreadable, or belongs to another graph than the model it is applied to."""


class CompileError(GlowError):
    """A compilation stage failed; the message says how to reproduce it."""
