// cpu-pointwise-as-fully-connected: a 1x1 stride-1 convolution whose constant filter cpu-pack-conv-filters keeps HWCF
// (more output channels than a block, no whole number of vectors) and whose matmul is of the class that copies its
// weights into panels (128 pixels or more, 256 filters or more) becomes reshape -> fully_connected of the pixels ->
// reshape, its bias and fused activation kept.
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-pointwise-as-fully-connected{target-cpu=skylake-avx512 target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-pointwise-as-fully-connected{target-cpu=haswell target-triple=x86_64-unknown-linux-gnu})' | FileCheck %s --check-prefix=AVX2

// squeezenet's classifier: 1000 filters are 62.5 vectors of 16 on AVX-512, whole vectors of 8 on AVX2 (packed there).
// CHECK-LABEL: func.func @classifier
// CHECK: %[[X:.+]] = "glowgraph.reshape"(%{{.+}}) {shape = array<i64: 169, 512>} : (tensor<1x13x13x512xf32>) -> tensor<169x512xf32>
// CHECK: %[[FC:.+]] = "glowgraph.fully_connected"(%[[X]], %{{.+}}, %{{.+}}) {activation = "relu"} : (tensor<169x512xf32>, tensor<512x1000xf32>, tensor<1000xf32>) -> tensor<169x1000xf32>
// CHECK: %[[Y:.+]] = "glowgraph.reshape"(%[[FC]]) {shape = array<i64: 1, 13, 13, 1000>} : (tensor<169x1000xf32>) -> tensor<1x13x13x1000xf32>
// CHECK-NOT: glowgraph.conv2d
// CHECK: return %[[Y]]
// AVX2-LABEL: func.func @classifier
// AVX2: "glowgraph.conv2d"
// AVX2-NOT: glowgraph.fully_connected
// AVX2: return
func.func @classifier(%x: tensor<1x13x13x512xf32>) -> tensor<1x13x13x1000xf32> {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x512x1000xf32>} : () -> tensor<1x1x512x1000xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<1000xf32>} : () -> tensor<1000xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1, activation = "relu"} : (tensor<1x13x13x512xf32>, tensor<1x1x512x1000xf32>, tensor<1000xf32>) -> tensor<1x13x13x1000xf32>
  return %0 : tensor<1x13x13x1000xf32>
}

// -----

// Negative: whole vectors (1008 = 63 x 16), as many filters as a block or fewer (24), one pixel (a one-row matmul,
// where the convolution ran faster), a 3x3 filter, stride 2, and a filter known only at run time stay convolutions.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: glowgraph.fully_connected
// CHECK-COUNT-6: glowgraph.conv2d
// CHECK-NOT: glowgraph.fully_connected
// CHECK: return
func.func @kept(%x: tensor<1x13x13x512xf32>, %p: tensor<1x1x1x1024xf32>, %v: tensor<1x1x512x1000xf32>) -> (tensor<1x13x13x1008xf32>, tensor<1x13x13x24xf32>, tensor<1x1x1x1000xf32>, tensor<1x11x11x1000xf32>, tensor<1x7x7x1000xf32>, tensor<1x13x13x1000xf32>) {
  %w1008 = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x512x1008xf32>} : () -> tensor<1x1x512x1008xf32>
  %b1008 = "glowgraph.constant"() {value = dense<0.5> : tensor<1008xf32>} : () -> tensor<1008xf32>
  %w24 = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x512x24xf32>} : () -> tensor<1x1x512x24xf32>
  %b24 = "glowgraph.constant"() {value = dense<0.5> : tensor<24xf32>} : () -> tensor<24xf32>
  %wp = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x1024x1000xf32>} : () -> tensor<1x1x1024x1000xf32>
  %w3 = "glowgraph.constant"() {value = dense<1.0> : tensor<3x3x512x1000xf32>} : () -> tensor<3x3x512x1000xf32>
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x512x1000xf32>} : () -> tensor<1x1x512x1000xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<1000xf32>} : () -> tensor<1000xf32>
  %0 = "glowgraph.conv2d"(%x, %w1008, %b1008) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x13x13x512xf32>, tensor<1x1x512x1008xf32>, tensor<1008xf32>) -> tensor<1x13x13x1008xf32>
  %1 = "glowgraph.conv2d"(%x, %w24, %b24) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x13x13x512xf32>, tensor<1x1x512x24xf32>, tensor<24xf32>) -> tensor<1x13x13x24xf32>
  %2 = "glowgraph.conv2d"(%p, %wp, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x1x1x1024xf32>, tensor<1x1x1024x1000xf32>, tensor<1000xf32>) -> tensor<1x1x1x1000xf32>
  %3 = "glowgraph.conv2d"(%x, %w3, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x13x13x512xf32>, tensor<3x3x512x1000xf32>, tensor<1000xf32>) -> tensor<1x11x11x1000xf32>
  %4 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x13x13x512xf32>, tensor<1x1x512x1000xf32>, tensor<1000xf32>) -> tensor<1x7x7x1000xf32>
  %5 = "glowgraph.conv2d"(%x, %v, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x13x13x512xf32>, tensor<1x1x512x1000xf32>, tensor<1000xf32>) -> tensor<1x13x13x1000xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<1x13x13x1008xf32>, tensor<1x13x13x24xf32>, tensor<1x1x1x1000xf32>, tensor<1x11x11x1000xf32>, tensor<1x7x7x1000xf32>, tensor<1x13x13x1000xf32>
}

