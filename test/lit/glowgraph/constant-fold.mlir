// RUN: glow-opt %s --split-input-file --glowgraph-constant-fold | FileCheck %s

// A weight transpose folds into a constant of the transposed shape.
// CHECK-LABEL: func.func @transpose_weight
// CHECK-DAG: %[[W:.+]] = "glowgraph.constant"() {value = dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>}
// CHECK: "glowgraph.matmul"(%{{.+}}, %[[W]])
func.func @transpose_weight(%a: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = "glowgraph.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %t = "glowgraph.transpose"(%w) {shuffle = array<i64: 1, 0>} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %0 = "glowgraph.matmul"(%a, %t) : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

// Chains fold in one sweep; integer division truncates toward zero.
// CHECK-LABEL: func.func @int_chain
// CHECK: "glowgraph.constant"() {value = dense<[-4, 6]> : tensor<2xi64>}
// CHECK-NEXT: %[[C:.+]] = "glowgraph.constant"() {value = dense<[-2, 3]> : tensor<2xi64>}
// CHECK: "glowgraph.mul"(%{{.+}}, %[[C]])
func.func @int_chain(%x: tensor<2xi64>) -> tensor<2xi64> {
  %a = "glowgraph.constant"() {value = dense<[-7, 9]> : tensor<2xi64>} : () -> tensor<2xi64>
  %b = "glowgraph.constant"() {value = dense<[3, 3]> : tensor<2xi64>} : () -> tensor<2xi64>
  %0 = "glowgraph.div"(%a, %b) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = "glowgraph.add"(%0, %0) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %2 = "glowgraph.sub"(%1, %0) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %3 = "glowgraph.mul"(%x, %2) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %3 : tensor<2xi64>
}

// -----

// Negative: a node with a non-constant operand stays.
// CHECK-LABEL: func.func @not_constant
// CHECK: "glowgraph.add"
func.func @not_constant(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.add"(%a, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Negative: a node that only feeds outputs is kept (folding it would only add a copy).
// CHECK-LABEL: func.func @output_node
// CHECK: %[[R:.+]] = "glowgraph.add"
// CHECK: return %[[R]]
func.func @output_node() -> tensor<2xf32> {
  %c = "glowgraph.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = "glowgraph.add"(%c, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Scalars stay scalars.
// CHECK-LABEL: func.func @scalar
// CHECK: "glowgraph.constant"() {value = dense<6> : tensor<i64>} : () -> tensor<i64>
// CHECK-NEXT: "glowgraph.mul"
func.func @scalar(%x: tensor<i64>) -> tensor<i64> {
  %a = "glowgraph.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %b = "glowgraph.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
  %0 = "glowgraph.mul"(%a, %b) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  %1 = "glowgraph.mul"(%x, %0) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %1 : tensor<i64>
}
