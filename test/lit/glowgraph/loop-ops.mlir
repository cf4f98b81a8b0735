// RUN: glow-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// A loop in a graph is scf.for on tensors: the iteration number of its index, a step of a sequence and a scan
// output filled at that step.
// CHECK-LABEL: func.func @scan_loop
// CHECK:       scf.for %[[IV:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[H:.+]] = %{{.+}}, %[[S:.+]] = %{{.+}})
// CHECK:         %[[I:.+]] = "glowgraph.iteration"(%[[IV]]) : (index) -> tensor<i64>
// CHECK:         %[[X:.+]] = "glowgraph.step_slice"(%{{.+}}, %[[I]]) : (tensor<5x2xf32>, tensor<i64>) -> tensor<2xf32>
// CHECK:         "glowgraph.step_insert"(%[[S]], %{{.+}}, %[[I]]) : (tensor<5x2xf32>, tensor<2xf32>, tensor<i64>) -> tensor<5x2xf32>
func.func @scan_loop(%xs: tensor<5x2xf32>, %h0: tensor<2xf32>, %y0: tensor<5x2xf32>) -> (tensor<2xf32>, tensor<5x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %r:2 = scf.for %iv = %c0 to %c5 step %c1 iter_args(%h = %h0, %ys = %y0) -> (tensor<2xf32>, tensor<5x2xf32>) {
    %i = "glowgraph.iteration"(%iv) : (index) -> tensor<i64>
    %x = "glowgraph.step_slice"(%xs, %i) : (tensor<5x2xf32>, tensor<i64>) -> tensor<2xf32>
    %n = "glowgraph.add"(%h, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %s = "glowgraph.step_insert"(%ys, %n, %i) : (tensor<5x2xf32>, tensor<2xf32>, tensor<i64>) -> tensor<5x2xf32>
    scf.yield %n, %s : tensor<2xf32>, tensor<5x2xf32>
  }
  return %r#0, %r#1 : tensor<2xf32>, tensor<5x2xf32>
}

// -----

func.func @iteration_of_a_tensor(%a: tensor<i64>) -> tensor<i64> {
  // expected-error@+1 {{expected 'index' but got 'tensor<i64>'}}
  %0 = "glowgraph.iteration"(%a) : (tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

func.func @step_slice_of_a_scalar(%a: tensor<f32>, %i: tensor<i64>) -> tensor<f32> {
  // expected-error@+1 {{'glowgraph.step_slice' op the input must have at least one dimension}}
  %0 = "glowgraph.step_slice"(%a, %i) : (tensor<f32>, tensor<i64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @step_slice_with_a_float_index(%a: tensor<3x2xf32>, %i: tensor<f32>) -> tensor<2xf32> {
  // expected-error@+1 {{'glowgraph.step_slice' op the index must be a 0-d i64, got tensor<f32>}}
  %0 = "glowgraph.step_slice"(%a, %i) : (tensor<3x2xf32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @step_insert_of_another_shape(%a: tensor<3x2xf32>, %x: tensor<3xf32>, %i: tensor<i64>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'glowgraph.step_insert' op the source tensor<3xf32> must be one step of the dest tensor<3x2xf32>}}
  %0 = "glowgraph.step_insert"(%a, %x, %i) : (tensor<3x2xf32>, tensor<3xf32>, tensor<i64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
