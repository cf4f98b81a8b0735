// RUN: glow-opt %s --split-input-file --glowgraph-merge-pad-into-conv | FileCheck %s

// A zero pad of H and W in NHWC joins the convolution's pads [top, left, bottom, right].
// CHECK-LABEL: func.func @nhwc
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x4x2xf32>, %[[W:.+]]: tensor<3x3x2x3xf32>, %[[B:.+]]: tensor<3xf32>)
// CHECK-NOT: "glowgraph.pad"
// CHECK: "glowgraph.conv2d"(%[[X]], %[[W]], %[[B]]) {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 2, 1, 1, 3>
func.func @nhwc(%x: tensor<1x4x4x2xf32>, %w: tensor<3x3x2x3xf32>, %b: tensor<3xf32>) -> tensor<1x5x6x3xf32> {
  %0 = "glowgraph.pad"(%x) {pads = array<i64: 0, 1, 0, 0, 0, 1, 2, 0>, value = 0.0 : f32} : (tensor<1x4x4x2xf32>) -> tensor<1x6x6x2xf32>
  %1 = "glowgraph.conv2d"(%0, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 0, 1>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x6x6x2xf32>, tensor<3x3x2x3xf32>, tensor<3xf32>) -> tensor<1x5x6x3xf32>
  return %1 : tensor<1x5x6x3xf32>
}

// -----

// An NCHW pad before the layout transpose: its pads are mapped through the transpose, which now reads the input.
// CHECK-LABEL: func.func @nchw
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x4xf32>
// CHECK-NEXT: %[[T:.+]] = "glowgraph.transpose"(%[[X]]) {shuffle = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT: "glowgraph.conv2d"(%[[T]], {{.*}}pads = array<i64: 1, 2, 1, 2>
func.func @nchw(%x: tensor<1x2x4x4xf32>, %w: tensor<3x3x2x3xf32>, %b: tensor<3xf32>) -> tensor<1x4x6x3xf32> {
  %0 = "glowgraph.pad"(%x) {pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 2>, value = 0.0 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x6x8xf32>
  %1 = "glowgraph.transpose"(%0) {shuffle = array<i64: 0, 2, 3, 1>} : (tensor<1x2x6x8xf32>) -> tensor<1x6x8x2xf32>
  %2 = "glowgraph.conv2d"(%1, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x6x8x2xf32>, tensor<3x3x2x3xf32>, tensor<3xf32>) -> tensor<1x4x6x3xf32>
  return %2 : tensor<1x4x6x3xf32>
}

// -----

// Negative: a pad with another value than zero, one that pads channels, and one that crops all stay.
// CHECK-LABEL: func.func @not_mergeable
// CHECK-COUNT-3: "glowgraph.pad"
func.func @not_mergeable(%x: tensor<1x4x4x2xf32>, %w: tensor<1x1x2x3xf32>, %w4: tensor<1x1x4x3xf32>, %b: tensor<3xf32>) -> (tensor<1x6x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x3x4x3xf32>) {
  %0 = "glowgraph.pad"(%x) {pads = array<i64: 0, 1, 0, 0, 0, 1, 0, 0>, value = 1.0 : f32} : (tensor<1x4x4x2xf32>) -> tensor<1x6x4x2xf32>
  %1 = "glowgraph.conv2d"(%0, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x6x4x2xf32>, tensor<1x1x2x3xf32>, tensor<3xf32>) -> tensor<1x6x4x3xf32>
  %2 = "glowgraph.pad"(%x) {pads = array<i64: 0, 0, 0, 1, 0, 0, 0, 1>, value = 0.0 : f32} : (tensor<1x4x4x2xf32>) -> tensor<1x4x4x4xf32>
  %3 = "glowgraph.conv2d"(%2, %w4, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x4x4x4xf32>, tensor<1x1x4x3xf32>, tensor<3xf32>) -> tensor<1x4x4x3xf32>
  %4 = "glowgraph.pad"(%x) {pads = array<i64: 0, 0, 0, 0, 0, -1, 0, 0>, value = 0.0 : f32} : (tensor<1x4x4x2xf32>) -> tensor<1x3x4x2xf32>
  %5 = "glowgraph.conv2d"(%4, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x3x4x2xf32>, tensor<1x1x2x3xf32>, tensor<3xf32>) -> tensor<1x3x4x3xf32>
  return %1, %3, %5 : tensor<1x6x4x3xf32>, tensor<1x4x4x3xf32>, tensor<1x3x4x3xf32>
}
