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
