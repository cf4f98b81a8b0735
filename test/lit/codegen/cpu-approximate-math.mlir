// cpu-approximate-math: f32 math.exp, math.erf and math.tanh (scalars and vectors) become polynomials in arith and
// math.fma: no libm call per lane. f64 is left alone (the coefficients are single precision).
// RUN: glow-opt %s --split-input-file -p 'builtin.module(cpu-approximate-math)' | FileCheck %s

// CHECK-LABEL: func.func @exp_vector(
// CHECK-NOT:   math.exp
// CHECK:       math.floor %{{.+}} : vector<16xf32>
// CHECK:       arith.shli %{{.+}}, %{{.+}} : vector<16xi32>
// CHECK:       arith.bitcast %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK-NOT:   math.exp
func.func @exp_vector(%x: vector<16xf32>) -> vector<16xf32> {
  %0 = math.exp %x : vector<16xf32>
  return %0 : vector<16xf32>
}

// -----

// erf takes |x| and copies the sign back; tanh clamps x, divides two polynomials in x^2, is +-1 itself from the clamp
// up (the quotient there rounds to 1 - 2^-22) and keeps x itself when it is tiny.
// CHECK-LABEL: func.func @erf_tanh_scalar(
// CHECK-NOT:   math.erf
// CHECK-NOT:   math.tanh
// CHECK:       %[[ERF:.+]] = math.copysign %{{.+}}, %{{.+}} : f32
// CHECK:       %[[C:.+]] = arith.minimumf %{{.+}}, %{{.+}} : f32
// CHECK:       %[[Q:.+]] = arith.divf %{{.+}}, %{{.+}} : f32
// CHECK:       %[[A:.+]] = math.absf %[[ERF]] : f32
// CHECK:       %[[BIG:.+]] = arith.cmpf oge, %[[A]], %{{.+}} : f32
// CHECK:       %[[ONE:.+]] = math.copysign %{{.+}}, %[[ERF]] : f32
// CHECK:       %[[SAT:.+]] = arith.select %[[BIG]], %[[ONE]], %[[Q]] : f32
// CHECK:       %[[TINY:.+]] = arith.cmpf olt, %[[A]], %{{.+}} : f32
// CHECK:       arith.select %[[TINY]], %[[ERF]], %[[SAT]] : f32
func.func @erf_tanh_scalar(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  %1 = math.tanh %0 : f32
  return %1 : f32
}

// -----

// CHECK-LABEL: func.func @f64_stays(
// CHECK:       math.exp %{{.+}} : f64
func.func @f64_stays(%x: f64) -> f64 {
  %0 = math.exp %x : f64
  return %0 : f64
}
