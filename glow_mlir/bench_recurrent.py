"""``python -m glow_mlir.bench_recurrent``: one LSTM and one GRU layer against onnxruntime, side by side.

Each layer is a one-node ONNX model (hidden and input size ``--hidden``, ``--steps`` time steps, forward, random
weights with both biases) run at each ``--batch`` on ``--threads`` threads by both engines in this one process; the
table gives both medians, their ratio (above 1: glow_mlir is slower) and glow_mlir's cold compile time, which does
not grow with the number of steps (the recurrence is a loop: see ``glow_mlir/importer/handlers/recurrent.py``).
Outputs are checked against onnxruntime's (rtol 1e-4) before timing. Needs the ``bench`` extra (onnxruntime).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .bench import _ort_session, time_blocks

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def layer_model(op: str, steps: int, batch: int, size: int, seed: int = 0) -> onnx.ModelProto:
    """A one-node ``op`` model: X [steps, batch, size], hidden ``size``, its Y as the output."""
    rng = np.random.default_rng(seed)
    g = GATES[op]
    inits = [numpy_helper.from_array(rng.uniform(-0.1, 0.1, shape).astype(np.float32), name)
             for name, shape in (("W", (1, g * size, size)), ("R", (1, g * size, size)), ("B", (1, 2 * g * size)))]
    node = helper.make_node(op, ["X", "W", "R", "B"], ["Y"], hidden_size=size)
    graph = helper.make_graph([node], op.lower(), [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                                                                  [steps, batch, size])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    return model


def bench_layer(op: str, steps: int, batch: int, size: int, threads: int, runs: int) -> str:
    """One row of the table."""
    from . import api

    model = layer_model(op, steps, batch, size)
    x = np.random.default_rng(1).standard_normal((steps, batch, size)).astype(np.float32)
    start = time.perf_counter()
    compiled = api.compile(model, threads=threads, cache=False)
    compile_s = time.perf_counter() - start
    session = _ort_session(model, threads)
    np.testing.assert_allclose(compiled.run({"X": x})["Y"], session.run(None, {"X": x})[0], rtol=1e-4, atol=1e-5)
    times = time_blocks({"glow": lambda: compiled.run({"X": x}), "ort": lambda: session.run(None, {"X": x})}, runs,
                        threads)
    glow, ort = times["glow"], times["ort"]
    return (f"| {op} | {steps} | {batch} | {size} | {threads} | {glow.median_ms:.3f} | {ort.median_ms:.3f} | "
            f"{glow.median_ms / ort.median_ms:.2f} | {compile_s:.2f} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m glow_mlir.bench_recurrent", description=__doc__.split("\n\n")[0])
    p.add_argument("--ops", default="LSTM,GRU", help="comma-separated layers (LSTM, GRU, RNN; default LSTM,GRU)")
    p.add_argument("--steps", type=int, default=64, help="time steps (default 64)")
    p.add_argument("--hidden", type=int, default=256, help="hidden and input size (default 256)")
    p.add_argument("--batch", default="1,16", help="comma-separated batch sizes (default 1,16)")
    p.add_argument("--threads", type=int, default=1, help="threads of both engines (default 1)")
    p.add_argument("--runs", type=int, default=20, help="timed runs per engine (default 20)")
    args = p.parse_args(argv)
    print("| layer | steps | batch | hidden | threads | glow_mlir ms | onnxruntime ms | glow / ort | compile s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for op in args.ops.split(","):
        if op not in GATES:
            raise SystemExit(f"glow_mlir.bench_recurrent: unknown layer '{op}' (LSTM, GRU, RNN)")
        for batch in (int(b) for b in args.batch.split(",")):
            print(bench_layer(op, args.steps, batch, args.hidden, args.threads, args.runs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
