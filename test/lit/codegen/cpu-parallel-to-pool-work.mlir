// cpu-parallel-to-pool with flops-per-thread / bytes-per-thread: a loop asks the pool for no more threads than its
// work is worth (float operations and bytes moved by one task, scf.for trip counts multiplied in, times the tasks),
// at least two, at most the pass's threads and the loop's tasks.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-parallel-to-pool{threads=16 flops-per-thread=4096 bytes-per-thread=4096})' | FileCheck %s
// Without the options every loop asks for the pass's threads (at most its tasks).
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-parallel-to-pool{threads=16})' | FileCheck %s --check-prefix=ALL

// 16 tasks of 64 FMAs on 16 lanes: 16 x 2048 flops = 32768 flops, worth 8 threads of 4096.
// CHECK-LABEL: func.func @fmas(
// CHECK:       %[[T:.+]] = llvm.mlir.constant(8 : i64) : i64
// CHECK:       llvm.call @glow_pool_run(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]])
// ALL-LABEL:   func.func @fmas(
// ALL:         %[[T:.+]] = llvm.mlir.constant(16 : i64) : i64
// ALL:         llvm.call @glow_pool_run(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]])
func.func @fmas(%y: memref<16x16xf32>, %a: vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %acc = scf.for %k = %c0 to %c64 step %c1 iter_args(%v = %a) -> vector<16xf32> {
      %f = vector.fma %a, %a, %v : vector<16xf32>
      scf.yield %f : vector<16xf32>
    }
    vector.store %acc, %y[%i, %c0] : memref<16x16xf32>, vector<16xf32>
    scf.reduce
  }
  return
}

// -----

// 16 tasks that each store 64 bytes: 1 KiB in all, worth less than one thread, yet split: two.
// CHECK-LABEL: func.func @small(
// CHECK:       %[[T:.+]] = llvm.mlir.constant(2 : i64) : i64
// CHECK:       llvm.call @glow_pool_run(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]])
func.func @small(%y: memref<16x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    vector.store %zero, %y[%i, %c0] : memref<16x16xf32>, vector<16xf32>
    scf.reduce
  }
  return
}

// -----

// 16 tasks that copy 64 rows of 64 bytes each (a load and a store per row): 16 x 8 KiB, worth all 16 threads.
// CHECK-LABEL: func.func @copies(
// CHECK:       %[[T:.+]] = llvm.mlir.constant(16 : i64) : i64
// CHECK:       llvm.call @glow_pool_run(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]])
func.func @copies(%x: memref<16x64x16xf32>, %y: memref<16x64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    scf.for %r = %c0 to %c64 step %c1 {
      %v = vector.load %x[%i, %r, %c0] : memref<16x64x16xf32>, vector<16xf32>
      vector.store %v, %y[%i, %r, %c0] : memref<16x64x16xf32>, vector<16xf32>
    }
    scf.reduce
  }
  return
}
