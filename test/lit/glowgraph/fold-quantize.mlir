// RUN: glow-opt %s --split-input-file --glowgraph-fold-quantize | FileCheck %s

// quantize(dequantize(q)): the same parameters give q back, others a rescale.
// CHECK-LABEL: func.func @pairs
// CHECK-SAME:  (%[[Q:.+]]: tensor<4xi8>)
// CHECK-NEXT:  %[[R:.+]] = "glowgraph.rescale"(%[[Q]]) {input_offset = 2 : i64, input_scale = 5.000000e-01 : f32, offset = 0 : i64, output_max = 127 : i64, output_min = -128 : i64, scale = 2.500000e-01 : f32}
// CHECK-NEXT:  return %[[Q]], %[[R]]
func.func @pairs(%q: tensor<4xi8>) -> (tensor<4xi8>, tensor<4xi8>) {
  %0 = "glowgraph.dequantize"(%q) {scale = 0.5 : f32, offset = 2} : (tensor<4xi8>) -> tensor<4xf32>
  %1 = "glowgraph.quantize"(%0) {scale = 0.5 : f32, offset = 2} : (tensor<4xf32>) -> tensor<4xi8>
  %2 = "glowgraph.quantize"(%0) {scale = 0.25 : f32, offset = 0} : (tensor<4xf32>) -> tensor<4xi8>
  return %1, %2 : tensor<4xi8>, tensor<4xi8>
}

// -----

// Negative: dequantize(quantize(x)) stays, the rounding of a QDQ model's pair (Glow would drop it).
// CHECK-LABEL: func.func @round_trip
// CHECK-NEXT:  %[[Q:.+]] = "glowgraph.quantize"(%arg0)
// CHECK-NEXT:  %[[D:.+]] = "glowgraph.dequantize"(%[[Q]])
// CHECK-NEXT:  return %[[D]]
func.func @round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "glowgraph.quantize"(%x) {scale = 0.5 : f32, offset = 2} : (tensor<4xf32>) -> tensor<4xi8>
  %1 = "glowgraph.dequantize"(%0) {scale = 0.5 : f32, offset = 2} : (tensor<4xi8>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// A dequantize sinks below reshape, transpose, max_pool and relu (a rescale clamped at the offset), so that the
// pair with the quantize after them meets and goes: the whole chain runs on int8.
// CHECK-LABEL: func.func @sink
// CHECK-SAME:  (%[[Q:.+]]: tensor<1x2x2x1xi8>)
// CHECK-NEXT:  %[[R:.+]] = "glowgraph.rescale"(%[[Q]]) {input_offset = -3 : i64, input_scale = 1.000000e-01 : f32, offset = -3 : i64, output_max = 127 : i64, output_min = -3 : i64, scale = 1.000000e-01 : f32}
// CHECK-NEXT:  %[[P:.+]] = "glowgraph.max_pool"(%[[R]]) {{.*}} : (tensor<1x2x2x1xi8>) -> tensor<1x1x1x1xi8>
// CHECK-NEXT:  %[[T:.+]] = "glowgraph.transpose"(%[[P]]) {{.*}} : (tensor<1x1x1x1xi8>) -> tensor<1x1x1x1xi8>
// CHECK-NEXT:  %[[S:.+]] = "glowgraph.reshape"(%[[T]]) {{.*}} : (tensor<1x1x1x1xi8>) -> tensor<1x1xi8>
// CHECK-NEXT:  return %[[S]]
func.func @sink(%q: tensor<1x2x2x1xi8>) -> tensor<1x1xi8> {
  %0 = "glowgraph.dequantize"(%q) {scale = 0.1 : f32, offset = -3} : (tensor<1x2x2x1xi8>) -> tensor<1x2x2x1xf32>
  %1 = "glowgraph.relu"(%0) : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %2 = "glowgraph.max_pool"(%1) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 0} : (tensor<1x2x2x1xf32>) -> tensor<1x1x1x1xf32>
  %3 = "glowgraph.transpose"(%2) {shuffle = array<i64: 0, 3, 1, 2>} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %4 = "glowgraph.reshape"(%3) {shape = array<i64: 1, 1>} : (tensor<1x1x1x1xf32>) -> tensor<1x1xf32>
  %5 = "glowgraph.quantize"(%4) {scale = 0.1 : f32, offset = -3} : (tensor<1x1xf32>) -> tensor<1x1xi8>
  return %5 : tensor<1x1xi8>
}