// -----

// Negative: padding, fewer than 32 input channels, 4 pixels (a matrix-vector product), 200 filters (a matmul class
// that reads its weights as they are), and a grouped convolution stay convolutions.
// CHECK-LABEL: func.func @kept_too
// CHECK-NOT: glowgraph.fully_connected
// CHECK-COUNT-5: glowgraph.conv2d
// CHECK-NOT: glowgraph.fully_connected
// CHECK: return
func.func @kept_too(%x: tensor<1x13x13x512xf32>, %s: tensor<1x13x13x16xf32>, %q: tensor<1x2x2x512xf32>) -> (tensor<1x15x15x1000xf32>, tensor<1x13x13x1000xf32>, tensor<1x2x2x1000xf32>, tensor<1x13x13x200xf32>, tensor<1x13x13x1000xf32>) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x512x1000xf32>} : () -> tensor<1x1x512x1000xf32>
  %w16 = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x16x1000xf32>} : () -> tensor<1x1x16x1000xf32>
  %w200 = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x512x200xf32>} : () -> tensor<1x1x512x200xf32>
  %wg = "glowgraph.constant"() {value = dense<1.0> : tensor<1x1x256x1000xf32>} : () -> tensor<1x1x256x1000xf32>
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<1000xf32>} : () -> tensor<1000xf32>
  %b200 = "glowgraph.constant"() {value = dense<0.5> : tensor<200xf32>} : () -> tensor<200xf32>
  %0 = "glowgraph.conv2d"(%x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x13x13x512xf32>, tensor<1x1x512x1000xf32>, tensor<1000xf32>) -> tensor<1x15x15x1000xf32>
  %1 = "glowgraph.conv2d"(%s, %w16, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x13x13x16xf32>, tensor<1x1x16x1000xf32>, tensor<1000xf32>) -> tensor<1x13x13x1000xf32>
  %2 = "glowgraph.conv2d"(%q, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x2x2x512xf32>, tensor<1x1x512x1000xf32>, tensor<1000xf32>) -> tensor<1x2x2x1000xf32>
  %3 = "glowgraph.conv2d"(%x, %w200, %b200) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (tensor<1x13x13x512xf32>, tensor<1x1x512x200xf32>, tensor<200xf32>) -> tensor<1x13x13x200xf32>
  %4 = "glowgraph.conv2d"(%x, %wg, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2} : (tensor<1x13x13x512xf32>, tensor<1x1x256x1000xf32>, tensor<1000xf32>) -> tensor<1x13x13x1000xf32>
  return %0, %1, %2, %3, %4 : tensor<1x15x15x1000xf32>, tensor<1x13x13x1000xf32>, tensor<1x2x2x1000xf32>, tensor<1x13x13x200xf32>, tensor<1x13x13x1000xf32>
}
