// cpu-forward-transfers: a vector.transfer_read of the elements a transfer_write just before it wrote (same buffer,
// same indices, both unmasked, in bounds, minor identity maps, the same elements) takes the written vector; the write
// stays. Anything between them that may write memory, another index, buffer, extent, mask or map keeps the read.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-forward-transfers)' | FileCheck %s

// A fused kernel's bias: written into the tile, read back as the accumulators with the leading unit dim dropped.
// CHECK-LABEL: func.func @bias_into_accumulators(
// CHECK-SAME:    %[[BIAS:[^:]+]]: vector<1x1x14x32xf32>
// CHECK:       vector.transfer_write %[[BIAS]]
// CHECK-NOT:   vector.transfer_read
// CHECK:       %[[ACC:.+]] = vector.shape_cast %[[BIAS]] : vector<1x1x14x32xf32> to vector<1x14x32xf32>
// CHECK:       return %[[ACC]]
func.func @bias_into_accumulators(%bias: vector<1x1x14x32xf32>, %tile: memref<1x1x14x32xf32, strided<[200704, 3584, 64, 1], offset: ?>>) -> vector<1x14x32xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  vector.transfer_write %bias, %tile[%c0, %c0, %c0, %c0] {in_bounds = [true, true, true, true]} : vector<1x1x14x32xf32>, memref<1x1x14x32xf32, strided<[200704, 3584, 64, 1], offset: ?>>
  %acc = vector.transfer_read %tile[%c0, %c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : memref<1x1x14x32xf32, strided<[200704, 3584, 64, 1], offset: ?>>, vector<1x14x32xf32>
  return %acc : vector<1x14x32xf32>
}

// -----

// The same type: the written vector itself; pure ops between (index arithmetic, another read) do not stop it.
// CHECK-LABEL: func.func @same_type(
// CHECK-SAME:    %[[V:[^:]+]]: vector<16xf32>
// CHECK:       vector.transfer_write %[[V]]
// CHECK:       %[[OTHER:.+]] = vector.transfer_read %{{.+}}[%{{.+}}]
// CHECK-NOT:   vector.transfer_read
// CHECK:       return %[[V]], %[[OTHER]]
func.func @same_type(%v: vector<16xf32>, %m: memref<64xf32>, %n: memref<64xf32>, %i: index) -> (vector<16xf32>, vector<16xf32>) {
  %pad = arith.constant 0.0 : f32
  vector.transfer_write %v, %m[%i] {in_bounds = [true]} : vector<16xf32>, memref<64xf32>
  %j = arith.addi %i, %i : index
  %o = vector.transfer_read %n[%j], %pad {in_bounds = [true]} : memref<64xf32>, vector<16xf32>
  %r = vector.transfer_read %m[%i], %pad {in_bounds = [true]} : memref<64xf32>, vector<16xf32>
  return %r, %o : vector<16xf32>, vector<16xf32>
}

// -----

// A write to another buffer between them may alias the first (views of one region): the read stays.
// CHECK-LABEL: func.func @write_between(
// CHECK:       vector.transfer_write
// CHECK:       vector.transfer_write
// CHECK:       %[[R:.+]] = vector.transfer_read
// CHECK:       return %[[R]]
func.func @write_between(%v: vector<16xf32>, %w: vector<16xf32>, %m: memref<64xf32>, %n: memref<64xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  vector.transfer_write %v, %m[%c0] {in_bounds = [true]} : vector<16xf32>, memref<64xf32>
  vector.transfer_write %w, %n[%c0] {in_bounds = [true]} : vector<16xf32>, memref<64xf32>
  %r = vector.transfer_read %m[%c0], %pad {in_bounds = [true]} : memref<64xf32>, vector<16xf32>
  return %r : vector<16xf32>
}

// -----

// A call between them may write anything: the read stays.
// CHECK-LABEL: func.func @call_between(
// CHECK:       vector.transfer_write
// CHECK:       call @touch
// CHECK:       %[[R:.+]] = vector.transfer_read
// CHECK:       return %[[R]]
func.func private @touch(memref<64xf32>)
func.func @call_between(%v: vector<16xf32>, %m: memref<64xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  vector.transfer_write %v, %m[%c0] {in_bounds = [true]} : vector<16xf32>, memref<64xf32>
  call @touch(%m) : (memref<64xf32>) -> ()
  %r = vector.transfer_read %m[%c0], %pad {in_bounds = [true]} : memref<64xf32>, vector<16xf32>
  return %r : vector<16xf32>
}

// -----

// Other elements: another index, fewer elements, another buffer, a transposing map, a masked or possibly
// out-of-bounds read. Every read stays.
// CHECK-LABEL: func.func @not_the_same_elements(
// CHECK-COUNT-6: vector.transfer_read
// CHECK:       return
func.func @not_the_same_elements(%v: vector<4x4xf32>, %m: memref<8x8xf32>, %n: memref<8x8xf32>, %i: index, %mask: vector<4x4xi1>) -> (vector<4x4xf32>, vector<4xf32>, vector<4x4xf32>, vector<4x4xf32>, vector<4x4xf32>, vector<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  vector.transfer_write %v, %m[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<8x8xf32>
  %a = vector.transfer_read %m[%c0, %i], %pad {in_bounds = [true, true]} : memref<8x8xf32>, vector<4x4xf32>
  vector.transfer_write %v, %m[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<8x8xf32>
  %b = vector.transfer_read %m[%c0, %c0], %pad {in_bounds = [true]} : memref<8x8xf32>, vector<4xf32>
  vector.transfer_write %v, %m[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<8x8xf32>
  %c = vector.transfer_read %n[%c0, %c0], %pad {in_bounds = [true, true]} : memref<8x8xf32>, vector<4x4xf32>
  vector.transfer_write %v, %m[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<8x8xf32>
  %d = vector.transfer_read %m[%c0, %c0], %pad {in_bounds = [true, true], permutation_map = affine_map<(d0, d1) -> (d1, d0)>} : memref<8x8xf32>, vector<4x4xf32>
  vector.transfer_write %v, %m[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<8x8xf32>
  %e = vector.transfer_read %m[%c0, %c0], %pad, %mask {in_bounds = [true, true]} : memref<8x8xf32>, vector<4x4xf32>
  vector.transfer_write %v, %m[%c0, %c0] {in_bounds = [true, true]} : vector<4x4xf32>, memref<8x8xf32>
  %f = vector.transfer_read %m[%c0, %c0], %pad {in_bounds = [true, false]} : memref<8x8xf32>, vector<4x4xf32>
  return %a, %b, %c, %d, %e, %f : vector<4x4xf32>, vector<4xf32>, vector<4x4xf32>, vector<4x4xf32>, vector<4x4xf32>, vector<4x4xf32>
}

// -----

// In another block (a loop body) than the write: not forwarded (the scan stays in one block).
// CHECK-LABEL: func.func @other_block(
// CHECK:       scf.for
// CHECK:         vector.transfer_read
func.func @other_block(%v: vector<16xf32>, %m: memref<64xf32>) -> vector<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %pad = arith.constant 0.0 : f32
  vector.transfer_write %v, %m[%c0] {in_bounds = [true]} : vector<16xf32>, memref<64xf32>
  %s = scf.for %k = %c0 to %c4 step %c1 iter_args(%acc = %v) -> (vector<16xf32>) {
    %r = vector.transfer_read %m[%c0], %pad {in_bounds = [true]} : memref<64xf32>, vector<16xf32>
    %x = arith.addf %acc, %r : vector<16xf32>
    scf.yield %x : vector<16xf32>
  }
  return %s : vector<16xf32>
}
