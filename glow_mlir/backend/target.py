"""The target description: what the generated code may assume about the CPU it runs on.

A :class:`Target` names the machine as LLVM does (triple, CPU, features) and states what code generation derives
from it: the vector register width and count, FMA, the int8 dot-product instructions, the cache sizes. It comes from
the host (:func:`host`: LLVM's host CPU name and features, the cache sizes from sysfs) or is given by name
(:func:`named`: ``--target-cpu znver3``, ``--target-triple aarch64-linux-gnu``). LLVM itself answers what a named
CPU has: a probe function is compiled for it and its assembly read (:func:`_probe`), so no table of CPU names is kept
here and every CPU LLVM knows is described the same way.

The compile cache keys on :meth:`Target.key`, and the JIT and bundles give LLVM the same CPU and features, so the
instructions match the tiles chosen for them.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import CompileError
from . import llvm_api
from .tools_paths import llvm_tool

#: the architectures code is made for (the first part of a triple), and how they are named in messages
SUPPORTED_ARCHS = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64",
                   # 32-bit Arm M-profile microcontrollers (Cortex-M4/M7: v7E-M; M33: v8-M mainline; M55: v8.1-M)
                   "thumbv7em": "thumbv7em", "thumbv7m": "thumbv7m", "thumbv8m.main": "thumbv8m.main",
                   "thumbv8.1m.main": "thumbv8.1m.main"}
#: the names of the host's CPU wherever a target CPU is given (the empty name too: none given)
HOST_CPU_NAMES = ("", "native", "host")
#: the environment variable that names a CPU to stand in for this machine's (:func:`host`): code for the host, the
#: compile cache and the tests then take that CPU, one this machine can run (``znver3`` or ``haswell`` on an AVX-512
#: machine: the test suite as an AVX2-only host sees it)
HOST_CPU_ENV = "GLOW_MLIR_HOST_CPU"
#: cache sizes assumed for a named CPU that :data:`NAMED_CACHES` does not list: common to current x86 and ARM
#: server cores
DEFAULT_CACHES = {"l1d": 32 << 10, "l2": 1 << 20, "l3": 8 << 20}
DEFAULT_L1_WAYS = 8
#: a named CPU's core-private caches, (L1D KiB, L1D ways, L2 KiB), from the vendors' optimization manuals and core
#: references: a bundle compiled elsewhere for one of these gets the tiles the CPU itself would choose from sysfs
#: (the L1 tiles and the streams they may keep apart, the filter blocks and B's packed blocks in L2). Shared L3 is
#: left at its default: no kernel sizes a tile by it.
NAMED_CACHES: dict[str, tuple[int, int, int]] = {
    # Intel client cores up to Skylake: 256 KiB L2
    **dict.fromkeys(("haswell", "broadwell", "skylake", "cannonlake"), (32, 8, 256)),
    # Skylake-SP and its successors with a 1 MiB L2
    **dict.fromkeys(("skylake-avx512", "cascadelake", "cooperlake"), (32, 8, 1024)),
    # Sunny Cove and later: 48 KiB 12-way L1D
    **dict.fromkeys(("icelake-client", "rocketlake"), (48, 12, 512)),
    **dict.fromkeys(("icelake-server", "tigerlake", "alderlake"), (48, 12, 1280)),
    **dict.fromkeys(("raptorlake", "meteorlake", "sapphirerapids", "emeraldrapids", "graniterapids",
                     "graniterapids-d"), (48, 12, 2048)),
    # AMD Zen: 32 KiB 8-way L1D to Zen 4, 48 KiB 12-way on Zen 5
    **dict.fromkeys(("znver1", "znver2", "znver3"), (32, 8, 512)),
    "znver4": (32, 8, 1024),
    "znver5": (48, 12, 1024),
    # Arm Neoverse server cores: 64 KiB 4-way L1D, 1 MiB private L2 (the largest option, as the server parts ship it)
    **dict.fromkeys(("neoverse-n1", "neoverse-v1", "neoverse-n2", "neoverse-v2"), (64, 4, 1024)),
}
#: cores whose FMA datapaths are narrower than their widest vectors, and their f32 FMA lanes per cycle: Zen 4 runs
#: a 512-bit FMA on its two 256-bit pipes, the client cores with AVX-512 have one 512-bit FMA port, Zen 1 splits a
#: 256-bit FMA over its two 128-bit pipes
NARROW_FMA_LANES = {"znver4": 16, "icelake-client": 16, "tigerlake": 16, "cannonlake": 16, "rocketlake": 16,
                    "znver1": 8}


@dataclass(frozen=True)
class Target:
    """One CPU as code generation sees it."""

    triple: str
    cpu: str
    #: LLVM's feature string (``+avx2,+fma,...``); empty for a named CPU: the CPU's own features
    features: str
    #: bits of one vector register (128 SSE/NEON, 256 AVX2, 512 AVX-512) and how many the ISA has
    vector_bits: int
    vector_registers: int
    fma: bool
    #: int8 dot products: x86 AVX-512 VNNI or AVX-VNNI (vpdpbusd), ARM dotprod (sdot) and i8mm (smmla)
    int8_dot: tuple[str, ...] = ()
    caches: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_CACHES))
    host: bool = False
    #: ways of the L1 data cache (8 on current x86 and most ARM cores unless sysfs says otherwise)
    l1_ways: int = DEFAULT_L1_WAYS

    @property
    def lanes(self) -> int:
        """f32 lanes of one vector register."""
        return self.vector_bits // 32

    @property
    def isa(self) -> str:
        """The ISA class the tile tables are kept per: avx512, avx2, sse, neon, or scalar."""
        if self.triple.startswith(("x86_64", "i686", "i386")):
            return {512: "avx512", 256: "avx2"}.get(self.vector_bits, "sse")
        if self.triple.startswith(("aarch64", "arm64")):
            return "neon"
        if self.triple.startswith("thumb"):  # M-profile: Helium (8 q registers) where the CPU has it, else scalar
            return "mve" if self.vector_bits >= 128 else "scalar"
        return "neon" if self.vector_bits >= 128 else "scalar"

    @property
    def fma_lanes(self) -> int:
        """f32 lanes one core multiplies and adds per cycle: two FMA pipes of the full vector width on x86 since
        Haswell and Zen 2 and on Neoverse, fewer where :data:`NARROW_FMA_LANES` says so; one pipe's worth (a multiply
        and an add) without FMA. The peak the benchmarks measure kernels against is ``2 x fma_lanes x clock``."""
        if not self.fma:
            return self.lanes
        return NARROW_FMA_LANES.get(self.cpu, 2 * self.lanes)

    def key(self) -> dict[str, str]:
        """What the compile cache keys on: the CPU and the caches its tiles follow (two hosts of one CPU name may
        differ in them, virtual machines above all)."""
        caches = ",".join(f"{k}={v}" for k, v in sorted(self.caches.items()))
        return {"triple": self.triple, "cpu": self.cpu, "features": self.features,
                "caches": f"{caches},l1_ways={self.l1_ways}"}

    def describe(self) -> str:
        """One line for ``--stats`` and the benchmarks."""
        dot = ",".join(self.int8_dot) or "none"
        caches = " ".join(f"{k.upper()} {v >> 10} KiB" for k, v in self.caches.items())
        return (f"{self.cpu} ({self.triple}{', host' if self.host else ''}): {self.isa}, {self.vector_registers} x "
                f"{self.vector_bits}-bit vector registers ({self.lanes} f32 lanes), FMA {'yes' if self.fma else 'no'}, "
                f"int8 dot {dot}, {caches} (L1D {self.l1_ways}-way)")


def _x86(triple: str) -> bool:
    return triple.startswith(("x86_64", "i686", "i386"))


def index_bits(triple: str) -> int:
    """The width of a pointer, and so of the lowered ``index`` type, on ``triple``: 32 on the M-profile Arm cores
    (thumb*), 64 elsewhere."""
    return 32 if triple.startswith("thumb") else 64


def bare_metal(triple: str) -> bool:
    """Whether ``triple`` names a target with no operating system (``thumbv7em-none-eabihf``): no threads, no
    position-independent code, the program links statically into firmware."""
    return "none" in triple.split("-")[1:3]


#: a function whose assembly tells the vector width (a 16 x f32 FMA is split into registers of the widest width) and
#: whether the CPU fuses multiply-adds
_PROBE_IR = """
define void @probe(ptr %a, ptr %b, ptr %c) {
  %x = load <16 x float>, ptr %a
  %y = load <16 x float>, ptr %b
  %z = load <16 x float>, ptr %c
  %r = call <16 x float> @llvm.fma.v16f32(<16 x float> %x, <16 x float> %y, <16 x float> %z)
  store <16 x float> %r, ptr %c
  ret void
}
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)
"""


@functools.cache
def _probe(triple: str, cpu: str, features: str) -> tuple[int, bool]:
    """(vector bits, FMA) of the CPU, read from the assembly LLVM makes for :data:`_PROBE_IR`."""
    llvm = llvm_api.library()
    if llvm is None:
        raise CompileError("LLVM's C API is not available: cannot describe the target")
    machine = llvm_api.target_machine(triple, cpu, features)
    context = llvm.LLVMContextCreate()
    try:
        module = llvm_api.parse_ir(_PROBE_IR, context)
        llvm_api.set_target(module, machine, triple)
        text = llvm_api.emit(module, machine, llvm_api.ASSEMBLY_FILE).decode()
        llvm.LLVMDisposeModule(module)
    finally:
        llvm.LLVMContextDispose(context)
        llvm.LLVMDisposeTargetMachine(machine)
    if _x86(triple):
        bits = 512 if "zmm" in text else 256 if "ymm" in text else 128
        fma = bool(re.search(r"\bvfn?m(add|sub)", text))
    else:  # AArch64 NEON (q registers) or 32-bit ARM (q for NEON; s for a VFP-only M-profile core)
        bits = 128 if re.search(r"\bq\d+\b|\bv\d+\.4s\b", text) else 32
        fma = bool(re.search(r"\bfmla\b|\bvfma\b|\bvfma\.f32\b|\bfmadd\b", text))
    return bits, fma


def _int8_dot(features: str) -> tuple[str, ...]:
    """The int8 dot-product extensions enabled in a feature string (a host's: for a named CPU LLVM gives no feature
    list through its C API, see :func:`_named_int8_dot`)."""
    enabled = {f[1:] for f in features.split(",") if f.startswith("+")}
    return tuple(n for n in ("avx512vnni", "avxvnni", "dotprod", "i8mm") if n in enabled)


def _l1_ways() -> int:
    """Ways of CPU 0's L1 data cache from sysfs (the default where absent)."""
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")) if root.is_dir() else []:
        try:
            if ((index / "level").read_text().strip() == "1"
                    and (index / "type").read_text().strip() in ("Data", "Unified")):
                return int((index / "ways_of_associativity").read_text().strip()) or DEFAULT_L1_WAYS
        except (OSError, ValueError):
            continue
    return DEFAULT_L1_WAYS


