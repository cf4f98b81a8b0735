// RUN: glow-opt %s --split-input-file --glowgraph-cse | FileCheck %s

// CHECK-LABEL: func.func @same_node
// CHECK-SAME: (%[[A:.+]]: tensor<2xf32>)
// CHECK: %[[S:.+]] = "glowgraph.sigmoid"(%[[A]])
// CHECK-NOT: "glowgraph.sigmoid"
// CHECK: %[[M:.+]] = "glowgraph.mul"(%[[S]], %[[S]])
// CHECK: return %[[M]]
func.func @same_node(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "glowgraph.sigmoid"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "glowgraph.sigmoid"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "glowgraph.mul"(%0, %1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}

// -----

// Equal constants merge, different ones do not; the adds then become one.
// CHECK-LABEL: func.func @constants
// CHECK: %[[C1:.+]] = "glowgraph.constant"() {value = dense<1.000000e+00>
// CHECK: %[[C2:.+]] = "glowgraph.constant"() {value = dense<2.000000e+00>
// CHECK-NOT: "glowgraph.constant"
// CHECK: %[[S:.+]] = "glowgraph.add"(%[[C1]], %[[C2]])
// CHECK-NOT: "glowgraph.add"
// CHECK: return %[[S]], %[[S]]
func.func @constants() -> (tensor<2xf32>, tensor<2xf32>) {
  %c1 = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %c2 = "glowgraph.constant"() {value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %c3 = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.add"(%c1, %c2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "glowgraph.add"(%c3, %c2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}

// -----

// Negative: same op, different attributes or operands: nothing merges.
// CHECK-LABEL: func.func @different
// CHECK-COUNT-2: "glowgraph.transpose"
// CHECK-COUNT-2: "glowgraph.add"
func.func @different(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "glowgraph.transpose"(%a) {shuffle = array<i64: 0, 1>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "glowgraph.add"(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %3 = "glowgraph.add"(%b, %a) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0, %1, %2, %3 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