// -----

// A rescale merges into the qconv2d before it: multipliers times input_scale / scale, the rescale's offset, and
// the node's clamp mapped into the new parameters and met with the rescale's: [0, 127] at scale 0.5 is [0, 63.5],
// codes [10, 74] at scale 1 and offset 10.
// CHECK-LABEL: func.func @into_producer
// CHECK:       %[[C:.+]] = "glowgraph.qconv2d"{{.*}}multipliers = array<f32: 5.000000e-02, 1.000000e-01>, offset = 10 : i64, output_max = 74 : i64, output_min = 10 : i64
// CHECK-NEXT:  return %[[C]]
func.func @into_producer(%x: tensor<1x2x2x1xi8>, %w: tensor<1x1x1x2xi8>, %b: tensor<2xi32>) -> tensor<1x2x2x2xi8> {
  %0 = "glowgraph.qconv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, input_offset = 0, multipliers = array<f32: 0.1, 0.2>, offset = 0, output_min = 0, output_max = 127} : (tensor<1x2x2x1xi8>, tensor<1x1x1x2xi8>, tensor<2xi32>) -> tensor<1x2x2x2xi8>
  %1 = "glowgraph.rescale"(%0) {input_scale = 0.5 : f32, input_offset = 0, scale = 1.0 : f32, offset = 10, output_min = -128, output_max = 127} : (tensor<1x2x2x2xi8>) -> tensor<1x2x2x2xi8>
  return %1 : tensor<1x2x2x2xi8>
}

// -----

// Negative: a dequantize with another user stays where it is (the relu stays float), a rescale of a node that has
// other users, or of a node whose result it reads under other parameters, stays a rescale.
// CHECK-LABEL: func.func @kept
// CHECK:       "glowgraph.dequantize"
// CHECK:       "glowgraph.relu"
// CHECK:       "glowgraph.qadd"
// CHECK:       "glowgraph.rescale"
// CHECK:       "glowgraph.qadd"
// CHECK:       "glowgraph.rescale"
func.func @kept(%q: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>) {
  %0 = "glowgraph.dequantize"(%q) {scale = 0.5 : f32, offset = 2} : (tensor<4xi8>) -> tensor<4xf32>
  %1 = "glowgraph.relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "glowgraph.qadd"(%q, %q) {lhs_scale = 0.5 : f32, lhs_offset = 2, rhs_scale = 0.5 : f32, rhs_offset = 2, scale = 1.0 : f32, offset = 0, output_min = -128, output_max = 127} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %3 = "glowgraph.rescale"(%2) {input_scale = 1.0 : f32, input_offset = 0, scale = 2.0 : f32, offset = 0, output_min = -128, output_max = 127} : (tensor<4xi8>) -> tensor<4xi8>
  %4 = "glowgraph.qadd"(%q, %q) {lhs_scale = 0.5 : f32, lhs_offset = 2, rhs_scale = 0.5 : f32, rhs_offset = 2, scale = 1.0 : f32, offset = 0, output_min = -128, output_max = 127} : (tensor<4xi8>, tensor<4xi8>) -> tensor<4xi8>
  %5 = "glowgraph.rescale"(%4) {input_scale = 1.0 : f32, input_offset = 7, scale = 2.0 : f32, offset = 0, output_min = -128, output_max = 127} : (tensor<4xi8>) -> tensor<4xi8>
  return %0, %1, %3, %2, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xi8>, tensor<4xi8>, tensor<4xi8>
}
