// RUN: glow-opt %s --split-input-file --glowgraph-merge-matmuls | FileCheck %s

// Three products of one input with constant weights: one product with the weights side by side, then slices.
// CHECK-LABEL: func.func @three
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[W:.+]] = "glowgraph.constant"() {value = dense<{{.+}}> : tensor<8x6xf32>}
// CHECK-NEXT: %[[M:.+]] = "glowgraph.matmul"(%[[X]], %[[W]])
// CHECK-NEXT: %[[A:.+]] = "glowgraph.slice"(%[[M]]) {sizes = array<i64: 4, 2>, starts = array<i64: 0, 0>}
// CHECK-NEXT: %[[B:.+]] = "glowgraph.slice"(%[[M]]) {sizes = array<i64: 4, 3>, starts = array<i64: 0, 2>}
// CHECK-NEXT: %[[C:.+]] = "glowgraph.slice"(%[[M]]) {sizes = array<i64: 4, 1>, starts = array<i64: 0, 5>}
// CHECK-NOT: "glowgraph.matmul"
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @three(%x: tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x1xf32>) {
  %w1 = "glowgraph.constant"() {value = dense<1.0> : tensor<8x2xf32>} : () -> tensor<8x2xf32>
  %w2 = "glowgraph.constant"() {value = dense<2.0> : tensor<8x3xf32>} : () -> tensor<8x3xf32>
  %w3 = "glowgraph.constant"() {value = dense<3.0> : tensor<8x1xf32>} : () -> tensor<8x1xf32>
  %0 = "glowgraph.matmul"(%x, %w1) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %1 = "glowgraph.matmul"(%x, %w2) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %2 = "glowgraph.matmul"(%x, %w3) : (tensor<4x8xf32>, tensor<8x1xf32>) -> tensor<4x1xf32>
  return %0, %1, %2 : tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x1xf32>
}

// -----

// Fully connected nodes merge with their biases side by side.
// CHECK-LABEL: func.func @fully_connected
// CHECK: %[[B:.+]] = "glowgraph.constant"() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: "glowgraph.fully_connected"(%{{.+}}, %{{.+}}, %[[B]]) : (tensor<3x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-COUNT-2: "glowgraph.slice"
func.func @fully_connected(%x: tensor<3x4xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<4x1xf32>} : () -> tensor<4x1xf32>
  %b1 = "glowgraph.constant"() {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %b2 = "glowgraph.constant"() {value = dense<2.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %0 = "glowgraph.fully_connected"(%x, %w, %b1) : (tensor<3x4xf32>, tensor<4x1xf32>, tensor<1xf32>) -> tensor<3x1xf32>
  %1 = "glowgraph.fully_connected"(%x, %w, %b2) : (tensor<3x4xf32>, tensor<4x1xf32>, tensor<1xf32>) -> tensor<3x1xf32>
  return %0, %1 : tensor<3x1xf32>, tensor<3x1xf32>
}

// -----

// Negative: weights known only at run time, results wider than the input (the slice copies would cost more than
// the reads saved), and products of different inputs stay apart.
// CHECK-LABEL: func.func @not_merged
// CHECK-COUNT-6: "glowgraph.matmul"
// CHECK-NOT: "glowgraph.slice"
func.func @not_merged(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>, %v: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %wide = "glowgraph.constant"() {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = "glowgraph.matmul"(%x, %v) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.matmul"(%x, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.matmul"(%y, %wide) : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = "glowgraph.matmul"(%y, %wide) : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = "glowgraph.matmul"(%v, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %5 = "glowgraph.matmul"(%y, %w) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