def _caches() -> dict[str, int]:
    """L1 data, L2 and L3 sizes of CPU 0 from sysfs (the defaults where absent)."""
    found = dict(DEFAULT_CACHES)
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for index in sorted(root.glob("index*")) if root.is_dir() else []:
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(size[-1:], 1)
        value = int(size.rstrip("KMG")) * scale
        if level == "1" and kind in ("Data", "Unified"):
            found["l1d"] = value
        elif level in ("2", "3"):
            found[f"l{level}"] = value
    return found


def _registers(triple: str, bits: int) -> int:
    if _x86(triple):
        return 32 if bits == 512 else 16
    if triple.startswith("thumb"):  # M-profile: 8 Helium q registers (aliasing the 32 single-precision s registers)
        return 8 if bits >= 128 else 32
    return 32 if triple.startswith(("aarch64", "arm64")) else 16


@functools.cache
def host() -> Target:
    """This machine, as LLVM sees it; or the CPU that :data:`HOST_CPU_ENV` names in its place, with that CPU's own
    features and caches (:data:`NAMED_CACHES`)."""
    if llvm_api.library() is None:
        raise CompileError("LLVM's C API is not available: cannot describe the host")
    triple = llvm_api.host_triple()
    cpu = llvm_api.host_cpu()
    features = llvm_api.host_features()
    bits, fma = _probe(triple, cpu, features)
    here = Target(triple, cpu, features, bits, _registers(triple, bits), fma,
                  _int8_dot(features), _caches(), host=True, l1_ways=_l1_ways())
    stand_in = os.environ.get(HOST_CPU_ENV, "")
    return _stand_in(here, stand_in) if stand_in and stand_in != cpu else here


