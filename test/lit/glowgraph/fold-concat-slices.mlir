// RUN: glow-opt %s --split-input-file --glowgraph-fold-concat-slices | FileCheck %s

// A slice that is exactly one input of a concat chain is that input; one inside an input is a slice of it.
// CHECK-LABEL: func.func @slice_of_concat
// CHECK-SAME: (%[[A:.+]]: tensor<2x2xf32>, %[[B:.+]]: tensor<2x3xf32>, %[[C:.+]]: tensor<2x1xf32>)
// CHECK: %[[S:.+]] = "glowgraph.slice"(%[[B]]) {sizes = array<i64: 1, 2>, starts = array<i64: 1, 1>}
// CHECK: return %[[B]], %[[S]]
func.func @slice_of_concat(%a: tensor<2x2xf32>, %b: tensor<2x3xf32>, %c: tensor<2x1xf32>) -> (tensor<2x3xf32>, tensor<1x2xf32>) {
  %0 = "glowgraph.concat"(%a, %b) {axis = 1} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %1 = "glowgraph.concat"(%0, %c) {axis = 1} : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
  %2 = "glowgraph.slice"(%1) {starts = array<i64: 0, 2>, sizes = array<i64: 2, 3>} : (tensor<2x6xf32>) -> tensor<2x3xf32>
  %3 = "glowgraph.slice"(%1) {starts = array<i64: 1, 3>, sizes = array<i64: 1, 2>} : (tensor<2x6xf32>) -> tensor<1x2xf32>
  return %2, %3 : tensor<2x3xf32>, tensor<1x2xf32>
}

// -----

// Negative: a slice across two inputs stays a slice of the concat.
// CHECK-LABEL: func.func @across
// CHECK: %[[C:.+]] = "glowgraph.concat"
// CHECK-NEXT: "glowgraph.slice"(%[[C]])
func.func @across(%a: tensor<2x2xf32>, %b: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %0 = "glowgraph.concat"(%a, %b) {axis = 1} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %1 = "glowgraph.slice"(%0) {starts = array<i64: 0, 1>, sizes = array<i64: 2, 2>} : (tensor<2x5xf32>) -> tensor<2x2xf32>
  return %1 : tensor<2x2xf32>
}

// -----

// A reversed slice (negative step) lies inside an input when its first and last elements both do, whichever comes
// first: inside %b it becomes a reversed slice of %b; from the last column of %b back to the first of %a it stays
// (it once took only its first element's input and read %a out of bounds).
// CHECK-LABEL: func.func @reversed
// CHECK-SAME: (%[[A:.+]]: tensor<2x2xf32>, %[[B:.+]]: tensor<2x3xf32>)
// CHECK: %[[C:.+]] = "glowgraph.concat"(%[[A]], %[[B]])
// CHECK-DAG: "glowgraph.slice"(%[[B]]) {sizes = array<i64: 2, 2>, starts = array<i64: 0, 2>, steps = array<i64: 1, -2>}
// CHECK-DAG: "glowgraph.slice"(%[[C]]) {sizes = array<i64: 2, 2>, starts = array<i64: 0, 4>, steps = array<i64: 1, -4>}
func.func @reversed(%a: tensor<2x2xf32>, %b: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0 = "glowgraph.concat"(%a, %b) {axis = 1} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x5xf32>
  %1 = "glowgraph.slice"(%0) {starts = array<i64: 0, 4>, sizes = array<i64: 2, 2>, steps = array<i64: 1, -2>} : (tensor<2x5xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.slice"(%0) {starts = array<i64: 0, 4>, sizes = array<i64: 2, 2>, steps = array<i64: 1, -4>} : (tensor<2x5xf32>) -> tensor<2x2xf32>
  return %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// Adjacent slices joined again: one slice, or the tensor itself when they cover it.
// CHECK-LABEL: func.func @concat_of_slices
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32>)
// CHECK-NEXT: %[[S:.+]] = "glowgraph.slice"(%[[X]]) {sizes = array<i64: 3, 3>, starts = array<i64: 1, 0>}
// CHECK-NEXT: return %[[S]], %[[X]]
func.func @concat_of_slices(%x: tensor<4x3xf32>) -> (tensor<3x3xf32>, tensor<4x3xf32>) {
  %0 = "glowgraph.slice"(%x) {starts = array<i64: 0, 0>, sizes = array<i64: 1, 3>} : (tensor<4x3xf32>) -> tensor<1x3xf32>
  %1 = "glowgraph.slice"(%x) {starts = array<i64: 1, 0>, sizes = array<i64: 2, 3>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  %2 = "glowgraph.slice"(%x) {starts = array<i64: 3, 0>, sizes = array<i64: 1, 3>} : (tensor<4x3xf32>) -> tensor<1x3xf32>
  %3 = "glowgraph.concat"(%1, %2) {axis = 0} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  %4 = "glowgraph.concat"(%0, %1) {axis = 0} : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %5 = "glowgraph.concat"(%4, %2) {axis = 0} : (tensor<3x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
  return %3, %5 : tensor<3x3xf32>, tensor<4x3xf32>
}

// -----

// Negative: slices with a gap, in the wrong order, or of different tensors are joined as they are.
// CHECK-LABEL: func.func @not_adjacent
// CHECK-COUNT-3: "glowgraph.concat"
func.func @not_adjacent(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0 = "glowgraph.slice"(%x) {starts = array<i64: 0>, sizes = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>
  %1 = "glowgraph.slice"(%x) {starts = array<i64: 2>, sizes = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>
  %2 = "glowgraph.slice"(%x) {starts = array<i64: 1>, sizes = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>
  %3 = "glowgraph.slice"(%y) {starts = array<i64: 1>, sizes = array<i64: 1>} : (tensor<4xf32>) -> tensor<1xf32>
  %4 = "glowgraph.concat"(%0, %1) {axis = 0} : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
  %5 = "glowgraph.concat"(%2, %0) {axis = 0} : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
  %6 = "glowgraph.concat"(%0, %3) {axis = 0} : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
  return %4, %5, %6 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
