// RUN: glow-opt %s --split-input-file --convert-glowgraph-to-glowir | FileCheck %s

// The node producing the output writes straight into the output weight var; the
// intermediate gets an activation allocated right before its producer and freed after its last reader.
// CHECK-LABEL: func.func @fc_sigmoid()
// CHECK-SAME: attributes {glowir.inputs = ["input_1"], glowir.outputs = ["output_1"]}
// CHECK-NEXT: %[[W:.+]] = "glowir.weight_var"() {mutability = "const", name = "weights", value = dense<1.000000e+00> : tensor<10x5xf32>} : () -> memref<10x5xf32>
// CHECK-NEXT: %[[B:.+]] = "glowir.weight_var"() {mutability = "const", name = "bias", value = dense<5.000000e-01> : tensor<5xf32>} : () -> memref<5xf32>
// CHECK-NEXT: %[[IN:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "input_1"} : () -> memref<3x10xf32>
// CHECK-NEXT: %[[OUT:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output_1"} : () -> memref<3x5xf32>
// CHECK-NEXT: %[[FC:.+]] = "glowir.alloc_activation"() {name = "fc"} : () -> memref<3x5xf32>
// CHECK-NEXT: "glowir.fully_connected"(%[[FC]], %[[IN]], %[[W]], %[[B]])
// CHECK-NEXT: "glowir.sigmoid"(%[[OUT]], %[[FC]])
// CHECK-NEXT: "glowir.dealloc_activation"(%[[FC]])
// CHECK-NEXT: return
// CHECK-NOT: glowgraph
func.func @fc_sigmoid(%x: tensor<3x10xf32> {glowgraph.name = "input_1"}) -> (tensor<3x5xf32> {glowgraph.name = "output_1"}) {
  %w = "glowgraph.constant"() {value = dense<1.0> : tensor<10x5xf32>} : () -> tensor<10x5xf32> loc("weights")
  %b = "glowgraph.constant"() {value = dense<0.5> : tensor<5xf32>} : () -> tensor<5xf32> loc("bias")
  %0 = "glowgraph.fully_connected"(%x, %w, %b) : (tensor<3x10xf32>, tensor<10x5xf32>, tensor<5xf32>) -> tensor<3x5xf32> loc("fc")
  %1 = "glowgraph.sigmoid"(%0) : (tensor<3x5xf32>) -> tensor<3x5xf32> loc("sig")
  return %1 : tensor<3x5xf32>
}

// -----

// An output that is an argument: nothing computes it, so it is copied from the input var.
// CHECK-LABEL: func.func @output_is_input()
// CHECK-SAME: attributes {glowir.inputs = ["input_0"], glowir.outputs = ["output_0"]}
// CHECK-NEXT: %[[IN:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "input_0"} : () -> memref<4xf32>
// CHECK-NEXT: %[[OUT:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output_0"} : () -> memref<4xf32>
// CHECK-NEXT: "glowir.copy"(%[[OUT]], %[[IN]])
// CHECK-NEXT: return
func.func @output_is_input(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}

// -----

// Reshape is a view of its input's buffer (no copy), and the source lives until the view's last use.
// CHECK-LABEL: func.func @reshape_view()
// CHECK: %[[IN:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"}
// CHECK-NEXT: %[[OUT:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"}
// CHECK-NEXT: %[[R:.+]] = "glowir.alloc_activation"() {name = "r"} : () -> memref<2x6xf32>
// CHECK-NEXT: "glowir.relu"(%[[R]], %[[IN]])
// CHECK-NEXT: %[[V:.+]] = "glowir.tensor_view"(%[[R]]) : (memref<2x6xf32>) -> memref<3x4xf32>
// CHECK-NEXT: "glowir.tanh"(%[[OUT]], %[[V]])
// CHECK-NEXT: "glowir.dealloc_activation"(%[[R]])
// CHECK-NEXT: return
func.func @reshape_view(%a: tensor<2x6xf32> {glowgraph.name = "x"}) -> (tensor<3x4xf32> {glowgraph.name = "y"}) {
  %0 = "glowgraph.relu"(%a) : (tensor<2x6xf32>) -> tensor<2x6xf32> loc("r")
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 3, 4>} : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %2 = "glowgraph.tanh"(%1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %2 : tensor<3x4xf32>
}

// -----

// An output that is a view: copied out of the view, and the viewed activation is freed after the copy.
// CHECK-LABEL: func.func @reshape_output()
// CHECK: %[[OUT:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output_0"} : () -> memref<12xf32>
// CHECK-NEXT: %[[R:.+]] = "glowir.alloc_activation"() {name = "act_0"}
// CHECK-NEXT: "glowir.relu"(%[[R]],
// CHECK-NEXT: %[[V:.+]] = "glowir.tensor_view"(%[[R]]) : (memref<2x6xf32>) -> memref<12xf32>
// CHECK-NEXT: "glowir.copy"(%[[OUT]], %[[V]])
// CHECK-NEXT: "glowir.dealloc_activation"(%[[R]])
// CHECK-NEXT: return
func.func @reshape_output(%a: tensor<2x6xf32>) -> tensor<12xf32> {
  %0 = "glowgraph.relu"(%a) : (tensor<2x6xf32>) -> tensor<2x6xf32>
  %1 = "glowgraph.reshape"(%0) {shape = array<i64: 12>} : (tensor<2x6xf32>) -> tensor<12xf32>
  return %1 : tensor<12xf32>
}

