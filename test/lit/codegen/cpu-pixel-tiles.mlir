// cpu-tile-kernels on convolutions on packed filters (convert-glowir-to-linalg's blocked generic, dest viewed [N, OH,
// OW, F/B, B]) whose output rows are short: register tiles of output pixels that may cross output rows
// (backend/kernels/pixel_tiles.py), where they cost at least 5% less than the row tiles (conv.pixel_rows), or no more
// where a filter that comes from memory in a network would be read in few row tiles a block (conv.PREFETCH_TILES);
// tiles of whole output rows may hold more pixels than those that start anywhere.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=2 target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=THREADS
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX512
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=16 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=TASKS
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=16 parallel-flops=1000000 target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=SHARE

// AVX2, 7x7 output pixels on blocks of 16 filters: tiles of 5 pixels (10 ymm accumulators; 49 = 9 x 5 + 4), each
// pixel's row and column from its index, the next block's filter line prefetched into L2 at every step; the last 4
// pixels a tile of their own. The loops replace the generic: no row tiles (vector.contract) are left.
// AVX2-LABEL: func.func @short_rows(
// AVX2:       scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// AVX2:       %[[NEXT:.+]] = arith.minui
// AVX2:       scf.for %{{.+}} = %{{.+}} to %c9 step
// AVX2:       arith.divui %{{.+}}, %c7
// AVX2:       arith.remui %{{.+}}, %c7
// AVX2:       memref.prefetch %{{.+}}[%[[NEXT]], {{.+}}], read, locality<2>, data
// AVX2-NOT:   memref.prefetch
// AVX2-COUNT-2: vector.load %{{.+}}[%[[J]], {{.+}} : memref<2x3x3x32x16xf32>, vector<8xf32>
// AVX2-COUNT-10: vector.fma {{.+}} : vector<8xf32>
// AVX2-NOT:   vector.fma
// AVX2:       scf.yield
// AVX2:       memref.prefetch
// AVX2-COUNT-8: vector.fma {{.+}} : vector<8xf32>
// AVX2-NOT:   vector.fma
// AVX2-NOT:   vector.contract
// AVX2-NOT:   linalg.generic
// AVX2:       return
// With threads the blocks are the tasks (one each here), each running its tiles on its thread.
// THREADS-LABEL: func.func @short_rows(
// THREADS:     scf.forall (%[[B:.+]]) in (2)
// THREADS:     memref.prefetch
// THREADS-COUNT-10: vector.fma
// THREADS-NOT: scf.forall
// THREADS:     return
func.func @short_rows(%x: memref<1x9x9x32xf32>, %w: memref<2x3x3x32x16xf32>, %y: memref<1x7x7x2x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x9x9x32xf32>, memref<2x3x3x32x16xf32>) outs(%y : memref<1x7x7x2x16xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// AVX2 at 28 output columns: the row tiles (6x16, the last 4 columns peeled) cost under 2% more than tiles of pixels
// and keep their fused epilogue: kept.
// AVX2-LABEL: func.func @long_rows(
// AVX2-NOT:   memref.prefetch
// AVX2:       vector.contract {{.+}} into vector<1x6x16xf32>
// AVX2-NOT:   memref.prefetch
// AVX2:       return
func.func @long_rows(%x: memref<1x30x30x16xf32>, %w: memref<2x3x3x16x16xf32>, %y: memref<1x28x28x2x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x30x30x16xf32>, memref<2x3x3x16x16xf32>) outs(%y : memref<1x28x28x2x16xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// AVX-512 at 7x7 on blocks of 32: tiles of two whole output rows, 14 pixels (28 zmm accumulators, two filter
// vectors and a broadcast: 31 registers), where the 7x32 row tiles read each filter vector for 7 FMAs; 49 = 3 x 14
// + 7. The tile's first row comes from its index once, every other pixel's row and column are constants off it (no
// per-pixel divui/remui, which would take an address register each). A block's row of 32 filters is two cache lines:
// both of the next block's are prefetched at every step (AVX2's rows of 16 are one line, prefetched once, above).
// AVX512-LABEL: func.func @avx512_rows(
// AVX512:       scf.for %{{.+}} = %{{.+}} to %c3 step
// AVX512:       %[[TOP:.+]] = arith.divui %{{.+}}, %c7
// AVX512:       %[[NEXT:.+]] = arith.addi %[[TOP]], %c1
// AVX512-NOT:   arith.remui
// AVX512:       vector.load %{{.+}}[%c0, %[[TOP]], %c6, %{{.+}}, %c16]
// AVX512:       vector.load %{{.+}}[%c0, %[[NEXT]], %c0, %{{.+}}, %c0]
// AVX512:       memref.prefetch %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c0], read, locality<2>, data : memref<2x3x3x32x32xf32>
// AVX512-NEXT:  memref.prefetch %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %c16], read, locality<2>, data : memref<2x3x3x32x32xf32>
// AVX512-NOT:   memref.prefetch
// AVX512-COUNT-28: vector.fma {{.+}} : vector<16xf32>
// AVX512-NOT:   vector.fma
// AVX512:       scf.yield
// AVX512:       memref.prefetch
// AVX512-COUNT-14: vector.fma {{.+}} : vector<16xf32>
// AVX512-NOT:   vector.fma
// AVX512-NOT:   vector.contract
// AVX512:       return
// On sixteen threads the 2 blocks would keep 2 busy: each tile of each block is a task (2 x 4), the last tile of an
// image (7 pixels) in a branch of its own.
// TASKS-LABEL: func.func @avx512_rows(
// TASKS:       scf.forall (%{{.+}}) in (8)
// TASKS:       arith.divui %{{.+}}, %c4
// TASKS:       arith.remui %{{.+}}, %c4
// TASKS:       scf.if
// TASKS-COUNT-14: vector.fma {{.+}} : vector<16xf32>
// TASKS:       } else {
// TASKS-COUNT-28: vector.fma {{.+}} : vector<16xf32>
// TASKS-NOT:   scf.forall
// TASKS:       return
// With a parallel-flops of 1 M, the 1.8 MFLOP on sixteen threads are too little a thread for tiles that leave the
// epilogue unfused (WHOLE_ROW_THREAD_FLOPS): the row tiles stay.
// SHARE-LABEL: func.func @avx512_rows(
// SHARE-NOT:   memref.prefetch
// SHARE:       vector.contract {{.+}} into vector<1x7x32xf32>
// SHARE-NOT:   memref.prefetch
// SHARE:       return
func.func @avx512_rows(%x: memref<1x9x9x32xf32>, %w: memref<2x3x3x32x32xf32>, %y: memref<1x7x7x2x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x9x9x32xf32>, memref<2x3x3x32x32xf32>) outs(%y : memref<1x7x7x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Stride 2 into 7x7 for AVX2, the pixels' input rows and columns are twice their output row and column.
// AVX2-LABEL: func.func @strided(
// AVX2:       %[[ROW:.+]] = arith.divui %{{.+}}, %c7
// AVX2:       %[[COLUMN:.+]] = arith.remui %{{.+}}, %c7
// AVX2:       arith.muli %[[ROW]], %c2
// AVX2:       arith.muli %[[COLUMN]], %c2
// AVX2:       memref.prefetch
// AVX2:       return
func.func @strided(%x: memref<1x15x15x32xf32>, %w: memref<2x3x3x32x16xf32>, %y: memref<1x7x7x2x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x15x15x32xf32>, memref<2x3x3x32x16xf32>) outs(%y : memref<1x7x7x2x16xf32>)
      attrs = {glow.blocked_conv = array<i64: 2, 2>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// AVX-512 at 14x14, 3x3 256->256: the 14x32 row tiles (28 accumulators) cost as much as tiles of one whole row, and
// would read each block of a filter that comes from memory in a network (2.4 MB, over half the L2) in 14 tiles
// (PREFETCH_TILES): the pixel tiles take their place, prefetching the next block. On sixteen threads each tile of
// each block is a task (8 x 14).
// AVX512-LABEL: func.func @avx512_fourteen(
// AVX512:       scf.for %{{.+}} = %c0 to %c8 step
// AVX512:       scf.for %{{.+}} = %c0 to %c14 step
// AVX512:       memref.prefetch %{{.+}} : memref<8x3x3x256x32xf32>
// AVX512-COUNT-28: vector.fma {{.+}} : vector<16xf32>
// AVX512-NOT:   vector.fma
// AVX512-NOT:   vector.contract
// AVX512:       return
// TASKS-LABEL: func.func @avx512_fourteen(
// TASKS:       scf.forall (%{{.+}}) in (112)
// TASKS:       memref.prefetch
// TASKS-COUNT-28: vector.fma {{.+}} : vector<16xf32>
// TASKS-NOT:   vector.contract
// TASKS:       return
func.func @avx512_fourteen(%x: memref<1x16x16x256xf32>, %w: memref<8x3x3x256x32xf32>, %y: memref<1x14x14x8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x16x16x256xf32>, memref<8x3x3x256x32xf32>) outs(%y : memref<1x14x14x8x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The same rows with 64 channels: a filter of 147 KB may stay in the caches, and the row tiles stay, their epilogue
// fused, with the output rows as the tasks on sixteen threads.
// AVX512-LABEL: func.func @avx512_fourteen_small_filter(
// AVX512-NOT:   memref.prefetch
// AVX512:       vector.contract {{.+}} into vector<1x14x32xf32>
// AVX512:       return
// TASKS-LABEL: func.func @avx512_fourteen_small_filter(
// TASKS-NOT:   memref.prefetch
// TASKS:       vector.contract {{.+}} into vector<1x14x32xf32>
// TASKS:       return
func.func @avx512_fourteen_small_filter(%x: memref<1x16x16x64xf32>, %w: memref<2x3x3x64x32xf32>, %y: memref<1x14x14x2x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x16x16x64xf32>, memref<2x3x3x64x32xf32>) outs(%y : memref<1x14x14x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// AVX-512 at 28x28 with the large filter: its 14x32 row tiles read each block in 56 tiles, more than PREFETCH_TILES,
// and the pixel tiles save nothing: the row tiles stay.
// AVX512-LABEL: func.func @avx512_twenty_eight(
// AVX512-NOT:   memref.prefetch
// AVX512:       vector.contract {{.+}} into vector<1x14x32xf32>
// AVX512-NOT:   memref.prefetch
// AVX512:       return
func.func @avx512_twenty_eight(%x: memref<1x30x30x256xf32>, %w: memref<8x3x3x256x32xf32>, %y: memref<1x28x28x8x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 1 + d5, d2 * 1 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x30x30x256xf32>, memref<8x3x3x256x32xf32>) outs(%y : memref<1x28x28x8x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// AVX-512 at stride 2 into 28 output columns: the row tiles stop at 8 columns there (8 + 8 + 8 + 4), tiles of half
// a row hold 14 pixels (14 x 32, 28 zmm accumulators): each tile's first pixel gives its row and column, the others
// follow along the row at constant distances. 56 tiles a block, 28 FMAs a step, no row tiles left.
// AVX512-LABEL: func.func @half_rows(
// AVX512:       scf.for %{{.+}} = %{{.+}} to %c56 step
// AVX512:       %[[LEFT:.+]] = arith.remui %{{.+}}, %c28
// AVX512:       arith.addi %[[LEFT]], %c13
// AVX512:       memref.prefetch
// AVX512-COUNT-28: vector.fma {{.+}} : vector<16xf32>
// AVX512-NOT:   vector.fma
// AVX512-NOT:   vector.contract
// AVX512:       return
func.func @half_rows(%x: memref<1x57x57x32xf32>, %w: memref<2x3x3x32x32xf32>, %y: memref<1x28x28x2x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x57x57x32xf32>, memref<2x3x3x32x32xf32>) outs(%y : memref<1x28x28x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 2, 2>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// AVX-512, 3x3 stride 2 from 512 channels into 7x7: neighbouring output pixels read input pixels 4 KiB apart, so the
// 14 pixels of two whole rows would share one L1 set (12 ways) and the 7x32 row tiles stayed. The input is copied once
// into a buffer whose pixels are one cache line longer (528 channels), where the 14 pixels spread over the sets; the
// tiles of two whole rows read its view of 512 channels; the buffer is freed after the blocks. (In a compiled program
// cpu-spread-conv-inputs has given the bordered input those longer pixels before the memory plan: @spread_already.)
// AVX512-LABEL: func.func @spread_pixels(
// AVX512:       %[[WIDE:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x16x16x528xf32>
// AVX512:       %[[VIEW:.+]] = memref.subview %[[WIDE]][0, 0, 0, 0] [1, 16, 16, 512] [1, 1, 1, 1]
// AVX512:       linalg.copy {{.*}}ins(%{{.+}} : memref<1x16x16x512xf32>) outs(%[[VIEW]] :
// AVX512:       scf.for %{{.+}} = %{{.+}} to %c3 step
// AVX512:       memref.load %[[VIEW]]
// AVX512-COUNT-28: vector.fma {{.+}} : vector<16xf32>
// AVX512-NOT:   vector.contract
// AVX512:       memref.dealloc %[[WIDE]]
// AVX512:       return
// AVX2 tiles hold at most 6 pixels wherever they start (within the 8 ways): no copy.
// AVX2-LABEL: func.func @spread_pixels(
// AVX2-NOT:   memref.alloc
// AVX2:       return
func.func @spread_pixels(%x: memref<1x16x16x512xf32>, %w: memref<16x3x3x512x32xf32>, %y: memref<1x7x7x16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x16x16x512xf32>, memref<16x3x3x512x32xf32>) outs(%y : memref<1x7x7x16x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 2, 2>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The same convolution on an input whose pixels are 528 channels apart already (the first 512 of
// cpu-spread-conv-inputs' bordered input): the tiles of two whole rows read it where it is, nothing is copied or
// allocated.
// AVX512-LABEL: func.func @spread_already(
// AVX512-SAME:  %[[X:[^:]+]]: memref<1x16x16x512xf32, strided<[135168, 8448, 528, 1]>>
// AVX512-NOT:   memref.alloc
// AVX512-NOT:   linalg.copy
// AVX512:       scf.for %{{.+}} = %{{.+}} to %c3 step
// AVX512:       memref.load %[[X]]
// AVX512-COUNT-28: vector.fma {{.+}} : vector<16xf32>
// AVX512-NOT:   vector.contract
// AVX512-NOT:   memref.dealloc
// AVX512:       return
func.func @spread_already(%x: memref<1x16x16x512xf32, strided<[135168, 8448, 528, 1]>>, %w: memref<16x3x3x512x32xf32>, %y: memref<1x7x7x16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x16x16x512xf32, strided<[135168, 8448, 528, 1]>>, memref<16x3x3x512x32xf32>) outs(%y : memref<1x7x7x16x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 2, 2>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// The same input with only 64 filters: the 14x32 tiles would save less than copying the input costs, so nothing is
// copied; tiles of one output row (7x32, as cheap as the row tiles, 7 a block: PREFETCH_TILES) read the input as it
// is and prefetch the next filter block.
// AVX512-LABEL: func.func @spread_does_not_pay(
// AVX512-NOT:   memref.alloc
// AVX512:       scf.for %{{.+}} = %c0 to %c7 step
// AVX512:       memref.prefetch
// AVX512-COUNT-14: vector.fma {{.+}} : vector<16xf32>
// AVX512-NOT:   vector.fma
// AVX512-NOT:   memref.alloc
// AVX512:       return
func.func @spread_does_not_pay(%x: memref<1x16x16x512xf32>, %w: memref<2x3x3x512x32xf32>, %y: memref<1x7x7x2x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 * 2 + d5, d2 * 2 + d6, d7)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x16x16x512xf32>, memref<2x3x3x512x32xf32>) outs(%y : memref<1x7x7x2x32xf32>)
      attrs = {glow.blocked_conv = array<i64: 2, 2>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// A filter in chunks of 32 input channels, [F/B, C/32, KH, KW, 32, B] (cpu-pack-conv-filters on an 8-way L1): per
// block, a loop over the chunks around the tiles, so that every tile of the block reads one chunk before the next;
// each tile loads its accumulators, runs (kh, kw, c) over the chunk's 32 channels, reading filter [j, q, kh, kw, c]
// and input channel q x 32 + c, and stores them back. With threads the blocks are the tasks, each running its chunks
// as on one; where each tile of each block is a task (AVX-512 on sixteen threads: 2 blocks x 2 tiles of two whole
// rows), a tile runs the chunks in turn, its accumulators carried through them.
// AVX2-LABEL: func.func @chunked_filter(
// AVX2:       scf.for %[[J:.+]] = %c0 to %c2 step
// AVX2:       scf.for %[[Q:.+]] = %c0 to %c2 step
// AVX2:       scf.for %{{.+}} = %c0 to %c9 step
// AVX2-COUNT-10: vector.load %{{.+}} : memref<1x7x7x2x16xf32>, vector<8xf32>
// AVX2:       %[[BASE:.+]] = arith.muli %[[Q]], %c32
// AVX2:       scf.for %[[KH:.+]] = %c0 to %c3 step
// AVX2:       scf.for %[[KW:.+]] = %c0 to %c3 step
// AVX2:       scf.for %[[C:.+]] = %c0 to %c32 step
// AVX2:       memref.prefetch %{{.+}}[%{{.+}}, %[[Q]], %[[KH]], %[[KW]], %[[C]], %c0]
// AVX2-NEXT:  vector.load %{{.+}}[%[[J]], %[[Q]], %[[KH]], %[[KW]], %[[C]], %c0] : memref<2x2x3x3x32x16xf32>, vector<8xf32>
// AVX2-NEXT:  vector.load %{{.+}}[%[[J]], %[[Q]], %[[KH]], %[[KW]], %[[C]], %c8] : memref<2x2x3x3x32x16xf32>, vector<8xf32>
// AVX2-NEXT:  %[[CH:.+]] = arith.addi %[[BASE]], %[[C]]
// AVX2-NEXT:  memref.load %{{.+}}[%c0, %{{.+}}, %{{.+}}, %[[CH]]] : memref<1x9x9x64xf32>
// AVX2-COUNT-10: vector.fma
// AVX2:       scf.yield
// AVX2-COUNT-10: vector.store %{{.+}} : memref<1x7x7x2x16xf32>, vector<8xf32>
// AVX2:       return
// THREADS-LABEL: func.func @chunked_filter(
// THREADS:     scf.forall (%[[J:.+]]) in (2)
// THREADS:     scf.for %[[Q:.+]] = %c0 to %c2 step
// THREADS:     scf.for %{{.+}} = %c0 to %c9 step
// THREADS:     vector.load %{{.+}}[%[[J]], %[[Q]], %{{.+}}, %{{.+}}, %{{.+}}, %c0] : memref<2x2x3x3x32x16xf32>
// THREADS:     return
// TASKS-LABEL: func.func @chunked_filter(
// TASKS:       scf.forall (%{{.+}}) in (4)
// TASKS:       scf.for %[[Q:.+]] = %c0 to %c2 step %c1 iter_args(
// TASKS:       scf.for %{{.+}} = %c0 to %c3 step %c1 iter_args(
// TASKS:       scf.for %{{.+}} = %c0 to %c3 step %c1 iter_args(
// TASKS:       scf.for %{{.+}} = %c0 to %c32 step %c1 iter_args(
// TASKS:       vector.load %{{.+}}[%{{.+}}, %[[Q]], %{{.+}}, %{{.+}}, %{{.+}}, %c0] : memref<2x2x3x3x32x16xf32>, vector<16xf32>
// TASKS:       return
func.func @chunked_filter(%x: memref<1x9x9x64xf32>, %w: memref<2x2x3x3x32x16xf32>, %y: memref<1x7x7x2x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1 + d5, d2 + d6, d7 * 32 + d8)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d3, d7, d5, d6, d8, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<1x9x9x64xf32>, memref<2x2x3x3x32x16xf32>) outs(%y : memref<1x7x7x2x16xf32>)
      attrs = {glow.blocked_conv = array<i64: 1, 1>} {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %0 = arith.mulf %in, %f : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
