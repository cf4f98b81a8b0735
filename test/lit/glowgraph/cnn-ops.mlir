// RUN: glow-opt %s --split-input-file | FileCheck %s
// RUN: glow-opt %s --split-input-file | glow-opt --split-input-file | FileCheck %s

// Convolution, pooling and normalization nodes (NHWC, HWCF filters) parse, verify and print back unchanged.

// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x8x4xf32>, %[[W:.+]]: tensor<3x3x2x6xf32>, %[[B:.+]]: tensor<6xf32>)
// CHECK: "glowgraph.conv2d"(%[[X]], %[[W]], %[[B]]) {dilations = array<i64: 1, 2>, group = 2 : i64, pads = array<i64: 1, 2, 0, 1>, strides = array<i64: 2, 1>} : (tensor<1x8x8x4xf32>, tensor<3x3x2x6xf32>, tensor<6xf32>) -> tensor<1x4x7x6xf32>
func.func @conv2d(%x: tensor<1x8x8x4xf32>, %w: tensor<3x3x2x6xf32>, %b: tensor<6xf32>) -> tensor<1x4x7x6xf32> {
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 2, 1>, pads = array<i64: 1, 2, 0, 1>, dilations = array<i64: 1, 2>, group = 2} : (tensor<1x8x8x4xf32>, tensor<3x3x2x6xf32>, tensor<6xf32>) -> tensor<1x4x7x6xf32>
  return %0 : tensor<1x4x7x6xf32>
}

// -----

// Depthwise: one group per channel, filter [KH, KW, 1, C].
// CHECK-LABEL: func.func @depthwise
// CHECK: "glowgraph.conv2d"{{.*}}group = 4 : i64{{.*}} : (tensor<2x5x5x4xf32>, tensor<3x3x1x4xf32>, tensor<4xf32>) -> tensor<2x5x5x4xf32>
func.func @depthwise(%x: tensor<2x5x5x4xf32>, %w: tensor<3x3x1x4xf32>, %b: tensor<4xf32>) -> tensor<2x5x5x4xf32> {
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 4} : (tensor<2x5x5x4xf32>, tensor<3x3x1x4xf32>, tensor<4xf32>) -> tensor<2x5x5x4xf32>
  return %0 : tensor<2x5x5x4xf32>
}

// -----

// Pools: ceil_mode keeps a last, partial window (5 -> 3 with a 2x2 window of stride 2).
// CHECK-LABEL: func.func @pools
// CHECK: "glowgraph.max_pool"(%{{.+}}) {ceil_mode = 1 : i64, dilations = array<i64: 1, 1>, kernels = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x5x5x3xf32>) -> tensor<1x3x3x3xf32>
// CHECK: "glowgraph.avg_pool"(%{{.+}}) {ceil_mode = 0 : i64, count_include_pad = 1 : i64, dilations = array<i64: 2, 2>, kernels = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>) -> tensor<1x3x3x3xf32>
func.func @pools(%x: tensor<1x5x5x3xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) {
  %0 = "glowgraph.max_pool"(%x) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 1} : (tensor<1x5x5x3xf32>) -> tensor<1x3x3x3xf32>
  %1 = "glowgraph.avg_pool"(%x) {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 2, 2>, ceil_mode = 0, count_include_pad = 1} : (tensor<1x5x5x3xf32>) -> tensor<1x3x3x3xf32>
  return %0, %1 : tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @normalization
// CHECK: "glowgraph.batch_norm"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {channel_axis = 3 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
// CHECK: "glowgraph.local_response_norm"(%{{.+}}) {alpha = 9.99999974E-5 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32, size = 5 : i64} : (tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
func.func @normalization(%x: tensor<1x2x2x3xf32>, %p: tensor<3xf32>) -> (tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>) {
  %0 = "glowgraph.batch_norm"(%x, %p, %p, %p, %p) {epsilon = 1.0e-5 : f32, channel_axis = 3} : (tensor<1x2x2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x2x2x3xf32>
  %1 = "glowgraph.local_response_norm"(%x) {size = 5, alpha = 1.0e-4 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (tensor<1x2x2x3xf32>) -> tensor<1x2x2x3xf32>
  return %0, %1 : tensor<1x2x2x3xf32>, tensor<1x2x2x3xf32>
}

// -----

// Any rank for batch_norm (channel_axis 1 of N x C x L) and pad; negative pads crop.
// CHECK-LABEL: func.func @any_rank
// CHECK: "glowgraph.batch_norm"{{.*}}channel_axis = 1 : i64{{.*}} -> tensor<2x3x5xf32>
// CHECK: "glowgraph.pad"(%{{.+}}) {pads = array<i64: 0, 1, -1, 0, 2, 1>, value = -1.500000e+00 : f32} : (tensor<2x3x5xf32>) -> tensor<2x6x5xf32>
// CHECK: "glowgraph.clip"(%{{.+}}) {max = 6.000000e+00 : f32, min = 0.000000e+00 : f32} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
func.func @any_rank(%x: tensor<2x3x5xf32>, %p: tensor<3xf32>) -> (tensor<2x3x5xf32>, tensor<2x6x5xf32>, tensor<2x3x5xf32>) {
  %0 = "glowgraph.batch_norm"(%x, %p, %p, %p, %p) {epsilon = 0.0 : f32, channel_axis = 1} : (tensor<2x3x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x5xf32>
  %1 = "glowgraph.pad"(%x) {pads = array<i64: 0, 1, -1, 0, 2, 1>, value = -1.5 : f32} : (tensor<2x3x5xf32>) -> tensor<2x6x5xf32>
  %2 = "glowgraph.clip"(%x) {min = 0.0 : f32, max = 6.0 : f32} : (tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  return %0, %1, %2 : tensor<2x3x5xf32>, tensor<2x6x5xf32>, tensor<2x3x5xf32>
}

// -----

// Filters in the CPU backend's packed layouts: blocks of B output channels [F/B, KH, KW, C, B], and also chunks of Cc
// input channels [F/B, C/Cc, KH, KW, Cc, B] (cpu-pack-conv-filters); the result has F = F/B x B channels.
// CHECK-LABEL: func.func @packed_filters
// CHECK: "glowgraph.conv2d"{{.*}} : (tensor<1x9x9x64xf32>, tensor<4x3x3x64x16xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
// CHECK: "glowgraph.conv2d"{{.*}} : (tensor<1x9x9x64xf32>, tensor<4x2x3x3x32x16xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
func.func @packed_filters(%x: tensor<1x9x9x64xf32>, %w5: tensor<4x3x3x64x16xf32>, %w6: tensor<4x2x3x3x32x16xf32>, %b: tensor<64xf32>) -> (tensor<1x7x7x64xf32>, tensor<1x7x7x64xf32>) {
  %0 = "glowgraph.conv2d"(%x, %w5, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x9x9x64xf32>, tensor<4x3x3x64x16xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
  %1 = "glowgraph.conv2d"(%x, %w6, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x9x9x64xf32>, tensor<4x2x3x3x32x16xf32>, tensor<64xf32>) -> tensor<1x7x7x64xf32>
  return %0, %1 : tensor<1x7x7x64xf32>, tensor<1x7x7x64xf32>
}
