// RUN: glow-opt %s --split-input-file --verify-diagnostics

// The instructions reuse the nodes' shape rules on their @in operands and check the @out buffer against them.

func.func @reduce_out_shape() {
  %x = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  %d = "glowir.alloc_activation"() : () -> memref<3xf32>
  // expected-error @+1 {{@out buffer memref<3xf32> does not match the type memref<2xf32> computed from the @in operands}}
  "glowir.reduce_sum"(%d, %x) {axes = array<i64: 1>} : (memref<3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

func.func @reduce_axes() {
  %x = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  %d = "glowir.alloc_activation"() : () -> memref<2xf32>
  // expected-error @+1 {{axis 5 is out of range for rank 2 (0 <= axis < 2)}}
  "glowir.reduce_max"(%d, %x) {axes = array<i64: 5>} : (memref<2xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

func.func @l2_integer() {
  %x = "glowir.alloc_activation"() : () -> memref<2x3xi64>
  %d = "glowir.alloc_activation"() : () -> memref<2xi64>
  // expected-error @+1 {{operand #0 must have a float element type, got i64}}
  "glowir.reduce_l2"(%d, %x) {axes = array<i64: 1>} : (memref<2xi64>, memref<2x3xi64>) -> ()
  return
}

// -----

func.func @softmax_out() {
  %x = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  %d = "glowir.alloc_activation"() : () -> memref<6xf32>
  // expected-error @+1 {{@out buffer memref<6xf32> does not match the type memref<2x3xf32> computed from the @in operands}}
  "glowir.softmax"(%d, %x) {axis = 1} : (memref<6xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

func.func @layer_norm_scale() {
  %x = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  %g = "glowir.alloc_activation"() : () -> memref<2xf32>
  // expected-error @+1 {{scale 2 f32 must be 3 f32: the input's dims from axis 1 on}}
  "glowir.layer_norm"(%x, %x, %g, %g) {axis = 1, epsilon = 1.0e-5 : f32} : (memref<2x3xf32>, memref<2x3xf32>, memref<2xf32>, memref<2xf32>) -> ()
  return
}

// -----

func.func @batch_matmul_out() {
  %a = "glowir.alloc_activation"() : () -> memref<2x3x4xf32>
  %b = "glowir.alloc_activation"() : () -> memref<2x4x5xf32>
  %d = "glowir.alloc_activation"() : () -> memref<2x3x4xf32>
  // expected-error @+1 {{@out buffer memref<2x3x4xf32> does not match the type memref<2x3x5xf32> computed from the @in operands}}
  "glowir.batch_matmul"(%d, %a, %b) : (memref<2x3x4xf32>, memref<2x3x4xf32>, memref<2x4x5xf32>) -> ()
  return
}

// -----

func.func @arg_max_out() {
  %x = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  %d = "glowir.alloc_activation"() : () -> memref<2xf32>
  // expected-error @+1 {{@out buffer memref<2xf32> does not match the type memref<2xi64> computed from the @in operands}}
  "glowir.arg_max"(%d, %x) {axis = 1, select_last = 0} : (memref<2xf32>, memref<2x3xf32>) -> ()
  return
}
