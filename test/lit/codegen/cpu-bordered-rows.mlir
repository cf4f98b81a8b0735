// cpu-tile-kernels on a pointwise convolution run as a matmul of its pixels whose output, after its activation, is
// copied into the interior of the next convolution's bordered input (the copy's input dead after it:
// glow.dead_input): the islands are one image row each (panels.row_islands), each writing its row of the interior
// directly, so the copy is no pass of its own and the dest buffer is not written. Only where a register tile
// divides the row (AVX2's 6 x 16 does not at 14 pixels) and, on several threads, the rows keep them busy or their
// imbalance costs the busiest thread less than its share of the copy.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=ONE
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu},one-shot-bufferize,func.func(canonicalize,cse))' | FileCheck %s --check-prefix=BUF
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=2 parallel-flops=1000000 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu},one-shot-bufferize,func.func(canonicalize,cse))' | FileCheck %s --check-prefix=TWO
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=16 parallel-flops=1000000 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=SIXTEEN

// 28 image rows of 28 pixels, 32 -> 64 channels: an scf.for over the rows, each island a row of the matmul (register
// tiles of 7 pixels x 32 on AVX-512, 4 x 32 on AVX2) writing that row of the interior; no copy left, %d untouched.
// ONE-LABEL: func.func @at_28(
// ONE-SAME:  %[[D:[^:]+]]: memref<1x28x28x64xf32>, %[[E:[^:]+]]: memref<1x28x28x64xf32, strided<[57600, 1920, 64, 1], offset: 1984>>)
// ONE-NOT:   %[[D]]
// ONE:       scf.for %[[R:[^ ]+]] = %{{.+}} to %c28 step %c1
// ONE-NOT:   %[[D]]
// ONE:       memref.subview %[[E]][0, %[[R]], 0, 0] [1, 1, 28, 64]
// ONE:       vector<7x1x32xf32>
// ONE:       arith.minimumf
// ONE:       bufferization.materialize_in_destination
// ONE-NOT:   linalg.generic
// ONE-NOT:   %[[D]]
// ONE:       return
// BUF-LABEL: func.func @at_28(
// BUF-NOT:   memref.alloc
// BUF-NOT:   linalg.generic
// BUF:       return
// AVX2-LABEL: func.func @at_28(
// AVX2:       scf.for %{{.+}} = %{{.+}} to %c28 step %c1
// AVX2:       vector<4x1x32xf32>
// AVX2-NOT:   linalg.generic
// AVX2:       return
// On two threads the rows are the tasks: two of 14 rows each.
// TWO-LABEL: func.func @at_28(
// TWO-SAME:  %[[E:[^:]+]]: memref<1x28x28x64xf32, strided<[57600, 1920, 64, 1], offset: 1984>>)
// TWO:       scf.forall (%{{.+}}) in (2)
// TWO:       scf.for %[[R:[^ ]+]] =
// TWO:       memref.subview %[[E]][0, %[[R]], 0, 0] [1, 1, 28, 64]
// TWO-NOT:   memref.alloc
// TWO-NOT:   linalg.generic
// TWO:       return
// On sixteen, 28 rows keep the threads 28 / 32 busy: the busiest thread's extra 448 cycles of FMAs cost less than
// its two rows of the copy (3,584 cycles), so the rows are still the tasks (28 of them) and no copy is left.
// SIXTEEN-LABEL: func.func @at_28(
// SIXTEEN-SAME:  %[[E:[^:]+]]: memref<1x28x28x64xf32, strided<[57600, 1920, 64, 1], offset: 1984>>)
// SIXTEEN:       scf.forall (%[[R:[^)]+]]) in (28)
// SIXTEEN:       memref.subview %[[E]][0, %[[R]], 0, 0] [1, 1, 28, 64]
// SIXTEEN-NOT:   linalg.generic
// SIXTEEN:       return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @at_28(%x: memref<1x28x28x32xf32>, %w: memref<2x1x1x32x32xf32>, %b: memref<64xf32>,
                       %d: memref<1x28x28x64xf32>,
                       %inner: memref<1x28x28x64xf32, strided<[57600, 1920, 64, 1], offset: 1984>>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  linalg.broadcast ins(%b : memref<64xf32>) outs(%d : memref<1x28x28x64xf32>) dimensions = [0, 1, 2]
  %y = memref.expand_shape %d [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 2, 32] : memref<1x28x28x64xf32> into memref<1x28x28x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x28x28x32xf32>, memref<2x1x1x32x32xf32>) outs(%y : memref<1x28x28x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%d : memref<1x28x28x64xf32>) {
  ^bb0(%o: f32):
    %0 = arith.maximumf %o, %zero : f32
    %1 = arith.minimumf %0, %six : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d : memref<1x28x28x64xf32>) outs(%inner : memref<1x28x28x64xf32, strided<[57600, 1920, 64, 1], offset: 1984>>)
      attrs = {glow.dead_input = 0 : i64} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// 14 pixels a row: AVX-512's 7 x 32 tile divides it; AVX2's register tile of 6 rows does not (a remainder strip in
