"""The exceptions glow_mlir raises for bad input. Each message is one line, for people:
it names the model, the node and the op at fault."""

from __future__ import annotations


class GlowError(Exception):
    """Base of every error glow_mlir reports to a user (tools print it and exit 1)."""


class ModelError(GlowError):
    """The model file or ModelProto is unreadable, malformed or inconsistent."""


class UnsupportedError(GlowError):
    """The model uses ONNX ops, attributes or element types glow_mlir does not support."""


class InputError(GlowError):
    """Inputs given to a compiled model do not match its signature."""


class CompileError(GlowError):
    """A compilation stage failed; the message says how to reproduce it."""
