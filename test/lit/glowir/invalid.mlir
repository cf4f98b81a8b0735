// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @out_shape() {
  %a = "glowir.alloc_activation"() : () -> memref<3x10xf32>
  %w = "glowir.alloc_activation"() : () -> memref<10x5xf32>
  %d = "glowir.alloc_activation"() : () -> memref<3x4xf32>
  // expected-error @+1 {{@out buffer memref<3x4xf32> does not match the type memref<3x5xf32> computed from the @in operands}}
  "glowir.matmul"(%d, %a, %w) : (memref<3x4xf32>, memref<3x10xf32>, memref<10x5xf32>) -> ()
  return
}

// -----

func.func @const_without_value() {
  // expected-error @+1 {{a const weight_var needs a 'value'}}
  %w = "glowir.weight_var"() {mutability = "const", name = "w"} : () -> memref<2xf32>
  return
}

// -----

func.func @bad_mutability() {
  // expected-error @+1 {{mutability must be 'const' or 'mutable', got 'sometimes'}}
  %w = "glowir.weight_var"() {mutability = "sometimes", name = "w"} : () -> memref<2xf32>
  return
}

// -----

func.func @value_shape() {
  // expected-error @+1 {{value of type tensor<3xf32> does not fit the buffer memref<2xf32>}}
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1.0> : tensor<3xf32>} : () -> memref<2xf32>
  return
}

// -----

func.func @view_past_end() {
  %a = "glowir.alloc_activation"() : () -> memref<2x3xf32>
  // expected-error @+1 {{view of 3 elements at offset 4 reads past the 6-element source}}
  %v = "glowir.tensor_view"(%a) {offsets = array<i64: 1, 1>} : (memref<2x3xf32>) -> memref<3xf32>
  return
}

// -----

func.func @tensor_operand(%t: tensor<2xf32>) {
  %a = "glowir.alloc_activation"() : () -> memref<2xf32>
  // expected-error @+1 {{expected base type 'builtin.memref' but got 'builtin.tensor'}}
  "glowir.relu"(%a, %t) : (memref<2xf32>, tensor<2xf32>) -> ()
  return
}

// -----

func.func @instruction_result() {
  %a = "glowir.alloc_activation"() : () -> memref<2xf32>
  // expected-error @+1 {{op expects exactly 0 results, but got 1}}
  %r = "glowir.relu"(%a, %a) : (memref<2xf32>, memref<2xf32>) -> memref<2xf32>
  return
}

// -----

func.func @random_uniform_f16() {
  %a = "glowir.alloc_activation"() : () -> memref<2xf16>
  // expected-error @+1 {{draws float32 elements, got f16}}
  "glowir.random_uniform"(%a) {seed = 1 : i64} : (memref<2xf16>) -> ()
  return
}
