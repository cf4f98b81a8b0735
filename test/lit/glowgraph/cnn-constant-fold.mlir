// RUN: glow-opt %s --split-input-file --glowgraph-constant-fold --glowgraph-dce | FileCheck %s

// The CNN nodes fold on constant operands through their numpy semantics (NHWC): a 2x2 convolution of 1..9 with
// ones plus 0.5; ceil_mode pools keep the partial last windows, the average dividing by what each covers.
// CHECK-LABEL: func.func @fold
// CHECK-NEXT: "glowgraph.constant"() {value = dense<{{\[\[\[\[}}1.250000e+01], [1.650000e+01]], {{\[\[}}2.450000e+01], [2.850000e+01]]]]>
// CHECK-NEXT: "glowgraph.constant"() {value = dense<{{\[\[\[\[}}5.000000e+00], [6.000000e+00]], {{\[\[}}8.000000e+00], [9.000000e+00]]]]>
// CHECK-NEXT: "glowgraph.constant"() {value = dense<{{\[\[\[\[}}3.000000e+00], [4.500000e+00]], {{\[\[}}7.500000e+00], [9.000000e+00]]]]>
// CHECK-NOT: "glowgraph.conv2d"
// CHECK-NOT: "glowgraph.max_pool"
// CHECK-NOT: "glowgraph.avg_pool"
func.func @fold(%x: tensor<1x2x2x1xf32>) -> (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>) {
  %in = "glowgraph.constant"() {value = dense<[[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]], [[7.0], [8.0], [9.0]]]]> : tensor<1x3x3x1xf32>} : () -> tensor<1x3x3x1xf32>
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<1xf32>} : () -> tensor<1xf32>
  %0 = "glowgraph.conv2d"(%in, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x3x3x1xf32>, tensor<2x2x1x1xf32>, tensor<1xf32>) -> tensor<1x2x2x1xf32>
  %1 = "glowgraph.max_pool"(%in) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 1} : (tensor<1x3x3x1xf32>) -> tensor<1x2x2x1xf32>
  %2 = "glowgraph.avg_pool"(%in) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 1, count_include_pad = 0} : (tensor<1x3x3x1xf32>) -> tensor<1x2x2x1xf32>
  %3 = "glowgraph.add"(%0, %x) : (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %4 = "glowgraph.add"(%1, %x) : (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %5 = "glowgraph.add"(%2, %x) : (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  return %3, %4, %5 : tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>
}

// -----

// Pad (value 3) then clip to [0, 6].
// CHECK-LABEL: func.func @fold_pad_clip
// CHECK-NEXT: "glowgraph.constant"() {value = dense<[3.000000e+00, -1.000000e+00, 7.000000e+00, 3.000000e+00]> : tensor<4xf32>}
// CHECK-NEXT: "glowgraph.constant"() {value = dense<[3.000000e+00, 0.000000e+00, 6.000000e+00, 3.000000e+00]> : tensor<4xf32>}
// CHECK-NOT: "glowgraph.pad"
// CHECK-NOT: "glowgraph.clip"
func.func @fold_pad_clip(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = "glowgraph.constant"() {value = dense<[-1.0, 7.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.pad"(%c) {pads = array<i64: 1, 1>, value = 3.0 : f32} : (tensor<2xf32>) -> tensor<4xf32>
  %1 = "glowgraph.clip"(%0) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "glowgraph.add"(%0, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "glowgraph.add"(%1, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2, %3 : tensor<4xf32>, tensor<4xf32>
}
