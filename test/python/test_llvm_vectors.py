"""The vector rewrites of backend/kernels/llvm_vectors.py (what a 32-bit target's pipeline does in place of
convert-vector-to-llvm's own: strided slices, n-D FMAs) computed, JIT compiled on this host, against numpy."""

from __future__ import annotations

import ctypes

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager
from mlir.runtime import get_ranked_memref_descriptor

from glow_mlir.backend.kernels import llvm_vectors

PROGRAM = """
func.func @f(%x: memref<32xf32>, %s: memref<8xf32>, %a: memref<24xf32>, %e: memref<8xf32>, %i: memref<32xf32>,
             %j: memref<8xf32>, %r: memref<24xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %fx = vector.load %x[%c0] : memref<32xf32>, vector<32xf32>
  %vx = vector.shape_cast %fx : vector<32xf32> to vector<4x8xf32>
  %fs = vector.load %s[%c0] : memref<8xf32>, vector<8xf32>
  %vs = vector.shape_cast %fs : vector<8xf32> to vector<2x4xf32>
  %ex = vector.extract_strided_slice %vx {offsets = [1, 3], sizes = [2, 4], strides = [1, 1]} : vector<4x8xf32> to vector<2x4xf32>
  %fe = vector.shape_cast %ex : vector<2x4xf32> to vector<8xf32>
  vector.store %fe, %e[%c0] : memref<8xf32>, vector<8xf32>
  %in = vector.insert_strided_slice %vs, %vx {offsets = [2, 1], strides = [1, 1]} : vector<2x4xf32> into vector<4x8xf32>
  %fi = vector.shape_cast %in : vector<4x8xf32> to vector<32xf32>
  vector.store %fi, %i[%c0] : memref<32xf32>, vector<32xf32>
  %row = vector.extract %vs[1] : vector<4xf32> from vector<2x4xf32>
  %x0 = vector.extract %vx[0] : vector<8xf32> from vector<4x8xf32>
  %one = vector.insert_strided_slice %row, %x0 {offsets = [3], strides = [1]} : vector<4xf32> into vector<8xf32>
  vector.store %one, %j[%c0] : memref<8xf32>, vector<8xf32>
  %fa = vector.load %a[%c0] : memref<24xf32>, vector<24xf32>
  %va = vector.shape_cast %fa : vector<24xf32> to vector<3x2x4xf32>
  %f = vector.fma %va, %va, %va : vector<3x2x4xf32>
  %ff = vector.shape_cast %f : vector<3x2x4xf32> to vector<24xf32>
  vector.store %ff, %r[%c0] : memref<24xf32>, vector<24xf32>
  return
}
"""


def test_strided_slices_and_nd_fma_compute_what_numpy_does() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    s = rng.standard_normal((2, 4)).astype(np.float32)
    a = rng.standard_normal((3, 2, 4)).astype(np.float32)
    outs = [np.zeros((2, 4), np.float32), np.zeros((4, 8), np.float32), np.zeros(8, np.float32),
            np.zeros((3, 2, 4), np.float32)]
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(PROGRAM)
        assert llvm_vectors.lower(module.operation) == 4
        text = str(module)
        assert "strided_slice" not in text and "vector<3x2x4xf32>, vector<3x2x4xf32>" not in text
        PassManager.parse("builtin.module(convert-vector-to-llvm,convert-to-llvm,reconcile-unrealized-casts)").run(
            module.operation)
        engine = ExecutionEngine(module, opt_level=2)
        flat = [v.reshape(-1) for v in (x, s, a, *outs)]  # views: the outputs are written through them
        args = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(v))) for v in flat]
        engine.invoke("f", *args)
    want_i = x.copy()
    want_i[2:4, 1:5] = s
    want_j = x[0].copy()
    want_j[3:7] = s[1]
    np.testing.assert_array_equal(outs[0], x[1:3, 3:7])
    np.testing.assert_array_equal(outs[1], want_i)
    np.testing.assert_array_equal(outs[2], want_j)
    np.testing.assert_allclose(outs[3], a * a + a, rtol=1e-6)
