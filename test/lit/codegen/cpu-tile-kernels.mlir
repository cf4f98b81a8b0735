// cpu-tile-kernels: f32 contractions on memrefs become tensor islands over their buffers, tiled, vectorized, with the
// accumulator tile hoisted out of the reduction loop; one-shot-bufferize then puts them back in place.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu},one-shot-bufferize,func.func(canonicalize,cse))' | FileCheck %s --check-prefix=BUF
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=2 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu},one-shot-bufferize,func.func(canonicalize,cse))' | FileCheck %s --check-prefix=THREADS
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=2 parallel-flops=5000000 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=SMALL

// The general class: L1 tiles 64x64 of a 128x256 output, register tiles 8x32, the reduction step 1.
// CHECK-LABEL: func.func @tiled(
// CHECK-SAME:  %[[A:.+]]: memref<128x64xf32>, %[[B:.+]]: memref<64x256xf32>, %[[C:.+]]: memref<128x256xf32>)
// CHECK-DAG:   %[[TA:.+]] = bufferization.to_tensor %[[A]] restrict : memref<128x64xf32>
// CHECK-DAG:   %[[TB:.+]] = bufferization.to_tensor %[[B]] restrict : memref<64x256xf32>
// CHECK-DAG:   %[[TC:.+]] = bufferization.to_tensor %[[C]] restrict writable : memref<128x256xf32>
// CHECK:       %[[R:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[TC]])
// CHECK:       scf.for
// CHECK:       scf.for
// CHECK:       scf.for
// The accumulator is read once before the reduction loop, carried in registers, written once after it.
// CHECK:       %[[ACC:.+]] = vector.transfer_read {{.+}} vector<8x32xf32>
// CHECK:       scf.for {{.+}} iter_args(%[[IT:.+]] = %[[ACC]]) -> (vector<8x32xf32>)
// CHECK:       vector.transfer_read %[[TA]]{{.+}} vector<8x1xf32>
// CHECK:       vector.transfer_read %[[TB]]{{.+}} vector<1x32xf32>
// CHECK:       vector.contract {{.+}} into vector<8x32xf32>
// CHECK:       vector.transfer_write {{.+}} vector<8x32xf32>
// CHECK:       bufferization.materialize_in_destination %[[R]] in writable %[[C]]
// CHECK-NOT:   linalg.matmul
// Bufferized in place: no buffer allocated, nothing copied.
// BUF-LABEL:   func.func @tiled(
// BUF-NOT:     memref.alloc
// BUF-NOT:     memref.copy
// BUF-NOT:     bufferization.
// BUF:         vector.contract
// BUF:         return
// With threads the L1 tiles of one dim, the one with more of them, are spread over the threads: the 4 column tiles
// dealt out as one task per thread (2 tiles each: one hand-off per thread), the 2 row tiles and the task's column
// tiles loops inside each.
// THREADS-LABEL: func.func @tiled(
// THREADS-NOT: memref.alloc
// THREADS:     scf.forall (%[[J:.+]]) in (2)
// THREADS:     scf.for %{{.+}} = %c0 to %c128 step %c64
// THREADS:     scf.for %{{.+}} = %c0 to %c128 step %c64
// THREADS:     vector.contract
// Below parallel-flops (4.2 MFLOP here) a kernel stays on the calling thread: no forall.
// SMALL-LABEL: func.func @tiled(
// SMALL-NOT:   scf.forall
// SMALL:       vector.contract
// SMALL:       return
func.func @tiled(%a: memref<128x64xf32>, %b: memref<64x256xf32>, %c: memref<128x256xf32>) {
  linalg.matmul ins(%a, %b : memref<128x64xf32>, memref<64x256xf32>) outs(%c : memref<128x256xf32>)
  return
}

// -----

// M = 10 is not a multiple of the register tile's 8 rows: an 8-row piece and a 2-row remainder strip; N = 20 is
// narrower than 32 columns: pieces of 16 and 4 columns (vector widths). Each piece is an island on subviews.
// CHECK-LABEL: func.func @remainder(
// CHECK-SAME:  %{{.+}}: memref<10x8xf32>, %{{.+}}: memref<8x20xf32>, %[[C:.+]]: memref<10x20xf32>)
// CHECK:       %[[C0:.+]] = memref.subview %[[C]][0, 0] [8, 16] [1, 1]
// CHECK:       vector.contract {{.+}} vector<8x1xf32>, vector<1x16xf32> into vector<8x16xf32>
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[C0]]
// CHECK:       %[[C1:.+]] = memref.subview %[[C]][0, 16] [8, 4] [1, 1]
// CHECK:       vector.contract {{.+}} vector<8x1xf32>, vector<1x4xf32> into vector<8x4xf32>
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[C1]]
// CHECK:       %[[C2:.+]] = memref.subview %[[C]][8, 0] [2, 16] [1, 1]
// CHECK:       vector.contract {{.+}} vector<2x1xf32>, vector<1x16xf32> into vector<2x16xf32>
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[C2]]
// CHECK:       %[[C3:.+]] = memref.subview %[[C]][8, 16] [2, 4] [1, 1]
// CHECK:       vector.contract {{.+}} vector<2x1xf32>, vector<1x4xf32> into vector<2x4xf32>
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[C3]]
// BUF-LABEL:   func.func @remainder(
// BUF-NOT:     memref.alloc
// BUF:         return
func.func @remainder(%a: memref<10x8xf32>, %b: memref<8x20xf32>, %c: memref<10x20xf32>) {
  linalg.matmul ins(%a, %b : memref<10x8xf32>, memref<8x20xf32>) outs(%c : memref<10x20xf32>)
  return
}

// -----

// batch_matmul: a loop over the batch, one 2-D island per step on rank-reduced views.
// CHECK-LABEL: func.func @batch(
// CHECK:       scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK:       memref.subview %{{.+}}[%[[I]], 0, 0] [1, 8, 4] [1, 1, 1] {{.+}} to memref<8x4xf32, strided<[4, 1], offset: ?>>
// CHECK:       vector.contract {{.+}} into vector<8x32xf32>
// CHECK-NOT:   linalg.batch_matmul
func.func @batch(%a: memref<2x8x4xf32>, %b: memref<2x4x32xf32>, %c: memref<2x8x32xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x8x4xf32>, memref<2x4x32xf32>) outs(%c : memref<2x8x32xf32>)
  return
}

