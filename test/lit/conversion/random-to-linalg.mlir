// RUN: glow-opt %s --split-input-file --convert-glowir-to-linalg | FileCheck %s

// random_uniform: the draw counter of its seed (a mutable private global, from 0), read and bumped on each draw,
// keyed with the seed into the draw of each element: the top 24 bits of splitmix64 of its flat index, times 2^-24.
// Two ops of one seed share its counter: they draw in turn.

// CHECK:       memref.global "private" @glow_random_runs_5 : memref<1xi64> = dense<0>
// CHECK-NOT:   memref.global
// CHECK-LABEL: func.func @two_draws
// CHECK:       %[[G:.+]] = memref.get_global @glow_random_runs_5 : memref<1xi64>
// CHECK:       %[[COUNT:.+]] = memref.load %[[G]]
// CHECK:       %[[NEXT:.+]] = arith.addi %[[COUNT]], %{{.+}} : i64
// CHECK:       memref.store %[[NEXT]], %[[G]]
// CHECK:       arith.constant 5 : i64
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} outs(
// CHECK:         linalg.index 0
// CHECK:         linalg.index 1
// CHECK:         arith.shrui %{{.+}}, %{{.+}} : i64
// CHECK:         arith.uitofp %{{.+}} : i64 to f32
// CHECK:         arith.constant 5.96046448E-8 : f32
// CHECK:       memref.get_global @glow_random_runs_5 : memref<1xi64>
// CHECK:       linalg.generic
func.func @two_draws() attributes {glowir.inputs = [], glowir.outputs = ["y", "z"]} {
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<2x3xf32>
  "glowir.random_uniform"(%y) {seed = 5 : i64} : (memref<2x3xf32>) -> ()
  "glowir.random_uniform"(%z) {seed = 5 : i64} : (memref<2x3xf32>) -> ()
  return
}
