// RUN: glow-opt %s --split-input-file --glowgraph-qdq-to-params | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-qdq-to-params,glowgraph-quantize,glowgraph-fold-quantize,glowgraph-dce)' | FileCheck %s --check-prefix=INT8

// Two ONNX QDQ pairs as the importer computes them: a uint8 pair (zero point 3: offset 3 - 128 = -125) on the
// argument and an int8 pair (zero point 0) after the relu. Each becomes dequantize(quantize(x)) with the pair's
// parameters, which also go onto the argument and the relu (glowgraph.qparams). Then glowgraph-quantize makes the
// relu a rescale (the clamp at the relu's offset) between the pairs, and the pairs between int8 nodes go: quantize
// of the input, one rescale, and the dequantize of the result.
// CHECK-LABEL: func.func @pairs
// CHECK-SAME:  glowgraph.qparams = array<f64: 5.000000e-01, -1.250000e+02>
// CHECK:       %[[Q:.+]] = "glowgraph.quantize"(%arg0) {offset = -125 : i64, scale = 5.000000e-01 : f32}
// CHECK-NEXT:  %[[D:.+]] = "glowgraph.dequantize"(%[[Q]]) {glowgraph.qparams = array<f64: 5.000000e-01, -1.250000e+02>, offset = -125 : i64, scale = 5.000000e-01 : f32}
// CHECK:       %[[R:.+]] = "glowgraph.relu"(%[[D]]) {glowgraph.qparams = array<f64: 2.500000e-01, 0.000000e+00>}
// CHECK:       %[[Q2:.+]] = "glowgraph.quantize"(%[[R]]) {offset = 0 : i64, scale = 2.500000e-01 : f32}
// CHECK-NEXT:  %[[D2:.+]] = "glowgraph.dequantize"(%[[Q2]])
// CHECK:       return %[[D2]]
// INT8-LABEL:  func.func @pairs
// INT8-NEXT:   %[[Q:.+]] = "glowgraph.quantize"(%arg0) {offset = -125 : i64, scale = 5.000000e-01 : f32}
// INT8-NEXT:   %[[R:.+]] = "glowgraph.rescale"(%[[Q]]) {input_offset = -125 : i64, input_scale = 5.000000e-01 : f32, offset = 0 : i64, output_max = 127 : i64, output_min = 0 : i64, scale = 2.500000e-01 : f32}
// INT8-NEXT:   %[[D:.+]] = "glowgraph.dequantize"(%[[R]]) {offset = 0 : i64, scale = 2.500000e-01 : f32}
// INT8-NEXT:   return %[[D]]
  func.func @pairs(%arg0: tensor<4xf32> ) -> (tensor<4xf32>) {
    %0 = "glowgraph.constant"() {value = dense<5.000000e-01> : tensor<4xf32>} : () -> tensor<4xf32>
    %1 = "glowgraph.div"(%arg0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2 = "glowgraph.round"(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "glowgraph.constant"() {value = dense<3.000000e+00> : tensor<4xf32>} : () -> tensor<4xf32>
    %4 = "glowgraph.add"(%2, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %5 = "glowgraph.clip"(%4) {max = 2.550000e+02 : f32, min = 0.000000e+00 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    %6 = "glowgraph.cast"(%5) {to = i32} : (tensor<4xf32>) -> tensor<4xi32>
    %7 = "glowgraph.constant"() {value = dense<255> : tensor<4xi32>} : () -> tensor<4xi32>
    %8 = "glowgraph.and"(%6, %7) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %9 = "glowgraph.cast"(%8) {to = f32} : (tensor<4xi32>) -> tensor<4xf32>
    %10 = "glowgraph.sub"(%9, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %11 = "glowgraph.mul"(%10, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %12 = "glowgraph.relu"(%11) : (tensor<4xf32>) -> tensor<4xf32>
    %13 = "glowgraph.constant"() {value = dense<2.500000e-01> : tensor<4xf32>} : () -> tensor<4xf32>
    %14 = "glowgraph.div"(%12, %13) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %15 = "glowgraph.round"(%14) : (tensor<4xf32>) -> tensor<4xf32>
    %16 = "glowgraph.clip"(%15) {max = 1.270000e+02 : f32, min = -1.280000e+02 : f32} : (tensor<4xf32>) -> tensor<4xf32>
    %17 = "glowgraph.cast"(%16) {to = i32} : (tensor<4xf32>) -> tensor<4xi32>
    %18 = "glowgraph.cast"(%17) {to = i8} : (tensor<4xi32>) -> tensor<4xi8>
    %19 = "glowgraph.cast"(%18) {to = i32} : (tensor<4xi8>) -> tensor<4xi32>
    %20 = "glowgraph.cast"(%19) {to = f32} : (tensor<4xi32>) -> tensor<4xf32>
    %21 = "glowgraph.mul"(%20, %13) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %21 : tensor<4xf32>
  }

// -----

// Negative: a scale that is not one value for the tensor (per-channel activations), and a clip to another range
// than uint8's or int8's, are left as they are.
// CHECK-LABEL: func.func @kept
// CHECK-NOT:   glowgraph.quantize
// CHECK-NOT:   glowgraph.qparams
// CHECK:       return
func.func @kept(%arg0: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %s = "glowgraph.constant"() {value = dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.div"(%arg0, %s) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "glowgraph.round"(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "glowgraph.clip"(%1) {max = 2.550000e+02 : f32, min = 0.000000e+00 : f32} : (tensor<2xf32>) -> tensor<2xf32>
  %3 = "glowgraph.cast"(%2) {to = i32} : (tensor<2xf32>) -> tensor<2xi32>
  %4 = "glowgraph.cast"(%3) {to = f32} : (tensor<2xi32>) -> tensor<2xf32>
  %5 = "glowgraph.mul"(%4, %s) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %t = "glowgraph.constant"() {value = dense<5.000000e-01> : tensor<2xf32>} : () -> tensor<2xf32>
  %6 = "glowgraph.div"(%arg0, %t) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %7 = "glowgraph.round"(%6) : (tensor<2xf32>) -> tensor<2xf32>
  %8 = "glowgraph.clip"(%7) {max = 1.500000e+01 : f32, min = 0.000000e+00 : f32} : (tensor<2xf32>) -> tensor<2xf32>
  %9 = "glowgraph.cast"(%8) {to = i32} : (tensor<2xf32>) -> tensor<2xi32>
  %10 = "glowgraph.cast"(%9) {to = f32} : (tensor<2xi32>) -> tensor<2xf32>
  %11 = "glowgraph.mul"(%10, %t) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %5, %11 : tensor<2xf32>, tensor<2xf32>
}
