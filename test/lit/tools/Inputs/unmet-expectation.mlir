// Input for glow-opt-errors.mlir: an expectation no diagnostic meets.
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "glowgraph.relu"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  // expected-error @-1 {{this never happens}}
  return %0 : tensor<2xf32>
}
