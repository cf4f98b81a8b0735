// RUN: glow-opt %s --split-input-file --glowgraph-batch-matmul-to-matmul | FileCheck %s

// A broadcast matrix on the right: the batch goes into the rows of one 2-D product.
// CHECK-LABEL: func.func @broadcast_rhs
// CHECK-SAME: (%[[A:.+]]: tensor<3x2x4xf32>)
// CHECK: %[[R:.+]] = "glowgraph.reshape"(%[[A]]) {shape = array<i64: 6, 4>}
// CHECK-NEXT: %[[W:.+]] = "glowgraph.constant"() {value = dense<{{.+}}> : tensor<4x5xf32>}
// CHECK-NEXT: %[[M:.+]] = "glowgraph.matmul"(%[[R]], %[[W]])
// CHECK-NEXT: %[[Y:.+]] = "glowgraph.reshape"(%[[M]]) {shape = array<i64: 3, 2, 5>}
// CHECK-NEXT: return %[[Y]]
func.func @broadcast_rhs(%a: tensor<3x2x4xf32>) -> tensor<3x2x5xf32> {
  %w = "glowgraph.constant"() {value = dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 0.0, 0.0, 0.0, 1.0]]> : tensor<4x5xf32>} : () -> tensor<4x5xf32>
  %b = "glowgraph.broadcast"(%w) {shape = array<i64: 3, 4, 5>} : (tensor<4x5xf32>) -> tensor<3x4x5xf32>
  %0 = "glowgraph.batch_matmul"(%a, %b) : (tensor<3x2x4xf32>, tensor<3x4x5xf32>) -> tensor<3x2x5xf32>
  return %0 : tensor<3x2x5xf32>
}

// -----

// Negative: batch entries that differ, or a right-hand side known only at run time.
// CHECK-LABEL: func.func @per_batch
// CHECK-COUNT-2: "glowgraph.batch_matmul"
func.func @per_batch(%a: tensor<2x1x2xf32>, %r: tensor<2x2x1xf32>) -> (tensor<2x1x1xf32>, tensor<2x1x1xf32>) {
  %c = "glowgraph.constant"() {value = dense<[[[1.0], [2.0]], [[3.0], [4.0]]]> : tensor<2x2x1xf32>} : () -> tensor<2x2x1xf32>
  %0 = "glowgraph.batch_matmul"(%a, %c) : (tensor<2x1x2xf32>, tensor<2x2x1xf32>) -> tensor<2x1x1xf32>
  %1 = "glowgraph.batch_matmul"(%a, %r) : (tensor<2x1x2xf32>, tensor<2x2x1xf32>) -> tensor<2x1x1xf32>
  return %0, %1 : tensor<2x1x1xf32>, tensor<2x1x1xf32>
}
