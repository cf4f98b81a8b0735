// RUN: glow-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(glowir-partition{memory-budget=40})'

// A budget below what one instruction needs: the relu has a and b (32 bytes each) live.
func.func @too_small() attributes {glowir.activations_size = 128 : i64, glowir.constant_weights_size = 0 : i64,
                                   glowir.mutable_weights_size = 0 : i64, glowir.inputs = [], glowir.outputs = []} {
  %a = "glowir.alloc_activation"() {name = "a", offset = 0 : i64} : () -> memref<2x4xf32>
  "glowir.splat"(%a) {value = 1.0 : f32} : (memref<2x4xf32>) -> ()
  %b = "glowir.alloc_activation"() {name = "b", offset = 64 : i64} : () -> memref<2x4xf32>
  // expected-error @below {{@too_small: memory budget of 40 bytes cannot be met: instruction #1 'glowir.relu' needs 64 bytes of live activations}}
  "glowir.relu"(%b, %a) : (memref<2x4xf32>, memref<2x4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<2x4xf32>) -> ()
  "glowir.dealloc_activation"(%b) : (memref<2x4xf32>) -> ()
  return
}

// -----

// Partitions share the program's memory plan: without one there is nothing to share.
// expected-error @below {{@unplanned: its memory is not planned (run glowir-plan-memory first)}}
func.func @unplanned() attributes {glowir.inputs = [], glowir.outputs = []} {
  %a = "glowir.alloc_activation"() {name = "a"} : () -> memref<4xf32>
  "glowir.splat"(%a) {value = 1.0 : f32} : (memref<4xf32>) -> ()
  "glowir.dealloc_activation"(%a) : (memref<4xf32>) -> ()
  return
}
