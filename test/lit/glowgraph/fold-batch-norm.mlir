// RUN: glow-opt %s --split-input-file --glowgraph-fold-batch-norm | FileCheck %s

// m = scale / sqrt(var + eps) = [2, 8] / [2, 4] = [1, 2] and a = bias - mean * m = [4, 8] per output channel (the
// last filter dim): w' = w * m = [2, 6], b' = b * m + a = [5, 12].
// CHECK-LABEL: func.func @fold
// CHECK-DAG: %[[W:.+]] = "glowgraph.constant"() {value = dense<{{\[}}{{\[}}{{\[}}[2.000000e+00, 6.000000e+00]]]]> : tensor<1x1x1x2xf32>}
// CHECK-DAG: %[[B:.+]] = "glowgraph.constant"() {value = dense<[5.000000e+00, 1.200000e+01]> : tensor<2xf32>}
// CHECK: %[[C:.+]] = "glowgraph.conv2d"(%{{.+}}, %[[W]], %[[B]])
// CHECK-NOT: "glowgraph.batch_norm"
// CHECK: return %[[C]]
func.func @fold(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = "glowgraph.constant"() {value = dense<[[[[2.0, 3.0]]]]> : tensor<1x1x1x2xf32>} : () -> tensor<1x1x1x2xf32>
  %b = "glowgraph.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %scale = "glowgraph.constant"() {value = dense<[2.0, 8.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %bias = "glowgraph.constant"() {value = dense<[5.0, 10.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = "glowgraph.constant"() {value = dense<[1.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = "glowgraph.constant"() {value = dense<[3.0, 15.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x2x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = "glowgraph.batch_norm"(%0, %scale, %bias, %mean, %var) {channel_axis = 3, epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %1 : tensor<1x2x2x2xf32>
}

// -----

// Negative: a convolution with another user, a batch norm with parameters known only at run time, and one whose
// input is no convolution keep their batch norms.
// CHECK-LABEL: func.func @not_foldable
// CHECK-COUNT-3: "glowgraph.batch_norm"
func.func @not_foldable(%x: tensor<1x2x2x1xf32>, %p: tensor<2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x1x2xf32>} : () -> tensor<1x1x1x2xf32>
  %c = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %c) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x2x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = "glowgraph.batch_norm"(%0, %c, %c, %c, %c) {channel_axis = 3, epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %2 = "glowgraph.conv2d"(%x, %w, %c) {strides = array<i64: 1, 1>, pads = array<i64: 1, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x2x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x3x2x2xf32>
  %3 = "glowgraph.slice"(%2) {starts = array<i64: 0, 0, 0, 0>, sizes = array<i64: 1, 2, 2, 2>} : (tensor<1x3x2x2xf32>) -> tensor<1x2x2x2xf32>
  %4 = "glowgraph.conv2d"(%x, %w, %c) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x2x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %5 = "glowgraph.batch_norm"(%4, %p, %c, %c, %c) {channel_axis = 3, epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %6 = "glowgraph.relu"(%3) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %7 = "glowgraph.batch_norm"(%6, %c, %c, %c, %c) {channel_axis = 3, epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  return %1, %0, %5, %7 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
