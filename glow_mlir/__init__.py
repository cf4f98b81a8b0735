"""glow_mlir: a neural-network compiler in the manner of Glow, built on MLIR."""

from .errors import CompileError, GlowError, InputError, ModelError, UnsupportedError

__version__ = "0.1.0"

__all__ = ["CompileError", "GlowError", "InputError", "ModelError", "UnsupportedError", "__version__"]
