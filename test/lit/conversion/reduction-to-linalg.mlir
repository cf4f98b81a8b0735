// RUN: glow-opt %s --split-input-file --convert-glowir-to-linalg | FileCheck %s

// A reduction fills dest with its neutral element, then linalg.reduce combines src into it over the axes.

// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME:  (%[[X:.+]]: memref<2x3x4xf32>, %[[Y:.+]]: memref<3xf32>)
// CHECK:       %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:       linalg.fill ins(%[[ZERO]] : f32) outs(%[[Y]] : memref<3xf32>)
// CHECK:       linalg.reduce ins(%[[X]] : memref<2x3x4xf32>) outs(%[[Y]] : memref<3xf32>) dimensions = [0, 2]
// CHECK-NEXT:  (%[[IN:.+]]: f32, %[[ACC:.+]]: f32) {
// CHECK-NEXT:    %[[SUM:.+]] = arith.addf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT:    linalg.yield %[[SUM]] : f32
func.func @reduce_sum() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<3xf32>
  "glowir.reduce_sum"(%y, %x) {axes = array<i64: 0, 2>} : (memref<3xf32>, memref<2x3x4xf32>) -> ()
  return
}

// -----

// Float max and min start from -inf and +inf, prod from 1.

// CHECK-LABEL: func.func @reduce_float
// CHECK-SAME:  (%[[X:.+]]: memref<2x3xf32>, %[[A:.+]]: memref<2xf32>, %[[B:.+]]: memref<2xf32>, %[[C:.+]]: memref<f32>)
// CHECK:       %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK:       linalg.fill ins(%[[NINF]] : f32) outs(%[[A]] : memref<2xf32>)
// CHECK:       linalg.reduce ins(%[[X]] : memref<2x3xf32>) outs(%[[A]] : memref<2xf32>) dimensions = [1]
// CHECK:       arith.maximumf
// CHECK:       %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK:       linalg.fill ins(%[[INF]] : f32) outs(%[[B]] : memref<2xf32>)
// CHECK:       linalg.reduce ins(%[[X]] : memref<2x3xf32>) outs(%[[B]] : memref<2xf32>) dimensions = [1]
// CHECK:       arith.minimumf
// CHECK:       %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK:       linalg.fill ins(%[[ONE]] : f32) outs(%[[C]] : memref<f32>)
// CHECK:       linalg.reduce ins(%[[X]] : memref<2x3xf32>) outs(%[[C]] : memref<f32>) dimensions = [0, 1]
// CHECK:       arith.mulf
func.func @reduce_float() attributes {glowir.inputs = ["x"], glowir.outputs = ["a", "b", "c"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2xf32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<2xf32>
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<f32>
  "glowir.reduce_max"(%a, %x) {axes = array<i64: 1>} : (memref<2xf32>, memref<2x3xf32>) -> ()
  "glowir.reduce_min"(%b, %x) {axes = array<i64: 1>} : (memref<2xf32>, memref<2x3xf32>) -> ()
  "glowir.reduce_prod"(%c, %x) {axes = array<i64: 0, 1>} : (memref<f32>, memref<2x3xf32>) -> ()
  return
}

// -----

// Integer reductions use the signed ops; max and min start from the i64 extremes.

// CHECK-LABEL: func.func @reduce_int
// CHECK-SAME:  (%[[X:.+]]: memref<2x3xi64>, %[[A:.+]]: memref<2xi64>, %[[B:.+]]: memref<2xi64>, %[[C:.+]]: memref<i64>)
// CHECK:       %[[LOW:.+]] = arith.constant -9223372036854775808 : i64
// CHECK:       linalg.fill ins(%[[LOW]] : i64) outs(%[[A]] : memref<2xi64>)
// CHECK:       arith.maxsi
// CHECK:       %[[HIGH:.+]] = arith.constant 9223372036854775807 : i64
// CHECK:       linalg.fill ins(%[[HIGH]] : i64) outs(%[[B]] : memref<2xi64>)
// CHECK:       arith.minsi
// CHECK:       %[[ONE:.+]] = arith.constant 1 : i64
// CHECK:       linalg.fill ins(%[[ONE]] : i64) outs(%[[C]] : memref<i64>)
// CHECK:       arith.muli
func.func @reduce_int() attributes {glowir.inputs = ["x"], glowir.outputs = ["a", "b", "c"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xi64>
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2xi64>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<2xi64>
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<i64>
  "glowir.reduce_max"(%a, %x) {axes = array<i64: 1>} : (memref<2xi64>, memref<2x3xi64>) -> ()
  "glowir.reduce_min"(%b, %x) {axes = array<i64: 1>} : (memref<2xi64>, memref<2x3xi64>) -> ()
  "glowir.reduce_prod"(%c, %x) {axes = array<i64: 0, 1>} : (memref<i64>, memref<2x3xi64>) -> ()
  return
}

// -----

// L2: the squares are summed as they are read, then one sqrt per result.

// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @reduce_l2
// CHECK-SAME:  (%[[X:.+]]: memref<2x3xf32>, %[[Y:.+]]: memref<2xf32>)
// CHECK:       linalg.fill ins(%{{.+}} : f32) outs(%[[Y]] : memref<2xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<2x3xf32>) outs(%[[Y]] : memref<2xf32>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:    %[[SQ:.+]] = arith.mulf %[[IN]], %[[IN]] : f32
// CHECK-NEXT:    %[[SUM:.+]] = arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK-NEXT:    linalg.yield %[[SUM]]
// CHECK:       linalg.generic {indexing_maps = [#[[ID1]]], iterator_types = ["parallel"]} outs(%[[Y]] : memref<2xf32>)
// CHECK-NEXT:  ^bb0(%[[S:.+]]: f32):
// CHECK-NEXT:    %[[R:.+]] = math.sqrt %[[S]] : f32
// CHECK-NEXT:    linalg.yield %[[R]]
func.func @reduce_l2() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2xf32>
  "glowir.reduce_l2"(%y, %x) {axes = array<i64: 1>} : (memref<2xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

// Softmax along a middle axis: the row max goes into a scratch buffer, which then holds the row sum.

// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax
// CHECK-SAME:  (%[[X:.+]]: memref<2x3x4xf32>, %[[Y:.+]]: memref<2x3x4xf32>)
// CHECK:       %[[STAT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2x4xf32>
// CHECK:       %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK:       linalg.fill ins(%[[NINF]] : f32) outs(%[[STAT]] : memref<2x4xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : {{.+}}) outs(%[[STAT]] : {{.+}})
// CHECK:         arith.maximumf
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[STAT]] : {{.+}}) outs(%[[Y]] : {{.+}})
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: f32, %[[MAX:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:    %[[D:.+]] = arith.subf %[[IN]], %[[MAX]] : f32
// CHECK-NEXT:    %[[E:.+]] = math.exp %[[D]] : f32
// CHECK-NEXT:    linalg.yield %[[E]]
// CHECK:       linalg.fill ins(%{{.+}} : f32) outs(%[[STAT]] : memref<2x4xf32>)
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[Y]] : {{.+}}) outs(%[[STAT]] : {{.+}})
// CHECK:         arith.addf
// CHECK:       linalg.generic {indexing_maps = [#[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[STAT]] : {{.+}}) outs(%[[Y]] : {{.+}})
// CHECK-NEXT:  ^bb0(%[[SUM:.+]]: f32, %[[EXP:.+]]: f32):
// CHECK-NEXT:    %[[Q:.+]] = arith.divf %[[EXP]], %[[SUM]] : f32
// CHECK-NEXT:    linalg.yield %[[Q]]
// CHECK:       memref.dealloc %[[STAT]] : memref<2x4xf32>
// CHECK-NEXT:  return
func.func @softmax() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3x4xf32>
  "glowir.softmax"(%y, %x) {axis = 1} : (memref<2x3x4xf32>, memref<2x3x4xf32>) -> ()
  return
}

