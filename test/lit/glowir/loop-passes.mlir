// RUN: glow-opt %s --split-input-file --glowir-sink-allocs | FileCheck %s --check-prefix=SINK
// RUN: glow-opt %s --split-input-file --glowir-hoist-deallocs | FileCheck %s --check-prefix=FREE
// RUN: glow-opt %s --split-input-file --glowir-dse | FileCheck %s --check-prefix=DSE
// RUN: glow-opt %s --split-input-file --glowir-plan-memory | FileCheck %s --check-prefix=PLAN

// The IR passes see a loop (or an if, last case) as one instruction that reads and writes every buffer its body touches: a buffer first
// used in the body is allocated right before the loop (never inside it) and freed right after it; what the body
// reads stays written before it; buffers of the body live across the whole loop, so none shares bytes with another,
// while one allocated after the loop reuses their memory.

// SINK-LABEL: func.func @scan
// SINK:       "glowir.splat"(%{{.+}}) {value = 0.000000e+00 : f32}
// SINK:       %[[X:.+]] = "glowir.alloc_activation"() {name = "x"}
// SINK:       "glowir.loop"
// SINK-NEXT:    "glowir.step_slice"(%[[X]]

// FREE-LABEL: func.func @scan
// FREE:       gpu.yield
// FREE-NEXT:  }) {has_condition = 0 : i64, max_trip = 5 : i64}
// FREE-NEXT:  "glowir.dealloc_activation"
// FREE-NEXT:  "glowir.dealloc_activation"
// FREE-NEXT:  "glowir.dealloc_activation"
// FREE-NEXT:  "glowir.splat"(%{{.+}}) {value = 7.000000e+00 : f32}
// FREE-NEXT:  "glowir.dealloc_activation"

// DSE-LABEL: func.func @scan
// DSE:       "glowir.splat"(%{{.+}}) {value = 0.000000e+00 : f32}
// DSE-NEXT:  "glowir.loop"
// DSE-NOT:   "glowir.splat"(%{{.+}}) {value = 7.000000e+00 : f32}

// Four buffers live across the loop take four 64-byte slots (the last one byte); the one allocated after it reuses
// one of them.
// PLAN-LABEL: func.func @scan
// PLAN-SAME:  glowir.activations_size = 193 : i64
func.func @scan() attributes {glowir.inputs = ["xs"], glowir.outputs = ["ys", "z"]} {
  %xs = "glowir.weight_var"() {mutability = "mutable", name = "xs"} : () -> memref<5x2xf32>
  %ys = "glowir.weight_var"() {mutability = "mutable", name = "ys"} : () -> memref<5x2xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<2xf32>
  %i = "glowir.alloc_activation"() {name = "i"} : () -> memref<i64>
  %c = "glowir.alloc_activation"() {name = "c"} : () -> memref<i1>
  %x = "glowir.alloc_activation"() {name = "x"} : () -> memref<2xf32>
  %h = "glowir.alloc_activation"() {name = "h"} : () -> memref<2xf32>
  "glowir.splat"(%h) {value = 0.0 : f32} : (memref<2xf32>) -> ()
  "glowir.loop"(%i, %c) ({
    "glowir.step_slice"(%x, %xs, %i) : (memref<2xf32>, memref<5x2xf32>, memref<i64>) -> ()
    "glowir.element_add"(%h, %h, %x) : (memref<2xf32>, memref<2xf32>, memref<2xf32>) -> ()
    "glowir.step_insert"(%ys, %h, %i) : (memref<5x2xf32>, memref<2xf32>, memref<i64>) -> ()
    gpu.yield
  }) {max_trip = 5 : i64, has_condition = 0 : i64} : (memref<i64>, memref<i1>) -> ()
  "glowir.splat"(%x) {value = 7.0 : f32} : (memref<2xf32>) -> ()
  "glowir.dealloc_activation"(%i) : (memref<i64>) -> ()
  "glowir.dealloc_activation"(%c) : (memref<i1>) -> ()
  "glowir.dealloc_activation"(%x) : (memref<2xf32>) -> ()
  "glowir.dealloc_activation"(%h) : (memref<2xf32>) -> ()
  %after = "glowir.alloc_activation"() {name = "after"} : () -> memref<2xf32>
  %v = "glowir.tensor_view"(%xs) : (memref<5x2xf32>) -> memref<2xf32>
  "glowir.relu"(%after, %v) : (memref<2xf32>, memref<2xf32>) -> ()
  "glowir.copy"(%z, %after) : (memref<2xf32>, memref<2xf32>) -> ()
  "glowir.dealloc_activation"(%after) : (memref<2xf32>) -> ()
  return
}

// -----

// Negative: a loop whose buffers nobody reads after it is a dead store like any other instruction.
// DSE-LABEL: func.func @dead_loop
// DSE-NOT:   "glowir.loop"
// DSE:       return
func.func @dead_loop() attributes {glowir.inputs = ["xs"], glowir.outputs = []} {
  %xs = "glowir.weight_var"() {mutability = "mutable", name = "xs"} : () -> memref<5x2xf32>
  %i = "glowir.alloc_activation"() {name = "i"} : () -> memref<i64>
  %c = "glowir.alloc_activation"() {name = "c"} : () -> memref<i1>
  %x = "glowir.alloc_activation"() {name = "x"} : () -> memref<2xf32>
  "glowir.loop"(%i, %c) ({
    "glowir.step_slice"(%x, %xs, %i) : (memref<2xf32>, memref<5x2xf32>, memref<i64>) -> ()
    gpu.yield
  }) {max_trip = 5 : i64, has_condition = 0 : i64} : (memref<i64>, memref<i1>) -> ()
  "glowir.dealloc_activation"(%i) : (memref<i64>) -> ()
  "glowir.dealloc_activation"(%c) : (memref<i1>) -> ()
  "glowir.dealloc_activation"(%x) : (memref<2xf32>) -> ()
  return
}

// -----

// An if is one instruction too: a value only one branch reads is still written before it; a store nobody reads is
// dead; a buffer one branch writes keeps the value it had when the other branch runs, so a store before the if
// into it is not dead either.
// DSE-LABEL: func.func @if_reads
// DSE:       "glowir.splat"(%{{.+}}) {value = 1.000000e+00 : f32}
// DSE-NOT:   "glowir.splat"(%{{.+}}) {value = 2.000000e+00 : f32}
// DSE:       "glowir.splat"(%{{.+}}) {value = 3.000000e+00 : f32}
// DSE-NEXT:  "glowir.if"
func.func @if_reads() attributes {glowir.inputs = ["c", "x"], glowir.outputs = ["y"]} {
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<i1>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2xf32>
  %t = "glowir.alloc_activation"() {name = "t"} : () -> memref<2xf32>
  "glowir.splat"(%t) {value = 1.0 : f32} : (memref<2xf32>) -> ()
  %u = "glowir.alloc_activation"() {name = "u"} : () -> memref<2xf32>
  "glowir.splat"(%u) {value = 2.0 : f32} : (memref<2xf32>) -> ()
  "glowir.splat"(%y) {value = 3.0 : f32} : (memref<2xf32>) -> ()
  "glowir.if"(%c) ({
    "glowir.element_add"(%y, %x, %t) : (memref<2xf32>, memref<2xf32>, memref<2xf32>) -> ()
    gpu.yield
  }, {
    gpu.yield
  }) : (memref<i1>) -> ()
  "glowir.dealloc_activation"(%t) : (memref<2xf32>) -> ()
  "glowir.dealloc_activation"(%u) : (memref<2xf32>) -> ()
  return
}
