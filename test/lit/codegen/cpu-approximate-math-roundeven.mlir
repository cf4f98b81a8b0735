// cpu-approximate-math on a bare-metal target (newlib has no roundevenf, and a Cortex-M4 FPU no rounding
// instruction): f32 math.roundeven becomes (|x| + 2^23) - 2^23 with x's sign, x itself from 2^23 up. On a hosted
// target it stays (LLVM emits the instruction or calls libm).
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-approximate-math{target-triple=thumbv7em-none-eabihf target-cpu=cortex-m4})' | FileCheck %s --check-prefix=BARE
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-approximate-math)' | FileCheck %s --check-prefix=HOST

// BARE-LABEL: func.func @round_vector(
// BARE-NOT:   math.roundeven
// BARE:       %[[ABS:.+]] = math.absf %[[X:.+]] : vector<4xf32>
// BARE:       %[[SUM:.+]] = arith.addf %[[ABS]], %[[LIMIT:.+]] : vector<4xf32>
// BARE:       %[[INT:.+]] = arith.subf %[[SUM]], %[[LIMIT]] : vector<4xf32>
// BARE:       %[[SIGNED:.+]] = math.copysign %[[INT]], %[[X]] : vector<4xf32>
// BARE:       %[[SMALL:.+]] = arith.cmpf olt, %[[ABS]], %[[LIMIT]] : vector<4xf32>
// BARE:       arith.select %[[SMALL]], %[[SIGNED]], %[[X]] : vector<4xi1>, vector<4xf32>
// HOST-LABEL: func.func @round_vector(
// HOST:       math.roundeven %{{.+}} : vector<4xf32>
func.func @round_vector(%x: vector<4xf32>) -> vector<4xf32> {
  %0 = math.roundeven %x : vector<4xf32>
  return %0 : vector<4xf32>
}

// -----

// f64 keeps its libm call on any target (the 2^23 bound is single precision's).
// BARE-LABEL: func.func @f64_stays(
// BARE:       math.roundeven %{{.+}} : f64
// HOST-LABEL: func.func @f64_stays(
// HOST:       math.roundeven %{{.+}} : f64
func.func @f64_stays(%x: f64) -> f64 {
  %0 = math.roundeven %x : f64
  return %0 : f64
}
