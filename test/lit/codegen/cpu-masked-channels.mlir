// cpu-tile-kernels on convolutions with fewer output channels than a vector's lanes that channel pieces would cut
// in several (6 as 4 + 2): one vector of the next power of two per output pixel, its lanes past the channels
// masked off (backend/kernels/masked_channels.py, conv.masked_width).
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=2 target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=THREADS
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX512

// AVX2, 3x3 1->6 at 7 columns: a tile of the row's 7 pixels, each one vector<8>. The first 6 read and write whole
// vectors of the row seen as one dim (pixels 6 apart); the last pixel's load and store are masked to 6 lanes, and
// so is the filter row at every step. The named convolution is gone: no vector.contract.
// AVX2-LABEL: func.func @lenet_like(
// AVX2:       %[[FLAT:.+]] = memref.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : memref<2x8x7x6xf32> into memref<2x8x42xf32>
// AVX2:       scf.for %{{.+}} = %c0 to %c16 step %c1
// AVX2:       %[[MASK:.+]] = vector.constant_mask [6] : vector<8xi1>
// AVX2-COUNT-6: vector.load %[[FLAT]]{{.+}} vector<8xf32>
// AVX2:       vector.maskedload %{{.+}}, %[[MASK]]
// AVX2:       vector.maskedload %{{.+}}, %[[MASK]], %{{.+}} : memref<3x3x1x6xf32>
// AVX2-COUNT-7: vector.fma {{.+}} : vector<8xf32>
// AVX2-NOT:   vector.fma
// AVX2-COUNT-6: vector.store %{{.+}}, %[[FLAT]]
// AVX2:       vector.maskedstore %{{.+}}, %[[MASK]]
// AVX2-NOT:   vector.contract
// AVX2:       return
// With threads the output rows (2 images x 8) are the tasks, a run of 8 rows each.
// THREADS-LABEL: func.func @lenet_like(
// THREADS:     scf.forall (%{{.+}}) in (2)
// THREADS:     scf.for %{{.+}} = %{{.+}} to %{{.+}} step %c1
// THREADS-COUNT-7: vector.fma
// THREADS:     vector.maskedstore
// THREADS:     return
// AVX-512 the same (6 channels in 8 lanes: ymm vectors).
// AVX512-LABEL: func.func @lenet_like(
// AVX512:     vector.constant_mask [6] : vector<8xi1>
// AVX512-COUNT-7: vector.fma {{.+}} : vector<8xf32>
// AVX512:     return
func.func @lenet_like(%x: memref<2x10x9x1xf32>, %w: memref<3x3x1x6xf32>, %y: memref<2x8x7x6xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<2x10x9x1xf32>, memref<3x3x1x6xf32>) outs(%y : memref<2x8x7x6xf32>)
  return
}

// -----

// A channel slice of a wider buffer (pixels 9 apart, not 6): every load and store masked, no collapsed view.
// AVX512-LABEL: func.func @channel_slice(
// AVX512-NOT: memref.collapse_shape
// AVX512-COUNT-4: vector.maskedload %{{.+}} : memref<1x4x4x6xf32, strided<[144, 36, 9, 1], offset: 3>>
// AVX512-NOT: vector.load
// AVX512-COUNT-4: vector.maskedstore
// AVX512:     return
func.func @channel_slice(%x: memref<1x6x6x2xf32>, %w: memref<3x3x2x6xf32>,
                         %y: memref<1x4x4x6xf32, strided<[144, 36, 9, 1], offset: 3>>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x6x6x2xf32>, memref<3x3x2x6xf32>)
    outs(%y : memref<1x4x4x6xf32, strided<[144, 36, 9, 1], offset: 3>>)
  return
}

// -----

// AVX-512, 10 channels at stride 2: one vector<16> per pixel, 10 lanes live; the input columns step by 2.
// AVX2 (8 lanes) keeps the channel pieces 8 + 2 there (vector.contract, no mask).
// AVX512-LABEL: func.func @ten_filters_stride_2(
// AVX512:     vector.constant_mask [10] : vector<16xi1>
// AVX512:     arith.muli %{{.+}}, %c2
// AVX512:     vector.fma {{.+}} : vector<16xf32>
// AVX512:     vector.maskedstore
// AVX512:     return
// AVX2-LABEL: func.func @ten_filters_stride_2(
// AVX2-NOT:   vector.maskedstore
// AVX2:       vector.contract
// AVX2-NOT:   vector.maskedstore
// AVX2:       return
func.func @ten_filters_stride_2(%x: memref<1x9x9x3xf32>, %w: memref<3x3x3x10xf32>, %y: memref<1x4x4x10xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<1x9x9x3xf32>, memref<3x3x3x10xf32>) outs(%y : memref<1x4x4x10xf32>)
  return
}

// -----

// Negative: 4 channels are one piece (a power of two), 16 on AVX2 two whole vectors: the row tiles, no masks.
// AVX512-LABEL: func.func @power_of_two(
// AVX512-NOT: vector.constant_mask
// AVX512:     vector.contract
// AVX512:     return
// AVX2-LABEL: func.func @power_of_two(
// AVX2-NOT:   vector.constant_mask
// AVX2:       vector.contract
// AVX2:       return
func.func @power_of_two(%x: memref<1x6x6x2xf32>, %w: memref<3x3x2x4xf32>, %y: memref<1x4x4x4xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x6x6x2xf32>, memref<3x3x2x4xf32>) outs(%y : memref<1x4x4x4xf32>)
  return
}

// -----

// AVX2-LABEL: func.func @sixteen_filters(
// AVX2-NOT:   vector.constant_mask
// AVX2:       vector.contract
// AVX2:       return
func.func @sixteen_filters(%x: memref<1x6x6x2xf32>, %w: memref<3x3x2x16xf32>, %y: memref<1x4x4x16xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x6x6x2xf32>, memref<3x3x2x16xf32>) outs(%y : memref<1x4x4x16xf32>)
  return
}