def llc_host_name() -> str:
    """The CPU name that makes llc generate code for the host: ``native``, or the CPU that :data:`HOST_CPU_ENV`
    makes stand in for it."""
    return host().cpu if os.environ.get(HOST_CPU_ENV) else "native"


def _stand_in(here: Target, cpu: str) -> Target:
    """``cpu`` as the host in place of ``here``: an error unless LLVM knows it and this machine runs its code."""
    if cpu not in valid_cpus(here.triple):
        raise CompileError(f"{HOST_CPU_ENV}={cpu}: not a CPU LLVM knows for {here.triple} (`llc -mtriple={here.triple} "
                           f"-mcpu=help` lists them)")
    bits, fma = _probe(here.triple, cpu, "")
    caches, ways = named_caches(cpu)
    target = Target(here.triple, cpu, "", bits, _registers(here.triple, bits), fma, _named_int8_dot(here.triple, cpu),
                    caches, host=True, l1_ways=ways)
    missing = [n for n in target.int8_dot if n not in here.int8_dot]
    if bits > here.vector_bits or (fma and not here.fma) or missing:
        raise CompileError(f"{HOST_CPU_ENV}={cpu}: this machine's CPU ({here.cpu}) cannot run its code (it has "
                           f"{here.vector_bits}-bit vectors{'' if here.fma else ', no FMA'}"
                           f"{', no ' + ', '.join(missing) if missing else ''})")
    return target


