// RUN: glow-opt %s --split-input-file --verify-diagnostics

func.func @draws_f32_only() -> tensor<4xf16> {
  // expected-error @+1 {{draws float32 elements, got f16}}
  %0 = "glowgraph.random_uniform"() {seed = 1 : i64} : () -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @seed_required() -> tensor<4xf32> {
  // expected-error @+1 {{seed}}
  %0 = "glowgraph.random_uniform"() : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
