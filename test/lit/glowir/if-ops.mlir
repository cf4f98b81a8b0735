// RUN: glow-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// An if's branches read and write the program's buffers directly.
// CHECK-LABEL: func.func @branches
// CHECK:       "glowir.if"(%{{.+}}) ({
// CHECK-NEXT:    "glowir.relu"
// CHECK-NEXT:    gpu.yield
// CHECK-NEXT:  }, {
// CHECK-NEXT:    "glowir.neg"
// CHECK-NEXT:    gpu.yield
// CHECK-NEXT:  })
func.func @branches() attributes {glowir.inputs = ["c", "x"], glowir.outputs = ["y"]} {
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<i1>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2xf32>
  "glowir.if"(%c) ({
    "glowir.relu"(%y, %x) : (memref<2xf32>, memref<2xf32>) -> ()
    gpu.yield
  }, {
    "glowir.neg"(%y, %x) : (memref<2xf32>, memref<2xf32>) -> ()
    gpu.yield
  }) : (memref<i1>) -> ()
  return
}

// -----

func.func @float_condition(%c: memref<f32>) {
  // expected-error@+1 {{'glowir.if' op the condition must be a memref<i1>, got memref<f32>}}
  "glowir.if"(%c) ({
    gpu.yield
  }, {
    gpu.yield
  }) : (memref<f32>) -> ()
  return
}

// -----

func.func @branch_yields(%c: memref<i1>) {
  // expected-error@+1 {{'glowir.if' op a branch takes no arguments and yields nothing: it reads and writes buffers}}
  "glowir.if"(%c) ({
    gpu.yield %c : memref<i1>
  }, {
    gpu.yield
  }) : (memref<i1>) -> ()
  return
}
