// RUN: glow-opt %s -p 'builtin.module(glowir-plan-memory,glowir-partition{partitions=2})' | FileCheck %s
// RUN: glow-opt %s -p 'builtin.module(glowir-plan-memory,glowir-partition{memory-budget=64})' | FileCheck %s --check-prefix=BUDGET
// RUN: glow-opt %s -p 'builtin.module(glowir-plan-memory,glowir-partition{partitions=3})' | FileCheck %s --check-prefix=THREE

// Costs: matmul 2 * 2 * 4 * 4 = 64 FLOPs, relu 8, relu 8, matmul 64. Two partitions balanced by FLOPs: the largest
// holds 72 (matmul, relu | relu, matmul). Every partition keeps the weight vars, the planned offsets and the region
// sizes; it declares the activations it touches (b crosses the boundary) and frees those whose last use it holds:
// a in the first, b and c in the second. Activation bytes: a and b (32 each) in the first, b and c in the second.
// CHECK-LABEL: func.func @net_p0
// CHECK-SAME:  glowir.activations_size = [[ACT:[0-9]+]] : i64
// CHECK-SAME:  glowir.partition = 0 : i64, glowir.partition_activation_bytes = 64 : i64, glowir.partition_flops = 72 : i64
// CHECK:       "glowir.weight_var"() {mutability = "const", name = "w", offset = 0 : i64
// CHECK:       "glowir.weight_var"() {mutability = "mutable", name = "x", offset = 0 : i64}
// CHECK:       "glowir.weight_var"() {mutability = "mutable", name = "y", offset = 64 : i64}
// CHECK-NEXT:  %[[A:.+]] = "glowir.alloc_activation"() {name = "a", offset = [[OA:[0-9]+]] : i64}
// CHECK-NEXT:  "glowir.matmul"(%[[A]]
// CHECK-NEXT:  %[[B:.+]] = "glowir.alloc_activation"() {name = "b", offset = [[OB:[0-9]+]] : i64}
// CHECK-NEXT:  "glowir.relu"(%[[B]], %[[A]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[A]])
// CHECK-NEXT:  return
// CHECK-LABEL: func.func @net_p1
// CHECK-SAME:  glowir.activations_size = [[ACT]] : i64
// CHECK-SAME:  glowir.partition = 1 : i64, glowir.partition_activation_bytes = 64 : i64, glowir.partition_flops = 72 : i64
// CHECK:       "glowir.weight_var"() {mutability = "mutable", name = "y", offset = 64 : i64}
// CHECK-NEXT:  %[[B1:.+]] = "glowir.alloc_activation"() {name = "b", offset = [[OB]] : i64}
// CHECK-NEXT:  %[[C:.+]] = "glowir.alloc_activation"() {name = "c", offset = [[OA]] : i64}
// CHECK-NEXT:  "glowir.relu"(%[[C]], %[[B1]])
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[B1]])
// CHECK-NEXT:  "glowir.matmul"(%{{.+}}, %[[C]]
// CHECK-NEXT:  "glowir.dealloc_activation"(%[[C]])
// CHECK-NEXT:  return
// CHECK-NOT:   func.func

// A budget of 64 bytes: two activations live at each relu; a, b and c together (96) would pass it, so the cut
// falls between the relus.
// BUDGET-LABEL: func.func @net_p0
// BUDGET-SAME:  glowir.partition_activation_bytes = 64 : i64, glowir.partition_flops = 72 : i64
// BUDGET-LABEL: func.func @net_p1
// BUDGET-SAME:  glowir.partition_activation_bytes = 64 : i64, glowir.partition_flops = 72 : i64
// BUDGET-NOT:   func.func

// Three partitions: no partition above 64 FLOPs, the relus together.
// THREE-LABEL: func.func @net_p0
// THREE-SAME:  glowir.partition_flops = 64 : i64
// THREE-LABEL: func.func @net_p1
// THREE-SAME:  glowir.partition_flops = 16 : i64
// THREE-LABEL: func.func @net_p2
// THREE-SAME:  glowir.partition_flops = 64 : i64
func.func @net() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %w = "glowir.weight_var"() {mutability = "const", name = "w", value = dense<1.0> : tensor<4x4xf32>} : () -> memref<4x4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x4xf32>
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<2x4xf32>
  "glowir.matmul"(%a, %x, %w) : (memref<2x4xf32>, memref<2x4xf32>, memref<4x4xf32>) -> ()
  %b = "glowir.alloc_activation"() {name = "b"} : () -> memref<2x4xf32>
  "glowir.relu"(%b, %a) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<2x4xf32>) -> ()
  %c = "glowir.alloc_activation"() {name = "c"} : () -> memref<2x4xf32>
  "glowir.relu"(%c, %b) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<2x4xf32>) -> ()
  "glowir.matmul"(%y, %c, %w) : (memref<2x4xf32>, memref<2x4xf32>, memref<4x4xf32>) -> ()
  "glowir.dealloc_activation"(%c) : (memref<2x4xf32>) -> ()
  return
}
