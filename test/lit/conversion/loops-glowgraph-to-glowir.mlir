// RUN: glow-opt %s --split-input-file --convert-glowgraph-to-glowir | FileCheck %s

// scf.for becomes glowir.loop: each loop-carried value a state buffer (here the outputs themselves) filled before
// the loop; the iteration number is the loop's counter; a scan output's step_insert writes its own state in place
// (and as the loop writes every step of it before anything reads it, its zeros are never written); the body's other
// values get buffers allocated before the loop and freed after it, and each iteration ends by copying the yielded
// value into its state.
// CHECK-LABEL: func.func @scan()
// CHECK:       %[[XS:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "xs"} : () -> memref<5x2xf32>
// CHECK:       %[[H0:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "h0"} : () -> memref<2xf32>
// CHECK:       %[[H:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "h"} : () -> memref<2xf32>
// CHECK:       %[[YS:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "ys"} : () -> memref<5x2xf32>
// CHECK:       %[[I:.+]] = "glowir.alloc_activation"() {name = "loop.counter"} : () -> memref<i64>
// CHECK-NEXT:  %[[C:.+]] = "glowir.alloc_activation"() {name = "loop.condition"} : () -> memref<i1>
// CHECK-NEXT:  "glowir.copy"(%[[H]], %[[H0]])
// CHECK-NEXT:  %[[X:.+]] = "glowir.alloc_activation"() {name = "x"} : () -> memref<2xf32>
// CHECK-NEXT:  %[[N:.+]] = "glowir.alloc_activation"() {name = "n"} : () -> memref<2xf32>
// CHECK-NEXT:  "glowir.loop"(%[[I]], %[[C]]) ({
// CHECK-NEXT:    "glowir.step_slice"(%[[X]], %[[XS]], %[[I]])
// CHECK-NEXT:    "glowir.element_add"(%[[N]], %[[H]], %[[X]])
// CHECK-NEXT:    "glowir.step_insert"(%[[YS]], %[[N]], %[[I]])
// CHECK-NEXT:    "glowir.copy"(%[[H]], %[[N]])
// CHECK-NEXT:    gpu.yield
// CHECK-NEXT:  }) {has_condition = 0 : i64, max_trip = 5 : i64}
// CHECK-DAG:   "glowir.dealloc_activation"(%[[I]])
// CHECK-DAG:   "glowir.dealloc_activation"(%[[C]])
// CHECK-DAG:   "glowir.dealloc_activation"(%[[X]])
// CHECK-DAG:   "glowir.dealloc_activation"(%[[N]])
func.func @scan(%xs: tensor<5x2xf32> {glowgraph.name = "xs"}, %h0: tensor<2xf32> {glowgraph.name = "h0"}) -> (tensor<2xf32> {glowgraph.name = "h"}, tensor<5x2xf32> {glowgraph.name = "ys"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %y0 = "glowgraph.constant"() {value = dense<0.0> : tensor<5x2xf32>} : () -> tensor<5x2xf32>
  %r:2 = scf.for %iv = %c0 to %c5 step %c1 iter_args(%h = %h0, %ys = %y0) -> (tensor<2xf32>, tensor<5x2xf32>) {
    %i = "glowgraph.iteration"(%iv) : (index) -> tensor<i64>
    %x = "glowgraph.step_slice"(%xs, %i) : (tensor<5x2xf32>, tensor<i64>) -> tensor<2xf32> loc("x")
    %n = "glowgraph.add"(%h, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> loc("n")
    %s = "glowgraph.step_insert"(%ys, %n, %i) : (tensor<5x2xf32>, tensor<2xf32>, tensor<i64>) -> tensor<5x2xf32>
    scf.yield %n, %s : tensor<2xf32>, tensor<5x2xf32>
  } loc("loop")
  return %r#0, %r#1 : tensor<2xf32>, tensor<5x2xf32>
}

// -----

// Negative: a loop of 3 steps into a 5-step scan output leaves two of its steps as they were: its zeros are written.
// CHECK-LABEL: func.func @partial_scan()
// CHECK:       %[[YS:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "ys"} : () -> memref<5x2xf32>
// CHECK:       "glowir.splat"(%[[YS]]) {value = 0.000000e+00 : f32}
// CHECK:       "glowir.loop"
// CHECK-NEXT:    "glowir.step_insert"(%[[YS]], %{{.+}}, %{{.+}})
func.func @partial_scan(%h0: tensor<2xf32> {glowgraph.name = "h0"}) -> (tensor<5x2xf32> {glowgraph.name = "ys"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %y0 = "glowgraph.constant"() {value = dense<0.0> : tensor<5x2xf32>} : () -> tensor<5x2xf32>
  %r = scf.for %iv = %c0 to %c3 step %c1 iter_args(%ys = %y0) -> (tensor<5x2xf32>) {
    %i = "glowgraph.iteration"(%iv) : (index) -> tensor<i64>
    %s = "glowgraph.step_insert"(%ys, %h0, %i) : (tensor<5x2xf32>, tensor<2xf32>, tensor<i64>) -> tensor<5x2xf32>
    scf.yield %s : tensor<5x2xf32>
  } loc("loop")
  return %r : tensor<5x2xf32>
}

// -----

// The while form: the condition tensor is the loop's condition buffer, set before the loop and by the body at the
// end of each iteration; the states are the outputs. Two loop-carried values that swap go through temporaries:
// no copy may read a state another one already overwrote.
// CHECK-LABEL: func.func @while_swap()
// CHECK:       %[[A:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2xf32>
// CHECK-NEXT:  %[[B:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<2xf32>
// CHECK-NEXT:  %[[I:.+]] = "glowir.alloc_activation"() {name = "loop.counter"} : () -> memref<i64>
// CHECK-NEXT:  %[[C:.+]] = "glowir.alloc_activation"() {name = "loop.condition"} : () -> memref<i1>
// CHECK-NEXT:  "glowir.copy"(%[[A]], %{{.+}})
// CHECK-NEXT:  "glowir.copy"(%[[B]], %{{.+}})
// CHECK-NEXT:  "glowir.copy"(%[[C]], %{{.+}})
// CHECK:       "glowir.loop"(%[[I]], %[[C]]) ({
// CHECK-NEXT:    "glowir.reduce_sum"(%[[SUM:.+]], %[[A]])
// CHECK-NEXT:    "glowir.element_cmp_lt"(%[[LT:.+]], %[[SUM]], %{{.+}})
// CHECK-NEXT:    "glowir.copy"(%[[T1:.+]], %[[B]])
// CHECK-NEXT:    "glowir.copy"(%[[T2:.+]], %[[A]])
// CHECK-NEXT:    "glowir.copy"(%[[A]], %[[T1]])
// CHECK-NEXT:    "glowir.copy"(%[[B]], %[[T2]])
// CHECK-NEXT:    "glowir.copy"(%[[C]], %[[LT]])
// CHECK-NEXT:    gpu.yield
// CHECK-NEXT:  }) {has_condition = 1 : i64, max_trip = 8 : i64}
func.func @while_swap(%a0: tensor<2xf32> {glowgraph.name = "a0"}, %b0: tensor<2xf32> {glowgraph.name = "b0"}, %go: tensor<i1> {glowgraph.name = "go"}) -> (tensor<2xf32> {glowgraph.name = "a"}, tensor<2xf32> {glowgraph.name = "b"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %lim = "glowgraph.constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %r:4 = scf.while (%iv = %c0, %cond = %go, %a = %a0, %b = %b0) : (index, tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> (index, tensor<i1>, tensor<2xf32>, tensor<2xf32>) {
    %lt = arith.cmpi slt, %iv, %c8 : index
    %c = tensor.extract %cond[] : tensor<i1>
    %both = arith.andi %lt, %c : i1
    scf.condition(%both) %iv, %cond, %a, %b : index, tensor<i1>, tensor<2xf32>, tensor<2xf32>
  } do {
  ^bb0(%iv: index, %cond: tensor<i1>, %a: tensor<2xf32>, %b: tensor<2xf32>):
    %s = "glowgraph.reduce_sum"(%a) {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
    %k = "glowgraph.cmp_lt"(%s, %lim) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %next = arith.addi %iv, %c1 : index
    scf.yield %next, %k, %b, %a : index, tensor<i1>, tensor<2xf32>, tensor<2xf32>
  } loc("loop")
  return %r#2, %r#3 : tensor<2xf32>, tensor<2xf32>
}
