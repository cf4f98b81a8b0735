// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-pack-int8-weights{target-cpu=znver4})' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-pack-int8-weights{target-cpu=alderlake})' | FileCheck %s --check-prefix=AVXVNNI
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-pack-int8-weights{target-cpu=haswell})' | FileCheck %s --check-prefix=AVX2
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-pack-int8-weights{target-cpu=cortex-a72 target-triple=aarch64-linux-gnu})' | FileCheck %s --check-prefix=ARM

// AVX-512 VNNI (16 lanes): the 1x1 filter of 3 input and 16 output channels becomes [1, 1, 1, 1, 16, 4] (the
// channels in one group of four, the fourth zero), the bias less 128 * sum(w) per output channel (each sums 3).
// AVX-VNNI on ymm (8 lanes): two blocks. With AVX2 only, int16 pairs (channels grown to 4, two pairs), the bias as it was.
// An ARM target has no int8 kernel yet: nothing changes.
// CHECK-LABEL: func.func @conv
// CHECK:       %[[W:.+]] = "glowgraph.constant"() {value = dense<{{\[\[\[\[\[\[}}1, 1, 1, 0], [1, 1, 1, 0]{{.*}} : tensor<1x1x1x1x16x4xi8>}
// CHECK:       %[[B:.+]] = "glowgraph.constant"() {value = dense<-379> : tensor<16xi32>}
// CHECK:       "glowgraph.qconv2d"(%arg0, %[[W]], %[[B]])
// CHECK-SAME:  (tensor<1x4x4x3xi8>, tensor<1x1x1x1x16x4xi8>, tensor<16xi32>) -> tensor<1x4x4x16xi8>
// AVXVNNI-LABEL: func.func @conv
// AVXVNNI:     tensor<2x1x1x1x8x4xi8>
// AVX2-LABEL: func.func @conv
// AVX2:        dense<5> : tensor<16xi32>
// AVX2:        "glowgraph.qconv2d"{{.*}}(tensor<1x4x4x3xi8>, tensor<2x1x1x2x8x2xi16>, tensor<16xi32>)
// ARM-LABEL:   func.func @conv
// ARM:         "glowgraph.qconv2d"{{.*}}(tensor<1x4x4x3xi8>, tensor<1x1x3x16xi8>, tensor<16xi32>)
func.func @conv(%x: tensor<1x4x4x3xi8>) -> tensor<1x4x4x16xi8> {
  %w = "glowgraph.constant"() {value = dense<1> : tensor<1x1x3x16xi8>} : () -> tensor<1x1x3x16xi8>
  %b = "glowgraph.constant"() {value = dense<5> : tensor<16xi32>} : () -> tensor<16xi32>
  %y = "glowgraph.qconv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, input_offset = 0, multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (tensor<1x4x4x3xi8>, tensor<1x1x3x16xi8>, tensor<16xi32>) -> tensor<1x4x4x16xi8>
  return %y : tensor<1x4x4x16xi8>
}

// -----

