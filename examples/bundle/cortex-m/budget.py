"""What each network's firmware budgets on Cortex-M, as a markdown table: code (.text, compiled for speed, O3, and
for size, Oz), flash (constant weights and the code's read-only data), RAM (inputs and outputs, activations) and the
stack of the deepest call chain (O3), for float32 and int8 (quantized from a profile of noisy copies of the model's
reference input, channelwise). Sizes of the object only: the firmware's own startup, C library and runner come on
top.

    python examples/bundle/cortex-m/budget.py [--models ../shared/models] [--cpus cortex-m4,cortex-m7]
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
from pathlib import Path

import numpy as np
import onnx

import glow_mlir.api as glow
from glow_mlir.quantization.annotate import QuantizationOptions
from glow_mlir.quantization.profile import profile

HERE = Path(__file__).resolve().parent
TRIPLES = {"cortex-m4": "thumbv7em-none-eabihf", "cortex-m7": "thumbv7em-none-eabihf",
           "cortex-m33": "thumbv8m.main-none-eabihf", "cortex-m55": "thumbv8.1m.main-none-eabihf"}


def kws(tmp: Path) -> Path:
    """The DS-CNN keyword spotter of kws_model.py with a random MFCC input beside it."""
    spec = importlib.util.spec_from_file_location("kws_model", HERE / "kws_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = tmp / "kws.onnx"
    onnx.save(module.kws_model(), path)
    np.savez(tmp / "kws.io.npz", in_mfcc=np.random.default_rng(1).standard_normal((1, 1, 49, 10)).astype(np.float32))
    return path


def quantization(model: Path) -> QuantizationOptions:
    data = np.load(model.with_suffix(".io.npz"))
    (key,) = [k for k in data.files if k.startswith("in_")]
    rng = np.random.default_rng(0)
    feeds = [{key[3:]: (data[key] + 0.1 * rng.standard_normal(data[key].shape)).astype(np.float32)}
             for _ in range(8)]
    return QuantizationOptions(profile(model, feeds, threads=1), channelwise=True)


def kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--models", default=str(HERE.parents[2].parent / "shared" / "models"))
    p.add_argument("--networks", default="mlp_mnist,lenet5,digits_cnn,kws")
    p.add_argument("--cpus", default="cortex-m4,cortex-m7")
    args = p.parse_args()
    print("| network | CPU | .text float32 O3 / Oz | .text int8 O3 / Oz | flash float32 / int8 | RAM float32 / int8 "
          "| stack float32 / int8 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for name in args.networks.split(","):
            model = kws(tmp) if name == "kws" else Path(args.models) / f"{name}.onnx"
            int8 = quantization(model)
            for cpu in args.cpus.split(","):
                text, flash, ram, stack = {}, {}, {}, {}
                for precision, q in (("float32", None), ("int8", int8)):
                    for level in ("O3", "Oz"):
                        options = glow.CompileOptions(threads=1, target_cpu=cpu, target_triple=TRIPLES[cpu],
                                                      quantization=q)
                        files, _ = glow.emit_bundle(str(model), tmp / "b", glow.BundleOptions(
                            target_cpu=cpu, opt_level=level), options)
                        b, memory = files.budget, files.networks[0].program.memory
                        text[precision, level] = b.text
                        flash[precision] = memory.constant_weights + b.rodata
                        ram[precision] = memory.mutable_weights + memory.activations
                        stack[precision, level] = b.stack
                print(f"| {name} | {cpu} | {kib(text['float32', 'O3'])} / {kib(text['float32', 'Oz'])} | "
                      f"{kib(text['int8', 'O3'])} / {kib(text['int8', 'Oz'])} | {kib(flash['float32'])} / "
                      f"{kib(flash['int8'])} | {kib(ram['float32'])} / {kib(ram['int8'])} | "
                      f"{stack['float32', 'O3']} / {stack['int8', 'O3']} B |", flush=True)


if __name__ == "__main__":
    main()
