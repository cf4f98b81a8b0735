// cpu-lower-vectors: a kernel's vector.contract (a register tile of accumulators times one reduction step) becomes
// one broadcast of an A element times a row of B, fused into each accumulator row: vector.fma, no contraction left.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-lower-vectors)' | FileCheck %s

// CHECK-LABEL: func.func @contract(
// CHECK-NOT:   vector.contract
// CHECK:       %[[ROW:.+]] = vector.extract %{{.+}}[0] : vector<32xf32> from vector<1x32xf32>
// CHECK:       %[[A0:.+]] = vector.broadcast %{{.+}} : f32 to vector<32xf32>
// CHECK:       vector.fma %[[A0]], %[[ROW]], %{{.+}} : vector<32xf32>
// CHECK:       %[[A1:.+]] = vector.broadcast %{{.+}} : f32 to vector<32xf32>
// CHECK:       vector.fma %[[A1]], %[[ROW]], %{{.+}} : vector<32xf32>
// CHECK-NOT:   vector.contract
// CHECK:       return
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @contract(%a: memref<2x8xf32>, %b: memref<8x32xf32>, %c: memref<2x32xf32>, %k: index) {
  %cst = arith.constant 0.000000e+00 : f32
  %acc = vector.transfer_read %c[%k, %k], %cst {in_bounds = [true, true]} : memref<2x32xf32>, vector<2x32xf32>
  %x = vector.transfer_read %a[%k, %k], %cst {in_bounds = [true, true]} : memref<2x8xf32>, vector<2x1xf32>
  %y = vector.transfer_read %b[%k, %k], %cst {in_bounds = [true, true]} : memref<8x32xf32>, vector<1x32xf32>
  %r = vector.contract {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %acc : vector<2x1xf32>, vector<1x32xf32> into vector<2x32xf32>
  vector.transfer_write %r, %c[%k, %k] {in_bounds = [true, true]} : vector<2x32xf32>, memref<2x32xf32>
  return
}

// -----

// Code without vectors is left alone.
// CHECK-LABEL: func.func @scalar(
// CHECK-NEXT:  arith.mulf
// CHECK-NEXT:  return
func.func @scalar(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  return %y : f32
}
