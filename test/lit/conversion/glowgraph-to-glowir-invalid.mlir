// RUN: glow-opt %s --split-input-file --verify-diagnostics --convert-glowgraph-to-glowir

func.func @other_dialect(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'arith.addf' cannot be converted to glowir: a graph may hold only glowgraph nodes}}
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @dead_but_unconvertible(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'arith.mulf' cannot be converted to glowir}}
  %0 = arith.mulf %a, %a : tensor<4xf32>
  %1 = "glowgraph.relu"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// expected-error@+1 {{argument #0 of @dynamic has type tensor<?x4xf32>: glowir buffers need a statically shaped tensor}}
func.func @dynamic(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = "glowgraph.relu"(%a) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

func.func @call_in_graph(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'func.call' cannot be converted to glowir}}
  %0 = func.call @callee(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @callee(tensor<4xf32>) -> tensor<4xf32>

// -----

func.func @loop_from_one(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  // expected-error@+1 {{a loop must run from 0 by 1 to a constant}}
  %r = scf.for %iv = %c1 to %c5 step %c1 iter_args(%h = %a) -> (tensor<2xf32>) {
    %n = "glowgraph.relu"(%h) : (tensor<2xf32>) -> tensor<2xf32>
    scf.yield %n : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}

// -----

func.func @while_of_another_form(%a: tensor<2xf32>, %go: tensor<i1>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error@+1 {{a while loop's condition must be its trip count and its condition tensor}}
  %r:3 = scf.while (%iv = %c0, %cond = %go, %h = %a) : (index, tensor<i1>, tensor<2xf32>) -> (index, tensor<i1>, tensor<2xf32>) {
    %c = tensor.extract %cond[] : tensor<i1>
    scf.condition(%c) %iv, %cond, %h : index, tensor<i1>, tensor<2xf32>
  } do {
  ^bb0(%iv: index, %cond: tensor<i1>, %h: tensor<2xf32>):
    %n = "glowgraph.relu"(%h) : (tensor<2xf32>) -> tensor<2xf32>
    %next = arith.addi %iv, %c1 : index
    scf.yield %next, %cond, %n : index, tensor<i1>, tensor<2xf32>
  }
  return %r#2 : tensor<2xf32>
}

// -----

func.func @if_on_a_constant(%a: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant true
  // expected-error@+1 {{an if's condition must be a tensor<i1> read with tensor.extract}}
  %r = scf.if %c -> (tensor<2xf32>) {
    scf.yield %a : tensor<2xf32>
  } else {
    scf.yield %a : tensor<2xf32>
  }
  return %r : tensor<2xf32>
}
