// cpu-parallel-to-pool: each scf.parallel without reductions becomes a task function @<func>_task<k>(ctx, i) and a
// call to the worker pool; the values the body uses from outside cross in one struct in a stack slot of the caller
// (memrefs as their LLVM descriptors, indices as i64), constants are cloned into the task.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-parallel-to-pool{threads=4})' | FileCheck %s
// The whole lowering links: the casts around the descriptors cancel, nothing of memref or scf is left.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-parallel-to-pool{threads=4},convert-scf-to-cf,expand-strided-metadata,lower-affine,convert-to-llvm,reconcile-unrealized-casts)' | FileCheck %s --check-prefix=LLVM

// CHECK:       llvm.func @glow_pool_run(!llvm.ptr, !llvm.ptr, i64, i64)
// CHECK-LABEL: func.func @rows(
// CHECK-SAME:  %[[X:[^:]+]]: memref<8x16xf32>, %[[Y:[^:]+]]: memref<8x16xf32>, %[[F:[^:]+]]: f32)
// CHECK:       %[[SLOT:.+]] = llvm.alloca %{{.+}} x !llvm.struct<(struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>, f32)>
// CHECK:       %[[DX:.+]] = builtin.unrealized_conversion_cast %[[X]] : memref<8x16xf32> to !llvm.struct
// CHECK:       llvm.store %[[DX]]
// CHECK:       llvm.store %[[F]]
// CHECK:       %[[FN:.+]] = constant @rows_task0 : (!llvm.ptr, i64) -> ()
// CHECK:       %[[FP:.+]] = builtin.unrealized_conversion_cast %[[FN]]
// CHECK:       %[[N:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK:       %[[T:.+]] = llvm.mlir.constant(4 : i64) : i64
// CHECK:       llvm.call @glow_pool_run(%[[FP]], %[[SLOT]], %[[N]], %[[T]])
// CHECK-NOT:   scf.parallel
// CHECK-LABEL: func.func private @rows_task0(
// CHECK-SAME:  %[[CTX:[^:]+]]: !llvm.ptr, %[[I:[^:]+]]: i64)
// CHECK:       arith.constant 2.000000e+00 : f32
// CHECK:       llvm.getelementptr %[[CTX]][0, 0]
// CHECK:       builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<{{.+}}> to memref<8x16xf32>
// CHECK:       arith.index_cast %[[I]] : i64 to index
// CHECK:       memref.subview
// CHECK:       arith.mulf
// CHECK:       return
// LLVM-LABEL:  llvm.func @rows(
// LLVM:        llvm.call @glow_pool_run
// LLVM-LABEL:  llvm.func @rows_task0(
// LLVM-NOT:    unrealized_conversion_cast
// LLVM:        llvm.return
func.func @rows(%x: memref<8x16xf32>, %y: memref<8x16xf32>, %f: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %two = arith.constant 2.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %x[%i, %j] : memref<8x16xf32>
      %row = memref.subview %y[%i, 0] [1, 16] [1, 1] : memref<8x16xf32> to memref<16xf32, strided<[1], offset: ?>>
      %a = arith.mulf %v, %f : f32
      %b = arith.mulf %a, %two : f32
      memref.store %b, %row[%j] : memref<16xf32, strided<[1], offset: ?>>
    }
    scf.reduce
  }
  return
}

// -----

// Two dims with dynamic bounds: the trip counts are computed at the call site, one task per point, the point
// recovered by division with the inner trip count (which crosses in the struct with the bounds and steps).
// CHECK-LABEL: func.func @grid(
// CHECK:       %[[C0:.+]] = arith.ceildivsi
// CHECK:       %[[C1:.+]] = arith.ceildivsi
// CHECK:       %[[TOTAL:.+]] = arith.muli %[[C0]], %[[C1]]
// CHECK:       %[[N:.+]] = arith.index_cast %[[TOTAL]] : index to i64
// CHECK:       llvm.call @glow_pool_run(%{{.+}}, %{{.+}}, %[[N]], %{{.+}})
// CHECK-LABEL: func.func private @grid_task0(
// CHECK-SAME:  %{{[^:]+}}: !llvm.ptr, %[[K:[^:]+]]: i64)
// CHECK:       %[[P:.+]] = arith.index_cast %[[K]] : i64 to index
// CHECK:       arith.remsi %[[P]]
// CHECK:       arith.divsi %[[P]]
// CHECK:       memref.store
func.func @grid(%y: memref<?x?xf32>, %m: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c2) {
    memref.store %zero, %y[%i, %j] : memref<?x?xf32>
    scf.reduce
  }
  return
}

// -----

// A loop of three tasks asks for three threads, not the four the pass may use.
// CHECK-LABEL: func.func @three(
// CHECK:       %[[T:.+]] = llvm.mlir.constant(3 : i64) : i64
// CHECK:       llvm.call @glow_pool_run(%{{.+}}, %{{.+}}, %{{.+}}, %[[T]])
func.func @three(%y: memref<3x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant dense<0.0> : vector<16xf32>
  scf.parallel (%i) = (%c0) to (%c3) step (%c1) {
    vector.store %zero, %y[%i, %c0] : memref<3x16xf32>, vector<16xf32>
    scf.reduce
  }
  return
}

// -----

// A result-less scf.forall (a kernel's tile loop once bufferized) is outlined the same way, its static bounds as
// constants: no scf.forall-to-parallel step between.
// CHECK-LABEL: func.func @tiles(
// CHECK:       llvm.call @glow_pool_run
// CHECK-NOT:   scf.forall
// CHECK-LABEL: func.func private @tiles_task0(
// CHECK:       arith.muli %{{.+}}, %{{.+}} : index
// CHECK:       vector.store
// LLVM-LABEL:  llvm.func @tiles(
// LLVM:        llvm.call @glow_pool_run
func.func @tiles(%y: memref<8x16xf32>) {
  %zero = arith.constant dense<0.0> : vector<16xf32>
  %c0 = arith.constant 0 : index
  scf.forall (%i) = (0) to (8) step (2) {
    vector.store %zero, %y[%i, %c0] : memref<8x16xf32>, vector<16xf32>
  }
  return
}

// -----

// Negative: a loop with a reduction stays as it is (convert-scf-to-cf runs it serially); a function without parallel
// loops gets no declaration of the pool.
// CHECK-NOT:   llvm.func @glow_pool_run
// CHECK-LABEL: func.func @sum(
// CHECK:       scf.parallel
// CHECK:       scf.reduce
// CHECK-NOT:   glow_pool_run
func.func @sum(%x: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<8xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  return %s : f32
}
