// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-quantize)' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-quantize{channelwise=true})' | FileCheck %s --check-prefix=CW

// A convolution whose input (an argument) and result have parameters becomes quantize -> qconv2d -> dequantize:
// weights int8 symmetric (0.5 is the largest magnitude: scale 0.5/127), the bias int32 at scale
// input_scale * weight_scale with the input's zero point folded in (bias - input_offset * sum of weights).
// Channelwise: one weight scale and one multiplier per output channel (the second channel's largest magnitude is
// 0.25: its weights span [-127, 127] too).
// CHECK-LABEL: func.func @conv
// CHECK-SAME:  (%[[X:.+]]: tensor<1x4x4x2xf32>)
// CHECK:       %[[Q:.+]] = "glowgraph.quantize"(%[[X]]) {offset = -5 : i64, scale = 2.000000e-02 : f32}
// CHECK:       %[[W:.+]] = "glowgraph.constant"() {value = dense<{{\[\[\[\[}}127, -64], [25, 0]]]]> : tensor<1x1x2x2xi8>}
// CHECK:       %[[B:.+]] = "glowgraph.constant"() {value = dense<[2030, -320]> : tensor<2xi32>}
// CHECK:       %[[C:.+]] = "glowgraph.qconv2d"(%[[Q]], %[[W]], %[[B]]) {{{.*}}input_offset = -5 : i64, multipliers = array<f32: 0.00787401571>, offset = -128 : i64, output_max = 127 : i64, output_min = -128 : i64
// CHECK:       %[[D:.+]] = "glowgraph.dequantize"(%[[C]]) {offset = -128 : i64, scale = 0.00999999977 : f32}
// CHECK-NEXT:  return %[[D]]
// CHECK-NOT:   glowgraph.qparams
// CW-LABEL:    func.func @conv
// CW:          dense<{{\[\[\[\[}}127, -127], [25, 0]]]]> : tensor<1x1x2x2xi8>
// CW:          dense<[2030, -635]> : tensor<2xi32>
// CW:          "glowgraph.qconv2d"{{.*}}multipliers = array<f32: 0.00787401571, 0.00393700786>
func.func @conv(%x: tensor<1x4x4x2xf32> {glowgraph.qparams = array<f64: 0.02, -5.0>}) -> tensor<1x4x4x2xf32> {
  %w = "glowgraph.constant"() {value = dense<[[[[0.5, -0.25], [0.1, 0.0]]]]> : tensor<1x1x2x2xf32>} : () -> tensor<1x1x2x2xf32>
  %b = "glowgraph.constant"() {value = dense<[0.1, 0.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %y = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, glowgraph.qparams = array<f64: 0.01, -128.0>} : (tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>, tensor<2xf32>) -> tensor<1x4x4x2xf32>
  return %y : tensor<1x4x4x2xf32>
}

// -----

// A fused relu clamps at the result's offset; a clip at its bounds quantized.
// CHECK-LABEL: func.func @activations
// CHECK:       "glowgraph.qfully_connected"{{.*}}offset = -100 : i64, output_max = 127 : i64, output_min = -100 : i64
// CHECK:       "glowgraph.qfully_connected"{{.*}}offset = 0 : i64, output_max = 60 : i64, output_min = -20 : i64
func.func @activations(%x: tensor<2x3xf32> {glowgraph.qparams = array<f64: 0.1, 0.0>}) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = "glowgraph.constant"() {value = dense<[[1.0, -1.0], [0.5, 0.25], [0.0, 2.0]]> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %b = "glowgraph.constant"() {value = dense<[0.5, -0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.fully_connected"(%x, %w, %b) {activation = "relu", glowgraph.qparams = array<f64: 0.05, -100.0>} : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.fully_connected"(%x, %w, %b) {activation = "clip", activation_min = -1.0 : f32, activation_max = 3.0 : f32, glowgraph.qparams = array<f64: 0.05, 0.0>} : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// add, relu and max_pool: the add of two quantized values is a qadd; relu a rescale clamped at the offset; max_pool
// runs on int8 under its input's parameters, reading the rescale's int8 result itself (the relu's dequantize is left
// without users and goes).
// CHECK-LABEL: func.func @elementwise
// CHECK:       %[[A:.+]] = "glowgraph.quantize"(%arg0)
// CHECK:       %[[B:.+]] = "glowgraph.quantize"(%arg1)
// CHECK:       %[[S:.+]] = "glowgraph.qadd"(%[[A]], %[[B]]) {lhs_offset = 0 : i64, lhs_scale = 1.000000e-01 : f32, offset = 3 : i64, output_max = 127 : i64, output_min = -128 : i64, rhs_offset = 1 : i64, rhs_scale = 2.000000e-01 : f32, scale = 2.500000e-01 : f32}
// CHECK:       %[[SD:.+]] = "glowgraph.dequantize"(%[[S]])
// CHECK:       %[[R:.+]] = "glowgraph.rescale"(%[[S]]) {input_offset = 3 : i64, input_scale = 2.500000e-01 : f32, offset = -128 : i64, output_max = 127 : i64, output_min = -128 : i64, scale = 1.250000e-01 : f32}
// CHECK:       %[[P:.+]] = "glowgraph.max_pool"(%[[R]])
// CHECK-SAME:  (tensor<1x2x2x1xi8>) -> tensor<1x1x1x1xi8>
// CHECK:       %[[PD:.+]] = "glowgraph.dequantize"(%[[P]]) {offset = -128 : i64, scale = 1.250000e-01 : f32}
// CHECK:       return %[[SD]], %[[PD]]
func.func @elementwise(%a: tensor<1x2x2x1xf32> {glowgraph.qparams = array<f64: 0.1, 0.0>}, %b: tensor<1x2x2x1xf32> {glowgraph.qparams = array<f64: 0.2, 1.0>}) -> (tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>) {
  %0 = "glowgraph.add"(%a, %b) {glowgraph.qparams = array<f64: 0.25, 3.0>} : (tensor<1x2x2x1xf32>, tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %1 = "glowgraph.relu"(%0) {glowgraph.qparams = array<f64: 0.125, -128.0>} : (tensor<1x2x2x1xf32>) -> tensor<1x2x2x1xf32>
  %2 = "glowgraph.max_pool"(%1) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 0} : (tensor<1x2x2x1xf32>) -> tensor<1x1x1x1xf32>
  return %0, %2 : tensor<1x2x2x1xf32>, tensor<1x1x1x1xf32>
}

// -----

// Negative: an input without parameters, weights known only at run time, a result without parameters: all stay
// float (and lose their annotations).
// CHECK-LABEL: func.func @stays_float
// CHECK-NOT:   glowgraph.q
// CHECK-NOT:   glowgraph.dequantize
// CHECK:       "glowgraph.fully_connected"
// CHECK:       "glowgraph.fully_connected"
// CHECK:       "glowgraph.add"
// CHECK-NOT:   glowgraph.q
func.func @stays_float(%x: tensor<2x3xf32>, %y: tensor<2x3xf32> {glowgraph.qparams = array<f64: 0.1, 0.0>}, %w2: tensor<3x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<3x2xf32>} : () -> tensor<3x2xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.fully_connected"(%x, %w, %b) {glowgraph.qparams = array<f64: 0.05, 0.0>} : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.fully_connected"(%y, %w2, %b) {glowgraph.qparams = array<f64: 0.05, 0.0>} : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.add"(%y, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x3xf32>
}

// -----

// concat of two quantized values: each side quantized in the result's parameters (the first side's are the
// result's: its int8 value is read as it is; the second's differ: quantized again, a rescale once
// glowgraph-fold-quantize has run), joined as int8, dequantized once. A concat with a side without parameters stays
// float.
// CHECK-LABEL: func.func @concat
// CHECK:       %[[A:.+]] = "glowgraph.quantize"(%arg0) {offset = 0 : i64, scale = 1.000000e-01 : f32}
// CHECK:       %[[B:.+]] = "glowgraph.quantize"(%arg1) {offset = 0 : i64, scale = 1.000000e-01 : f32}
// CHECK:       %[[J:.+]] = "glowgraph.concat"(%[[A]], %[[B]]) {axis = 1 : i64} : (tensor<1x2xi8>, tensor<1x3xi8>) -> tensor<1x5xi8>
// CHECK:       "glowgraph.dequantize"(%[[J]]) {offset = 0 : i64, scale = 1.000000e-01 : f32}
// CHECK:       "glowgraph.concat"(%arg0, %arg2) {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
func.func @concat(%a: tensor<1x2xf32> {glowgraph.qparams = array<f64: 0.1, 0.0>}, %b: tensor<1x3xf32> {glowgraph.qparams = array<f64: 0.05, 3.0>}, %c: tensor<1x3xf32>) -> (tensor<1x5xf32>, tensor<1x5xf32>) {
  %0 = "glowgraph.concat"(%a, %b) {axis = 1 : i64, glowgraph.qparams = array<f64: 0.1, 0.0>} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
  %1 = "glowgraph.concat"(%a, %c) {axis = 1 : i64, glowgraph.qparams = array<f64: 0.1, 0.0>} : (tensor<1x2xf32>, tensor<1x3xf32>) -> tensor<1x5xf32>
  return %0, %1 : tensor<1x5xf32>, tensor<1x5xf32>
}

// -----

// An ONNX Concat of three inputs is two binary concats; the inner one has no parameters of its own (no ONNX value)
// and takes the chain's: both run in int8.
// CHECK-LABEL: func.func @concat_chain
// CHECK:       %[[IN:.+]] = "glowgraph.concat"(%{{.+}}, %{{.+}}) {axis = 1 : i64} : (tensor<1x2xi8>, tensor<1x2xi8>) -> tensor<1x4xi8>
// CHECK:       "glowgraph.concat"(%[[IN]], %{{.+}}) {axis = 1 : i64} : (tensor<1x4xi8>, tensor<1x2xi8>) -> tensor<1x6xi8>
// CHECK-NOT:   "glowgraph.concat"
func.func @concat_chain(%a: tensor<1x2xf32> {glowgraph.qparams = array<f64: 0.1, 0.0>}, %b: tensor<1x2xf32> {glowgraph.qparams = array<f64: 0.1, 0.0>}, %c: tensor<1x2xf32> {glowgraph.qparams = array<f64: 0.1, 0.0>}) -> tensor<1x6xf32> {
  %0 = "glowgraph.concat"(%a, %b) {axis = 1 : i64} : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x4xf32>
  %1 = "glowgraph.concat"(%0, %c) {axis = 1 : i64, glowgraph.qparams = array<f64: 0.1, 0.0>} : (tensor<1x4xf32>, tensor<1x2xf32>) -> tensor<1x6xf32>
  return %1 : tensor<1x6xf32>
}

// -----

// avg_pool whose windows all count alike (pads counted: count_include_pad) becomes a depthwise qconv2d of ones
// (group = channels) on the input's zero point (-4: the bias -(-4) * 9 = 36), requantized by input_scale / (scale *
// 9); windows that count their pads out differ at the border: that avg_pool stays float.
// CHECK-LABEL: func.func @average
// CHECK-DAG:   %[[Q:.+]] = "glowgraph.quantize"(%arg0) {offset = -4 : i64, scale = 1.000000e-01 : f32}
// CHECK-DAG:   %[[W:.+]] = "glowgraph.constant"() {value = dense<1> : tensor<3x3x1x16xi8>}
// CHECK-DAG:   %[[B:.+]] = "glowgraph.constant"() {value = dense<36> : tensor<16xi32>}
// CHECK:       "glowgraph.qconv2d"(%[[Q]], %[[W]], %[[B]]) {dilations = array<i64: 1, 1>, group = 16 : i64, input_offset = -4 : i64, multipliers = array<f32: 0.222222224>, offset = 1 : i64, output_max = 127 : i64, output_min = -128 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK:       "glowgraph.avg_pool"(%arg0) {{.*}}count_include_pad = 0
func.func @average(%x: tensor<1x4x4x16xf32> {glowgraph.qparams = array<f64: 0.1, -4.0>}) -> (tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>) {
  %0 = "glowgraph.avg_pool"(%x) {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = 0 : i64, count_include_pad = 1 : i64, glowgraph.qparams = array<f64: 0.05, 1.0>} : (tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %1 = "glowgraph.avg_pool"(%x) {kernels = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = 0 : i64, count_include_pad = 0 : i64, glowgraph.qparams = array<f64: 0.05, 1.0>} : (tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %0, %1 : tensor<1x4x4x16xf32>, tensor<1x4x4x16xf32>
}