// -----

// A value that is an output and also read later: written into the output var, which later users read.
// CHECK-LABEL: func.func @output_used_later()
// CHECK: %[[IN:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "input_0"}
// CHECK-NEXT: %[[O0:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output_0"}
// CHECK-NEXT: %[[O1:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output_1"}
// CHECK-NEXT: "glowir.relu"(%[[O0]], %[[IN]])
// CHECK-NEXT: "glowir.tanh"(%[[O1]], %[[O0]])
// CHECK-NEXT: return
// CHECK-NOT: alloc_activation
func.func @output_used_later(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "glowgraph.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "glowgraph.tanh"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// One value returned twice: the node writes the first output; the second is a copy of it.
// CHECK-LABEL: func.func @returned_twice()
// CHECK: %[[IN:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "input_0"}
// CHECK-NEXT: %[[O0:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output_0"}
// CHECK-NEXT: %[[O1:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output_1"}
// CHECK-NEXT: "glowir.relu"(%[[O0]], %[[IN]])
// CHECK-NEXT: "glowir.copy"(%[[O1]], %[[O0]])
// CHECK-NEXT: return
func.func @returned_twice(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "glowgraph.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %0 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A constant output: a const weight var copied into the output var.
// CHECK-LABEL: func.func @constant_output()
// CHECK-SAME: attributes {glowir.inputs = [], glowir.outputs = ["output_0"]}
// CHECK-NEXT: %[[C:.+]] = "glowir.weight_var"() {mutability = "const", name = "const_0", value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> memref<3xi64>
// CHECK-NEXT: %[[OUT:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output_0"} : () -> memref<3xi64>
// CHECK-NEXT: "glowir.copy"(%[[OUT]], %[[C]])
// CHECK-NEXT: return
func.func @constant_output() -> tensor<3xi64> {
  %c = "glowgraph.constant"() {value = dense<[1, 2, 3]> : tensor<3xi64>} : () -> tensor<3xi64>
  return %c : tensor<3xi64>
}

// -----

// Names are made unique with a suffix; the interface keeps its names. Constants are declared in
// first-use order, the instruction keeps the node's attributes, and a node no output needs gets no buffer.
// CHECK-LABEL: func.func @names()
// CHECK-SAME: attributes {glowir.inputs = ["t"], glowir.outputs = ["output_0"]}
// CHECK-NEXT: %[[C1:.+]] = "glowir.weight_var"() {mutability = "const", name = "c", value = dense<2.000000e+00>
// CHECK-NEXT: %[[C0:.+]] = "glowir.weight_var"() {mutability = "const", name = "c_1", value = dense<1.000000e+00>
// CHECK-NEXT: %[[IN:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "t"}
// CHECK-NEXT: %[[OUT:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "output_0"}
// CHECK-NEXT: %[[T1:.+]] = "glowir.alloc_activation"() {name = "t_1"} : () -> memref<3x2xf32>
// CHECK-NEXT: "glowir.transpose"(%[[T1]], %[[IN]]) {shuffle = array<i64: 1, 0>}
// CHECK-NEXT: %[[T2:.+]] = "glowir.alloc_activation"() {name = "t_2"} : () -> memref<3x2xf32>
// CHECK-NEXT: "glowir.element_mul"(%[[T2]], %[[T1]], %[[C1]])
// CHECK-NEXT: "glowir.dealloc_activation"(%[[T1]])
// CHECK-NEXT: "glowir.element_add"(%[[OUT]], %[[T2]], %[[C0]])
// CHECK-NEXT: "glowir.dealloc_activation"(%[[T2]])
// CHECK-NEXT: return
// CHECK-NOT: unused
func.func @names(%a: tensor<2x3xf32> {glowgraph.name = "t"}) -> tensor<3x2xf32> {
  %c0 = "glowgraph.constant"() {value = dense<1.0> : tensor<3x2xf32>} : () -> tensor<3x2xf32> loc("c")
  %c1 = "glowgraph.constant"() {value = dense<2.0> : tensor<3x2xf32>} : () -> tensor<3x2xf32> loc("c")
  %0 = "glowgraph.transpose"(%a) {shuffle = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("t")
  %1 = "glowgraph.mul"(%0, %c1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32> loc("t")
  %2 = "glowgraph.add"(%1, %c0) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32> loc("t")
  %3 = "glowgraph.relu"(%1) : (tensor<3x2xf32>) -> tensor<3x2xf32> loc("unused")
  return %2 : tensor<3x2xf32>
}
