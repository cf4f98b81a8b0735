// RUN: glow-opt %s --glowgraph-cse --glowgraph-dce --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALL
// RUN: glow-opt %s --glowgraph-lower --glowgraph-dce --mlir-print-ir-after-change -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHANGE

// ALL: IR Dump After glowgraph-cse
// ALL: IR Dump After glowgraph-dce
// CHANGE-NOT: IR Dump After glowgraph-lower
// CHANGE: IR Dump After glowgraph-dce
// CHANGE-NOT: "glowgraph.tanh"

// CHECK-LABEL: func.func @f
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "glowgraph.tanh"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}