// every row): the matmul of all 196 pixels (in tiles of 4, which divide them) and the copy after it.
// ONE-LABEL: func.func @at_14(
// ONE:       scf.for %{{.+}} = %{{.+}} to %c14 step %c1
// ONE:       vector<7x1x32xf32>
// ONE-NOT:   linalg.generic
// ONE:       return
// AVX2-LABEL: func.func @at_14(
// AVX2:       vector<4x1x32xf32>
// AVX2:       linalg.generic
// AVX2-SAME:  glow.dead_input = 0
// AVX2:       return
// TWO-LABEL: func.func @at_14(
// TWO:       scf.forall (%{{.+}}) in (2)
// TWO-NOT:   memref.alloc
// TWO-NOT:   linalg.generic
// TWO:       return
// On sixteen threads the 14 rows keep 14 busy; the 448 cycles that costs the busiest thread are fewer than its
// row of the copy (1,792): the rows are the tasks.
// SIXTEEN-LABEL: func.func @at_14(
// SIXTEEN-SAME:  %[[E:[^:]+]]: memref<1x14x14x128xf32, strided<[32768, 2048, 128, 1], offset: 2176>>)
// SIXTEEN:       scf.forall (%[[R:[^)]+]]) in (14)
// SIXTEEN:       memref.subview %[[E]][0, %[[R]], 0, 0] [1, 1, 14, 128]
// SIXTEEN-NOT:   linalg.generic
// SIXTEEN:       return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @at_14(%x: memref<1x14x14x64xf32>, %w: memref<4x1x1x64x32xf32>, %b: memref<128xf32>,
                       %d: memref<1x14x14x128xf32>,
                       %inner: memref<1x14x14x128xf32, strided<[32768, 2048, 128, 1], offset: 2176>>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  linalg.broadcast ins(%b : memref<128xf32>) outs(%d : memref<1x14x14x128xf32>) dimensions = [0, 1, 2]
  %y = memref.expand_shape %d [[0], [1], [2], [3, 4]] output_shape [1, 14, 14, 4, 32] : memref<1x14x14x128xf32> into memref<1x14x14x4x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x14x14x64xf32>, memref<4x1x1x64x32xf32>) outs(%y : memref<1x14x14x4x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%d : memref<1x14x14x128xf32>) {
  ^bb0(%o: f32):
    %0 = arith.maximumf %o, %zero : f32
    %1 = arith.minimumf %0, %six : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d : memref<1x14x14x128xf32>) outs(%inner : memref<1x14x14x128xf32, strided<[32768, 2048, 128, 1], offset: 2176>>)
      attrs = {glow.dead_input = 0 : i64} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// Negative: the copy's input is not dead after it (no glow.dead_input): the matmul writes %d, the copy stays.
