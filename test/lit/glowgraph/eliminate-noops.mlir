// RUN: glow-opt %s --split-input-file --glowgraph-eliminate-noops | FileCheck %s

// A reshape, broadcast and transpose that change nothing are their input.
// CHECK-LABEL: func.func @identity_views
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: glowgraph.reshape
// CHECK-NOT: glowgraph.broadcast
// CHECK-NOT: glowgraph.transpose
// CHECK: %[[R:.+]] = "glowgraph.relu"(%[[X]])
// CHECK: return %[[R]]
func.func @identity_views(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "glowgraph.reshape"(%x) {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.broadcast"(%0) {shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "glowgraph.transpose"(%1) {shuffle = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "glowgraph.relu"(%2) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %3 : tensor<2x3xf32>
}

// -----

// Negative: a transpose that permutes dims stays, and so does a reshape to another shape.
// CHECK-LABEL: func.func @real_views
// CHECK: "glowgraph.transpose"
// CHECK: "glowgraph.reshape"
func.func @real_views(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 6>} : (tensor<3x2xf32>) -> tensor<6xf32>
  return %1 : tensor<6xf32>
}

// -----

// A slice of everything is its input, whatever its steps on dims of one element.
// CHECK-LABEL: func.func @full_slice
// CHECK-SAME: (%[[X:.+]]: tensor<1x4xf32>)
// CHECK-NOT: glowgraph.slice
// CHECK: return %[[X]]
func.func @full_slice(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "glowgraph.slice"(%x) {starts = array<i64: 0, 0>, sizes = array<i64: 1, 4>, steps = array<i64: 3, 1>} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

// Negative: a slice that starts further in stays.
// CHECK-LABEL: func.func @partial_slice
// CHECK: "glowgraph.slice"
func.func @partial_slice(%x: tensor<4xf32>) -> tensor<2xf32> {
  %0 = "glowgraph.slice"(%x) {starts = array<i64: 2>, sizes = array<i64: 2>} : (tensor<4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// x + 0, 0 + x, x - 0, x * 1, 1 * x and x / 1 are x, for splats, constants and broadcasts of them.
// CHECK-LABEL: func.func @neutral
// CHECK-SAME: (%[[X:.+]]: tensor<2x2xf32>)
// CHECK-NOT: glowgraph.add
// CHECK-NOT: glowgraph.sub
// CHECK-NOT: glowgraph.mul
// CHECK-NOT: glowgraph.div
// CHECK: return %[[X]]
func.func @neutral(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %zero = "glowgraph.splat"() {value = 0.0 : f32} : () -> tensor<2x2xf32>
  %one = "glowgraph.constant"() {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %row = "glowgraph.constant"() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %ones = "glowgraph.broadcast"(%row) {shape = array<i64: 2, 2>} : (tensor<2xf32>) -> tensor<2x2xf32>
  %0 = "glowgraph.add"(%x, %zero) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.add"(%zero, %0) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.sub"(%1, %zero) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %3 = "glowgraph.mul"(%2, %one) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %4 = "glowgraph.mul"(%ones, %3) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %5 = "glowgraph.div"(%4, %one) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %5 : tensor<2x2xf32>
}

// -----

// Negative: 0 - x and 1 / x are not x, nor is x * c with c not all ones.
// CHECK-LABEL: func.func @not_neutral
// CHECK: "glowgraph.sub"
// CHECK: "glowgraph.div"
// CHECK: "glowgraph.mul"
func.func @not_neutral(%x: tensor<2xf32>) -> tensor<2xf32> {
  %zero = "glowgraph.splat"() {value = 0.0 : f32} : () -> tensor<2xf32>
  %one = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<2xf32>
  %c = "glowgraph.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.sub"(%zero, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "glowgraph.div"(%one, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = "glowgraph.mul"(%1, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}
