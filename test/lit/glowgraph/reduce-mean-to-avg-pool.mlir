// RUN: glow-opt %s --split-input-file --glowgraph-reduce-mean-to-avg-pool | FileCheck %s

// A mean over H and W of an NHWC tensor: a global average pool viewed as the mean's shape.
// CHECK-LABEL: func.func @nhwc
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x5x4xf32>)
// CHECK: %[[P:.+]] = "glowgraph.avg_pool"(%[[X]]) {ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernels = array<i64: 3, 5>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
// CHECK-NEXT: %[[R:.+]] = "glowgraph.reshape"(%[[P]]) {shape = array<i64: 2, 4>}
// CHECK-NEXT: return %[[R]]
func.func @nhwc(%x: tensor<2x3x5x4xf32>) -> tensor<2x4xf32> {
  %0 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 1, 2>} : (tensor<2x3x5x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A mean over dims 2 and 3 of the NCHW view of an NHWC tensor pools the NHWC tensor: the transpose goes.
// CHECK-LABEL: func.func @through_layout_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x5x4xf32>)
// CHECK-NOT: "glowgraph.transpose"
// CHECK: %[[P:.+]] = "glowgraph.avg_pool"(%[[X]])
// CHECK-NEXT: "glowgraph.reshape"(%[[P]]) {shape = array<i64: 1, 4>}
func.func @through_layout_transpose(%x: tensor<1x3x5x4xf32>) -> tensor<1x4xf32> {
  %0 = "glowgraph.transpose"(%x) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x3x5x4xf32>) -> tensor<1x4x3x5xf32>
  %1 = "glowgraph.reduce_mean"(%0) {axes = array<i64: 2, 3>} : (tensor<1x4x3x5xf32>) -> tensor<1x4xf32>
  return %1 : tensor<1x4xf32>
}

// -----

// Negative: a mean over other axes, and one over dims 2 and 3 of a plain tensor (it would need a transpose, a copy).
// CHECK-LABEL: func.func @not_spatial
// CHECK-NOT: "glowgraph.avg_pool"
// CHECK-COUNT-2: "glowgraph.reduce_mean"
func.func @not_spatial(%x: tensor<2x3x5x4xf32>) -> (tensor<2x5xf32>, tensor<2x3xf32>) {
  %0 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 1, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x5xf32>
  %1 = "glowgraph.reduce_mean"(%x) {axes = array<i64: 2, 3>} : (tensor<2x3x5x4xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x5xf32>, tensor<2x3xf32>
}