// -----

// Not this kernel's: integer matmuls and transposed maps keep the generic lowering.
// CHECK-LABEL: func.func @untouched(
// CHECK-NOT:   bufferization.
// CHECK:       linalg.matmul ins(%{{.+}}, %{{.+}} : memref<4x4xi64>, memref<4x4xi64>)
// CHECK:       linalg.matmul indexing_maps
// CHECK-NOT:   bufferization.
func.func @untouched(%a: memref<4x4xi64>, %b: memref<4x4xi64>, %c: memref<4x4xi64>, %x: memref<4x4xf32>,
                     %y: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xi64>, memref<4x4xi64>) outs(%c : memref<4x4xi64>)
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
                ins(%x, %x : memref<4x4xf32>, memref<4x4xf32>) outs(%y : memref<4x4xf32>)
  return
}

// -----

// The large class packs B: its 32-column panels are copied contiguous into a scratch buffer (the only buffer the
// kernel allocates) by a generic over (k, panel, column) that reads B row by row, and the contraction runs on the
// panel views of B and C.
// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[SWAP:.+]] = affine_map<(d0, d1, d2) -> (d1, d0, d2)>
// CHECK-LABEL: func.func @packed(
// CHECK-SAME:  %[[A:.+]]: memref<128x256xf32>, %[[B:.+]]: memref<256x512xf32>, %[[C:.+]]: memref<128x512xf32>)
// CHECK:       %[[P:.+]] = memref.alloc() {alignment = 64 : i64} : memref<16x256x32xf32>
// CHECK:       %[[BV:.+]] = memref.expand_shape %[[B]] {{\[\[}}0], [1, 2]] output_shape [256, 16, 32]
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[SWAP]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[BV]] : memref<256x16x32xf32>) outs(%[[P]] : memref<16x256x32xf32>)
// CHECK:       %[[CV:.+]] = memref.expand_shape %[[C]] {{\[\[}}0], [1, 2]] output_shape [128, 16, 32]
// CHECK:       bufferization.to_tensor %[[P]] restrict
// CHECK:       bufferization.to_tensor %[[CV]] restrict writable
// CHECK:       scf.for {{.+}} -> (vector<8x1x32xf32>)
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[CV]]
// CHECK:       memref.dealloc %[[P]]
// BUF-LABEL:   func.func @packed(
// BUF:         memref.alloc()
// BUF-NOT:     memref.alloc
// BUF:         return
func.func @packed(%a: memref<128x256xf32>, %b: memref<256x512xf32>, %c: memref<128x512xf32>) {
  linalg.matmul ins(%a, %b : memref<128x256xf32>, memref<256x512xf32>) outs(%c : memref<128x512xf32>)
  return
}

// -----

// A B of 512 x 1024 packed whole (2 MiB) would not stay in half the target's L2 (skylake-avx512: 1 MiB): it is
// packed a block of 256 rows x 512 columns (512 KiB) at a time into one scratch buffer, block after block (written
// out, so that each copy is vectorized and threaded), each block's island adding its product onto its columns of C.
// CHECK-LABEL: func.func @packed_in_slices(
// CHECK-SAME:  %[[A:.+]]: memref<128x512xf32>, %[[B:.+]]: memref<512x1024xf32>, %[[C:.+]]: memref<128x1024xf32>)
// CHECK:       %[[P:.+]] = memref.alloc() {alignment = 64 : i64} : memref<16x256x32xf32>
// CHECK:       memref.subview %[[B]][0, 0] [256, 512] [1, 1]
// CHECK:       linalg.generic {{.+}} outs(%[[P]] : memref<16x256x32xf32>)
// CHECK:       %[[CV:.+]] = memref.expand_shape %[[C]] {{\[\[}}0], [1, 2]] output_shape [128, 32, 32]
// CHECK:       %[[LEFT:.+]] = memref.subview %[[CV]][0, 0, 0] [128, 16, 32] [1, 1, 1]
// CHECK:       memref.subview %[[A]][0, 0] [128, 256] [1, 1]
// CHECK:       scf.for {{.+}} -> (vector<8x1x32xf32>)
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[LEFT]]
// CHECK:       memref.subview %[[B]][256, 0] [256, 512] [1, 1]
// CHECK:       memref.subview %[[A]][0, 256] [128, 256] [1, 1]
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[LEFT]]
// CHECK:       memref.subview %[[B]][0, 512] [256, 512] [1, 1]
// CHECK:       %[[RIGHT:.+]] = memref.subview %[[CV]][0, 16, 0] [128, 16, 32] [1, 1, 1]
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[RIGHT]]
// CHECK:       memref.subview %[[B]][256, 512] [256, 512] [1, 1]
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[RIGHT]]
// CHECK-NOT:   memref.subview %[[B]]
// CHECK:       memref.dealloc %[[P]]
// BUF-LABEL:   func.func @packed_in_slices(
// BUF:         memref.alloc()
// BUF-NOT:     memref.alloc
// BUF:         return
func.func @packed_in_slices(%a: memref<128x512xf32>, %b: memref<512x1024xf32>, %c: memref<128x1024xf32>) {
  linalg.matmul ins(%a, %b : memref<128x512xf32>, memref<512x1024xf32>) outs(%c : memref<128x1024xf32>)
  return
}

// -----