def cannot_run(target: Target) -> str:
    """Why code for ``target`` cannot run on this machine ("" when it can): another architecture, vectors wider
    than the host's (AVX-512 code on an AVX2 machine), or int8 dot-product instructions the host lacks (the int8
    kernels of ``alderlake`` code use AVX-VNNI, which a Zen 3 does not have: its JIT would stop on an illegal
    instruction; refused for float models too, as LLVM may use any feature of the CPU it is given). Code for an
    older CPU of the host's family runs."""
    here = host()
    if target.triple.split("-")[0] != here.triple.split("-")[0]:
        return f"this machine is {here.triple}"
    if target.vector_bits > here.vector_bits or (target.fma and not here.fma):
        return f"this machine's CPU ({here.cpu}) has {here.vector_bits}-bit vectors{'' if here.fma else ', no FMA'}"
    missing = [n for n in target.int8_dot if n not in here.int8_dot]
    if missing:
        return f"this machine's CPU ({here.cpu}) has no {', '.join(missing)}, which code for {target.cpu} uses"
    return ""


@functools.cache
def valid_cpus(triple: str) -> tuple[str, ...]:
    """The CPU names LLVM knows for ``triple`` (``llc -mcpu=help``)."""
    out = subprocess.run([llvm_tool("llc"), f"-mtriple={triple}", "-mcpu=help"], capture_output=True, text=True,
                         timeout=60, check=False)
    text = out.stdout + out.stderr
    section = text.split("Available CPUs for this target:", 1)[-1].split("Available features", 1)[0]
    return tuple(line.split()[0] for line in section.splitlines() if line.strip() and " - " in line)


