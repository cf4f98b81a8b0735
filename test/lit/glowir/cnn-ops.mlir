// RUN: glow-opt %s | FileCheck %s
// RUN: glow-opt %s | glow-opt | FileCheck %s

// Convolution, pooling and normalization instructions, @out first, with their nodes' attributes.
// CHECK-LABEL: func.func @program
// CHECK: "glowir.conv2d"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (memref<1x4x4x6xf32>, memref<1x8x8x4xf32>, memref<3x3x4x6xf32>, memref<6xf32>) -> ()
// CHECK: "glowir.max_pool"(%{{.+}}, %{{.+}}) {ceil_mode = 1 : i64, dilations = array<i64: 1, 1>, kernels = array<i64: 3, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (memref<1x2x2x6xf32>, memref<1x4x4x6xf32>) -> ()
// CHECK: "glowir.avg_pool"(%{{.+}}, %{{.+}}) {ceil_mode = 0 : i64, count_include_pad = 0 : i64, dilations = array<i64: 1, 1>, kernels = array<i64: 4, 4>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (memref<1x1x1x6xf32>, memref<1x4x4x6xf32>) -> ()
// CHECK: "glowir.local_response_norm"(%{{.+}}, %{{.+}}) {alpha = 9.99999974E-5 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32, size = 3 : i64} : (memref<1x4x4x6xf32>, memref<1x4x4x6xf32>) -> ()
// CHECK: "glowir.pad"(%{{.+}}, %{{.+}}) {pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 0.000000e+00 : f32} : (memref<1x6x6x6xf32>, memref<1x4x4x6xf32>) -> ()
func.func @program() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<0.5> : tensor<3x3x4x6xf32>} : () -> memref<3x3x4x6xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<1.0> : tensor<6xf32>} : () -> memref<6xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<1x8x8x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x1x1x6xf32>
  %c = "glowir.alloc_activation"() {name = "conv"} : () -> memref<1x4x4x6xf32>
  "glowir.conv2d"(%c, %x, %w, %b) {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x4x4x6xf32>, memref<1x8x8x4xf32>, memref<3x3x4x6xf32>, memref<6xf32>) -> ()
  %m = "glowir.alloc_activation"() {name = "max"} : () -> memref<1x2x2x6xf32>
  "glowir.max_pool"(%m, %c) {kernels = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 1} : (memref<1x2x2x6xf32>, memref<1x4x4x6xf32>) -> ()
  "glowir.dealloc_activation"(%m) : (memref<1x2x2x6xf32>) -> ()
  "glowir.avg_pool"(%y, %c) {kernels = array<i64: 4, 4>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 0, count_include_pad = 0} : (memref<1x1x1x6xf32>, memref<1x4x4x6xf32>) -> ()
  %l = "glowir.alloc_activation"() {name = "lrn"} : () -> memref<1x4x4x6xf32>
  "glowir.local_response_norm"(%l, %c) {size = 3, alpha = 1.0e-4 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (memref<1x4x4x6xf32>, memref<1x4x4x6xf32>) -> ()
  "glowir.dealloc_activation"(%l) : (memref<1x4x4x6xf32>) -> ()
  %p = "glowir.alloc_activation"() {name = "pad"} : () -> memref<1x6x6x6xf32>
  "glowir.pad"(%p, %c) {pads = array<i64: 0, 1, 1, 0, 0, 1, 1, 0>, value = 0.0 : f32} : (memref<1x6x6x6xf32>, memref<1x4x4x6xf32>) -> ()
  "glowir.dealloc_activation"(%p) : (memref<1x6x6x6xf32>) -> ()
  "glowir.dealloc_activation"(%c) : (memref<1x4x4x6xf32>) -> ()
  return
}
