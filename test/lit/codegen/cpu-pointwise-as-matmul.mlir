// cpu-tile-kernels on pointwise stride-1 convolutions on packed filters (convert-glowir-to-linalg's blocked generic,
// dest an expand_shape [N, OH, OW, F/B, B] of the output): from 32 input channels they run as a matmul of their
// pixels, [N x OH x OW, C] by the blocks as panels [F/B, C, B] (conv.make_matmul_islands), unless tiles of whole
// output rows take them (AVX-512 at 7 columns: conv.pixel_rows); fewer channels keep the row tiles.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX512
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2

// 784 pixels by 256 channels on two panels of 32: register tiles of 8 pixels x 32 (AVX-512), 4 x 32 (AVX2; on panels
// this wide every tile of 4 rows or more has the accumulators to run at the full rate, and 4 divides 784, where 6
// would leave a strip); no row tiles left.
// AVX512-LABEL: func.func @pointwise_at_28(
// AVX512:       memref.collapse_shape %{{.+}} : memref<1x28x28x256xf32> into memref<784x256xf32>
// AVX512:       memref.collapse_shape %{{.+}} : memref<2x1x1x256x32xf32> into memref<2x256x32xf32>
// AVX512:       memref.collapse_shape %{{.+}} : memref<1x28x28x64xf32> into memref<784x64xf32>
// AVX512:       vector<8x1x32xf32>
// AVX512-NOT:   memref.prefetch
// AVX512:       return
// AVX2-LABEL:   func.func @pointwise_at_28(
// AVX2:         memref<784x256xf32>
// AVX2:         vector<4x1x32xf32>
// AVX2:         return
func.func @pointwise_at_28(%x: memref<1x28x28x256xf32>, %w: memref<2x1x1x256x32xf32>, %out: memref<1x28x28x64xf32>) {
  %y = memref.expand_shape %out [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 2, 32] : memref<1x28x28x64xf32> into memref<1x28x28x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x28x28x256xf32>, memref<2x1x1x256x32xf32>) outs(%y : memref<1x28x28x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// AVX-512 at 7x7: tiles of two whole output rows (14 x 32, the next block's filter prefetched), not the matmul;
// AVX2, whose registers do not hold two rows, takes the matmul.
// AVX512-LABEL: func.func @pointwise_at_7(
// AVX512-NOT:   memref.collapse_shape
// AVX512:       memref.prefetch
// AVX512:       return
// AVX2-LABEL:   func.func @pointwise_at_7(
// AVX2:         memref.collapse_shape %{{.+}} : memref<1x7x7x512xf32> into memref<49x512xf32>
// AVX2:         return
func.func @pointwise_at_7(%x: memref<1x7x7x512xf32>, %w: memref<2x1x1x512x32xf32>, %out: memref<1x7x7x64xf32>) {
  %y = memref.expand_shape %out [[0], [1], [2], [3, 4]] output_shape [1, 7, 7, 2, 32] : memref<1x7x7x64xf32> into memref<1x7x7x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x7x7x512xf32>, memref<2x1x1x512x32xf32>) outs(%y : memref<1x7x7x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// 2048 channels at 7x7: a tile's 14 input pixels would lie 8 KiB apart, all in one L1 set, so no whole-row tiles on
// the input itself; with two blocks of filters the tiles of two rows over a spread copy of it would save less than the
// copy costs: the matmul, 7 pixels x 32 a register tile.
// AVX512-LABEL: func.func @many_channels_at_7(
// AVX512:       memref.collapse_shape %{{.+}} : memref<1x7x7x2048xf32> into memref<49x2048xf32>
// AVX512:       return
func.func @many_channels_at_7(%x: memref<1x7x7x2048xf32>, %w: memref<2x1x1x2048x32xf32>, %out: memref<1x7x7x64xf32>) {
  %y = memref.expand_shape %out [[0], [1], [2], [3, 4]] output_shape [1, 7, 7, 2, 32] : memref<1x7x7x64xf32> into memref<1x7x7x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x7x7x2048xf32>, memref<2x1x1x2048x32xf32>) outs(%y : memref<1x7x7x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The same input with 512 filters (16 blocks, resnet50's last stage): the tiles of two whole rows save more than the
// spread copy costs (conv._pixel_tiles), so they take the convolution from the matmul: the input is copied into pixels
// of 2064 channels, whose 14 pixels spread over the L1 sets, and the tiles prefetch the next block.
// AVX512-LABEL: func.func @many_channels_many_filters_at_7(
// AVX512-NOT:   memref.collapse_shape
// AVX512:       %[[WIDE:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x7x7x2064xf32>
// AVX512:       linalg.copy
// AVX512:       memref.prefetch
// AVX512-COUNT-28: vector.fma {{.+}} : vector<16xf32>
// AVX512:       memref.dealloc %[[WIDE]]
// AVX512:       return
func.func @many_channels_many_filters_at_7(%x: memref<1x7x7x2048xf32>, %w: memref<16x1x1x2048x32xf32>, %out: memref<1x7x7x512xf32>) {
  %y = memref.expand_shape %out [[0], [1], [2], [3, 4]] output_shape [1, 7, 7, 16, 32] : memref<1x7x7x512xf32> into memref<1x7x7x16x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x7x7x2048xf32>, memref<16x1x1x2048x32xf32>) outs(%y : memref<1x7x7x16x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// 64 input channels: the matmul too (its reduction of 64 fills the register tiles as well).
// AVX512-LABEL: func.func @sixty_four_channels(
// AVX512:       memref.collapse_shape %{{.+}} : memref<1x28x28x64xf32> into memref<784x64xf32>
// AVX512:       vector<8x1x32xf32>
// AVX512:       return
// AVX2-LABEL:   func.func @sixty_four_channels(
// AVX2:         memref.collapse_shape %{{.+}} : memref<1x28x28x64xf32> into memref<784x64xf32>
// AVX2:         return
func.func @sixty_four_channels(%x: memref<1x28x28x64xf32>, %w: memref<2x1x1x64x32xf32>, %out: memref<1x28x28x64xf32>) {
  %y = memref.expand_shape %out [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 2, 32] : memref<1x28x28x64xf32> into memref<1x28x28x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x28x28x64xf32>, memref<2x1x1x64x32xf32>) outs(%y : memref<1x28x28x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// 16 input channels (below 32): the row tiles, their epilogue fused (no matmul of the pixels).
// AVX512-LABEL: func.func @few_channels(
// AVX512-NOT:   memref.collapse_shape
// AVX512:       vector.contract
// AVX512:       return
// AVX2-LABEL:   func.func @few_channels(
// AVX2-NOT:     memref.collapse_shape
// AVX2:         vector.contract
// AVX2:         return
func.func @few_channels(%x: memref<1x28x28x16xf32>, %w: memref<2x1x1x16x32xf32>, %out: memref<1x28x28x64xf32>) {
  %y = memref.expand_shape %out [[0], [1], [2], [3, 4]] output_shape [1, 28, 28, 2, 32] : memref<1x28x28x64xf32> into memref<1x28x28x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x28x28x16xf32>, memref<2x1x1x16x32xf32>) outs(%y : memref<1x28x28x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %acc: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A dest that is no view of an output buffer (a function argument here): the matmul has no [pixels, F] buffer to
// write, so the convolution keeps its row tiles.
// AVX512-LABEL: func.func @dest_not_a_view(
// AVX512-NOT:   memref.collapse_shape
// AVX512:       vector.contract
// AVX512:       return
// AVX2-LABEL:   func.func @dest_not_a_view(
// AVX2-NOT:     memref.collapse_shape
// AVX2:         return
func.func @dest_not_a_view(%x: memref<1x28x28x256xf32>, %w: memref<2x1x1x256x32xf32>, %y: memref<1x28x28x2x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x28x28x256xf32>, memref<2x1x1x256x32xf32>) outs(%y : memref<1x28x28x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
