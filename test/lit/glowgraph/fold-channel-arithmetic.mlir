// RUN: glow-opt %s --split-input-file --glowgraph-fold-channel-arithmetic | FileCheck %s

// Mul then Add of per-channel constants (broadcast over N, H, W) after a convolution: w * c, b * c + d.
// CHECK-LABEL: func.func @into_conv
// CHECK-DAG: %[[W:.+]] = "glowgraph.constant"() {value = dense<{{\[}}{{\[}}{{\[}}[2.000000e+00, 6.000000e+00]]]]> : tensor<1x1x1x2xf32>}
// CHECK-DAG: %[[B:.+]] = "glowgraph.constant"() {value = dense<[1.200000e+01, 2.600000e+01]> : tensor<2xf32>}
// CHECK: %[[C:.+]] = "glowgraph.conv2d"(%{{.+}}, %[[W]], %[[B]])
// CHECK-NOT: "glowgraph.mul"
// CHECK-NOT: "glowgraph.add"
// CHECK: return %[[C]]
func.func @into_conv(%x: tensor<1x2x2x1xf32>) -> tensor<1x2x2x2xf32> {
  %w = "glowgraph.constant"() {value = dense<[[[[1.0, 2.0]]]]> : tensor<1x1x1x2xf32>} : () -> tensor<1x1x1x2xf32>
  %b = "glowgraph.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = "glowgraph.constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %d = "glowgraph.constant"() {value = dense<[10.0, 20.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %cb = "glowgraph.broadcast"(%c) {shape = array<i64: 1, 2, 2, 2>} : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %db = "glowgraph.broadcast"(%d) {shape = array<i64: 1, 2, 2, 2>} : (tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x2x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = "glowgraph.mul"(%cb, %0) : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %2 = "glowgraph.add"(%1, %db) : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %2 : tensor<1x2x2x2xf32>
}

// -----

// Into a batch norm: scale * c, bias * c, and a subtraction of a splat shifts the bias down.
// CHECK-LABEL: func.func @into_batch_norm
// CHECK-DAG: %[[S:.+]] = "glowgraph.constant"() {value = dense<[2.000000e+00, 6.000000e+00]> : tensor<2xf32>}
// CHECK-DAG: %[[B:.+]] = "glowgraph.constant"() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK: %[[N:.+]] = "glowgraph.batch_norm"(%{{.+}}, %[[S]], %[[B]], %{{.+}}, %{{.+}}) {channel_axis = 1 : i64
// CHECK-NEXT: return %[[N]]
func.func @into_batch_norm(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %one = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = "glowgraph.constant"() {value = dense<[[2.0, 3.0], [2.0, 3.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %d = "glowgraph.splat"() {value = 1.0 : f32} : () -> tensor<2x2xf32>
  %s = "glowgraph.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.batch_norm"(%x, %s, %one, %one, %one) {channel_axis = 1, epsilon = 0.0 : f32} : (tensor<2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.mul"(%0, %c) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.sub"(%1, %d) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}

// -----

// Negative: a constant that varies along H, a convolution with another user, and c - conv stay.
// CHECK-LABEL: func.func @not_foldable
// CHECK: "glowgraph.mul"
// CHECK: "glowgraph.add"
// CHECK: "glowgraph.sub"
func.func @not_foldable(%x: tensor<1x2x1x1xf32>) -> (tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x1x2xf32>} : () -> tensor<1x1x1x2xf32>
  %b = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %h = "glowgraph.constant"() {value = dense<[[[[1.0, 1.0]], [[2.0, 2.0]]]]> : tensor<1x2x1x2xf32>} : () -> tensor<1x2x1x2xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x1x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x1x2xf32>
  %1 = "glowgraph.mul"(%0, %h) : (tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>) -> tensor<1x2x1x2xf32>
  %2 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x1x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x1x2xf32>
  %3 = "glowgraph.add"(%2, %2) : (tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>) -> tensor<1x2x1x2xf32>
  %4 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x1x1xf32>, tensor<1x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x1x2xf32>
  %5 = "glowgraph.sub"(%h, %4) : (tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>) -> tensor<1x2x1x2xf32>
  return %1, %3, %5 : tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>
}
