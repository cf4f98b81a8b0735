// RUN: glow-opt %s | FileCheck %s
// RUN: glow-opt %s | glow-opt | FileCheck %s

// A glowir program: weight vars, activations, views and instructions with @out first.
// CHECK-LABEL: func.func @program
// CHECK: %[[W:.+]] = "glowir.weight_var"() {mutability = "const", name = "weights", value = dense<5.000000e-01> : tensor<10x5xf32>} : () -> memref<10x5xf32>
// CHECK: %[[B:.+]] = "glowir.weight_var"() {mutability = "const", name = "bias", value = dense<1.000000e+00> : tensor<5xf32>} : () -> memref<5xf32>
// CHECK: %[[IN:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "input"} : () -> memref<3x10xf32>
// CHECK: %[[OUT:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output"} : () -> memref<15xf32>
// CHECK: %[[A:.+]] = "glowir.alloc_activation"() {name = "fc"} : () -> memref<3x5xf32>
// CHECK: "glowir.fully_connected"(%[[A]], %[[IN]], %[[W]], %[[B]]) : (memref<3x5xf32>, memref<3x10xf32>, memref<10x5xf32>, memref<5xf32>) -> ()
// CHECK: %[[V:.+]] = "glowir.tensor_view"(%[[A]]) : (memref<3x5xf32>) -> memref<15xf32>
// CHECK: "glowir.sigmoid"(%[[OUT]], %[[V]]) : (memref<15xf32>, memref<15xf32>) -> ()
// CHECK: "glowir.dealloc_activation"(%[[A]]) : (memref<3x5xf32>) -> ()
func.func @program() attributes {glowir.inputs = ["input"], glowir.outputs = ["output"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "weights", value = dense<0.5> : tensor<10x5xf32>} : () -> memref<10x5xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "bias", value = dense<1.0> : tensor<5xf32>} : () -> memref<5xf32>
  %in = "glowir.weight_var"() {mutability = "mutable", name = "input"} : () -> memref<3x10xf32>
  %out = "glowir.weight_var"() {mutability = "mutable", name = "output"} : () -> memref<15xf32>
  %a = "glowir.alloc_activation"() {name = "fc"} : () -> memref<3x5xf32>
  "glowir.fully_connected"(%a, %in, %w, %b) : (memref<3x5xf32>, memref<3x10xf32>, memref<10x5xf32>, memref<5xf32>) -> ()
  %v = "glowir.tensor_view"(%a) : (memref<3x5xf32>) -> memref<15xf32>
  "glowir.sigmoid"(%out, %v) : (memref<15xf32>, memref<15xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<3x5xf32>) -> ()
  return
}
