// RUN: glow-opt %s --split-input-file --convert-glowgraph-to-glowir | FileCheck %s

// A chain of concats along one axis becomes one buffer, here the output, with one insert_tensor per input
// (Glow's IRGen); the inner concat gets no buffer.
// CHECK-LABEL: func.func @concat_chain()
// CHECK-NEXT: %[[A:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2x3xf32>
// CHECK-NEXT: %[[B:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<2x1xf32>
// CHECK-NEXT: %[[C:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<2x2xf32>
// CHECK-NEXT: %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x6xf32>
// CHECK-NEXT: "glowir.insert_tensor"(%[[Y]], %[[A]]) {offsets = array<i64: 0, 0>}
// CHECK-NEXT: "glowir.insert_tensor"(%[[Y]], %[[B]]) {offsets = array<i64: 0, 3>}
// CHECK-NEXT: "glowir.insert_tensor"(%[[Y]], %[[C]]) {offsets = array<i64: 0, 4>}
// CHECK-NEXT: return
func.func @concat_chain(%a: tensor<2x3xf32> {glowgraph.name = "a"}, %b: tensor<2x1xf32> {glowgraph.name = "b"}, %c: tensor<2x2xf32> {glowgraph.name = "c"}) -> (tensor<2x6xf32> {glowgraph.name = "y"}) {
  %0 = "glowgraph.concat"(%a, %b) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %1 = "glowgraph.concat"(%0, %c) {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
  return %1 : tensor<2x6xf32>
}

// -----

// Negative: an inner concat with another reader, or along another axis, has a buffer of its own, inserted whole.
// CHECK-LABEL: func.func @concat_not_absorbed()
// CHECK: %[[A:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2x2xf32>
// CHECK: %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x6xf32>
// CHECK: %[[Z:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4x4xf32>
// CHECK: %[[IN:.+]] = "glowir.alloc_activation"() {name = "inner"} : () -> memref<2x4xf32>
// CHECK-NEXT: "glowir.insert_tensor"(%[[IN]], %[[A]]) {offsets = array<i64: 0, 0>}
// CHECK-NEXT: "glowir.insert_tensor"(%[[IN]], %[[A]]) {offsets = array<i64: 0, 2>}
// CHECK-NEXT: "glowir.insert_tensor"(%[[Y]], %[[IN]]) {offsets = array<i64: 0, 0>}
// CHECK-NEXT: "glowir.insert_tensor"(%[[Y]], %[[A]]) {offsets = array<i64: 0, 4>}
// CHECK-NEXT: "glowir.insert_tensor"(%[[Z]], %[[IN]]) {offsets = array<i64: 0, 0>}
// CHECK-NEXT: "glowir.insert_tensor"(%[[Z]], %[[IN]]) {offsets = array<i64: 2, 0>}
// CHECK-NEXT: "glowir.dealloc_activation"(%[[IN]])
func.func @concat_not_absorbed(%a: tensor<2x2xf32> {glowgraph.name = "a"}) -> (tensor<2x6xf32> {glowgraph.name = "y"}, tensor<4x4xf32> {glowgraph.name = "z"}) {
  %0 = "glowgraph.concat"(%a, %a) {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32> loc("inner")
  %1 = "glowgraph.concat"(%0, %a) {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x2xf32>) -> tensor<2x6xf32>
  %2 = "glowgraph.concat"(%0, %0) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
  return %1, %2 : tensor<2x6xf32>, tensor<4x4xf32>
}

// -----

// A slice of one contiguous range is a view with offsets (an output is copied out of it, as from a reshape);
// any other slice is an extract_tensor whose offsets are the starts.
// CHECK-LABEL: func.func @slices()
// CHECK: %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<1x3x2xf32>
// CHECK: %[[Z:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<2x3x1xf32>
// CHECK: %[[R:.+]] = "glowir.alloc_activation"() {name = "r"} : () -> memref<4x3x2xf32>
// CHECK-NEXT: "glowir.relu"(%[[R]], %{{.+}})
// CHECK-NEXT: %[[V:.+]] = "glowir.tensor_view"(%[[R]]) {offsets = array<i64: 2, 0, 0>} : (memref<4x3x2xf32>) -> memref<1x3x2xf32>
// CHECK-NEXT: "glowir.copy"(%[[Y]], %[[V]])
// CHECK-NEXT: "glowir.extract_tensor"(%[[Z]], %[[R]]) {offsets = array<i64: 3, 0, 1>, steps = array<i64: -2, 1, 1>}
// CHECK-NEXT: "glowir.dealloc_activation"(%[[R]])
func.func @slices(%a: tensor<4x3x2xf32> {glowgraph.name = "a"}) -> (tensor<1x3x2xf32> {glowgraph.name = "y"}, tensor<2x3x1xf32> {glowgraph.name = "z"}) {
  %r = "glowgraph.relu"(%a) : (tensor<4x3x2xf32>) -> tensor<4x3x2xf32> loc("r")
  %0 = "glowgraph.slice"(%r) {starts = array<i64: 2, 0, 0>, sizes = array<i64: 1, 3, 2>} : (tensor<4x3x2xf32>) -> tensor<1x3x2xf32>
  %1 = "glowgraph.slice"(%r) {starts = array<i64: 3, 0, 1>, sizes = array<i64: 2, 3, 1>, steps = array<i64: -2, 1, 1>} : (tensor<4x3x2xf32>) -> tensor<2x3x1xf32>
  return %0, %1 : tensor<1x3x2xf32>, tensor<2x3x1xf32>
}

// -----

// Negative: rows 1..2 of a 4x3 input are contiguous, columns 1..2 are not.
// CHECK-LABEL: func.func @slice_rows_and_columns()
// CHECK: "glowir.tensor_view"(%{{.+}}) {offsets = array<i64: 1, 0>} : (memref<4x3xf32>) -> memref<2x3xf32>
// CHECK: "glowir.extract_tensor"(%{{.+}}, %{{.+}}) {offsets = array<i64: 0, 1>} : (memref<4x2xf32>, memref<4x3xf32>) -> ()
func.func @slice_rows_and_columns(%a: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<4x2xf32>) {
  %r = "glowgraph.relu"(%a) : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %0 = "glowgraph.slice"(%r) {starts = array<i64: 1, 0>, sizes = array<i64: 2, 3>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.slice"(%r) {starts = array<i64: 0, 1>, sizes = array<i64: 4, 2>} : (tensor<4x3xf32>) -> tensor<4x2xf32>
  %2 = "glowgraph.tanh"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2, %1 : tensor<2x3xf32>, tensor<4x2xf32>
}

// -----

// CHECK-LABEL: func.func @gather()
// CHECK: %[[D:.+]] = "glowir.weight_var"() {mutability = "const", name = "table", value = {{.+}}} : () -> memref<5x4xf32>
// CHECK: %[[I:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "ids"} : () -> memref<3xi64>
// CHECK: %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<3x4xf32>
// CHECK-NEXT: "glowir.gather"(%[[Y]], %[[D]], %[[I]]) {axis = 0 : i64} : (memref<3x4xf32>, memref<5x4xf32>, memref<3xi64>) -> ()
func.func @gather(%i: tensor<3xi64> {glowgraph.name = "ids"}) -> (tensor<3x4xf32> {glowgraph.name = "y"}) {
  %d = "glowgraph.constant"() {value = dense<1.0> : tensor<5x4xf32>} : () -> tensor<5x4xf32> loc("table")
  %0 = "glowgraph.gather"(%d, %i) {axis = 0 : i64} : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