// -----

// LogSoftmax: dest = x - max, then one log per row of the summed exponentials, subtracted.

// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG:   #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @log_softmax
// CHECK-SAME:  (%[[X:.+]]: memref<2x3xf32>, %[[Y:.+]]: memref<2x3xf32>)
// CHECK:       %[[STAT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK:       arith.maximumf
// CHECK:       linalg.generic {{.+}} ins(%[[X]], %[[STAT]] : {{.+}}) outs(%[[Y]] : {{.+}})
// CHECK:         arith.subf
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[Y]] : {{.+}}) outs(%[[STAT]] : {{.+}})
// CHECK-NEXT:  ^bb0(%[[D:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:    %[[E:.+]] = math.exp %[[D]] : f32
// CHECK-NEXT:    arith.addf %[[ACC]], %[[E]] : f32
// CHECK:       linalg.generic {indexing_maps = [#[[ID1]]], iterator_types = ["parallel"]} outs(%[[STAT]] : memref<2xf32>)
// CHECK:         math.log
// CHECK:       linalg.generic {indexing_maps = [#[[ROW]], #[[ID]]], {{.+}} ins(%[[STAT]] : {{.+}}) outs(%[[Y]] : {{.+}})
// CHECK-NEXT:  ^bb0(%[[LSE:.+]]: f32, %[[D2:.+]]: f32):
// CHECK-NEXT:    arith.subf %[[D2]], %[[LSE]] : f32
// CHECK:       memref.dealloc %[[STAT]]
func.func @log_softmax() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3xf32>
  "glowir.log_softmax"(%y, %x) {axis = 1} : (memref<2x3xf32>, memref<2x3xf32>) -> ()
  return
}