def named(cpu: str | None = None, triple: str | None = None) -> Target:
    """The target of ``cpu`` on ``triple`` (each defaults to the host's): an unknown name is an error that says
    where the valid names come from."""
    if (cpu is None or cpu in HOST_CPU_NAMES) and triple is None:
        return host()
    base = host()
    triple = triple or base.triple
    if cpu is None or cpu in HOST_CPU_NAMES:
        if triple != base.triple:
            raise CompileError(f"give a --target-cpu for triple '{triple}' (see `llc -mtriple={triple} -mcpu=help`)")
        return base
    arch = triple.split("-")[0]
    if arch not in SUPPORTED_ARCHS:
        raise CompileError(f"target triple '{triple}' is not supported: glow_mlir makes code for little-endian "
                           f"{', '.join(sorted(set(SUPPORTED_ARCHS.values())))} triples (big-endian targets and 32-bit "
                           f"Arm application cores are not supported yet)")
    known = valid_cpus(triple)
    if known and cpu not in known:
        raise CompileError(f"unknown target CPU '{cpu}' for {triple}: the valid names are LLVM's "
                           f"(`llc -mtriple={triple} -mcpu=help` lists {len(known)}, e.g. "
                           f"{', '.join(known[:6])})")
    if triple == base.triple and cpu == base.cpu:
        return base
    refusal = _llc_refusal(triple, cpu)
    if refusal:
        raise CompileError(f"target CPU '{cpu}' cannot run {triple} code: {refusal}")
    bits, fma = _probe(triple, cpu, "")
    caches, ways = named_caches(cpu)
    return Target(triple, cpu, "", bits, _registers(triple, bits), fma, _named_int8_dot(triple, cpu), caches,
                  l1_ways=ways)


#: a module any CPU of a triple can compile
_TRIVIAL_IR = "define void @f() {\n  ret void\n}\n"


@functools.cache
def _llc_refusal(triple: str, cpu: str) -> str:
    """What llc says when it cannot make code for ``cpu`` on ``triple`` ("" when it can). Some CPUs that llc lists
    for a triple cannot run it (i686, pentium4 and the other 32-bit x86 CPUs on x86_64): LLVM's C API would end this
    process on them with a fatal error, where llc, a process of its own, reports it."""
    out = subprocess.run([llvm_tool("llc"), f"-mtriple={triple}", f"-mcpu={cpu}", "-o", os.devnull],
                         input=_TRIVIAL_IR, capture_output=True, text=True, timeout=60, check=False)
    if out.returncode == 0:
        return ""
    lines = [line.removeprefix("LLVM ERROR: ") for line in out.stderr.strip().splitlines()]
    return lines[0] if lines else f"llc exited with {out.returncode}"


def named_caches(cpu: str) -> tuple[dict[str, int], int]:
    """The caches and L1D ways of the named CPU ``cpu`` (:data:`NAMED_CACHES`, else the defaults)."""
    if cpu not in NAMED_CACHES:
        return dict(DEFAULT_CACHES), DEFAULT_L1_WAYS
    l1d, ways, l2 = NAMED_CACHES[cpu]
    return {**DEFAULT_CACHES, "l1d": l1d << 10, "l2": l2 << 10}, ways


#: x86 CPUs (LLVM's names) with AVX-512 VNNI and with AVX-VNNI, from the processor feature lists of LLVM's X86.td:
#: LLVM's C API gives no feature list for a named CPU, and asking it to select vpdpbusd for one without would abort
_AVX512VNNI_CPUS = frozenset({"cascadelake", "cooperlake", "icelake-client", "icelake-server", "rocketlake",
                              "tigerlake", "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d",
                              "diamondrapids", "znver4", "znver5"})
_AVXVNNI_CPUS = frozenset({"alderlake", "raptorlake", "meteorlake", "arrowlake", "arrowlake-s", "lunarlake",
                           "pantherlake", "gracemont", "sierraforest", "grandridge", "clearwaterforest",
                           "sapphirerapids", "emeraldrapids", "graniterapids", "graniterapids-d", "diamondrapids",
                           "znver5"})


def _named_int8_dot(triple: str, cpu: str) -> tuple[str, ...]:
    """The x86 int8 dot-product extensions of a named CPU (none known for other architectures yet)."""
    if not _x86(triple):
        return ()
    return tuple(n for n, cpus in (("avx512vnni", _AVX512VNNI_CPUS), ("avxvnni", _AVXVNNI_CPUS)) if cpu in cpus)