// Rows that are no whole number of register tiles (134 = 16 x 8 + 6, and no tile of 4 rows or more divides it) make
// a main piece and a strip of 6 rows on the same columns: B is packed once for both, one copy and then the two
// islands on it.
// CHECK-LABEL: func.func @packed_once_for_a_strip(
// CHECK-SAME:  %[[A:.+]]: memref<134x256xf32>, %[[B:.+]]: memref<256x512xf32>, %[[C:.+]]: memref<134x512xf32>)
// CHECK:       %[[P:.+]] = memref.alloc() {alignment = 64 : i64} : memref<16x256x32xf32>
// CHECK:       linalg.generic {{.+}} outs(%[[P]] : memref<16x256x32xf32>)
// CHECK-NOT:   outs(%[[P]]
// CHECK:       scf.for {{.+}} -> (vector<8x1x32xf32>)
// CHECK:       bufferization.materialize_in_destination
// CHECK-NOT:   outs(%[[P]]
// CHECK:       scf.for {{.+}} -> (vector<6x1x32xf32>)
// CHECK:       bufferization.materialize_in_destination
// CHECK-NEXT:  memref.dealloc %[[P]]
// CHECK-NEXT:  return
// BUF-LABEL:   func.func @packed_once_for_a_strip(
// BUF:         memref.alloc()
// BUF-NOT:     memref.alloc
// BUF:         return
func.func @packed_once_for_a_strip(%a: memref<134x256xf32>, %b: memref<256x512xf32>, %c: memref<134x512xf32>) {
  linalg.matmul ins(%a, %b : memref<134x256xf32>, memref<256x512xf32>) outs(%c : memref<134x512xf32>)
  return
}

// -----

// conv_2d_nhwc_hwcf: an island over the three buffers; one output row per L1 tile (64 filters), register tiles of
// 8 output columns x 32 filters; the 3x3 window is decomposed to 1-D convolutions, and the accumulator stays in
// registers across the window's row, column and channel loops.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:  %[[X:.+]]: memref<1x10x18x16xf32>, %[[W:.+]]: memref<3x3x16x64xf32>, %[[Y:.+]]: memref<1x8x16x64xf32>)
// CHECK-DAG:   %[[TX:.+]] = bufferization.to_tensor %[[X]] restrict
// CHECK-DAG:   %[[TW:.+]] = bufferization.to_tensor %[[W]] restrict
// CHECK-DAG:   %[[TY:.+]] = bufferization.to_tensor %[[Y]] restrict writable
// CHECK:       %[[ACC:.+]] = vector.transfer_read {{.+}} vector<1x8x32xf32>
// CHECK:       scf.for {{.+}} iter_args(%{{.+}} = %[[ACC]]) -> (vector<1x8x32xf32>)
// CHECK:       scf.for {{.+}} -> (vector<1x8x32xf32>)
// CHECK:       scf.for {{.+}} -> (vector<1x8x32xf32>)
// CHECK:       vector.transfer_read %[[TX]]{{.+}} vector<1x8x1xf32>
// CHECK:       vector.transfer_read %[[TW]]{{.+}} vector<1x1x32xf32>
// CHECK:       vector.contract {{.+}} into vector<1x8x32xf32>
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[Y]]
// CHECK-NOT:   linalg.conv_2d
// BUF-LABEL:   func.func @conv(
// BUF-NOT:     memref.alloc
// BUF:         return
// THREADS-LABEL: func.func @conv(
// THREADS:     scf.forall (%{{.+}}) in (2)
// THREADS:     scf.for %{{.+}} = %c0 to %c4 step %c1
func.func @conv(%x: memref<1x10x18x16xf32>, %w: memref<3x3x16x64xf32>, %y: memref<1x8x16x64xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x10x18x16xf32>, memref<3x3x16x64xf32>) outs(%y : memref<1x8x16x64xf32>)
  return
}

// -----

// A dilated convolution keeps the generic lowering; 40 filters (no vector width in it) become two islands on views
// of the filter and output buffers, 32 + 8 channels, each with register tiles of its width.
// CHECK-LABEL: func.func @untiled_conv(
// CHECK-NOT:   bufferization.
// CHECK:       linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>
// CHECK:       memref.subview %{{.+}}[0, 0, 0, 0] [3, 3, 16, 32] [1, 1, 1, 1]
// CHECK:       memref.subview %{{.+}}[0, 0, 0, 0] [1, 8, 8, 32] [1, 1, 1, 1]
// CHECK:       -> (vector<1x8x32xf32>)
// CHECK:       memref.subview %{{.+}}[0, 0, 0, 32] [3, 3, 16, 8] [1, 1, 1, 1]
// CHECK:       memref.subview %{{.+}}[0, 0, 0, 32] [1, 8, 8, 8] [1, 1, 1, 1]
// CHECK:       -> (vector<1x8x8xf32>)
// CHECK-NOT:   linalg.conv_2d_nhwc_hwcf
// CHECK:       return
func.func @untiled_conv(%x: memref<1x10x10x16xf32>, %w: memref<3x3x16x64xf32>, %y: memref<1x6x6x64xf32>,
                        %v: memref<3x3x16x40xf32>, %z: memref<1x8x8x40xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x10x10x16xf32>, memref<3x3x16x64xf32>) outs(%y : memref<1x6x6x64xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %v : memref<1x10x10x16xf32>, memref<3x3x16x40xf32>) outs(%z : memref<1x8x8x40xf32>)
  return
}

// -----

// Depthwise: register tiles of 16 output columns x 16 channels over the whole filter row, decomposed to 1-D.
// CHECK-LABEL: func.func @depthwise(
// CHECK:       bufferization.to_tensor %{{.+}} restrict writable : memref<1x16x32x32xf32>
// CHECK:       scf.for {{.+}} -> (vector<1x16x16xf32>)
// CHECK:       bufferization.materialize_in_destination
// CHECK-NOT:   linalg.depthwise_conv_2d
// BUF-LABEL:   func.func @depthwise(
// BUF-NOT:     memref.alloc
// BUF:         return
func.func @depthwise(%x: memref<1x18x34x32xf32>, %w: memref<3x3x32xf32>, %y: memref<1x16x32x32xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x18x34x32xf32>, memref<3x3x32xf32>) outs(%y : memref<1x16x32x32xf32>)
  return
}

// -----

