// cpu-tile-kernels on several threads: a matmul island whose L1 tiles for one core make too few tasks for the threads
// (fewer than 9/10 of them busy) takes the smaller tiles, multiples of the register tile, that leave the least work
// on the busiest thread (kernels/balance.py), counting each task's own cost; enough tasks keep the tiles.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=1 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=ONE
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=2 parallel-flops=1000000 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=TWO
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=16 parallel-flops=1000000 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=SIXTEEN

// mobilenet_v2's 1x1 384 -> 64 at 14x14 as a matmul of its pixels: 196 rows in 7x32 register tiles (they divide it)
// and L1 tiles of 49 rows, 4 of them. Two threads: 2 tasks of 2 tiles; sixteen: 28 rows x one panel, 7 x 2 tasks.
// ONE-LABEL:     func.func @pointwise_at_14(
// ONE-NOT:       scf.forall
// ONE:           scf.for %{{.+}} = %c0 to %c196 step %c49
// ONE:           vector<7x1x32xf32>
// ONE:           return
// TWO-LABEL:     func.func @pointwise_at_14(
// TWO:           scf.forall (%{{.+}}) in (2)
// TWO:           scf.for %{{.+}} = %c0 to %c98 step %c49
// TWO:           return
// SIXTEEN-LABEL: func.func @pointwise_at_14(
// SIXTEEN:       scf.forall (%{{.+}}, %{{.+}}) in (7, 2)
// SIXTEEN:       scf.for %{{.+}} = %c0 to %c28 step %c7
// SIXTEEN:       return
func.func @pointwise_at_14(%x: memref<1x14x14x384xf32>, %w: memref<2x1x1x384x32xf32>, %out: memref<1x14x14x64xf32>) {
  %y = memref.expand_shape %out [[0], [1], [2], [3, 4]] output_shape [1, 14, 14, 2, 32] : memref<1x14x14x64xf32> into memref<1x14x14x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x14x14x384xf32>, memref<2x1x1x384x32xf32>) outs(%y : memref<1x14x14x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// 784 pixels 32 -> 192: 14 L1 tiles of 56 rows. Two threads take 7 each; on sixteen 14 tasks keep 14 busy, and the
// smaller tiles that would keep all 16 cost more in tasks than they save: the tiles stay.
// ONE-LABEL:     func.func @pointwise_at_28(
// ONE-NOT:       scf.forall
// TWO-LABEL:     func.func @pointwise_at_28(
// TWO:           scf.forall (%{{.+}}) in (2)
// TWO:           scf.for %{{.+}} = %c0 to %c392 step %c56
// TWO:           return
// SIXTEEN-LABEL: func.func @pointwise_at_28(
// SIXTEEN:       scf.forall (%{{.+}}) in (14)
// SIXTEEN:       scf.for %{{.+}} = %c0 to %c56 step %c8
// SIXTEEN:       return
func.func @pointwise_at_28(%x: memref<1x28x28x32xf32>, %w: memref<6x1x1x32x32xf32>, %out: memref<1x28x28x192xf32>) {
  %y = memref.expand_shape %out [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 6, 32] : memref<1x28x28x192xf32> into memref<1x28x28x6x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x28x28x32xf32>, memref<6x1x1x32x32xf32>) outs(%y : memref<1x28x28x6x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A fully connected layer of batch 1, 512 -> 1000 (1.02 MFLOP): a piece of 896 columns in 7 tiles of 128 and strips
// of 64, 32 and 8. Whether the piece runs across the threads follows the whole contraction's FLOPs (the piece alone
// is below parallel-flops): 7 tasks; the strips, small themselves, stay on the calling thread.
// ONE-LABEL:     func.func @fc_batch1(
// ONE-NOT:       scf.forall
// ONE:           return
// TWO-LABEL:     func.func @fc_batch1(
// TWO:           memref.subview %{{.+}}[0, 0] [512, 896]
// TWO:           scf.forall (%{{.+}}) in (7)
// TWO:           memref.subview %{{.+}}[0, 896] [512, 64]
// TWO-NOT:       scf.forall
// TWO:           return
func.func @fc_batch1(%a: memref<1x512xf32>, %b: memref<512x1000xf32>, %c: memref<1x1000xf32>) {
  linalg.matmul ins(%a, %b : memref<1x512xf32>, memref<512x1000xf32>) outs(%c : memref<1x1000xf32>)
  return
}

// -----

// Its strips alone, a contraction of their own (0.11 MFLOP): no tasks.
// TWO-LABEL:     func.func @fc_strip(
// TWO-NOT:       scf.forall
// TWO:           return
func.func @fc_strip(%a: memref<1x512xf32>, %b: memref<512x104xf32>, %c: memref<1x104xf32>) {
  linalg.matmul ins(%a, %b : memref<1x512xf32>, memref<512x104xf32>) outs(%c : memref<1x104xf32>)
  return
}
