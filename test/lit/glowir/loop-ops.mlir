// RUN: glow-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// A loop's body reads and writes the program's buffers directly; the counter holds the iteration number.
// CHECK-LABEL: func.func @loop
// CHECK:       "glowir.loop"(%{{.+}}, %{{.+}}) ({
// CHECK-NEXT:    "glowir.step_slice"
// CHECK-NEXT:    "glowir.element_add"
// CHECK-NEXT:    "glowir.step_insert"
// CHECK-NEXT:    gpu.yield
// CHECK-NEXT:  }) {has_condition = 0 : i64, max_trip = 5 : i64}
func.func @loop() attributes {glowir.inputs = ["xs"], glowir.outputs = ["ys"]} {
  %xs = "glowir.weight_var"() {mutability = "mutable", name = "xs"} : () -> memref<5x2xf32>
  %ys = "glowir.weight_var"() {mutability = "mutable", name = "ys"} : () -> memref<5x2xf32>
  %i = "glowir.alloc_activation"() : () -> memref<i64>
  %c = "glowir.alloc_activation"() : () -> memref<i1>
  %x = "glowir.alloc_activation"() : () -> memref<2xf32>
  %h = "glowir.alloc_activation"() : () -> memref<2xf32>
  "glowir.splat"(%h) {value = 0.0 : f32} : (memref<2xf32>) -> ()
  "glowir.loop"(%i, %c) ({
    "glowir.step_slice"(%x, %xs, %i) : (memref<2xf32>, memref<5x2xf32>, memref<i64>) -> ()
    "glowir.element_add"(%h, %h, %x) : (memref<2xf32>, memref<2xf32>, memref<2xf32>) -> ()
    "glowir.step_insert"(%ys, %h, %i) : (memref<5x2xf32>, memref<2xf32>, memref<i64>) -> ()
    gpu.yield
  }) {max_trip = 5 : i64, has_condition = 0 : i64} : (memref<i64>, memref<i1>) -> ()
  return
}

// -----

func.func @float_counter(%i: memref<f32>, %c: memref<i1>) {
  // expected-error@+1 {{'glowir.loop' op the counter must be a memref<i64>, got memref<f32>}}
  "glowir.loop"(%i, %c) ({
    gpu.yield
  }) {max_trip = 5 : i64, has_condition = 0 : i64} : (memref<f32>, memref<i1>) -> ()
  return
}

// -----

func.func @negative_trip(%i: memref<i64>, %c: memref<i1>) {
  // expected-error@+1 {{'glowir.loop' op max_trip must not be negative, got -1}}
  "glowir.loop"(%i, %c) ({
    gpu.yield
  }) {max_trip = -1 : i64, has_condition = 0 : i64} : (memref<i64>, memref<i1>) -> ()
  return
}

// -----

func.func @body_yields(%i: memref<i64>, %c: memref<i1>) {
  // expected-error@+1 {{'glowir.loop' op the body takes no arguments and yields nothing: it reads and writes buffers}}
  "glowir.loop"(%i, %c) ({
    gpu.yield %c : memref<i1>
  }) {max_trip = 5 : i64, has_condition = 1 : i64} : (memref<i64>, memref<i1>) -> ()
  return
}

// -----

func.func @body_without_terminator(%i: memref<i64>, %c: memref<i1>, %x: memref<2xf32>) {
  "glowir.loop"(%i, %c) ({
    // expected-error@+1 {{block with no terminator}}
    "glowir.relu"(%x, %x) : (memref<2xf32>, memref<2xf32>) -> ()
  }) {max_trip = 5 : i64, has_condition = 1 : i64} : (memref<i64>, memref<i1>) -> ()
  return
}

// -----

func.func @step_insert_of_another_shape(%ys: memref<5x2xf32>, %x: memref<3xf32>, %i: memref<i64>) {
  // expected-error@+1 {{'glowir.step_insert' op the source memref<3xf32> must be one step of the dest memref<5x2xf32>}}
  "glowir.step_insert"(%ys, %x, %i) : (memref<5x2xf32>, memref<3xf32>, memref<i64>) -> ()
  return
}

// -----

func.func @step_slice_of_another_shape(%xs: memref<5x2xf32>, %x: memref<3xf32>, %i: memref<i64>) {
  // expected-error@+1 {{'glowir.step_slice' op @out buffer memref<3xf32> does not match the type memref<2xf32> computed from the @in operands}}
  "glowir.step_slice"(%x, %xs, %i) : (memref<3xf32>, memref<5x2xf32>, memref<i64>) -> ()
  return
}
