// RUN: glow-opt %s --split-input-file --glowir-peephole | FileCheck %s

// tensor_view(x) : T -> T  ->  x
// CHECK-LABEL: func.func @identity_view
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK:       %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NOT:   glowir.tensor_view
// CHECK:       "glowir.relu"(%[[Y]], %[[X]])
func.func @identity_view() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3xf32>
  %v = "glowir.tensor_view"(%x) : (memref<2x3xf32>) -> memref<2x3xf32>
  "glowir.relu"(%y, %v) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

// tensor_view(tensor_view(x, o1), o2)  ->  tensor_view(x, o): row 1 of x starts at element 6, and 2 more is 8 = [1, 2].
// CHECK-LABEL: func.func @view_of_view
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK:       %[[V:.+]] = "glowir.tensor_view"(%[[X]]) {offsets = array<i64: 1, 2>} : (memref<4x6xf32>) -> memref<2x4xf32>
// CHECK-NEXT:  "glowir.relu"(%{{.+}}, %[[V]])
// CHECK-NOT:   glowir.tensor_view
func.func @view_of_view() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4x6xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x4xf32>
  %v1 = "glowir.tensor_view"(%x) {offsets = array<i64: 1, 0>} : (memref<4x6xf32>) -> memref<18xf32>
  %v2 = "glowir.tensor_view"(%v1) {offsets = array<i64: 2>} : (memref<18xf32>) -> memref<2x4xf32>
  "glowir.relu"(%y, %v2) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
  return
}

// -----

// A view of a view that is used elsewhere too: the outer view folds, the inner one stays for its other user.
// CHECK-LABEL: func.func @shared_inner_view
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK:       %[[IN:.+]] = "glowir.tensor_view"(%[[X]]) : (memref<2x6xf32>) -> memref<12xf32>
// CHECK-NEXT:  %[[OUT:.+]] = "glowir.tensor_view"(%[[X]]) : (memref<2x6xf32>) -> memref<3x4xf32>
// CHECK-NEXT:  "glowir.relu"(%{{.+}}, %[[OUT]])
// CHECK-NEXT:  "glowir.tanh"(%{{.+}}, %[[IN]])
func.func @shared_inner_view() attributes {glowir.inputs = ["x"], glowir.outputs = ["y", "z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x6xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<3x4xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<12xf32>
  %v1 = "glowir.tensor_view"(%x) : (memref<2x6xf32>) -> memref<12xf32>
  %v2 = "glowir.tensor_view"(%v1) : (memref<12xf32>) -> memref<3x4xf32>
  "glowir.relu"(%y, %v2) : (memref<3x4xf32>, memref<3x4xf32>) -> ()
  "glowir.tanh"(%z, %v1) : (memref<12xf32>, memref<12xf32>) -> ()
  return
}

// -----

// copy(x, x) -> (nothing), also through two views of the same range; copies between different ranges stay.
// CHECK-LABEL: func.func @self_copy
// CHECK:       %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK:       %[[LO:.+]] = "glowir.tensor_view"(%[[Y]]) : (memref<2x4xf32>) -> memref<4xf32>
// CHECK-NEXT:  %[[HI:.+]] = "glowir.tensor_view"(%[[Y]]) {offsets = array<i64: 1, 0>} : (memref<2x4xf32>) -> memref<4xf32>
// CHECK-NEXT:  "glowir.copy"(%[[HI]], %[[LO]])
// CHECK-NEXT:  return
func.func @self_copy() attributes {glowir.inputs = [], glowir.outputs = ["y"]} {
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x4xf32>
  "glowir.copy"(%y, %y) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
  %lo = "glowir.tensor_view"(%y) : (memref<2x4xf32>) -> memref<4xf32>
  %lo2 = "glowir.tensor_view"(%y) {offsets = array<i64: 0, 0>} : (memref<2x4xf32>) -> memref<4xf32>
  %hi = "glowir.tensor_view"(%y) {offsets = array<i64: 1, 0>} : (memref<2x4xf32>) -> memref<4xf32>
  "glowir.copy"(%lo2, %lo) : (memref<4xf32>, memref<4xf32>) -> ()
  "glowir.copy"(%hi, %lo) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// Negative: a view that changes the type is no identity, and an unused view goes.
// CHECK-LABEL: func.func @kept_view
// CHECK:       %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK:       %[[V:.+]] = "glowir.tensor_view"(%[[X]]) : (memref<2x3xf32>) -> memref<3x2xf32>
// CHECK-NEXT:  "glowir.relu"(%{{.+}}, %[[V]])
// CHECK-NEXT:  return
func.func @kept_view() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<3x2xf32>
  %v = "glowir.tensor_view"(%x) : (memref<2x3xf32>) -> memref<3x2xf32>
  %unused = "glowir.tensor_view"(%x) : (memref<2x3xf32>) -> memref<6xf32>
  "glowir.relu"(%y, %v) : (memref<3x2xf32>, memref<3x2xf32>) -> ()
  return
}
