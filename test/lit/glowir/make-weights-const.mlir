// RUN: glow-opt %s --split-input-file --glowir-make-weights-const | FileCheck %s

// A mutable weight with a value that nothing writes and that is no input or output becomes const.
// Negative: an input stays mutable (the caller fills it), so does a written weight, and one without a value.
// CHECK-LABEL: func.func @weights
// CHECK:       "glowir.weight_var"() {mutability = "const", name = "scale", value = dense<2.000000e+00> : tensor<4xf32>}
// CHECK:       "glowir.weight_var"() {mutability = "mutable", name = "state", value = dense<0.000000e+00> : tensor<4xf32>}
// CHECK:       "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK:       "glowir.weight_var"() {mutability = "mutable", name = "y"}
func.func @weights() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %s = "glowir.weight_var"() {mutability = "mutable", name = "scale", value = dense<2.0> : tensor<4xf32>} : () -> memref<4xf32>
  %t = "glowir.weight_var"() {mutability = "mutable", name = "state", value = dense<0.0> : tensor<4xf32>} : () -> memref<4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  "glowir.element_mul"(%y, %x, %s) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_add"(%t, %t, %y) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  return
}
