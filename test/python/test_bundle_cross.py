"""Bundles cross-compiled for AArch64 Linux: the object is built for the target CPU (NEON tiles: 4 lanes, 32
registers), the example runner is built with the AArch64 cross compiler (static) and run under qemu-aarch64, and its
outputs equal the host JIT's within 1e-5. Needs gcc-aarch64-linux-gnu and qemu-user
(examples/bundle/install-cross-tools.sh); skips naming the missing tool where they are absent."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT, check_runner_outputs, model_path, runner_inputs

import glow_mlir.api as glow
from glow_mlir.backend.bundle import undefined_symbols

CROSS_CC = shutil.which("aarch64-linux-gnu-gcc")
QEMU = shutil.which("qemu-aarch64")
BUILD = ROOT / "examples" / "bundle" / "build.sh"
TRIPLE = "aarch64-linux-gnu"
#: what an AArch64 bundle may need from the C library and libm (as for host bundles)
LIBC = {"memcpy", "memmove", "memset"}
LIBM = re.compile(r"(exp|expm1|log|log1p|log2|log10|sqrt|cbrt|pow|erf|erfc|tanh|sinh|cosh|sin|cos|tan|asin|acos|atan"
                  r"|atan2|fmod|floor|ceil|round|trunc|fabs|fmin|fmax|fma)f?")
EM_AARCH64 = 183


def _bundle(name: str, cpu: str, tmp: Path):
    options = glow.CompileOptions(threads=1, target_cpu=cpu, target_triple=TRIPLE)
    files, _ = glow.emit_bundle(str(model_path(name)), tmp / "bundle", glow.BundleOptions(target_cpu=cpu), options)
    return files


@pytest.mark.parametrize("cpu", ["cortex-a72", "neoverse-n1"])
def test_the_object_is_for_aarch64_and_needs_only_libc_and_libm(cpu: str, tmp_path: Path) -> None:
    files = _bundle("lenet5", cpu, tmp_path)
    head = files.object.read_bytes()[:20]
    assert head[:4] == b"\x7fELF" and head[4] == 2 and int.from_bytes(head[18:20], "little") == EM_AARCH64
    needed = set(undefined_symbols(files.object))
    assert {s for s in needed if s not in LIBC and not LIBM.fullmatch(s)} == set()
    assert f"{TRIPLE}, CPU {cpu}" in files.header.read_text()


@pytest.mark.skipif(CROSS_CC is None, reason="aarch64-linux-gnu-gcc not installed (examples/bundle/"
                                             "install-cross-tools.sh)")
@pytest.mark.skipif(QEMU is None, reason="qemu-aarch64 not installed (examples/bundle/install-cross-tools.sh)")
@pytest.mark.parametrize("name", ["mlp_mnist", "lenet5", "digits_cnn"])
def test_an_aarch64_bundle_runs_under_qemu_as_the_jit_does(name: str, tmp_path: Path) -> None:
    model = model_path(name)
    files = _bundle(name, "cortex-a72", tmp_path)
    runner = tmp_path / f"{name}_runner"
    built = subprocess.run(["sh", str(BUILD), str(files.directory), name, "-o", str(runner)], capture_output=True,
                           text=True, env=dict(os.environ, CC=f"{CROSS_CC} -static"), check=False)
    assert built.returncode == 0, built.stderr
    jit = glow.compile(model, threads=1)
    inputs, files_in, out = runner_inputs(jit, model, tmp_path)
    done = subprocess.run([QEMU, str(runner), str(files.weights[name]), *files_in, "--out", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    check_runner_outputs(jit, inputs, out, name)


@pytest.mark.skipif(CROSS_CC is None, reason="aarch64-linux-gnu-gcc not installed (examples/bundle/"
                                             "install-cross-tools.sh)")
@pytest.mark.skipif(QEMU is None, reason="qemu-aarch64 not installed (examples/bundle/install-cross-tools.sh)")
def test_an_int8_aarch64_bundle_runs_under_qemu_as_the_host_int8_code_does(tmp_path: Path) -> None:
    """digits_cnn quantized from a profile (channelwise), cross-compiled for AArch64: AArch64 has no int8
    dot-product kernel yet, so its int8 convolutions are linalg's generic ones; its outputs equal the host's int8
    code (VNNI or int16 pairs) within float rounding: the same integer arithmetic."""
    import numpy as np

    from glow_mlir.quantization.annotate import QuantizationOptions
    from glow_mlir.quantization.profile import profile

    name = "digits_cnn"
    model = model_path(name)
    data = np.load(model.with_suffix(".io.npz"))
    x = next(data[k] for k in data.files if k.startswith("in_"))
    rng = np.random.default_rng(0)
    feeds = [{"image": (x + 0.05 * rng.standard_normal(x.shape)).astype(np.float32)} for _ in range(4)]
    quantization = QuantizationOptions(profile(model, feeds, threads=1), channelwise=True)
    options = glow.CompileOptions(threads=1, target_cpu="neoverse-n1", target_triple=TRIPLE, quantization=quantization)
    files, stages = glow.emit_bundle(str(model), tmp_path / "bundle", glow.BundleOptions(target_cpu="neoverse-n1"),
                                     options)
    assert "qconv2d" in next(s.text for s in stages[0].stages if s.name == "quantize")
    runner = tmp_path / f"{name}_runner"
    built = subprocess.run(["sh", str(BUILD), str(files.directory), name, "-o", str(runner)], capture_output=True,
                           text=True, env=dict(os.environ, CC=f"{CROSS_CC} -static"), check=False)
    assert built.returncode == 0, built.stderr
    host = glow.compile(model, threads=1, quantization=quantization)
    inputs, files_in, out = runner_inputs(host, model, tmp_path)
    done = subprocess.run([QEMU, str(runner), str(files.weights[name]), *files_in, "--out", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    check_runner_outputs(host, inputs, out, name)
