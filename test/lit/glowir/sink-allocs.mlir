// RUN: glow-opt %s --split-input-file --glowir-sink-allocs | FileCheck %s

// Allocs and views move down to right before their first user (a view's source follows it).
// CHECK-LABEL: func.func @sink
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK:       "glowir.relu"(%{{[0-9]+}}, %[[X]])
// CHECK-NEXT:  %[[A:.+]] = "glowir.alloc_activation"() {name = "a"}
// CHECK-NEXT:  %[[V:.+]] = "glowir.tensor_view"(%[[A]])
// CHECK-NEXT:  "glowir.tanh"(%[[V]], %[[X]])
// CHECK-NEXT:  %[[B:.+]] = "glowir.alloc_activation"() {name = "b"}
// CHECK-NEXT:  "glowir.sigmoid"(%[[B]], %[[A]])
func.func @sink() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  %v = "glowir.tensor_view"(%a) : (memref<4xf32>) -> memref<4xf32>
  "glowir.relu"(%y, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%v, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.sigmoid"(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.copy"(%z, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: weight vars stay in the declare section at the top, and an alloc right before its user stays.
// CHECK-LABEL: func.func @in_place
// CHECK-NEXT:  "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK-NEXT:  "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NEXT:  %[[A:.+]] = "glowir.alloc_activation"() {name = "a"}
// CHECK-NEXT:  "glowir.relu"(%[[A]]
func.func @in_place() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%y, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}
