// RUN: glow-opt %s --split-input-file --verify-diagnostics --glowgraph-lower

// BatchNorm is lowered with its per-channel scale and shift computed at compile time: its parameters must be constants.
func.func @batch_norm_runtime_params(%x: tensor<1x2xf32>, %p: tensor<2xf32>) -> tensor<1x2xf32> {
  // expected-error @+1 {{'glowgraph.batch_norm' needs constant scale, bias, mean and var to be lowered}}
  %0 = "glowgraph.batch_norm"(%x, %p, %p, %p, %p) {epsilon = 0.0 : f32, channel_axis = 1} : (tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}
