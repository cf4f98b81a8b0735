// RUN: glow-opt %s --split-input-file --convert-glowir-to-linalg | FileCheck %s

// Float math: one identity-mapped generic per instruction, the math or arith op in its body.

// CHECK-LABEL: func.func @float_math
// CHECK-SAME:  (%[[X:.+]]: memref<2x3xf32>, %[[Y:.+]]: memref<2x3xf32>, %[[Z:.+]]: memref<2x3xf32>)
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[X]] : memref<2x3xf32>) outs(%[[Z]] : memref<2x3xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:  %[[EXP:.+]] = math.exp %[[IN]] : f32
// CHECK-NEXT:  linalg.yield %[[EXP]] : f32
// CHECK:       math.log
// CHECK:       math.sqrt
// CHECK:       math.erf
// CHECK:       math.floor
// CHECK:       math.ceil
// CHECK:       arith.negf
// CHECK:       math.absf
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[Z]], %[[Y]] : memref<2x3xf32>, memref<2x3xf32>) outs(%[[Z]] : memref<2x3xf32>)
// CHECK-NEXT:  ^bb0(%[[B:.+]]: f32, %[[E:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:  %[[POW:.+]] = math.powf %[[B]], %[[E]] : f32
// CHECK:       arith.remf
func.func @float_math() attributes {glowir.inputs = ["x", "y"], glowir.outputs = ["z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<2x3xf32>
  "glowir.exp"(%z, %x) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.log"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.sqrt"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.erf"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.floor"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.ceil"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.neg"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.abs"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.element_pow"(%z, %z, %y) : (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.element_mod"(%z, %z, %y) {fmod = 1} : (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

// Integer math: mod with fmod 0 moves remsi's remainder to the divisor's sign; neg is 0 - x. Divisors 0 and
// -1 never reach remsi (they trap in hardware): they are replaced by 1, and -1 is handled by a select.

// CHECK-LABEL: func.func @int_math
// CHECK-SAME:  (%[[A:.+]]: memref<4xi64>, %[[B:.+]]: memref<4xi64>, %[[C:.+]]: memref<4xi64>, %[[D:.+]]: memref<4xi32>)
// CHECK:       ^bb0(%[[L:.+]]: i64, %[[R:.+]]: i64, %{{.+}}: i64):
// CHECK:       %[[TRAP:.+]] = arith.ori
// CHECK-NEXT:  %[[SAFE:.+]] = arith.select %[[TRAP]], %{{.+}}, %[[R]] : i64
// CHECK:       %[[RAW:.+]] = arith.remsi %[[L]], %[[SAFE]] : i64
// CHECK:       %[[REM:.+]] = arith.select %{{.+}}, %{{.+}}, %[[RAW]] : i64
// CHECK-NEXT:  %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-NEXT:  %[[REMNEG:.+]] = arith.cmpi slt, %[[REM]], %[[ZERO]] : i64
// CHECK-NEXT:  %[[DIVNEG:.+]] = arith.cmpi slt, %[[R]], %[[ZERO]] : i64
// CHECK-NEXT:  %[[DIFFER:.+]] = arith.xori %[[REMNEG]], %[[DIVNEG]] : i1
// CHECK-NEXT:  %[[NONZERO:.+]] = arith.cmpi ne, %[[REM]], %[[ZERO]] : i64
// CHECK-NEXT:  %[[FIX:.+]] = arith.andi %[[DIFFER]], %[[NONZERO]] : i1
// CHECK-NEXT:  %[[MOVED:.+]] = arith.addi %[[REM]], %[[R]] : i64
// CHECK-NEXT:  %[[MOD:.+]] = arith.select %[[FIX]], %[[MOVED]], %[[REM]] : i64
// CHECK-NEXT:  linalg.yield %[[MOD]] : i64
// CHECK:       arith.remsi {{.+}} : i32
// CHECK-NEXT:  arith.select
// CHECK-NEXT:  linalg.yield
// CHECK:       ^bb0(%[[IN:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT:  %[[Z:.+]] = arith.constant 0 : i64
// CHECK-NEXT:  %[[NEG:.+]] = arith.subi %[[Z]], %[[IN]] : i64
// CHECK:       math.absi {{.+}} : i64
func.func @int_math() attributes {glowir.inputs = ["a", "b", "d"], glowir.outputs = ["c"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<4xi64>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<4xi64>
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<4xi64>
  %d = "glowir.weight_var"() {mutability = "mutable", name = "d"} : () -> memref<4xi32>
  "glowir.element_mod"(%c, %a, %b) {fmod = 0} : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_mod"(%d, %d, %d) {fmod = 1} : (memref<4xi32>, memref<4xi32>, memref<4xi32>) -> ()
  "glowir.neg"(%c, %c) : (memref<4xi64>, memref<4xi64>) -> ()
  "glowir.abs"(%c, %c) : (memref<4xi64>, memref<4xi64>) -> ()
  return
}

// -----

// Comparisons write i1 as bytes; logic works on the bytes; select tests its byte against 0.

// CHECK-LABEL: func.func @compare_select
// CHECK-SAME:  (%[[X:.+]]: memref<4xf32>, %[[I:.+]]: memref<4xi32>, %[[B:.+]]: memref<4xi8>, %[[Y:.+]]: memref<4xf32>)
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[X]], %[[X]] : memref<4xf32>, memref<4xf32>) outs(%[[B]] : memref<4xi8>)
// CHECK-NEXT:  ^bb0(%[[L:.+]]: f32, %[[R:.+]]: f32, %{{.+}}: i8):
// CHECK-NEXT:  %[[EQ:.+]] = arith.cmpf oeq, %[[L]], %[[R]] : f32
// CHECK-NEXT:  %[[BYTE:.+]] = arith.extui %[[EQ]] : i1 to i8
// CHECK-NEXT:  linalg.yield %[[BYTE]] : i8
// CHECK:       arith.cmpi slt, %{{.+}}, %{{.+}} : i32
// CHECK:       arith.cmpf ole
// CHECK:       arith.cmpi eq, %{{.+}}, %{{.+}} : i8
// CHECK:       ^bb0(%[[IN:.+]]: i8, %{{.+}}: i8):
// CHECK-NEXT:  %[[ONE:.+]] = arith.constant 1 : i8
// CHECK-NEXT:  %[[NOT:.+]] = arith.xori %[[IN]], %[[ONE]] : i8
// CHECK:       arith.andi {{.+}} : i8
// CHECK:       arith.ori {{.+}} : i8
// CHECK:       linalg.generic
// CHECK-SAME:  ins(%[[B]], %[[X]], %[[Y]] : memref<4xi8>, memref<4xf32>, memref<4xf32>) outs(%[[Y]] : memref<4xf32>)
// CHECK-NEXT:  ^bb0(%[[C:.+]]: i8, %[[T:.+]]: f32, %[[F:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:  %[[ZERO:.+]] = arith.constant 0 : i8
// CHECK-NEXT:  %[[COND:.+]] = arith.cmpi ne, %[[C]], %[[ZERO]] : i8
// CHECK-NEXT:  %[[SEL:.+]] = arith.select %[[COND]], %[[T]], %[[F]] : f32
// CHECK-NEXT:  linalg.yield %[[SEL]] : f32
func.func @compare_select() attributes {glowir.inputs = ["x", "i", "b"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<4xi32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<4xi1>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  "glowir.element_cmp_eq"(%b, %x, %x) : (memref<4xi1>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_cmp_lt"(%b, %i, %i) : (memref<4xi1>, memref<4xi32>, memref<4xi32>) -> ()
  "glowir.element_cmp_lte"(%b, %x, %x) : (memref<4xi1>, memref<4xf32>, memref<4xf32>) -> ()
  "glowir.element_cmp_eq"(%b, %b, %b) : (memref<4xi1>, memref<4xi1>, memref<4xi1>) -> ()
  "glowir.not"(%b, %b) : (memref<4xi1>, memref<4xi1>) -> ()
  "glowir.element_and"(%b, %b, %b) : (memref<4xi1>, memref<4xi1>, memref<4xi1>) -> ()
  "glowir.element_or"(%b, %b, %b) : (memref<4xi1>, memref<4xi1>, memref<4xi1>) -> ()
  "glowir.element_select"(%y, %b, %x, %y) : (memref<4xf32>, memref<4xi1>, memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// Casts: float to integer truncates (fptosi), narrowing truncates bits, to i1 is != 0 (unordered: NaN is true),
// i1 bytes widen unsigned.

// CHECK-LABEL: func.func @cast
// CHECK:       arith.fptosi %{{.+}} : f32 to i64
// CHECK:       arith.trunci %{{.+}} : i64 to i32
// CHECK:       ^bb0(%[[IN:.+]]: f32, %{{.+}}: i8):
// CHECK-NEXT:  %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:  %[[NE:.+]] = arith.cmpf une, %[[IN]], %[[ZERO]] : f32
// CHECK-NEXT:  %[[BYTE:.+]] = arith.extui %[[NE]] : i1 to i8
// CHECK-NEXT:  linalg.yield %[[BYTE]] : i8
// CHECK:       arith.uitofp %{{.+}} : i8 to f32
// CHECK:       arith.extui %{{.+}} : i8 to i64
// CHECK:       arith.sitofp %{{.+}} : i32 to f32
// CHECK:       arith.extsi %{{.+}} : i32 to i64
// CHECK:       ^bb0(%[[N:.+]]: i64, %{{.+}}: i8):
// CHECK-NEXT:  %[[Z:.+]] = arith.constant 0 : i64
// CHECK-NEXT:  %[[NZ:.+]] = arith.cmpi ne, %[[N]], %[[Z]] : i64
// CHECK-NEXT:  arith.extui %[[NZ]] : i1 to i8
func.func @cast() attributes {glowir.inputs = ["x", "b"], glowir.outputs = ["i", "f", "j"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<4xi1>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<4xi64>
  %f = "glowir.weight_var"() {mutability = "mutable", name = "f"} : () -> memref<4xf32>
  %j = "glowir.weight_var"() {mutability = "mutable", name = "j"} : () -> memref<4xi32>
  %t = "glowir.alloc_activation"() {name = "t"} : () -> memref<4xi1>
  "glowir.cast"(%i, %x) {to = i64} : (memref<4xi64>, memref<4xf32>) -> ()
  "glowir.cast"(%j, %i) {to = i32} : (memref<4xi32>, memref<4xi64>) -> ()
  "glowir.cast"(%t, %x) {to = i1} : (memref<4xi1>, memref<4xf32>) -> ()
  "glowir.cast"(%f, %b) {to = f32} : (memref<4xf32>, memref<4xi1>) -> ()
  "glowir.cast"(%i, %b) {to = i64} : (memref<4xi64>, memref<4xi1>) -> ()
  "glowir.cast"(%f, %j) {to = f32} : (memref<4xf32>, memref<4xi32>) -> ()
  "glowir.cast"(%i, %j) {to = i64} : (memref<4xi64>, memref<4xi32>) -> ()
  "glowir.cast"(%t, %i) {to = i1} : (memref<4xi1>, memref<4xi64>) -> ()
  "glowir.dealloc_activation"(%t) : (memref<4xi1>) -> ()
  return
}

// -----

// Casts among the floats (the storage types f64 and f16 at a program's boundary, f16 rounding inside): widening is
// exact (extf), narrowing rounds to nearest even (truncf).

// CHECK-LABEL: func.func @cast_floats
// CHECK:       arith.extf %{{.+}} : f16 to f32
// CHECK:       arith.truncf %{{.+}} : f32 to f16
// CHECK:       arith.extf %{{.+}} : f32 to f64
// CHECK:       arith.truncf %{{.+}} : f64 to f32
func.func @cast_floats() attributes {glowir.inputs = ["h", "d"], glowir.outputs = ["g", "e"]} {
  %h = "glowir.weight_var"() {mutability = "mutable", name = "h"} : () -> memref<4xf16>
  %d = "glowir.weight_var"() {mutability = "mutable", name = "d"} : () -> memref<4xf64>
  %g = "glowir.weight_var"() {mutability = "mutable", name = "g"} : () -> memref<4xf16>
  %e = "glowir.weight_var"() {mutability = "mutable", name = "e"} : () -> memref<4xf32>
  %x = "glowir.alloc_activation"() {name = "x"} : () -> memref<4xf32>
  %w = "glowir.alloc_activation"() {name = "w"} : () -> memref<4xf64>
  "glowir.cast"(%x, %h) {to = f32} : (memref<4xf32>, memref<4xf16>) -> ()
  "glowir.cast"(%g, %x) {to = f16} : (memref<4xf16>, memref<4xf32>) -> ()
  "glowir.cast"(%w, %x) {to = f64} : (memref<4xf64>, memref<4xf32>) -> ()
  "glowir.cast"(%e, %d) {to = f32} : (memref<4xf32>, memref<4xf64>) -> ()
  "glowir.dealloc_activation"(%w) : (memref<4xf64>) -> ()
  "glowir.dealloc_activation"(%x) : (memref<4xf32>) -> ()
  return
}

// -----

// Trigonometric, hyperbolic and rounding instructions: the math op in the generic's body (round halves to even:
// math.roundeven).
// CHECK-LABEL: func.func @trig_math
// CHECK:       math.sin
// CHECK:       math.cos
// CHECK:       math.tan
// CHECK:       math.asin
// CHECK:       math.acos
// CHECK:       math.atan
// CHECK:       math.sinh
// CHECK:       math.cosh
// CHECK:       math.asinh
// CHECK:       math.acosh
// CHECK:       math.atanh
// CHECK:       math.roundeven
// CHECK-NOT:   glowir.
func.func @trig_math() attributes {glowir.inputs = ["x"], glowir.outputs = ["z"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<2x3xf32>
  "glowir.sin"(%z, %x) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.cos"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.tan"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.asin"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.acos"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.atan"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.sinh"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.cosh"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.asinh"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.acosh"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.atanh"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  "glowir.round"(%z, %z) : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

// Shifts: one unsigned compare finds an amount below 0 or of the width or more (poison for LLVM's shifts); there
// a left shift gives 0 and a right shift the sign extension alone (lhs >> width - 1).

// CHECK-LABEL: func.func @shifts
// CHECK:       ^bb0(%[[L:.+]]: i64, %[[R:.+]]: i64, %{{.+}}: i64):
// CHECK-NEXT:  %[[W:.+]] = arith.constant 64 : i64
// CHECK-NEXT:  %[[IN:.+]] = arith.cmpi ult, %[[R]], %[[W]] : i64
// CHECK-NEXT:  %[[SHL:.+]] = arith.shli %[[L]], %[[R]] : i64
// CHECK-NEXT:  %[[ZERO:.+]] = arith.constant 0 : i64
// CHECK-NEXT:  %[[Y:.+]] = arith.select %[[IN]], %[[SHL]], %[[ZERO]] : i64
// CHECK-NEXT:  linalg.yield %[[Y]] : i64
// CHECK:       ^bb0(%[[L2:.+]]: i32, %[[R2:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT:  %[[W2:.+]] = arith.constant 32 : i32
// CHECK-NEXT:  %[[IN2:.+]] = arith.cmpi ult, %[[R2]], %[[W2]] : i32
// CHECK-NEXT:  %[[ONE:.+]] = arith.constant 1 : i32
// CHECK-NEXT:  %[[LAST:.+]] = arith.subi %[[W2]], %[[ONE]] : i32
// CHECK-NEXT:  %[[SIGN:.+]] = arith.shrsi %[[L2]], %[[LAST]] : i32
// CHECK-NEXT:  %[[SHR:.+]] = arith.shrsi %[[L2]], %[[R2]] : i32
// CHECK-NEXT:  %[[Y2:.+]] = arith.select %[[IN2]], %[[SHR]], %[[SIGN]] : i32
// CHECK-NEXT:  linalg.yield %[[Y2]] : i32
func.func @shifts() attributes {glowir.inputs = ["a", "b"], glowir.outputs = ["c", "d"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<4xi64>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<4xi32>
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<4xi64>
  %d = "glowir.weight_var"() {mutability = "mutable", name = "d"} : () -> memref<4xi32>
  "glowir.element_shift_left"(%c, %a, %a) : (memref<4xi64>, memref<4xi64>, memref<4xi64>) -> ()
  "glowir.element_shift_right"(%d, %b, %b) : (memref<4xi32>, memref<4xi32>, memref<4xi32>) -> ()
  return
}

// -----

// Bitwise ops on integers: not flips every bit (xor with -1; a stored boolean's not flips the low bit only), and,
// or and xor as they are; the narrow integers at a program's boundary truncate and sign-extend.

// CHECK-LABEL: func.func @bitwise
// CHECK:       ^bb0(%[[IN:.+]]: i32, %{{.+}}: i32):
// CHECK-NEXT:  %[[ONES:.+]] = arith.constant -1 : i32
// CHECK-NEXT:  %[[NOT:.+]] = arith.xori %[[IN]], %[[ONES]] : i32
// CHECK:       arith.andi {{.+}} : i32
// CHECK:       arith.ori {{.+}} : i32
// CHECK:       arith.xori {{.+}} : i32
// CHECK:       arith.trunci %{{.+}} : i32 to i8
// CHECK:       arith.extsi %{{.+}} : i8 to i32
func.func @bitwise() attributes {glowir.inputs = ["a", "n"], glowir.outputs = ["y", "z"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<4xi32>
  %n = "glowir.weight_var"() {mutability = "mutable", name = "n"} : () -> memref<4xi8>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xi32>
  %z = "glowir.weight_var"() {mutability = "mutable", name = "z"} : () -> memref<4xi8>
  "glowir.not"(%y, %a) : (memref<4xi32>, memref<4xi32>) -> ()
  "glowir.element_and"(%y, %y, %a) : (memref<4xi32>, memref<4xi32>, memref<4xi32>) -> ()
  "glowir.element_or"(%y, %y, %a) : (memref<4xi32>, memref<4xi32>, memref<4xi32>) -> ()
  "glowir.element_xor"(%y, %y, %a) : (memref<4xi32>, memref<4xi32>, memref<4xi32>) -> ()
  "glowir.cast"(%z, %y) {to = i8} : (memref<4xi8>, memref<4xi32>) -> ()
  "glowir.cast"(%y, %n) {to = i32} : (memref<4xi32>, memref<4xi8>) -> ()
  return
}

// -----

// bfloat16 goes through float32 in integer ops (no target needs bf16 instructions): widening puts its 16 bits on top
// of 16 zeros; narrowing rounds halves to even (0x7FFF plus the lowest kept bit) and keeps a NaN quiet.

// CHECK-LABEL: func.func @bfloat16
// CHECK:       ^bb0(%[[IN:.+]]: f32, %{{.+}}: bf16):
// CHECK:       %[[BITS:.+]] = arith.bitcast %[[IN]] : f32 to i32
// CHECK:       arith.shrui %[[BITS]]
// CHECK:       arith.constant 32767 : i32
// CHECK:       %[[NAN:.+]] = arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK:       arith.select %[[NAN]]
// CHECK:       arith.bitcast %{{.+}} : i16 to bf16
// CHECK:       ^bb0(%[[H:.+]]: bf16, %{{.+}}: f32):
// CHECK:       %[[I16:.+]] = arith.bitcast %[[H]] : bf16 to i16
// CHECK:       %[[WIDE:.+]] = arith.extui %[[I16]] : i16 to i32
// CHECK:       arith.shli %[[WIDE]]
// CHECK:       arith.bitcast %{{.+}} : i32 to f32
func.func @bfloat16() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %h = "glowir.alloc_activation"() : () -> memref<4xbf16>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  "glowir.cast"(%h, %x) {to = bf16} : (memref<4xbf16>, memref<4xf32>) -> ()
  "glowir.cast"(%y, %h) {to = f32} : (memref<4xf32>, memref<4xbf16>) -> ()
  return
}

// -----

// The 8-bit floats go through float32 in integer ops too. Narrowing: the magnitude (at most 2^(2^e - bias), here
// 2^9) rounded by adding and subtracting a power of two whose float32 spacing is the format's at that exponent (never
// below the smallest normal's), the code packed from float32's fields or, for a subnormal, as a multiple of the
// smallest subnormal; beyond the largest finite value (448) and for NaN the NaN code 0x7F with the sign.
// Widening: a normal code's fields moved into float32's and rebiased (120 << 23 = 1006632960), a subnormal one scaled.

// CHECK-LABEL: func.func @float8
// CHECK:       ^bb0(%[[IN:.+]]: f32, %{{.+}}: f8E4M3FN):
// CHECK:       %[[BITS:.+]] = arith.bitcast %[[IN]] : f32 to i32
// CHECK:       arith.constant 5.120000e+02 : f32
// CHECK:       %[[ABS:.+]] = arith.minimumf
// CHECK:       %[[SUM:.+]] = arith.addf %[[ABS]], %[[SHIFTER:.+]] : f32
// CHECK:       %[[ROUNDED:.+]] = arith.subf %[[SUM]], %[[SHIFTER]] : f32
// CHECK:       arith.fptoui
// CHECK:       arith.constant 4.480000e+02 : f32
// CHECK:       arith.cmpf ogt, %[[ROUNDED]]
// CHECK:       arith.constant 127 : i32
// CHECK:       arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK:       %[[CODE:.+]] = arith.trunci %{{.+}} : i32 to i8
// CHECK:       arith.bitcast %[[CODE]] : i8 to f8E4M3FN
// CHECK:       ^bb0(%[[H:.+]]: f8E4M3FN, %{{.+}}: f32):
// CHECK:       %[[I8:.+]] = arith.bitcast %[[H]] : f8E4M3FN to i8
// CHECK:       arith.extui %[[I8]] : i8 to i32
// CHECK:       arith.constant 1006632960 : i32
// CHECK:       arith.uitofp
// CHECK:       arith.select
// CHECK-NOT:   arith.truncf
// CHECK:       return
func.func @float8() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %h = "glowir.alloc_activation"() : () -> memref<4xf8E4M3FN>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  "glowir.cast"(%h, %x) {to = f8E4M3FN} : (memref<4xf8E4M3FN>, memref<4xf32>) -> ()
  "glowir.cast"(%y, %h) {to = f32} : (memref<4xf32>, memref<4xf8E4M3FN>) -> ()
  return
}

// -----

// An e5m2 value beyond the largest finite one (57344) becomes infinity (0x7C with the sign), e5m2 having one.

// CHECK-LABEL: func.func @float8_with_infinity
// CHECK:       arith.constant 5.734400e+04 : f32
// CHECK:       arith.constant 124 : i32
// CHECK:       arith.bitcast %{{.+}} : i8 to f8E5M2
func.func @float8_with_infinity() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf8E5M2>
  "glowir.cast"(%y, %x) {to = f8E5M2} : (memref<4xf8E5M2>, memref<4xf32>) -> ()
  return
}

// -----

// A float4 buffer is stored one value per byte (its low bits): the program takes an i8 memref, narrowing ends in a
// truncation to the byte and widening starts from it; beyond the largest value (6) it saturates to code 7.

// CHECK-LABEL: func.func @float4
// CHECK-SAME:  memref<4xi8>
// CHECK:       ^bb0(%{{.+}}: f32, %{{.+}}: i8):
// CHECK:       arith.constant 6.000000e+00 : f32
// CHECK:       arith.constant 7 : i32
// CHECK:       arith.trunci %{{.+}} : i32 to i8
// CHECK:       ^bb0(%[[B:.+]]: i8, %{{.+}}: f32):
// CHECK:       arith.extui %[[B]] : i8 to i32
// CHECK-NOT:   f4E2M1FN
// CHECK:       return
func.func @float4() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %h = "glowir.weight_var"() {mutability = "mutable", name = "h"} : () -> memref<4xf4E2M1FN>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xf32>
  "glowir.cast"(%h, %x) {to = f4E2M1FN} : (memref<4xf4E2M1FN>, memref<4xf32>) -> ()
  "glowir.cast"(%y, %h) {to = f32} : (memref<4xf32>, memref<4xf4E2M1FN>) -> ()
  return
}

// -----

// bitcast is one arith.bitcast per element.

// CHECK-LABEL: func.func @bitcast
// CHECK:       ^bb0(%[[IN:.+]]: f32, %{{.+}}: i32):
// CHECK-NEXT:  %[[B:.+]] = arith.bitcast %[[IN]] : f32 to i32
// CHECK-NEXT:  linalg.yield %[[B]] : i32
func.func @bitcast() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<4xi32>
  "glowir.bitcast"(%y, %x) {to = i32} : (memref<4xi32>, memref<4xf32>) -> ()
  return
}
