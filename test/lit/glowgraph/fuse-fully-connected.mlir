// RUN: glow-opt %s --split-input-file --glowgraph-fuse-fully-connected | FileCheck %s

// A bias broadcast over the rows of a product: fully_connected with the bias row.
// CHECK-LABEL: func.func @bias_row
// CHECK-SAME: (%[[X:.+]]: tensor<3x2xf32>, %[[W:.+]]: tensor<2x4xf32>)
// CHECK: %[[B:.+]] = "glowgraph.constant"() {value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}
// CHECK-NEXT: %[[FC:.+]] = "glowgraph.fully_connected"(%[[X]], %[[W]], %[[B]])
// CHECK-NEXT: return %[[FC]]
func.func @bias_row(%x: tensor<3x2xf32>, %w: tensor<2x4xf32>) -> tensor<3x4xf32> {
  %b = "glowgraph.constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  %bb = "glowgraph.broadcast"(%b) {shape = array<i64: 3, 4>} : (tensor<4xf32>) -> tensor<3x4xf32>
  %0 = "glowgraph.matmul"(%x, %w) : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  %1 = "glowgraph.add"(%bb, %0) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

// -----

// Through the reshape that puts the batch dim back (a folded [1, 2, 2] bias constant with equal rows).
// CHECK-LABEL: func.func @through_reshape
// CHECK: %[[B:.+]] = "glowgraph.constant"() {value = dense<[5.000000e+00, 6.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: %[[FC:.+]] = "glowgraph.fully_connected"(%{{.+}}, %{{.+}}, %[[B]])
// CHECK-NEXT: %[[R:.+]] = "glowgraph.reshape"(%[[FC]]) {shape = array<i64: 1, 2, 2>}
// CHECK-NEXT: return %[[R]]
func.func @through_reshape(%x: tensor<2x3xf32>, %w: tensor<3x2xf32>) -> tensor<1x2x2xf32> {
  %b = "glowgraph.constant"() {value = dense<[[[5.0, 6.0], [5.0, 6.0]]]> : tensor<1x2x2xf32>} : () -> tensor<1x2x2xf32>
  %0 = "glowgraph.matmul"(%x, %w) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 1, 2, 2>} : (tensor<2x2xf32>) -> tensor<1x2x2xf32>
  %2 = "glowgraph.add"(%1, %b) : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  return %2 : tensor<1x2x2xf32>
}

// -----

// Negative: rows that differ, an addend known only at run time, and a product with another user stay.
// CHECK-LABEL: func.func @not_a_bias
// CHECK-NOT: "glowgraph.fully_connected"
// CHECK-COUNT-3: "glowgraph.add"
func.func @not_a_bias(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>, %y: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %c = "glowgraph.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %s = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<2x2xf32>
  %0 = "glowgraph.matmul"(%x, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.add"(%0, %c) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.matmul"(%y, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %3 = "glowgraph.add"(%2, %x) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %4 = "glowgraph.matmul"(%w, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %5 = "glowgraph.add"(%4, %s) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %1, %3, %5, %4 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
