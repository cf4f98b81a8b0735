// cpu-tile-kernels, a matmul on weights packed at compile time (convert-glowir-to-linalg's tagged generic): where B
// exceeds half the L2 and the rows make more than one L1 tile, the L1 tiles run down the rows of one column tile
// before the next, so that B streams once (matmul.columns_outer); else across the columns of one row tile, each row
// tile reading all of B. The L2 is the target's: haswell 256 KiB, znver3 512 KiB, skylake-avx512 1 MiB.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=HSW
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{target-cpu=znver3 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=ZN3
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-tile-kernels{threads=2 target-cpu=znver3 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=TWO

// squeezenet's classifier as a matmul of 168 of its pixels (1008 columns, 2 MB of B): the loop over column tiles of 3
// panels outside the loop over row tiles of 42 rows, on both AVX2 targets. On two threads the tiles are tasks of an
// scf.forall instead.
// HSW-LABEL:  func.func @classifier(
// HSW:        scf.for %{{.+}} = %c0 to %c63 step %c3
// HSW-NEXT:   scf.for %{{.+}} = %c0 to %c168 step %c42
// HSW:        scf.for %{{.+}} = %c0 to %c42 step %c6
// ZN3-LABEL:  func.func @classifier(
// ZN3:        scf.for %{{.+}} = %c0 to %c63 step %c3
// ZN3-NEXT:   scf.for %{{.+}} = %c0 to %c168 step %c42
// TWO-LABEL:  func.func @classifier(
// TWO:        scf.forall
// TWO:        return
func.func @classifier(%a: memref<168x512xf32>, %w: memref<63x512x16xf32>, %c: memref<168x1008xf32>) {
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [168, 63, 16] : memref<168x1008xf32> into memref<168x63x16xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<168x512xf32>, memref<63x512x16xf32>) outs(%cv : memref<168x63x16xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}


// -----

// The same with the bias broadcast moved into the island (its epilogue): the fused loops take the same order.
// HSW-LABEL:  func.func @classifier_bias(
// HSW-NOT:    linalg.broadcast
// HSW:        scf.for %{{.+}} = %c0 to %c63 step %c3
// HSW-NEXT:   scf.for %{{.+}} = %c0 to %c168 step %c42
// HSW:        vector<6x1x16xf32>
// ZN3-LABEL:  func.func @classifier_bias(
// ZN3:        scf.for %{{.+}} = %c0 to %c63 step %c3
// ZN3-NEXT:   scf.for %{{.+}} = %c0 to %c168 step %c42
// TWO-LABEL:  func.func @classifier_bias(
// TWO:        scf.forall
// TWO:        return
func.func @classifier_bias(%a: memref<168x512xf32>, %w: memref<63x512x16xf32>, %b: memref<1008xf32>, %c: memref<168x1008xf32>) {
  linalg.broadcast ins(%b : memref<1008xf32>) outs(%c : memref<168x1008xf32>) dimensions = [0]
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [168, 63, 16] : memref<168x1008xf32> into memref<168x63x16xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<168x512xf32>, memref<63x512x16xf32>) outs(%cv : memref<168x63x16xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}


// -----

// 256 KiB of B: more than half of haswell's L2 (columns outside), no more than half of znver3's (rows outside).
// HSW-LABEL:  func.func @small(
// HSW:        scf.for %{{.+}} = %c0 to %c16 step %c4
// HSW-NEXT:   scf.for %{{.+}} = %c0 to %c168 step %c42
// ZN3-LABEL:  func.func @small(
// ZN3:        scf.for %{{.+}} = %c0 to %c168 step %c42
// ZN3-NEXT:   scf.for %{{.+}} = %c0 to %c16 step %c4
// TWO-LABEL:  func.func @small(
// TWO:        return
func.func @small(%a: memref<168x256xf32>, %w: memref<16x256x16xf32>, %c: memref<168x256xf32>) {
  %cv = memref.expand_shape %c [[0], [1, 2]] output_shape [168, 16, 16] : memref<168x256xf32> into memref<168x16x16xf32>
  linalg.generic {indexing_maps = [affine_map<(m, p, j, k) -> (m, k)>, affine_map<(m, p, j, k) -> (p, k, j)>,
                                   affine_map<(m, p, j, k) -> (m, p, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : memref<168x256xf32>, memref<16x256x16xf32>) outs(%cv : memref<168x16x16xf32>) attrs = {glow.packed_matmul} {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}
