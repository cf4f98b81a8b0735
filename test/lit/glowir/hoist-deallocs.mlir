// RUN: glow-opt %s --split-input-file --glowir-hoist-deallocs | FileCheck %s

// Deallocs move up to right after the last instruction touching the buffer, through views too.
// CHECK-LABEL: func.func @hoist
// CHECK:       %[[A:.+]] = "glowir.alloc_activation"() {name = "a"}
// CHECK-NEXT:  %[[B:.+]] = "glowir.alloc_activation"() {name = "b"}
// CHECK-NEXT:  "glowir.relu"(%[[A]], %{{.+}})
// CHECK-NEXT:  "glowir.relu"(%[[B]], %[[A]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[A]])
// CHECK-NEXT:  %[[V:.+]] = "glowir.tensor_view"(%[[B]])
// CHECK-NEXT:  "glowir.tanh"(%{{.+}}, %[[V]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[B]])
// CHECK-NEXT:  "glowir.sigmoid"
// CHECK-NEXT:  return
func.func @hoist() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x2xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.relu"(%b, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  %v = "glowir.tensor_view"(%b) : (memref<4xf32>) -> memref<2x2xf32>
  "glowir.tanh"(%y, %v) : (memref<2x2xf32>, memref<2x2xf32>) -> ()
  "glowir.sigmoid"(%z, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}

// -----

// Negative: a dealloc right after the last use stays where it is.
// CHECK-LABEL: func.func @already_tight
// CHECK:       "glowir.relu"(%[[A:[0-9]+]], %{{.+}})
// CHECK-NEXT:  "glowir.tanh"(%{{.+}}, %[[A]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[A]])
// CHECK-NEXT:  "glowir.sigmoid"
func.func @already_tight() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%y, %a) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  "glowir.sigmoid"(%z, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// Several deallocs after one instruction keep allocation order.
// CHECK-LABEL: func.func @order
// CHECK:       "glowir.element_add"(%{{.+}}, %[[A:[0-9]+]], %[[B:[0-9]+]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[A]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[B]])
// CHECK-NEXT:  "glowir.sigmoid"
func.func @order() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<4xf32>
  "glowir.relu"(%a, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.tanh"(%b, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_add"(%y, %a, %b) : (memref<4xf32>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.sigmoid"(%z, %x) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}
