// RUN: glow-opt %s --split-input-file --verify-diagnostics

// The instructions check their @out buffer with their nodes' shape rules.

func.func @conv_out() {
  %x = "glowir.alloc_activation"() : () -> memref<1x8x8x4xf32>
  %w = "glowir.alloc_activation"() : () -> memref<3x3x4x6xf32>
  %b = "glowir.alloc_activation"() : () -> memref<6xf32>
  %y = "glowir.alloc_activation"() : () -> memref<1x8x8x6xf32>
  // expected-error @+1 {{@out buffer memref<1x8x8x6xf32> does not match the type memref<1x6x6x6xf32> computed from the @in operands}}
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1} : (memref<1x8x8x6xf32>, memref<1x8x8x4xf32>, memref<3x3x4x6xf32>, memref<6xf32>) -> ()
  return
}

// -----

func.func @conv_group() {
  %x = "glowir.alloc_activation"() : () -> memref<1x8x8x4xf32>
  %w = "glowir.alloc_activation"() : () -> memref<3x3x4x6xf32>
  %b = "glowir.alloc_activation"() : () -> memref<6xf32>
  %y = "glowir.alloc_activation"() : () -> memref<1x6x6x6xf32>
  // expected-error @+1 {{group 4 must divide the 4 input channels and the 6 output channels}}
  "glowir.conv2d"(%y, %x, %w, %b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 4} : (memref<1x6x6x6xf32>, memref<1x8x8x4xf32>, memref<3x3x4x6xf32>, memref<6xf32>) -> ()
  return
}

// -----

func.func @max_pool_out() {
  %x = "glowir.alloc_activation"() : () -> memref<1x5x5x3xf32>
  %y = "glowir.alloc_activation"() : () -> memref<1x2x2x3xf32>
  // expected-error @+1 {{@out buffer memref<1x2x2x3xf32> does not match the type memref<1x3x3x3xf32> computed from the @in operands}}
  "glowir.max_pool"(%y, %x) {kernels = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 1} : (memref<1x2x2x3xf32>, memref<1x5x5x3xf32>) -> ()
  return
}

// -----

func.func @avg_pool_kernels() {
  %x = "glowir.alloc_activation"() : () -> memref<1x5x5x3xf32>
  %y = "glowir.alloc_activation"() : () -> memref<1x5x5x3xf32>
  // expected-error @+1 {{kernels [1] must hold 2 integers >= 1}}
  "glowir.avg_pool"(%y, %x) {kernels = array<i64: 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = 0, count_include_pad = 0} : (memref<1x5x5x3xf32>, memref<1x5x5x3xf32>) -> ()
  return
}

// -----

func.func @lrn_out() {
  %x = "glowir.alloc_activation"() : () -> memref<1x2x2x3xf32>
  %y = "glowir.alloc_activation"() : () -> memref<1x2x2x4xf32>
  // expected-error @+1 {{@out buffer memref<1x2x2x4xf32> does not match the type memref<1x2x2x3xf32> computed from the @in operands}}
  "glowir.local_response_norm"(%y, %x) {size = 3, alpha = 1.0e-4 : f32, beta = 0.75 : f32, bias = 1.0 : f32} : (memref<1x2x2x4xf32>, memref<1x2x2x3xf32>) -> ()
  return
}

// -----

func.func @pad_value() {
  %x = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  %y = "glowir.alloc_activation"() : () -> memref<2x5xf32>
  // expected-error @+1 {{value 1.000000e+00 : f64 must be a f32 attribute like the elements it fills}}
  "glowir.pad"(%y, %x) {pads = array<i64: 0, 1, 0, 1>, value = 1.0 : f64} : (memref<2x5xf32>, memref<2x3xf32>) -> ()
  return
}