// A convolution on a packed filter [F/32, KH, KW, C, 32] (convert-glowir-to-linalg's blocked generic, dest viewed
// [N, OH, OW, F/32, 32]) runs as a loop over the blocks: one conv island per block, on the block and its channels.
// CHECK-LABEL: func.func @blocked_conv(
// CHECK:       scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK:       memref.subview %{{.+}}[%[[J]], 0, 0, 0, 0] [1, 3, 3, 16, 32] [1, 1, 1, 1, 1]
// CHECK:       memref.subview %{{.+}}[0, 0, 0, %[[J]], 0] [1, 8, 16, 1, 32] [1, 1, 1, 1, 1]
// CHECK:       -> (vector<1x8x32xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       return
// BUF-LABEL:   func.func @blocked_conv(
// BUF-NOT:     memref.alloc
// BUF:         return
// With threads, two blocks keep two threads no busier than the 8 output rows do: the blocks run in turn and each
// block's rows are the tasks (two of 4 rows), so that each thread works on the same rows in every block, and in the
// layers before and after (the worker pool gives each thread the same chunk of every loop); below parallel-flops
// (SMALL) the blocks stay an scf.for.
// THREADS-LABEL: func.func @blocked_conv(
// THREADS:     scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step
// THREADS:     memref.subview %{{.+}}[%[[B]], 0, 0, 0, 0] [1, 3, 3, 16, 32]
// THREADS:     scf.forall (%{{.+}}) in (2)
// THREADS:     memref.subview %{{.+}} [1, 4, 16, 32]
// THREADS:     vector.contract
// THREADS:     return
// SMALL-LABEL: func.func @blocked_conv(
// SMALL-NOT:   scf.forall
// SMALL:       scf.for
// SMALL-NOT:   scf.forall
// SMALL:       return
func.func @blocked_conv(%x: memref<1x10x18x16xf32>, %w: memref<2x3x3x16x32xf32>, %y: memref<1x8x16x2x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d2 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x10x18x16xf32>, memref<2x3x3x16x32xf32>) outs(%y : memref<1x8x16x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Three filter blocks on two threads would keep one of them idle a quarter of the time: each block's output rows are
// the tasks instead, as for an unpacked convolution (two tasks of 4 rows per block, the blocks in turn; as tasks of
// their own the blocks would be scf.forall (3)).
// THREADS-LABEL: func.func @three_blocks(
// THREADS-NOT: scf.forall (%{{.+}}) in (3)
// THREADS:     scf.for
// THREADS:     scf.forall (%{{.+}}) in (2)
// THREADS:     vector.contract
// THREADS:     return
// SMALL-LABEL: func.func @three_blocks(
// SMALL-NOT:   scf.forall
// SMALL:       return
func.func @three_blocks(%x: memref<1x10x18x16xf32>, %w: memref<3x3x3x16x32xf32>, %y: memref<1x8x16x3x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d2 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x10x18x16xf32>, memref<3x3x3x16x32xf32>) outs(%y : memref<1x8x16x3x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// 7 output rows do not split evenly over 2 threads: one task per row, which the pool's threads claim one by one.
// THREADS-LABEL: func.func @odd_rows(
// THREADS:     scf.forall (%{{.+}}) in (7)
// THREADS:     vector.contract
func.func @odd_rows(%x: memref<1x9x16x16xf32>, %w: memref<3x3x16x64xf32>, %y: memref<1x7x14x64xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x9x16x16xf32>, memref<3x3x16x64xf32>) outs(%y : memref<1x7x14x64xf32>)
  return
}

// -----

// Epilogue fusion: the bias broadcast, the convolution, a residual add and a relu (one kernel, as
// linalg-outline-kernels groups them) become one island in destination-passing style on %y; the relu is tiled at the
// L1 and register tiles with its producers fused in: the bias is read into the accumulators before the reduction
// loops, the add and relu run on the accumulators after them, and the tile is written once.
// CHECK-LABEL: func.func @fused_conv(
// CHECK-SAME:  %[[B:[^:]+]]: memref<64xf32>, %[[S:[^:]+]]: memref<1x14x14x64xf32>, %[[Y:[^:]+]]: memref<1x14x14x64xf32>)
// CHECK-DAG:   %[[TY:.+]] = bufferization.to_tensor %[[Y]] restrict writable
// CHECK-DAG:   %[[TB:.+]] = bufferization.to_tensor %[[B]] restrict
// CHECK-DAG:   %[[TS:.+]] = bufferization.to_tensor %[[S]] restrict
// CHECK:       %[[R:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[TY]])
// CHECK:       scf.for
// CHECK:       vector.transfer_read %[[TB]]{{.+}} vector<1x1x14x32xf32>
// CHECK:       scf.for {{.+}} -> (vector<1x14x32xf32>)
// CHECK:       scf.for {{.+}} -> (vector<1x14x32xf32>)
// CHECK:       scf.for {{.+}} -> (vector<1x14x32xf32>)
// CHECK:       vector.contract
// CHECK:       %[[SKIP:.+]] = vector.transfer_read %[[TS]]{{.+}} vector<1x1x14x32xf32>
// CHECK:       %[[SUM:.+]] = arith.addf %{{.+}}, %[[SKIP]] : vector<1x1x14x32xf32>
// CHECK:       %[[RELU:.+]] = arith.maximumf %[[SUM]], %{{.+}} : vector<1x1x14x32xf32>
// CHECK:       vector.transfer_write %[[RELU]]
// CHECK:       bufferization.materialize_in_destination %[[R]] in writable %[[Y]]
// CHECK-NOT:   linalg.
// BUF-LABEL:   func.func @fused_conv(
// BUF-NOT:     memref.alloc
// BUF-NOT:     linalg.
// BUF:         return
// THREADS-LABEL: func.func @fused_conv(
// THREADS-NOT: memref.alloc
// THREADS:     scf.forall (%{{.+}}) in (14)
// THREADS:     vector.contract
// THREADS:     arith.maximumf
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @fused_conv(%x: memref<1x16x16x32xf32>, %f: memref<3x3x32x64xf32>, %b: memref<64xf32>, %s: memref<1x14x14x64xf32>,
                      %y: memref<1x14x14x64xf32>) {
  linalg.broadcast ins(%b : memref<64xf32>) outs(%y : memref<1x14x14x64xf32>) dimensions = [0, 1, 2]
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f : memref<1x16x16x32xf32>, memref<3x3x32x64xf32>) outs(%y : memref<1x14x14x64xf32>)
  linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %s : memref<1x14x14x64xf32>, memref<1x14x14x64xf32>) outs(%y : memref<1x14x14x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%y : memref<1x14x14x64xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// An update with scalar operands (a clip whose bounds linalg-fuse-elementwise folded in from splat fills) fuses into
// the convolution's island like any other: the scalars stay operands of the tensor generic.
// CHECK-LABEL: func.func @fused_scalar_operands(
// CHECK-SAME:  %[[LO:[^:]+]]: f32, %[[HI:[^:]+]]: f32, %[[Y:[^:]+]]: memref<1x14x14x64xf32>)
// CHECK:       %[[R:.+]] = scf.for
// CHECK:       vector.contract
// CHECK:       arith.maximumf
// CHECK:       arith.minimumf
// CHECK:       bufferization.materialize_in_destination %[[R]] in writable %[[Y]]
// CHECK-NOT:   linalg.
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#scalar4 = affine_map<(d0, d1, d2, d3) -> ()>
func.func @fused_scalar_operands(%x: memref<1x16x16x32xf32>, %f: memref<3x3x32x64xf32>, %lo: f32, %hi: f32,
                                 %y: memref<1x14x14x64xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f : memref<1x16x16x32xf32>, memref<3x3x32x64xf32>) outs(%y : memref<1x14x14x64xf32>)
  linalg.generic {indexing_maps = [#id4, #scalar4, #scalar4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %lo, %hi : memref<1x14x14x64xf32>, f32, f32) outs(%y : memref<1x14x14x64xf32>) {
  ^bb0(%a: f32, %l: f32, %h: f32, %o: f32):
    %0 = arith.maximumf %a, %l : f32
    %1 = arith.minimumf %0, %h : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A fully connected layer (bias broadcast, matmul, relu): the bias row is the accumulators' initial value, the relu
// runs on them after the reduction loop.
// CHECK-LABEL: func.func @fused_fc(
// CHECK-DAG:   %[[TB:.+]] = bufferization.to_tensor %{{.+}} restrict : memref<512xf32>
// CHECK:       %[[BIAS:.+]] = vector.transfer_read %[[TB]]{{.+}} vector<8x32xf32>
// CHECK-NEXT:  %[[ACC:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[BIAS]]) -> (vector<8x32xf32>)
// CHECK:       vector.contract
// CHECK:       %[[RELU:.+]] = arith.maximumf %[[ACC]], %{{.+}} : vector<8x32xf32>
// CHECK-NEXT:  vector.transfer_write %[[RELU]]
// CHECK-NOT:   linalg.
// BUF-LABEL:   func.func @fused_fc(
// BUF-NOT:     memref.alloc
// BUF:         return
// THREADS-LABEL: func.func @fused_fc(
// THREADS:     scf.forall
// THREADS:     arith.maximumf
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @fused_fc(%x: memref<128x128xf32>, %w: memref<128x512xf32>, %b: memref<512xf32>, %y: memref<128x512xf32>) {
  linalg.broadcast ins(%b : memref<512xf32>) outs(%y : memref<128x512xf32>) dimensions = [0]
  linalg.matmul ins(%x, %w : memref<128x128xf32>, memref<128x512xf32>) outs(%y : memref<128x512xf32>)
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%y : memref<128x512xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Negative: a matmul whose plan has remainder pieces keeps its unfused islands; its init and relu stay on memrefs.
// CHECK-LABEL: func.func @unfused_remainder(
// CHECK:       linalg.fill
// CHECK:       bufferization.materialize_in_destination
// CHECK:       bufferization.materialize_in_destination
// CHECK:       linalg.generic {{.+}} outs(%{{.+}} : memref<10x20xf32>)
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @unfused_remainder(%a: memref<10x8xf32>, %b: memref<8x20xf32>, %c: memref<10x20xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<10x20xf32>)
  linalg.matmul ins(%a, %b : memref<10x8xf32>, memref<8x20xf32>) outs(%c : memref<10x20xf32>)
  linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%c : memref<10x20xf32>) {
  ^bb0(%o: f32):
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// An epilogue that moves to another buffer (the add's input %y dies there: glow.dead_input, set by
// linalg-outline-kernels): the island writes the skip %s, and %y is never materialized; the convolution is fused
// into the add's loops through the add's input.
// CHECK-LABEL: func.func @moved(
// CHECK-SAME:  %[[Y:[^:]+]]: memref<1x16x16x64xf32>, %[[S:[^:]+]]: memref<1x16x16x64xf32>)
// CHECK-DAG:   %[[TS:.+]] = bufferization.to_tensor %[[S]] restrict writable
// CHECK:       %[[R:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %[[TS]])
// CHECK:       vector.contract
// CHECK:       arith.addf {{.+}} : vector<1x1x8x32xf32>
// CHECK:       bufferization.materialize_in_destination %[[R]] in writable %[[S]]
// CHECK-NOT:   materialize_in_destination
// CHECK-NOT:   linalg.
// BUF-LABEL:   func.func @moved(
// BUF-NOT:     memref.alloc
// BUF:         return
// On two threads the add stays an op of its own after the island, whose output rows are the tasks (fused, the
// island would run on one thread).
// THREADS-LABEL: func.func @moved(
// THREADS-SAME:  %[[Y:[^:]+]]: memref<1x16x16x64xf32>, %[[S:[^:]+]]: memref<1x16x16x64xf32>)
// THREADS:       scf.forall (%{{.+}}) in (16)
// THREADS:       vector.contract
// THREADS-NOT:   arith.addf {{.+}} : vector
// THREADS:       linalg.generic
// THREADS-SAME:  ins(%[[S]], %[[Y]] : memref<1x16x16x64xf32>, memref<1x16x16x64xf32>) outs(%[[S]] : memref<1x16x16x64xf32>)
// THREADS-NOT:   memref.alloc
// THREADS:       return
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @moved(%x: memref<1x16x16x32xf32>, %f: memref<1x1x32x64xf32>, %b: memref<64xf32>, %y: memref<1x16x16x64xf32>,
                 %s: memref<1x16x16x64xf32>) {
  linalg.broadcast ins(%b : memref<64xf32>) outs(%y : memref<1x16x16x64xf32>) dimensions = [0, 1, 2]
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f : memref<1x16x16x32xf32>, memref<1x1x32x64xf32>) outs(%y : memref<1x16x16x64xf32>)
  linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %y : memref<1x16x16x64xf32>, memref<1x16x16x64xf32>) outs(%s : memref<1x16x16x64xf32>)
      attrs = {glow.dead_input = 1 : i64} {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A convolution on a packed filter with its epilogue: per filter block j, one fused island on channels
// [32 j, 32 j + 32) of %y: that block's convolution, the bias slice as its init and the slice of the residual add and
// relu on its accumulators.
// CHECK-LABEL: func.func @fused_blocks(
// CHECK-SAME:  %[[B:[^:]+]]: memref<64xf32>, %[[S:[^:]+]]: memref<1x14x14x64xf32>, %[[Y:[^:]+]]: memref<1x14x14x64xf32>)
// CHECK:       scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK:       %[[START:.+]] = arith.muli %[[J]], %{{.+}} : index
// CHECK-DAG:   memref.subview %[[S]][0, 0, 0, %[[START]]] [1, 14, 14, 32]
// CHECK-DAG:   memref.subview %[[B]][%[[START]]] [32]
// CHECK:       bufferization.to_tensor {{.+}} restrict writable
// CHECK:       vector.contract
// CHECK:       arith.addf %{{.+}} : vector<1x1x14x32xf32>
// CHECK:       arith.maximumf %{{.+}} : vector<1x1x14x32xf32>
// CHECK:       bufferization.materialize_in_destination
// CHECK-NOT:   linalg.
// BUF-LABEL:   func.func @fused_blocks(
// BUF-NOT:     memref.alloc
// BUF-NOT:     linalg.
// BUF:         return
// With threads each block's 14 output rows are the tasks, the epilogue fused in each.
// THREADS-LABEL: func.func @fused_blocks(
// THREADS:     scf.for
// THREADS:     scf.forall (%{{.+}}) in (14)
// THREADS-NOT: scf.forall
// THREADS:     vector.contract
// THREADS:     arith.maximumf
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bsrc = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d2 + d6, d7)>
#bflt = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>
#bdst = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @fused_blocks(%x: memref<1x16x16x32xf32>, %f: memref<2x3x3x32x32xf32>, %b: memref<64xf32>,
                        %s: memref<1x14x14x64xf32>, %y: memref<1x14x14x64xf32>) {
  %v = memref.expand_shape %y [[0], [1], [2], [3, 4]] output_shape [1, 14, 14, 2, 32] : memref<1x14x14x64xf32> into memref<1x14x14x2x32xf32>
  linalg.broadcast ins(%b : memref<64xf32>) outs(%y : memref<1x14x14x64xf32>) dimensions = [0, 1, 2]
  linalg.generic {indexing_maps = [#bsrc, #bflt, #bdst], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %f : memref<1x16x16x32xf32>, memref<2x3x3x32x32xf32>) outs(%v : memref<1x14x14x2x32xf32>) attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%a: f32, %w: f32, %o: f32):
    %m = arith.mulf %a, %w : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %s : memref<1x14x14x64xf32>, memref<1x14x14x64xf32>) outs(%y : memref<1x14x14x64xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %sum = arith.addf %a, %c : f32
    linalg.yield %sum : f32
  }
  linalg.generic {indexing_maps = [#id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%y : memref<1x14x14x64xf32>) {
  ^bb0(%o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %o, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A convolution cut into channel pieces (24 = 16 + 8) with its epilogue: one fused island per piece, each with its
// slice of the bias and of a per-channel scale read through a broadcast map.
// CHECK-LABEL: func.func @fused_pieces(
// CHECK-SAME:  %[[B:[^:]+]]: memref<24xf32>, %[[K:[^:]+]]: memref<24xf32>, %[[Y:[^:]+]]: memref<1x8x8x24xf32>)
// CHECK-DAG:   memref.subview %[[K]][0] [16] [1]
// CHECK-DAG:   memref.subview %[[B]][0] [16] [1]
// CHECK:       vector.contract {{.+}} into vector<1x8x16xf32>
// CHECK:       arith.mulf %{{.+}} : vector<1x1x8x16xf32>
// CHECK:       bufferization.materialize_in_destination
// CHECK-DAG:   memref.subview %[[K]][16] [8] [1]
// CHECK-DAG:   memref.subview %[[B]][16] [8] [1]
// CHECK:       vector.contract {{.+}} into vector<1x8x8xf32>
// CHECK:       arith.mulf %{{.+}} : vector<1x1x8x8xf32>
// CHECK:       bufferization.materialize_in_destination
// CHECK-NOT:   linalg.
#scale = affine_map<(d0, d1, d2, d3) -> (d3)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @fused_pieces(%x: memref<1x10x10x16xf32>, %f: memref<3x3x16x24xf32>, %b: memref<24xf32>, %k: memref<24xf32>,
                        %y: memref<1x8x8x24xf32>) {
  linalg.broadcast ins(%b : memref<24xf32>) outs(%y : memref<1x8x8x24xf32>) dimensions = [0, 1, 2]
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f : memref<1x10x10x16xf32>, memref<3x3x16x24xf32>) outs(%y : memref<1x8x8x24xf32>)
  linalg.generic {indexing_maps = [#scale, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : memref<24xf32>) outs(%y : memref<1x8x8x24xf32>) {
  ^bb0(%c: f32, %o: f32):
    %m = arith.mulf %o, %c : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Negative: an epilogue that reads the channel through a compound expression (one scale per pair of channels) does
// not slice by channel pieces: the pieces keep their unfused islands, and the bias and the scale stay on memrefs.
// CHECK-LABEL: func.func @unsliced_pieces(
// CHECK:       linalg.broadcast
// CHECK:       vector.contract {{.+}} into vector<1x8x16xf32>
// CHECK:       vector.contract {{.+}} into vector<1x8x8xf32>
// CHECK:       linalg.generic {{.+}} outs(%{{.+}} : memref<1x8x8x24xf32>)
#pair = affine_map<(d0, d1, d2, d3) -> (d3 floordiv 2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @unsliced_pieces(%x: memref<1x10x10x16xf32>, %f: memref<3x3x16x24xf32>, %b: memref<24xf32>, %k: memref<12xf32>,
                           %y: memref<1x8x8x24xf32>) {
  linalg.broadcast ins(%b : memref<24xf32>) outs(%y : memref<1x8x8x24xf32>) dimensions = [0, 1, 2]
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %f : memref<1x10x10x16xf32>, memref<3x3x16x24xf32>) outs(%y : memref<1x8x8x24xf32>)
  linalg.generic {indexing_maps = [#pair, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : memref<12xf32>) outs(%y : memref<1x8x8x24xf32>) {
  ^bb0(%c: f32, %o: f32):
    %m = arith.mulf %o, %c : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A matmul on weights packed at compile time (cpu-pack-matmul-weights; convert-glowir-to-linalg's tagged generic)
// is one island on the panels as they are: nothing is copied, nothing allocated.
// CHECK-LABEL: func.func @prepacked(
// CHECK-NOT:   memref.alloc
// CHECK-NOT:   linalg.transpose
// CHECK:       bufferization.to_tensor %{{.+}} restrict writable : memref<64x4x32xf32>
// CHECK:       scf.for {{.+}} -> (vector<8x1x32xf32>)
// CHECK:       bufferization.materialize_in_destination
// BUF-LABEL:   func.func @prepacked(
// BUF-NOT:     memref.alloc
// BUF:         return
func.func @prepacked(%a: memref<64x256xf32>, %w: memref<4x256x32xf32>, %c: memref<64x128xf32>) {
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [64, 4, 32] : memref<64x128xf32> into memref<64x4x32xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x256xf32>, memref<4x256x32xf32>) outs(%cv : memref<64x4x32xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The bias broadcast right before a matmul on packed weights moves into its island: each register tile's
// accumulators start from the bias row (read once per tile), with no pass over the whole output first.
// CHECK-LABEL: func.func @prepacked_bias(
// CHECK-NOT:   linalg.broadcast
// CHECK:       scf.for
// CHECK:       %[[INIT:.+]] = vector.transfer_read {{.+}} : tensor<1x32xf32>, vector<8x1x32xf32>
// CHECK:       scf.for {{.+}} iter_args(%{{.+}} = %[[INIT]]) -> (vector<8x1x32xf32>)
// CHECK:       bufferization.materialize_in_destination
// BUF-LABEL:   func.func @prepacked_bias(
// BUF-NOT:     memref.alloc
// BUF-NOT:     linalg.broadcast
// BUF:         return
// THREADS-LABEL: func.func @prepacked_bias(
// THREADS:       scf.forall
// THREADS:       memref.subview %arg2
// THREADS-NOT:   linalg.broadcast
// THREADS:       return
func.func @prepacked_bias(%a: memref<64x256xf32>, %w: memref<4x256x32xf32>, %b: memref<128xf32>, %c: memref<64x128xf32>) {
  linalg.broadcast ins(%b : memref<128xf32>) outs(%c : memref<64x128xf32>) dimensions = [0]
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [64, 4, 32] : memref<64x128xf32> into memref<64x4x32xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x256xf32>, memref<4x256x32xf32>) outs(%cv : memref<64x4x32xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A zero fill before it: the accumulators start at zero.
// CHECK-LABEL: func.func @prepacked_zero(
// CHECK:       %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<8x1x32xf32>
// CHECK-NOT:   linalg.fill
// CHECK:       scf.for {{.+}} iter_args(%{{.+}} = %[[ZERO]]) -> (vector<8x1x32xf32>)
// BUF-LABEL:   func.func @prepacked_zero(
// BUF-NOT:     linalg.fill
// BUF:         return
func.func @prepacked_zero(%a: memref<64x256xf32>, %w: memref<4x256x32xf32>, %c: memref<64x128xf32>) {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%c : memref<64x128xf32>)
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [64, 4, 32] : memref<64x128xf32> into memref<64x4x32xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x256xf32>, memref<4x256x32xf32>) outs(%cv : memref<64x4x32xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A broadcast into another buffer is no init of the product: it stays where it is, and the island accumulates onto
// what the output holds.
// CHECK-LABEL: func.func @prepacked_other_broadcast(
// CHECK:       linalg.broadcast ins(%{{.+}} : memref<128xf32>) outs(%{{.+}} : memref<64x128xf32>)
// CHECK:       bufferization.to_tensor %{{.+}} restrict writable : memref<64x4x32xf32>
// CHECK:       scf.for {{.+}} -> (vector<8x1x32xf32>)
func.func @prepacked_other_broadcast(%a: memref<64x256xf32>, %w: memref<4x256x32xf32>, %b: memref<128xf32>,
                                     %c: memref<64x128xf32>, %d: memref<64x128xf32>) {
  linalg.broadcast ins(%b : memref<128xf32>) outs(%d : memref<64x128xf32>) dimensions = [0]
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [64, 4, 32] : memref<64x128xf32> into memref<64x4x32xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x256xf32>, memref<4x256x32xf32>) outs(%cv : memref<64x4x32xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The updates of the output right after it (a residual add of a buffer of its shape, then a ReLU, here fused into
// one generic) move into the island too: they run on the accumulators after the reduction, and each register tile
// of the output is written once.
// CHECK-LABEL: func.func @prepacked_residual_relu(
// CHECK:       %[[ACC:.+]] = scf.for {{.+}} -> (vector<8x1x32xf32>)
// CHECK:       %[[SKIP:.+]] = vector.transfer_read {{.+}} : tensor<64x4x32xf32>, vector<8x1x32xf32>
// CHECK:       %[[SUM:.+]] = arith.addf %[[ACC]], %[[SKIP]] : vector<8x1x32xf32>
// CHECK:       %[[RELU:.+]] = arith.maximumf %[[SUM]], %{{.+}} : vector<8x1x32xf32>
// CHECK:       vector.transfer_write %[[RELU]]
// CHECK:       bufferization.materialize_in_destination
// CHECK-NOT:   linalg.generic
// CHECK:       return
// BUF-LABEL:   func.func @prepacked_residual_relu(
// BUF-NOT:     memref.alloc
// BUF-NOT:     linalg.generic
// BUF:         return
func.func @prepacked_residual_relu(%a: memref<64x256xf32>, %w: memref<4x256x32xf32>, %b: memref<128xf32>,
                                   %s: memref<64x128xf32>, %c: memref<64x128xf32>) {
  linalg.broadcast ins(%b : memref<128xf32>) outs(%c : memref<64x128xf32>) dimensions = [0]
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [64, 4, 32] : memref<64x128xf32> into memref<64x4x32xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x256xf32>, memref<4x256x32xf32>) outs(%cv : memref<64x4x32xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s2 = arith.addf %acc, %m : f32
    linalg.yield %s2 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : memref<64x128xf32>, memref<64x128xf32>) outs(%c : memref<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %sum = arith.addf %x, %y : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %sum, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// An update that reads another buffer through a map other than the output's own (here transposed) stays a loop
// of its own after the island.
// CHECK-LABEL: func.func @prepacked_transposed_update(
// CHECK:       bufferization.materialize_in_destination
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%{{.+}}, %{{.+}} : memref<64x64xf32>, memref<64x64xf32>)
func.func @prepacked_transposed_update(%a: memref<64x256xf32>, %w: memref<2x256x32xf32>, %s: memref<64x64xf32>,
                                       %c: memref<64x64xf32>) {
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [64, 2, 32] : memref<64x64xf32> into memref<64x2x32xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x256xf32>, memref<2x256x32xf32>) outs(%cv : memref<64x2x32xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s2 = arith.addf %acc, %m : f32
    linalg.yield %s2 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j, i)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %sum = arith.addf %x, %y : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// An update that moves the chain to another buffer (a residual add written onto the skip, the product's buffer dead
// after it: glow.dead_input) takes the island there: the skip is read and written through the island's output, and
// the product's own buffer is never written. With threads it stays a loop of its own (in an scf.forall each task's
// tile of the product's buffer would be a buffer of its own).
// CHECK-LABEL: func.func @prepacked_moved_add(
// CHECK:       %[[SKIP:.+]] = memref.expand_shape %arg3
// CHECK:       %[[OUT:.+]] = bufferization.to_tensor %[[SKIP]] restrict writable
// CHECK:       scf.for {{.+}} -> (vector<8x1x32xf32>)
// CHECK:       vector.transfer_read %arg{{[0-9]+}}[{{.+}} : tensor<64x2x32xf32>, vector<8x1x32xf32>
// CHECK:       arith.addf {{.+}} : vector<8x1x32xf32>
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[SKIP]]
// CHECK-NOT:   linalg.generic
// CHECK:       return
// BUF-LABEL:   func.func @prepacked_moved_add(
// BUF-NOT:     memref.alloc
// BUF-NOT:     linalg.generic
// BUF:         return
// THREADS-LABEL: func.func @prepacked_moved_add(
// THREADS:       scf.forall
// THREADS:       linalg.generic
// THREADS-SAME:  attrs = {glow.dead_input = 0 : i64}
func.func @prepacked_moved_add(%a: memref<64x256xf32>, %w: memref<4x256x32xf32>, %b: memref<128xf32>,
                               %s: memref<64x128xf32>, %c: memref<64x128xf32>) {
  linalg.broadcast ins(%b : memref<128xf32>) outs(%c : memref<64x128xf32>) dimensions = [0]
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [64, 4, 32] : memref<64x128xf32> into memref<64x4x32xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<64x256xf32>, memref<4x256x32xf32>) outs(%cv : memref<64x4x32xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s2 = arith.addf %acc, %m : f32
    linalg.yield %s2 : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %s : memref<64x128xf32>, memref<64x128xf32>) outs(%s : memref<64x128xf32>) attrs = {glow.dead_input = 0 : i64} {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %sum = arith.addf %x, %y : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A convolution on a filter in chunks of input channels [F/B, C/Cc, KH, KW, Cc, B] whose plan takes row tiles (28
// output columns; threads may also turn tiles of pixels back into row tiles): per block, a loop over the chunks with
// one island each, block j's chunk q [KH, KW, Cc, B] on input channels [q Cc, (q + 1) Cc) into block j's output
// channels, each accumulating onto what the chunks before wrote.
// CHECK-LABEL: func.func @chunked_row_tiles(
// CHECK:       scf.for %[[J:.+]] = %c0 to %c2 step %c1 {
// CHECK:       %[[BLOCK:.+]] = memref.subview %{{.+}}[%[[J]], 0, 0, 0, 0, 0] [1, 2, 3, 3, 32, 16]
// CHECK:       %[[OUT:.+]] = memref.subview %{{.+}}[0, 0, 0, %[[J]], 0] [1, 28, 28, 1, 16]
// CHECK:       scf.for %[[Q:.+]] = %c0 to %c2 step %c1 {
// CHECK:       %[[FIRST:.+]] = arith.muli %[[Q]], %c32
// CHECK:       %[[IN:.+]] = memref.subview %{{.+}}[0, 0, 0, %[[FIRST]]] [1, 30, 30, 32] [1, 1, 1, 1] : memref<1x30x30x64xf32> to memref<1x30x30x32xf32, strided<[57600, 1920, 64, 1], offset: ?>>
// CHECK:       %[[CHUNK:.+]] = memref.subview %[[BLOCK]][%[[Q]], 0, 0, 0, 0] [1, 3, 3, 32, 16] {{.+}} to memref<3x3x32x16xf32, strided<[1536, 512, 16, 1], offset: ?>>
// CHECK:       bufferization.to_tensor %[[IN]]
// CHECK:       bufferization.to_tensor %[[CHUNK]]
// CHECK:       vector.contract
// CHECK:       bufferization.materialize_in_destination %{{.+}} in writable %[[OUT]]
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @chunked_row_tiles(%x: memref<1x30x30x64xf32>, %w: memref<2x2x3x3x32x16xf32>, %y: memref<1x28x28x2x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 + d5, d2 + d6, d7 * 32 + d8)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d3, d7, d5, d6, d8, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x30x30x64xf32>, memref<2x2x3x3x32x16xf32>) outs(%y : memref<1x28x28x2x16xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
