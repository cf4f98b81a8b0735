// RUN: glow-opt %s --split-input-file --glowgraph-merge-reshapes | FileCheck %s

// A chain of reshapes is one reshape of the first input.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK-NEXT: %[[R:.+]] = "glowgraph.reshape"(%[[X]]) {shape = array<i64: 4, 6>}
// CHECK-NEXT: return %[[R]]
func.func @chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = "glowgraph.reshape"(%x) {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 24>} : (tensor<6x4xf32>) -> tensor<24xf32>
  %2 = "glowgraph.reshape"(%1) {shape = array<i64: 4, 6>} : (tensor<24xf32>) -> tensor<4x6xf32>
  return %2 : tensor<4x6xf32>
}

// -----

// A chain that comes back to the input's shape is the input; an intermediate reshape with another user stays.
// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[R:.+]] = "glowgraph.reshape"(%[[X]]) {shape = array<i64: 6>}
// CHECK-NEXT: return %[[X]], %[[R]]
func.func @round_trip(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<6xf32>) {
  %0 = "glowgraph.reshape"(%x) {shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 2, 3>} : (tensor<6xf32>) -> tensor<2x3xf32>
  return %1, %0 : tensor<2x3xf32>, tensor<6xf32>
}

// -----

// Negative: a reshape of something else than a reshape stays.
// CHECK-LABEL: func.func @no_chain
// CHECK: "glowgraph.relu"
// CHECK-NEXT: "glowgraph.reshape"
func.func @no_chain(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = "glowgraph.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  return %1 : tensor<6xf32>
}