// -----

// LayerNorm over the last two dims: mean, then the variance of x - mean, then one fused normalize-scale-shift.

// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG:   #[[NORM:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME:  (%[[G:.+]]: memref<3x4xf32>, %[[B:.+]]: memref<3x4xf32>, %[[X:.+]]: memref<2x3x4xf32>, %[[Y:.+]]: memref<2x3x4xf32>)
// CHECK:       %[[MEAN:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK:       %[[RSTD:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK:       %[[N:.+]] = arith.constant 1.200000e+01 : f32
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[X]] : {{.+}}) outs(%[[MEAN]] : {{.+}})
// CHECK:       linalg.generic {{.+}} outs(%[[MEAN]] : memref<2xf32>)
// CHECK:         arith.divf %{{.+}}, %[[N]] : f32
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[X]], %[[MEAN]] : {{.+}}) outs(%[[RSTD]] : {{.+}})
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: f32, %[[MU:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK-NEXT:    %[[D:.+]] = arith.subf %[[IN]], %[[MU]] : f32
// CHECK-NEXT:    %[[SQ:.+]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:    arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK:       %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK:       linalg.generic {{.+}} outs(%[[RSTD]] : memref<2xf32>)
// CHECK:         %[[VAR:.+]] = arith.divf %{{.+}}, %[[N]] : f32
// CHECK-NEXT:    %[[VE:.+]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT:    %[[STD:.+]] = math.sqrt %[[VE]] : f32
// CHECK-NEXT:    arith.divf %{{.+}}, %[[STD]] : f32
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[NORM]], #[[NORM]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MEAN]], %[[RSTD]], %[[G]], %[[B]] : {{.+}}) outs(%[[Y]] : {{.+}})
// CHECK-NEXT:  ^bb0(%[[XI:.+]]: f32, %[[M:.+]]: f32, %[[R:.+]]: f32, %[[GI:.+]]: f32, %[[BI:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:    %[[C:.+]] = arith.subf %[[XI]], %[[M]] : f32
// CHECK-NEXT:    %[[NORMED:.+]] = arith.mulf %[[C]], %[[R]] : f32
// CHECK-NEXT:    %[[SCALED:.+]] = arith.mulf %[[NORMED]], %[[GI]] : f32
// CHECK-NEXT:    %[[OUT:.+]] = arith.addf %[[SCALED]], %[[BI]] : f32
// CHECK-NEXT:    linalg.yield %[[OUT]]
// CHECK:       memref.dealloc %[[MEAN]]
// CHECK:       memref.dealloc %[[RSTD]]
func.func @layer_norm() attributes {glowir.inputs = ["x"], glowir.outputs = ["y"]} {
  %g = "glowir.weight_var"() {mutability = "const", name = "g", value = dense<2.0> : tensor<3x4xf32>} : () -> memref<3x4xf32>
  %b = "glowir.weight_var"() {mutability = "const", name = "b", value = dense<0.5> : tensor<3x4xf32>} : () -> memref<3x4xf32>
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3x4xf32>
  %y = "glowir.weight_var"() {mutability = "mutable", name = "y"} : () -> memref<2x3x4xf32>
  "glowir.layer_norm"(%y, %x, %g, %b) {axis = 1, epsilon = 1.0e-5 : f32} : (memref<2x3x4xf32>, memref<2x3x4xf32>, memref<3x4xf32>, memref<3x4xf32>) -> ()
  return
}

// -----

// BatchMatMul zeroes dest first: linalg.batch_matmul accumulates.

// CHECK-LABEL: func.func @batch_matmul
// CHECK-SAME:  (%[[A:.+]]: memref<2x3x4xf32>, %[[B:.+]]: memref<2x4x5xf32>, %[[C:.+]]: memref<2x3x5xf32>)
// CHECK:       %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:       linalg.fill ins(%[[ZERO]] : f32) outs(%[[C]] : memref<2x3x5xf32>)
// CHECK:       linalg.batch_matmul ins(%[[A]], %[[B]] : memref<2x3x4xf32>, memref<2x4x5xf32>) outs(%[[C]] : memref<2x3x5xf32>)
func.func @batch_matmul() attributes {glowir.inputs = ["a", "b"], glowir.outputs = ["c"]} {
  %a = "glowir.weight_var"() {mutability = "mutable", name = "a"} : () -> memref<2x3x4xf32>
  %b = "glowir.weight_var"() {mutability = "mutable", name = "b"} : () -> memref<2x4x5xf32>
  %c = "glowir.weight_var"() {mutability = "mutable", name = "c"} : () -> memref<2x3x5xf32>
  "glowir.batch_matmul"(%c, %a, %b) : (memref<2x3x5xf32>, memref<2x3x4xf32>, memref<2x4x5xf32>) -> ()
  return
}

// -----

// ArgMax: one reduction with two outputs, the running max in a scratch buffer and its index in dest. A strictly
// greater element, or a first NaN, takes over.

// CHECK-DAG:   #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG:   #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @arg_max_first
// CHECK-SAME:  (%[[X:.+]]: memref<2x3xf32>, %[[I:.+]]: memref<2xi64>)
// CHECK:       %[[BEST:.+]] = memref.alloc() {alignment = 64 : i64} : memref<2xf32>
// CHECK:       linalg.fill ins(%{{.+}} : f32) outs(%[[BEST]] : memref<2xf32>)
// CHECK:       linalg.fill ins(%{{.+}} : i64) outs(%[[I]] : memref<2xi64>)
// CHECK:       linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<2x3xf32>) outs(%[[BEST]], %[[I]] : memref<2xf32>, memref<2xi64>)
// CHECK-NEXT:  ^bb0(%[[IN:.+]]: f32, %[[MAX:.+]]: f32, %[[IDX:.+]]: i64):
// CHECK-NEXT:    %[[POS:.+]] = linalg.index 1 : index
// CHECK-NEXT:    %[[HERE:.+]] = arith.index_cast %[[POS]] : index to i64
// CHECK-NEXT:    %[[GT:.+]] = arith.cmpf ogt, %[[IN]], %[[MAX]] : f32
// CHECK-NEXT:    %[[NAN:.+]] = arith.cmpf uno, %[[IN]], %[[IN]] : f32
// CHECK-NEXT:    %[[NUMBER:.+]] = arith.cmpf ord, %[[MAX]], %[[MAX]] : f32
// CHECK-NEXT:    %[[FIRSTNAN:.+]] = arith.andi %[[NAN]], %[[NUMBER]] : i1
// CHECK-NEXT:    %[[TAKE:.+]] = arith.ori %[[GT]], %[[FIRSTNAN]] : i1
// CHECK-NEXT:    %[[V:.+]] = arith.select %[[TAKE]], %[[IN]], %[[MAX]] : f32
// CHECK-NEXT:    %[[J:.+]] = arith.select %[[TAKE]], %[[HERE]], %[[IDX]] : i64
// CHECK-NEXT:    linalg.yield %[[V]], %[[J]] : f32, i64
// CHECK:       memref.dealloc %[[BEST]]
func.func @arg_max_first() attributes {glowir.inputs = ["x"], glowir.outputs = ["i"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<2x3xf32>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<2xi64>
  "glowir.arg_max"(%i, %x) {axis = 1, select_last = 0} : (memref<2xi64>, memref<2x3xf32>) -> ()
  return
}

// -----

// With select_last an equal element takes over too; integers compare signed.

// CHECK-LABEL: func.func @arg_max_last_int
// CHECK:       %[[LOW:.+]] = arith.constant -9223372036854775808 : i64
// CHECK:       linalg.generic
// CHECK:         %[[GE:.+]] = arith.cmpi sge, %{{.+}}, %{{.+}} : i64
// CHECK-NEXT:    arith.select %[[GE]]
// CHECK-NEXT:    arith.select %[[GE]]
func.func @arg_max_last_int() attributes {glowir.inputs = ["x"], glowir.outputs = ["i"]} {
  %x = "glowir.weight_var"() {mutability = "mutable", name = "x"} : () -> memref<4x3xi64>
  %i = "glowir.weight_var"() {mutability = "mutable", name = "i"} : () -> memref<3xi64>
  "glowir.arg_max"(%i, %x) {axis = 0, select_last = 1} : (memref<3xi64>, memref<4x3xi64>) -> ()
  return
}
