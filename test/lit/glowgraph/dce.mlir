// RUN: glow-opt %s --split-input-file --glowgraph-dce | FileCheck %s

// A dead chain goes in one sweep; what the outputs need stays.
// CHECK-LABEL: func.func @dead_chain
// CHECK-SAME: (%[[A:.+]]: tensor<2xf32>)
// CHECK-NEXT: %[[R:.+]] = "glowgraph.relu"(%[[A]])
// CHECK-NEXT: return %[[R]]
func.func @dead_chain(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.add"(%a, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "glowgraph.tanh"(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "glowgraph.relu"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}

// -----

// Negative: everything is used, nothing changes.
// CHECK-LABEL: func.func @all_live
// CHECK: "glowgraph.add"
// CHECK: "glowgraph.sigmoid"
// CHECK: return
func.func @all_live(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "glowgraph.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "glowgraph.sigmoid"(%0) : (tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Ops of other dialects are not glowgraph's to erase.
// CHECK-LABEL: func.func @foreign
// CHECK: arith.constant
func.func @foreign() {
  %0 = arith.constant 1.0 : f32
  return
}
