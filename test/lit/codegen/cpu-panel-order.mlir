// cpu-tile-kernels, a matmul whose B is packed at run time: where one panel's slice of a packed block (its rows x
// the panel's columns) fits in half the L1, the register tiles run down the rows of one panel before the next, so
// that every row tile reads that slice from L1 (matmul.panels_outer); else across the panels of one row tile.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=znver3 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX512

// On AVX2, blocks of 256 rows of B (of 128 columns with haswell's 256 KiB L2, 256 with znver3's 512 KiB) in 16-column
// panels, 16 KiB slices in a 32 KiB L1: the panel loop (4 panels of an
// L1 tile) outside the row tiles' loop (42 rows in steps of 6), the reduction innermost.
// On AVX-512, 32-column panels make 32 KiB slices: the row tiles' loop outside the panel loop.
// AVX2-LABEL:  func.func @sgemm(
// AVX2:        memref.alloc() {alignment = 64 : i64} : memref<{{8|16}}x256x16xf32>
// AVX2:        scf.for %{{.+}} = %c0 to %c4 step %c1 iter_args(%{{.+}}) -> (tensor<42x4x16xf32>)
// AVX2-NEXT:   scf.for %{{.+}} = %c0 to %c42 step %c6 iter_args(%{{.+}}) -> (tensor<42x4x16xf32>)
// AVX2:        scf.for %{{.+}} = %c0 to %c256 step %c1 iter_args(%{{.+}}) -> (vector<6x1x16xf32>)
// AVX512-LABEL: func.func @sgemm(
// AVX512:      memref.alloc() {alignment = 64 : i64} : memref<16x256x32xf32>
// AVX512:      scf.for %{{.+}} = %c0 to %c128 step %c8 iter_args(%{{.+}}) -> (tensor<128x4x32xf32>)
// AVX512-NEXT: scf.for %{{.+}} = %c0 to %c4 step %c1 iter_args(%{{.+}}) -> (tensor<128x4x32xf32>)
// AVX512:      scf.for %{{.+}} = %c0 to %c256 step %c1 iter_args(%{{.+}}) -> (vector<8x1x32xf32>)
func.func @sgemm(%a: memref<256x512xf32>, %b: memref<512x512xf32>, %c: memref<256x512xf32>) {
  linalg.matmul ins(%a, %b : memref<256x512xf32>, memref<512x512xf32>) outs(%c : memref<256x512xf32>)
  return
}

// -----

// A prime K is one block of all 521 rows: a slice of 33 KiB exceeds half the L1 on AVX2 too, and the row tiles'
// loop stays outside.
// AVX2-LABEL:  func.func @k_prime(
// AVX2:        memref.alloc() {alignment = 64 : i64} : memref<4x521x16xf32>
// AVX2:        scf.for %{{.+}} = %c0 to %c42 step %c6 iter_args(%{{.+}}) -> (tensor<42x4x16xf32>)
// AVX2-NEXT:   scf.for %{{.+}} = %c0 to %c4 step %c1 iter_args(%{{.+}}) -> (tensor<42x4x16xf32>)
// AVX2:        scf.for %{{.+}} = %c0 to %c521 step %c1 iter_args(%{{.+}}) -> (vector<6x1x16xf32>)
// AVX512-LABEL: func.func @k_prime(
// AVX512:      scf.for %{{.+}} = %c0 to %c128 step %c8 iter_args(%{{.+}}) -> (tensor<128x4x32xf32>)
// AVX512-NEXT: scf.for %{{.+}} = %c0 to %c4 step %c1 iter_args(%{{.+}}) -> (tensor<128x4x32xf32>)
func.func @k_prime(%a: memref<256x521xf32>, %b: memref<521x512xf32>, %c: memref<256x512xf32>) {
  linalg.matmul ins(%a, %b : memref<256x521xf32>, memref<521x512xf32>) outs(%c : memref<256x512xf32>)
  return
}
