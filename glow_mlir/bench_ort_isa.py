"""onnxruntime held to its AVX2 kernels on an AVX-512 machine, for the benchmarks.

onnxruntime (MLAS) picks its kernels at run time from CPUID: on an AVX-512 host it runs its AVX-512 kernels, so
glow_mlir's AVX2 code (``--target-cpu haswell`` or ``znver3``) measured beside it compares two ISAs. OpenBLAS has
``OPENBLAS_CORETYPE`` for this; onnxruntime has nothing, so :func:`hold_to_avx2` makes it see an AVX2 CPU:

- a copy of the ``onnxruntime`` package (links to its files, in the compile cache's folder, once per onnxruntime
  build) whose extension has every ``cpuid`` instruction (``0f a2``, found with the pinned wheel's ``llvm-objdump``)
  replaced by ``int3; nop`` (``cc 90``);
- a small shared library, built with the system's C compiler, whose SIGTRAP handler runs the real ``cpuid`` for the
  trapped one and clears, in leaf 7, the AVX-512 feature bits (F, DQ, IFMA, CD, BW, VL, VBMI, VBMI2, VNNI, BITALG,
  VPOPCNTDQ, VP2INTERSECT, FP16, BF16) and AVX-VNNI: what a Zen 3 or a Haswell reports;
- the handler installed in this process, then the copy imported in place of the installed package.

Everything else in the process (numpy, LLVM's host detection, glow_mlir's code) sees the real CPU. The handler counts
the leaf-7 queries it answered (:func:`masked_queries`): zero after a session was created means the hold did not take.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .errors import GlowError

#: the SIGTRAP handler: the trapped cpuid's leaf and subleaf from the saved eax and ecx, the real cpuid, AVX-512 and
#: AVX-VNNI cleared from leaf 7, the four registers written back (the nop after the int3 runs next)
SHIM_SOURCE = r"""
#define _GNU_SOURCE
#include <cpuid.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

static volatile unsigned long masked;

static void answer(int sig, siginfo_t *info, void *context) {
  (void)sig; (void)info;
  greg_t *g = ((ucontext_t *)context)->uc_mcontext.gregs;
  const unsigned char *ip = (const unsigned char *)g[REG_RIP];
  if (ip[-1] != 0xcc || ip[0] != 0x90) abort();
  unsigned leaf = (unsigned)g[REG_RAX], sub = (unsigned)g[REG_RCX], a, b, c, d;
  __cpuid_count(leaf, sub, a, b, c, d);
  if (leaf == 7 && sub == 0) {
    b &= ~(1u << 16 | 1u << 17 | 1u << 21 | 1u << 26 | 1u << 27 | 1u << 28 | 1u << 30 | 1u << 31);
    c &= ~(1u << 1 | 1u << 6 | 1u << 11 | 1u << 12 | 1u << 14);
    d &= ~(1u << 2 | 1u << 3 | 1u << 8 | 1u << 23);
    masked++;
  } else if (leaf == 7 && sub == 1) {
    a &= ~(1u << 4 | 1u << 5);
  }
  g[REG_RAX] = a; g[REG_RBX] = b; g[REG_RCX] = c; g[REG_RDX] = d;
}

int glow_hold_install(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = answer;
  action.sa_flags = SA_SIGINFO;
  return sigaction(SIGTRAP, &action, 0);
}

