// RUN: glow-opt %s --split-input-file --glowgraph-lower | FileCheck %s
// RUN: glow-opt %s --split-input-file -p 'builtin.module(glowgraph-lower{keep=leaky_relu,prelu,elu,hard_sigmoid,softplus,gelu})' | FileCheck %s --check-prefix=KEEP

// Negative case of every pattern: a node kind the backend keeps stays as it is.

// CHECK-LABEL: func.func @leaky_relu
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[ZERO:.+]] = "glowgraph.splat"() {value = 0.000000e+00 : f32} : () -> tensor<4xf32>
// CHECK: %[[NEG:.+]] = "glowgraph.cmp_lt"(%[[X]], %[[ZERO]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK: %[[ALPHA:.+]] = "glowgraph.splat"() {value = 1.000000e-01 : f32}
// CHECK: %[[SCALED:.+]] = "glowgraph.mul"(%[[X]], %[[ALPHA]])
// CHECK: %[[R:.+]] = "glowgraph.select"(%[[NEG]], %[[SCALED]], %[[X]])
// CHECK: return %[[R]]
// KEEP-LABEL: func.func @leaky_relu
// KEEP: "glowgraph.leaky_relu"
// KEEP-NOT: "glowgraph.select"
func.func @leaky_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "glowgraph.leaky_relu"(%x) {alpha = 0.1 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @prelu
// CHECK-SAME: (%[[X:.+]]: tensor<4xi64>, %[[S:.+]]: tensor<4xi64>)
// CHECK: %[[ZERO:.+]] = "glowgraph.splat"() {value = 0 : i64} : () -> tensor<4xi64>
// CHECK: %[[NEG:.+]] = "glowgraph.cmp_lt"(%[[X]], %[[ZERO]])
// CHECK: %[[SCALED:.+]] = "glowgraph.mul"(%[[X]], %[[S]])
// CHECK: %[[R:.+]] = "glowgraph.select"(%[[NEG]], %[[SCALED]], %[[X]])
// CHECK: return %[[R]]
// KEEP-LABEL: func.func @prelu
// KEEP: "glowgraph.prelu"
// KEEP-NOT: "glowgraph.select"
func.func @prelu(%x: tensor<4xi64>, %s: tensor<4xi64>) -> tensor<4xi64> {
  %0 = "glowgraph.prelu"(%x, %s) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// CHECK-LABEL: func.func @elu
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[EXP:.+]] = "glowgraph.exp"(%[[X]])
// CHECK: %[[ONE:.+]] = "glowgraph.splat"() {value = 1.000000e+00 : f32}
// CHECK: %[[EM1:.+]] = "glowgraph.sub"(%[[EXP]], %[[ONE]])
// CHECK: %[[ALPHA:.+]] = "glowgraph.splat"() {value = 2.000000e+00 : f32}
// CHECK: %[[NEGPART:.+]] = "glowgraph.mul"(%[[EM1]], %[[ALPHA]])
// CHECK: %[[ZERO:.+]] = "glowgraph.splat"() {value = 0.000000e+00 : f32}
// CHECK: %[[NEG:.+]] = "glowgraph.cmp_lt"(%[[X]], %[[ZERO]])
// CHECK: %[[R:.+]] = "glowgraph.select"(%[[NEG]], %[[NEGPART]], %[[X]])
// CHECK: return %[[R]]
// KEEP-LABEL: func.func @elu
// KEEP: "glowgraph.elu"
// KEEP-NOT: "glowgraph.exp"
func.func @elu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "glowgraph.elu"(%x) {alpha = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @hard_sigmoid
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[ALPHA:.+]] = "glowgraph.splat"() {value = 2.500000e-01 : f32}
// CHECK: %[[AX:.+]] = "glowgraph.mul"(%[[X]], %[[ALPHA]])
// CHECK: %[[BETA:.+]] = "glowgraph.splat"() {value = 5.000000e-01 : f32}
// CHECK: %[[LIN:.+]] = "glowgraph.add"(%[[AX]], %[[BETA]])
// CHECK: %[[ONE:.+]] = "glowgraph.splat"() {value = 1.000000e+00 : f32}
// CHECK: %[[MIN:.+]] = "glowgraph.min"(%[[LIN]], %[[ONE]])
// CHECK: %[[ZERO:.+]] = "glowgraph.splat"() {value = 0.000000e+00 : f32}
// CHECK: %[[R:.+]] = "glowgraph.max"(%[[MIN]], %[[ZERO]])
// CHECK: return %[[R]]
// KEEP-LABEL: func.func @hard_sigmoid
// KEEP: "glowgraph.hard_sigmoid"
// KEEP-NOT: "glowgraph.max"
func.func @hard_sigmoid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "glowgraph.hard_sigmoid"(%x) {alpha = 0.25 : f32, beta = 0.5 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Softplus in the form that never overflows: max(x, 0) + log(1 + exp(-|x|)).
// CHECK-LABEL: func.func @softplus
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[ABS:.+]] = "glowgraph.abs"(%[[X]])
// CHECK: %[[NEG:.+]] = "glowgraph.neg"(%[[ABS]])
// CHECK: %[[EXP:.+]] = "glowgraph.exp"(%[[NEG]])
// CHECK: %[[ONE:.+]] = "glowgraph.splat"() {value = 1.000000e+00 : f32}
// CHECK: %[[SUM:.+]] = "glowgraph.add"(%[[EXP]], %[[ONE]])
// CHECK: %[[LOG:.+]] = "glowgraph.log"(%[[SUM]])
// CHECK: %[[ZERO:.+]] = "glowgraph.splat"() {value = 0.000000e+00 : f32}
// CHECK: %[[POS:.+]] = "glowgraph.max"(%[[X]], %[[ZERO]])
// CHECK: %[[R:.+]] = "glowgraph.add"(%[[POS]], %[[LOG]])
// CHECK: return %[[R]]
// KEEP-LABEL: func.func @softplus
// KEEP: "glowgraph.softplus"
// KEEP-NOT: "glowgraph.log"
func.func @softplus(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "glowgraph.softplus"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @gelu_erf
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[RSQRT2:.+]] = "glowgraph.splat"() {value = 0.707106769 : f32}
// CHECK: %[[SCALED:.+]] = "glowgraph.mul"(%[[X]], %[[RSQRT2]])
// CHECK: %[[ERF:.+]] = "glowgraph.erf"(%[[SCALED]])
// CHECK: %[[HALF:.+]] = "glowgraph.splat"() {value = 5.000000e-01 : f32}
// CHECK: %[[HALFX:.+]] = "glowgraph.mul"(%[[X]], %[[HALF]])
// CHECK: %[[ONE:.+]] = "glowgraph.splat"() {value = 1.000000e+00 : f32}
// CHECK: %[[PHI:.+]] = "glowgraph.add"(%[[ERF]], %[[ONE]])
// CHECK: %[[R:.+]] = "glowgraph.mul"(%[[HALFX]], %[[PHI]])
// CHECK: return %[[R]]
// KEEP-LABEL: func.func @gelu_erf
// KEEP: "glowgraph.gelu"
// KEEP-NOT: "glowgraph.erf"
func.func @gelu_erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "glowgraph.gelu"(%x) {approximate = "none"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[SQ:.+]] = "glowgraph.mul"(%[[X]], %[[X]])
// CHECK: %[[CUBE:.+]] = "glowgraph.mul"(%[[SQ]], %[[X]])
// CHECK: %[[C:.+]] = "glowgraph.splat"() {value = 4.471500e-02 : f32}
// CHECK: %[[CC:.+]] = "glowgraph.mul"(%[[CUBE]], %[[C]])
// CHECK: %[[INNER:.+]] = "glowgraph.add"(%[[X]], %[[CC]])
// CHECK: %[[K:.+]] = "glowgraph.splat"() {value = 0.797884583 : f32}
// CHECK: %[[ARG:.+]] = "glowgraph.mul"(%[[INNER]], %[[K]])
// CHECK: %[[TANH:.+]] = "glowgraph.tanh"(%[[ARG]])
// CHECK: %[[HALFX:.+]] = "glowgraph.mul"(%[[X]], %{{.+}})
// CHECK: %[[PHI:.+]] = "glowgraph.add"(%[[TANH]], %{{.+}})
// CHECK: %[[R:.+]] = "glowgraph.mul"(%[[HALFX]], %[[PHI]])
// CHECK: return %[[R]]
// KEEP-LABEL: func.func @gelu_tanh
// KEEP: "glowgraph.gelu"
// KEEP-NOT: "glowgraph.tanh"
func.func @gelu_tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "glowgraph.gelu"(%x) {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Negative: the primitives of this family are left as they are.
// CHECK-LABEL: func.func @primitives
// KEEP-LABEL: func.func @primitives
// CHECK: "glowgraph.exp"
// CHECK: "glowgraph.cmp_lt"
// CHECK: "glowgraph.select"
// CHECK: "glowgraph.cast"
func.func @primitives(%x: tensor<4xf32>) -> tensor<4xi64> {
  %0 = "glowgraph.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "glowgraph.cmp_lt"(%x, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = "glowgraph.select"(%1, %x, %0) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = "glowgraph.cast"(%2) {to = i64} : (tensor<4xf32>) -> tensor<4xi64>
  return %3 : tensor<4xi64>
}
