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

// -----

// complete=true (a 32-bit target's pipeline, which converts vectors with convert-to-llvm): the unit dims of an FMA
// go, shape casts fold away and an n-D from_elements becomes 1-D ones inserted into the result; without it they
// stay for convert-vector-to-llvm.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-lower-vectors{complete=true})' | FileCheck %s --check-prefix=COMPLETE
// COMPLETE-LABEL: func.func @unit_dims(
// COMPLETE-NOT:   vector.shape_cast
// COMPLETE:       vector.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<8xf32>
// COMPLETE-NOT:   vector.shape_cast
// COMPLETE:       %[[ROW:.+]] = vector.from_elements %{{.+}}, %{{.+}} : vector<2xf32>
// COMPLETE:       vector.insert %[[ROW]], %{{.+}} [0] : vector<2xf32> into vector<2x2xf32>
// COMPLETE:       return
// CHECK-LABEL:    func.func @unit_dims(
// CHECK:          vector.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<1x1x8xf32>
// CHECK:          vector.from_elements {{.*}} : vector<2x2xf32>
func.func @unit_dims(%a: vector<8xf32>, %b: vector<8xf32>, %s: f32, %out: memref<8xf32>) -> vector<2x2xf32> {
  %x = vector.shape_cast %a : vector<8xf32> to vector<1x1x8xf32>
  %y = vector.shape_cast %b : vector<8xf32> to vector<1x1x8xf32>
  %z = vector.broadcast %s : f32 to vector<1x1x8xf32>
  %r = vector.fma %x, %y, %z : vector<1x1x8xf32>
  %f = vector.shape_cast %r : vector<1x1x8xf32> to vector<8xf32>
  %c0 = arith.constant 0 : index
  vector.store %f, %out[%c0] : memref<8xf32>, vector<8xf32>
  %e = vector.from_elements %s, %s, %s, %s : vector<2x2xf32>
  return %e : vector<2x2xf32>
}

// -----

// complete=true: strided slices become shuffles (1-D) or row extracts and inserts, an n-D FMA 1-D FMAs row by row
// (convert-vector-to-llvm's own rewrites, which convert-to-llvm lacks).
// COMPLETE-LABEL: func.func @slices_and_fma(
// COMPLETE-NOT:   strided_slice
// COMPLETE:       vector.shuffle %{{.+}}, %{{.+}} [1, 2] : vector<8xf32>, vector<8xf32>
// COMPLETE:       vector.shuffle %{{.+}}, %{{.+}} [0, 1, 2, 3, 8, 9, 6, 7] : vector<8xf32>, vector<2xf32>
// COMPLETE:       vector.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf32>
// COMPLETE:       vector.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf32>
// COMPLETE-NOT:   vector<2x4xf32>, vector<2x4xf32>
// COMPLETE-NOT:   strided_slice
// COMPLETE:       return
// CHECK-LABEL:    func.func @slices_and_fma(
// CHECK:          vector.extract_strided_slice
// CHECK:          vector.insert_strided_slice
// CHECK:          vector.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<2x4xf32>
func.func @slices_and_fma(%v: vector<8xf32>, %a: vector<2x4xf32>, %b: vector<2x4xf32>, %c: vector<2x4xf32>) -> (vector<8xf32>, vector<2x4xf32>) {
  %s = vector.extract_strided_slice %v {offsets = [1], sizes = [2], strides = [1]} : vector<8xf32> to vector<2xf32>
  %w = vector.insert_strided_slice %s, %v {offsets = [4], strides = [1]} : vector<2xf32> into vector<8xf32>
  %f = vector.fma %a, %b, %c : vector<2x4xf32>
  return %w, %f : vector<8xf32>, vector<2x4xf32>
}
