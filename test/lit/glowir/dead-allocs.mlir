// RUN: glow-opt %s --split-input-file --glowir-dead-allocs | FileCheck %s

// alloc/dealloc pairs with no other use go, views of them too; so do constants nothing uses.
// CHECK-LABEL: func.func @dead
// CHECK-NOT:   name = "unused_const"
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK:       %[[A:.+]] = "glowir.alloc_activation"() {name = "used"}
// CHECK-NEXT:  "glowir.relu"(%[[A]], %[[X]])
// CHECK-NEXT:  "glowir.tanh"
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[A]])
// CHECK-NEXT:  return
func.func @dead() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %c = "glowir.weight_var"() {mutability = "const", name = "unused_const", value = dense<1.0> : tensor<4xf32>} : () -> memref<4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %d = "glowir.alloc_activation"() {name = "dead"} : () -> memref<4xf32>
  %dv = "glowir.tensor_view"(%d) : (memref<4xf32>) -> memref<2x2xf32>
  %a = "glowir.alloc_activation"() {name = "used"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%y, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%d) : (memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: inputs and outputs stay even when unused (they are the program's interface), and so does a buffer
// used only through a view.
// CHECK-LABEL: func.func @kept
// CHECK:       "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK:       "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK:       %[[A:.+]] = "glowir.alloc_activation"() {name = "a"}
// CHECK-NEXT:  %[[V:.+]] = "glowir.tensor_view"(%[[A]])
// CHECK-NEXT:  "glowir.splat"(%[[V]])
// CHECK-NEXT:  "glowir.copy"
func.func @kept() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x2xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  %v = "glowir.tensor_view"(%a) : (memref<4xf32>) -> memref<2x2xf32>
  "glowir.splat"(%v) {value = 1.0 : f32} : (memref<2x2xf32>) -> ()
  "glowir.copy"(%y, %v) : (memref<2x2xf32>, memref<2x2xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}
