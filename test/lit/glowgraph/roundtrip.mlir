// RUN: glow-opt %s --split-input-file | FileCheck %s
// RUN: glow-opt %s --split-input-file | glow-opt --split-input-file | FileCheck %s

// Every glowgraph node parses, verifies and prints back unchanged (generic form).
// CHECK-LABEL: func.func @nodes
// CHECK-SAME: (%[[X:.+]]: tensor<3x10xf32>)
// CHECK: %[[W:.+]] = "glowgraph.constant"() {value = dense<5.000000e-01> : tensor<10x5xf32>} : () -> tensor<10x5xf32>
// CHECK: %[[B:.+]] = "glowgraph.constant"() {value = dense<1.000000e+00> : tensor<5xf32>} : () -> tensor<5xf32>
// CHECK: %[[FC:.+]] = "glowgraph.fully_connected"(%[[X]], %[[W]], %[[B]]) : (tensor<3x10xf32>, tensor<10x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
// CHECK: %[[MM:.+]] = "glowgraph.matmul"(%[[X]], %[[W]])
// CHECK: %[[BA:.+]] = "glowgraph.batched_add"(%[[MM]], %[[B]])
// CHECK: %[[S:.+]] = "glowgraph.splat"() {value = 2.000000e+00 : f32} : () -> tensor<3x5xf32>
// CHECK: "glowgraph.add"(%[[FC]], %[[BA]])
// CHECK: "glowgraph.sub"
// CHECK: "glowgraph.mul"
// CHECK: "glowgraph.div"
// CHECK: "glowgraph.max"
// CHECK: "glowgraph.min"
// CHECK: "glowgraph.relu"
// CHECK: "glowgraph.sigmoid"
// CHECK: "glowgraph.tanh"
// CHECK: "glowgraph.reshape"(%{{.+}}) {shape = array<i64: 15>} : (tensor<3x5xf32>) -> tensor<15xf32>
// CHECK: "glowgraph.transpose"(%{{.+}}) {shuffle = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
// CHECK: "glowgraph.broadcast"(%[[B]]) {shape = array<i64: 3, 5>} : (tensor<5xf32>) -> tensor<3x5xf32>
func.func @nodes(%x: tensor<3x10xf32>) -> (tensor<15xf32>, tensor<5x3xf32>, tensor<3x5xf32>) {
  %w = "glowgraph.constant"() {value = dense<0.5> : tensor<10x5xf32>} : () -> tensor<10x5xf32>
  %b = "glowgraph.constant"() {value = dense<1.0> : tensor<5xf32>} : () -> tensor<5xf32>
  %fc = "glowgraph.fully_connected"(%x, %w, %b) : (tensor<3x10xf32>, tensor<10x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %mm = "glowgraph.matmul"(%x, %w) : (tensor<3x10xf32>, tensor<10x5xf32>) -> tensor<3x5xf32>
  %ba = "glowgraph.batched_add"(%mm, %b) : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %s = "glowgraph.splat"() {value = 2.0 : f32} : () -> tensor<3x5xf32>
  %0 = "glowgraph.add"(%fc, %ba) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %1 = "glowgraph.sub"(%0, %s) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %2 = "glowgraph.mul"(%1, %s) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %3 = "glowgraph.div"(%2, %s) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %4 = "glowgraph.max"(%3, %s) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %5 = "glowgraph.min"(%4, %s) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %6 = "glowgraph.relu"(%5) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %7 = "glowgraph.sigmoid"(%6) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %8 = "glowgraph.tanh"(%7) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %9 = "glowgraph.reshape"(%8) {shape = array<i64: 15>} : (tensor<3x5xf32>) -> tensor<15xf32>
  %10 = "glowgraph.transpose"(%8) {shuffle = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %11 = "glowgraph.broadcast"(%b) {shape = array<i64: 3, 5>} : (tensor<5xf32>) -> tensor<3x5xf32>
  return %9, %10, %11 : tensor<15xf32>, tensor<5x3xf32>, tensor<3x5xf32>
}

// -----

// Integer and boolean element types are allowed where the node is not float-only.
// CHECK-LABEL: func.func @ints
// CHECK: "glowgraph.add"(%{{.+}}, %{{.+}}) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
// CHECK: "glowgraph.reshape"(%{{.+}}) {shape = array<i64>} : (tensor<1xi64>) -> tensor<i64>
func.func @ints(%a: tensor<2xi64>, %b: tensor<1xi64>) -> (tensor<2xi64>, tensor<i64>) {
  %0 = "glowgraph.add"(%a, %a) : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = "glowgraph.reshape"(%b) {shape = array<i64>} : (tensor<1xi64>) -> tensor<i64>
  return %0, %1 : tensor<2xi64>, tensor<i64>
}
