"""The compile cache: a compiled model on disk, so that compiling the same model again skips every stage.

An entry is keyed by a SHA-256 of everything that decides the code: the model's bytes, the compile options that
change it (input shapes, optimize, threads), the target (host triple, LLVM's name for the host CPU and the CPU's
feature flags) and the compiler's version (glow_mlir's version, a digest of its own source files, the MLIR wheel's
version). It holds what running the model needs and nothing else: the machine code (the object files the JIT made,
for this CPU), the final LLVM-dialect module as MLIR bytecode, the program's signature (argument names, shapes,
dtypes, roles, planned offsets), the memory plan's region sizes, the constant weights, the model's name, inputs and
outputs, and the stages' IR texts and times (so ``stage(name)`` still answers). A hit loads the machine code
(``backend/orc.py``): no import, no pass, no LLVM code generation. Where this host cannot load objects, it parses the
bytecode and JIT-compiles it instead.

Where: ``$GLOW_CACHE_DIR``, else ``~/.cache/glow_mlir``. One ``.npz`` file per entry, written to a temporary file in
the same folder and renamed into place (atomic on POSIX), so processes compiling at once never see half an entry;
the last writer wins with identical content. An entry that cannot be read is a miss.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from .errors import GlowError

CACHE_ENV = "GLOW_CACHE_DIR"
#: bumped when the entry layout or the calling convention of its code changes (6: inputs and outputs as arguments of
#: their own, and the program's output names)
FORMAT = 6
_BYTECODE = "__bytecode__"
_OBJECT = "__object__"
_META = "__meta__"
_CONST = "const:"


def cache_dir() -> Path:
    """``$GLOW_CACHE_DIR``, else ``~/.cache/glow_mlir``."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured) if configured else Path.home() / ".cache" / "glow_mlir"


@functools.cache
def host_cpu() -> str:
    """LLVM's name for the host CPU (what the JIT compiles for), from ``llc --version``; empty when unknown."""
    from .backend.tools_paths import llvm_tool

    try:
        out = subprocess.run([llvm_tool("llc"), "--version"], capture_output=True, text=True, timeout=30,
                             check=False).stdout
    except (GlowError, OSError, subprocess.SubprocessError):  # no llc: the CPU features still tell CPUs apart
        return ""
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if "Host CPU:" in line), "")


@functools.cache
def cpu_features() -> str:
    """The CPU's feature flags (``/proc/cpuinfo``), sorted; empty where that file does not exist."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    flags = next((line.split(":", 1)[1] for line in text.splitlines() if line.startswith(("flags", "Features"))), "")
    return " ".join(sorted(set(flags.split())))


def target() -> dict[str, str]:
    """What the generated code depends on in the machine: the target description's triple, CPU, features and caches
    (:mod:`glow_mlir.backend.target`); where LLVM's C API is missing, the host's name and feature flags."""
    from .backend import target as targets

    try:
        described = targets.host().key()
    except GlowError:
        described = {"triple": f"{platform.machine()}-{platform.system()}".lower(), "cpu": host_cpu(),
                     "features": cpu_features()}
    return {**described, "features": hashlib.sha256(described["features"].encode()).hexdigest()}


@functools.cache
def compiler_version() -> str:
    """glow_mlir's version, a digest of its source files (a change to any pass changes the code), and the MLIR
    bindings' version."""
    from importlib import metadata

    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    try:
        mlir_version = metadata.version("xtc-mlir-python-bindings")
    except metadata.PackageNotFoundError:
        mlir_version = "unknown"
    return f"{__version__}+{digest.hexdigest()[:16]} mlir {mlir_version} format {FORMAT}"


def cache_key(model_bytes: bytes, options: dict[str, Any]) -> str:
    """The key of a compile of ``model_bytes`` with ``options`` (JSON-serializable) on this machine."""
    digest = hashlib.sha256()
    digest.update(hashlib.sha256(model_bytes).digest())
    described = {"options": options, "target": target(), "compiler": compiler_version()}
    digest.update(json.dumps(described, sort_keys=True).encode())
    return digest.hexdigest()


@dataclass
class Entry:
    """What a compiled model needs to run again: the LLVM-dialect module's bytecode, JSON metadata (name, inputs,
    outputs, program, signature), the constants by name, and the machine code (an object file; None if the JIT
    could not give one)."""

    bytecode: bytes
    meta: dict[str, Any]
    consts: dict[str, np.ndarray]
    object_code: list[bytes] | None = None


def entry_path(key: str) -> Path:
    return cache_dir() / f"{key}.npz"


def load(key: str) -> Entry | None:
    """The entry stored under ``key``, or None (absent, or unreadable: then it is recompiled and rewritten)."""
    path = entry_path(key)
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data[_META]))
            if meta.get("format") != FORMAT:
                return None
            consts = {k[len(_CONST):]: data[k] for k in data.files if k.startswith(_CONST)}
            objects = sorted((k for k in data.files if k.startswith(_OBJECT)), key=lambda k: int(k[len(_OBJECT):]))
            code = [data[k].tobytes() for k in objects] or None
            return Entry(data[_BYTECODE].tobytes(), meta, consts, code)
    except (OSError, ValueError, KeyError, json.JSONDecodeError):
        return None


def store(key: str, entry: Entry) -> Path:
    """Write ``entry`` under ``key``: to a temporary file beside it, then an atomic rename."""
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    arrays = {_BYTECODE: np.frombuffer(entry.bytecode, np.uint8),
              _META: np.array(json.dumps({**entry.meta, "format": FORMAT}))}
    for i, code in enumerate(entry.object_code or []):
        arrays[f"{_OBJECT}{i}"] = np.frombuffer(code, np.uint8)
    arrays.update({_CONST + name: value for name, value in entry.consts.items()})
    fd, temporary = tempfile.mkstemp(prefix=f".{key[:16]}-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        os.replace(temporary, entry_path(key))
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return entry_path(key)