// A fully connected layer becomes a 1x1 convolution over its rows, packed.
// CHECK-LABEL: func.func @fully_connected
// CHECK:       %[[X:.+]] = "glowgraph.reshape"(%arg0) {shape = array<i64: 1, 1, 2, 8>}
// CHECK:       %[[C:.+]] = "glowgraph.qconv2d"(%[[X]], {{.*}} : (tensor<1x1x2x8xi8>, tensor<1x1x1x2x16x4xi8>, tensor<16xi32>) -> tensor<1x1x2x16xi8>
// CHECK:       %[[Y:.+]] = "glowgraph.reshape"(%[[C]]) {shape = array<i64: 2, 16>}
// CHECK:       return %[[Y]]
func.func @fully_connected(%x: tensor<2x8xi8>) -> tensor<2x16xi8> {
  %w = "glowgraph.constant"() {value = dense<2> : tensor<8x16xi8>} : () -> tensor<8x16xi8>
  %b = "glowgraph.constant"() {value = dense<0> : tensor<16xi32>} : () -> tensor<16xi32>
  %y = "glowgraph.qfully_connected"(%x, %w, %b) {multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (tensor<2x8xi8>, tensor<8x16xi8>, tensor<16xi32>) -> tensor<2x16xi8>
  return %y : tensor<2x16xi8>
}

// -----

// Negative: output channels that are not whole blocks, a grouped convolution and a filter known only at run time
// keep their layout.
// CHECK-LABEL: func.func @kept
// CHECK:       "glowgraph.qconv2d"{{.*}}tensor<1x1x4x10xi8>
// CHECK:       "glowgraph.qconv2d"{{.*}}tensor<1x1x2x16xi8>
// CHECK:       "glowgraph.qconv2d"{{.*}}tensor<1x1x4x16xi8>
func.func @kept(%x: tensor<1x4x4x4xi8>, %w3: tensor<1x1x4x16xi8>) -> (tensor<1x4x4x10xi8>, tensor<1x4x4x16xi8>, tensor<1x4x4x16xi8>) {
  %w1 = "glowgraph.constant"() {value = dense<1> : tensor<1x1x4x10xi8>} : () -> tensor<1x1x4x10xi8>
  %b1 = "glowgraph.constant"() {value = dense<0> : tensor<10xi32>} : () -> tensor<10xi32>
  %w2 = "glowgraph.constant"() {value = dense<1> : tensor<1x1x2x16xi8>} : () -> tensor<1x1x2x16xi8>
  %b2 = "glowgraph.constant"() {value = dense<0> : tensor<16xi32>} : () -> tensor<16xi32>
  %0 = "glowgraph.qconv2d"(%x, %w1, %b1) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, input_offset = 0, multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (tensor<1x4x4x4xi8>, tensor<1x1x4x10xi8>, tensor<10xi32>) -> tensor<1x4x4x10xi8>
  %1 = "glowgraph.qconv2d"(%x, %w2, %b2) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2, input_offset = 0, multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (tensor<1x4x4x4xi8>, tensor<1x1x2x16xi8>, tensor<16xi32>) -> tensor<1x4x4x16xi8>
  %2 = "glowgraph.qconv2d"(%x, %w3, %b2) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, input_offset = 0, multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (tensor<1x4x4x4xi8>, tensor<1x1x4x16xi8>, tensor<16xi32>) -> tensor<1x4x4x16xi8>
  return %0, %1, %2 : tensor<1x4x4x10xi8>, tensor<1x4x4x16xi8>, tensor<1x4x4x16xi8>
}

// -----

// A depthwise convolution (group 16 = channels, one filter per channel) on zmm VNNI: each filter row's taps in a
// quad [3, 1, 1, 16, 4] (the fourth tap zero), the bias less 128 * sum(w) (9 taps of 1: 5 - 1152), the right pad
// grown by the zero tap's column (1 -> 2: the output width kept). Not on ymm (AVX-VNNI), AVX2 or ARM, and not for
// channels that are not whole blocks of 16.
// CHECK-LABEL: func.func @depthwise
// CHECK:       %[[W:.+]] = "glowgraph.constant"() {value = dense<"0x01010100{{(01010100)+}}"> : tensor<3x1x1x16x4xi8>}
// CHECK:       %[[B:.+]] = "glowgraph.constant"() {value = dense<-1147> : tensor<16xi32>}
// CHECK:       "glowgraph.qconv2d"(%arg0, %[[W]], %[[B]]) {{{.*}}pads = array<i64: 1, 1, 1, 2>
// CHECK-SAME:  (tensor<1x5x5x16xi8>, tensor<3x1x1x16x4xi8>, tensor<16xi32>) -> tensor<1x5x5x16xi8>
// CHECK:       "glowgraph.qconv2d"{{.*}}(tensor<1x5x5x8xi8>, tensor<3x3x1x8xi8>, tensor<8xi32>)
// AVXVNNI-LABEL: func.func @depthwise
// AVXVNNI:     tensor<3x3x1x16xi8>
// AVX2-LABEL:  func.func @depthwise
// AVX2:        tensor<3x3x1x16xi8>
// ARM-LABEL:   func.func @depthwise
// ARM:         tensor<3x3x1x16xi8>
func.func @depthwise(%x: tensor<1x5x5x16xi8>, %z: tensor<1x5x5x8xi8>) -> (tensor<1x5x5x16xi8>, tensor<1x5x5x8xi8>) {
  %w = "glowgraph.constant"() {value = dense<1> : tensor<3x3x1x16xi8>} : () -> tensor<3x3x1x16xi8>
  %b = "glowgraph.constant"() {value = dense<5> : tensor<16xi32>} : () -> tensor<16xi32>
  %y = "glowgraph.qconv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 16, input_offset = 0, multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (tensor<1x5x5x16xi8>, tensor<3x3x1x16xi8>, tensor<16xi32>) -> tensor<1x5x5x16xi8>
  %w8 = "glowgraph.constant"() {value = dense<1> : tensor<3x3x1x8xi8>} : () -> tensor<3x3x1x8xi8>
  %b8 = "glowgraph.constant"() {value = dense<5> : tensor<8xi32>} : () -> tensor<8xi32>
  %v = "glowgraph.qconv2d"(%z, %w8, %b8) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 8, input_offset = 0, multipliers = array<f32: 0.01>, offset = 0, output_min = -128, output_max = 127} : (tensor<1x5x5x8xi8>, tensor<3x3x1x8xi8>, tensor<8xi32>) -> tensor<1x5x5x8xi8>
  return %y, %v : tensor<1x5x5x16xi8>, tensor<1x5x5x8xi8>
}
