// RUN: glow-opt %s --split-input-file --convert-glowgraph-to-glowir | FileCheck %s

// scf.if on an i1 tensor becomes glowir.if on that tensor's buffer. Each result has one buffer (here the output),
// which the node computing a branch's yielded value writes directly; a branch yielding a value it does not compute
// (an argument) copies it there. A branch's own buffers are allocated before the if and freed after it.
// CHECK-LABEL: func.func @select_work()
// CHECK:       %[[C:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<i1>
// CHECK-NEXT:  %[[X:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2xf32>
// CHECK-NEXT:  %[[Y:.+]] = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2xf32>
// CHECK-NEXT:  %[[T:.+]] = "glowir.alloc_activation"() {name = "t"} : () -> memref<2xf32>
// CHECK-NEXT:  "glowir.if"(%[[C]]) ({
// CHECK-NEXT:    "glowir.relu"(%[[T]], %[[X]])
// CHECK-NEXT:    "glowir.tanh"(%[[Y]], %[[T]])
// CHECK-NEXT:    gpu.yield
// CHECK-NEXT:  }, {
// CHECK-NEXT:    "glowir.copy"(%[[Y]], %[[X]])
// CHECK-NEXT:    gpu.yield
// CHECK-NEXT:  })
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[T]])
func.func @select_work(%c: tensor<i1> {glowgraph.name = "c"}, %x: tensor<2xf32> {glowgraph.name = "x"}) -> (tensor<2xf32> {glowgraph.name = "y"}) {
  %flag = tensor.extract %c[] : tensor<i1>
  %r = scf.if %flag -> (tensor<2xf32>) {
    %t = "glowgraph.relu"(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("t")
    %u = "glowgraph.tanh"(%t) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %u : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