// ONE-LABEL: func.func @live(
// ONE-SAME:  %[[D:[^:]+]]: memref<1x28x28x64xf32>, %[[E:[^:]+]]: memref<1x28x28x64xf32, strided
// ONE:       vector<8x1x32xf32>
// ONE:       linalg.generic
// ONE-SAME:  ins(%[[D]] : memref<1x28x28x64xf32>) outs(%[[E]] :
// ONE:       return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @live(%x: memref<1x28x28x32xf32>, %w: memref<2x1x1x32x32xf32>, %b: memref<64xf32>,
                       %d: memref<1x28x28x64xf32>,
                       %inner: memref<1x28x28x64xf32, strided<[57600, 1920, 64, 1], offset: 1984>>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  linalg.broadcast ins(%b : memref<64xf32>) outs(%d : memref<1x28x28x64xf32>) dimensions = [0, 1, 2]
  %y = memref.expand_shape %d [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 2, 32] : memref<1x28x28x64xf32> into memref<1x28x28x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x28x28x32xf32>, memref<2x1x1x32x32xf32>) outs(%y : memref<1x28x28x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%d : memref<1x28x28x64xf32>) {
  ^bb0(%o: f32):
    %0 = arith.maximumf %o, %zero : f32
    %1 = arith.minimumf %0, %six : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d : memref<1x28x28x64xf32>) outs(%inner : memref<1x28x28x64xf32, strided<[57600, 1920, 64, 1], offset: 1984>>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// The second image of a batch of two: row-major strides at an offset (no border), the same row islands.
// ONE-LABEL: func.func @batch_slice(
// ONE-SAME:  %[[E:[^:]+]]: memref<1x28x28x64xf32, strided<[50176, 1792, 64, 1], offset: 50176>>)
// ONE:       scf.for %[[R:[^ ]+]] = %{{.+}} to %c28 step %c1
// ONE:       memref.subview %[[E]][0, %[[R]], 0, 0] [1, 1, 28, 64]
// ONE-NOT:   linalg.generic
// ONE:       return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @batch_slice(%x: memref<1x28x28x32xf32>, %w: memref<2x1x1x32x32xf32>, %b: memref<64xf32>,
                       %d: memref<1x28x28x64xf32>,
                       %inner: memref<1x28x28x64xf32, strided<[50176, 1792, 64, 1], offset: 50176>>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  linalg.broadcast ins(%b : memref<64xf32>) outs(%d : memref<1x28x28x64xf32>) dimensions = [0, 1, 2]
  %y = memref.expand_shape %d [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 2, 32] : memref<1x28x28x64xf32> into memref<1x28x28x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x28x28x32xf32>, memref<2x1x1x32x32xf32>) outs(%y : memref<1x28x28x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%d : memref<1x28x28x64xf32>) {
  ^bb0(%o: f32):
    %0 = arith.maximumf %o, %zero : f32
    %1 = arith.minimumf %0, %six : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d : memref<1x28x28x64xf32>) outs(%inner : memref<1x28x28x64xf32, strided<[50176, 1792, 64, 1], offset: 50176>>)
      attrs = {glow.dead_input = 0 : i64} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// 14 rows of 14 pixels from 320 channels keep 14 of sixteen threads busy: the busiest thread's extra FMAs (2,240
// cycles) cost more than its row of the copy (1,792): the L1 tiles of the whole matmul are the tasks and the copy
// stays a pass of its own (from 256 channels up, at 14 x 14 on sixteen threads). One thread: the rows.
// SIXTEEN-LABEL: func.func @at_14_from_320(
// SIXTEEN:       scf.forall
// SIXTEEN:       linalg.generic
// SIXTEEN-SAME:  glow.dead_input = 0
// SIXTEEN:       return
// ONE-LABEL: func.func @at_14_from_320(
// ONE:       scf.for %{{.+}} = %{{.+}} to %c14 step %c1
// ONE:       vector<7x1x32xf32>
// ONE-NOT:   linalg.generic
// ONE:       return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @at_14_from_320(%x: memref<1x14x14x320xf32>, %w: memref<4x1x1x320x32xf32>, %b: memref<128xf32>,
                          %d: memref<1x14x14x128xf32>,
                          %inner: memref<1x14x14x128xf32, strided<[32768, 2048, 128, 1], offset: 2176>>) {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  linalg.broadcast ins(%b : memref<128xf32>) outs(%d : memref<1x14x14x128xf32>) dimensions = [0, 1, 2]
  %y = memref.expand_shape %d [[0], [1], [2], [3, 4]] output_shape [1, 14, 14, 4, 32] : memref<1x14x14x128xf32> into memref<1x14x14x4x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x14x14x320xf32>, memref<4x1x1x320x32xf32>) outs(%y : memref<1x14x14x4x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%d : memref<1x14x14x128xf32>) {
  ^bb0(%o: f32):
    %0 = arith.maximumf %o, %zero : f32
    %1 = arith.minimumf %0, %six : f32
    linalg.yield %1 : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%d : memref<1x14x14x128xf32>) outs(%inner : memref<1x14x14x128xf32, strided<[32768, 2048, 128, 1], offset: 2176>>)
      attrs = {glow.dead_input = 0 : i64} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
