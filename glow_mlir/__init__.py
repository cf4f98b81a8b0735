"""glow_mlir: a neural-network compiler in the manner of Glow, built on MLIR.

``glow_mlir.compile(model)`` compiles an ONNX model for the CPU (see :mod:`glow_mlir.api`);
``glow_mlir.profile(model, feeds)`` records the ranges of its float values on a calibration set, for int8
quantization (see :mod:`glow_mlir.quantization.profile`).
"""

from typing import Any

from .errors import CompileError, GlowError, InputError, ModelError, ProfileError, UnsupportedError

__version__ = "0.1.0"

__all__ = ["CompileError", "CompiledModel", "GlowError", "InputError", "ModelError", "Profile", "ProfileError",
           "UnsupportedError", "__version__", "compile", "profile"]


def __getattr__(name: str) -> Any:
    # The API pulls in onnx and the whole pipeline: load it on first use, so that glow-opt starts fast.
    if name in ("compile", "CompiledModel"):
        from . import api

        return getattr(api, name)
    if name in ("profile", "Profile"):
        from .quantization import profile

        return getattr(profile, name)
    raise AttributeError(f"module 'glow_mlir' has no attribute '{name}'")