unsigned long glow_hold_masked(void) { return masked; }
"""

CPUID = b"\x0f\xa2"
TRAP = b"\xcc\x90"

_shim: ctypes.CDLL | None = None


def supported() -> str:
    """Why the hold cannot run here, or an empty string."""
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        return "only on x86-64 Linux"
    if shutil.which(os.environ.get("CC", "cc")) is None:
        return "no C compiler (cc) to build the CPUID handler"
    return ""


def _extension(package: Path) -> Path:
    found = sorted((package / "capi").glob("onnxruntime_pybind11_state*.so"))
    if not found:
        raise GlowError(f"onnxruntime's extension not found in {package / 'capi'}")
    return found[0]


def cpuid_offsets(library: Path) -> list[int]:
    """File offsets of the ``cpuid`` instructions of ``library``: the disassembler's addresses, mapped through the
    loadable segments."""
    from .backend.tools_paths import llvm_tool

    def run(*command: str) -> str:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            raise GlowError(f"{os.path.basename(command[0])} {library}: {done.stderr.strip()}")
        return done.stdout

    listing = run(llvm_tool("llvm-objdump"), "-d", "--no-show-raw-insn", str(library))
    addresses = [int(a, 16) for a in re.findall(r"^\s*([0-9a-f]+):\s+cpuid\s*$", listing, re.MULTILINE)]
    headers = run(llvm_tool("llvm-readelf"), "-lW", str(library))
    segments = [(int(o, 16), int(v, 16), int(size, 16)) for o, v, size in
                re.findall(r"LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", headers)]
    return [next(o + a - v for o, v, size in segments if v <= a < v + size) for a in addresses]


def patched_package(installed: Path, into: Path) -> Path:
    """A copy of the onnxruntime package ``installed`` under ``into`` (kept from an earlier call for the same
    extension) whose extension traps on every cpuid; the folder to put on ``sys.path``."""
    extension = _extension(installed)
    digest = hashlib.sha256(extension.read_bytes()).hexdigest()[:16]
    root = into / f"onnxruntime-{digest}"
    done = root / ".patched"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    # the package's files linked, not copied, but for the extension
    shutil.copytree(installed, root / "onnxruntime", ignore=shutil.ignore_patterns("__pycache__"),
                    copy_function=os.symlink)
    copy = _extension(root / "onnxruntime")
    data = bytearray(extension.read_bytes())
    copy.unlink()
    offsets = cpuid_offsets(extension)
    for offset in offsets:
        if data[offset:offset + 2] != CPUID:
            raise GlowError(f"{copy}: no cpuid at file offset {offset:#x}")
        data[offset:offset + 2] = TRAP
    if not offsets:
        raise GlowError(f"{copy}: no cpuid instruction found; onnxruntime cannot be held to AVX2")
    copy.write_bytes(bytes(data))
    done.write_text(f"{len(offsets)} cpuid instructions trapped\n")
    return root


def _build_shim(into: Path) -> Path:
    digest = hashlib.sha256(SHIM_SOURCE.encode()).hexdigest()[:16]
    library = into / f"cpuid-avx2-{digest}.so"
    if not library.exists():
        source = into / f"cpuid-avx2-{digest}.c"
        source.write_text(SHIM_SOURCE)
        compiler = os.environ.get("CC", "cc")
        built = subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-o", str(library), str(source)],
                               capture_output=True, text=True, check=False)
        if built.returncode:
            raise GlowError(f"building the CPUID handler with {compiler} failed: {built.stderr.strip()}")
    return library


def hold_to_avx2(into: Path) -> str:
    """Make this process's onnxruntime run its AVX2 kernels (see the module's docstring), keeping the patched copy
    and the handler under ``into``; call it before anything imports onnxruntime. Returns the copy's folder."""
    global _shim
    if "onnxruntime" in sys.modules:
        raise GlowError("onnxruntime is already loaded: it can be held to AVX2 only before its first import")
    reason = supported()
    if reason:
        raise GlowError(f"onnxruntime cannot be held to AVX2 here: {reason}")
    import importlib.util

    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        raise GlowError("onnxruntime is not installed (the bench extra)")
    into.mkdir(parents=True, exist_ok=True)
    root = patched_package(Path(next(iter(spec.submodule_search_locations))), into)
    _shim = ctypes.CDLL(str(_build_shim(into)))
    if _shim.glow_hold_install() != 0:
        raise GlowError("installing the CPUID handler (SIGTRAP) failed")
    _shim.glow_hold_masked.restype = ctypes.c_ulong
    sys.path.insert(0, str(root))
    import onnxruntime

    if not Path(onnxruntime.__file__).is_relative_to(root):
        raise GlowError(f"imported {onnxruntime.__file__}, not the held copy in {root}")
    return str(root)


def held() -> bool:
    """Whether :func:`hold_to_avx2` installed the hold in this process."""
    return _shim is not None


def masked_queries() -> int:
    """The leaf-7 CPUID queries answered without AVX-512 so far (0 where the hold is not installed)."""
    return int(_shim.glow_hold_masked()) if _shim is not None else 0


__all__ = ["cpuid_offsets", "held", "hold_to_avx2", "masked_queries", "patched_package", "supported"]
