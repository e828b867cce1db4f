// RUN: zero-opt %s --zero-split-batch=world-size=2 | FileCheck %s
// RUN: zero-opt %s --zero-split-batch=world-size=1 | FileCheck %s --check-prefix=ONE

// The batch of 4 rows becomes 2 rows per rank; parameters keep their shapes;
// every shape derived from the batch follows; the loss divides by the global
// batch so that the ranks' losses sum to the global mean. The world size is
// stated once, on the module's group.
// CHECK: zero.group @dp world_size(2){{$}}
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[X:.*]]: tensor<2x3xf32> {zero.placement = #zero.placement<data, sharded>}
// CHECK-SAME: %[[L:.*]]: tensor<2xi32> {zero.placement = #zero.placement<data, sharded>}
// CHECK-SAME: %[[W:.*]]: tensor<3x5xf32> {nn.param = "fc.weight"}
// CHECK-SAME: %[[B:.*]]: tensor<5xf32> {nn.param = "fc.bias"}
// CHECK: %[[H:.*]] = nn.matmul %[[X]], %[[W]] : tensor<2x3xf32>, tensor<3x5xf32> -> tensor<2x5xf32>
// CHECK: %[[Y:.*]] = nn.bias_add %[[H]], %[[B]] : tensor<2x5xf32>, tensor<5xf32>
// CHECK: %[[G:.*]] = nn.gelu %[[Y]] : tensor<2x5xf32>
// CHECK: nn.softmax_cross_entropy %[[G]], %[[L]] {divisor = 4 : i64} : tensor<2x5xf32>, tensor<2xi32> -> tensor<f32>

// One rank keeps every shape; the divisor is still made explicit.
// ONE: zero.group @dp world_size(1){{$}}
// ONE-LABEL: func.func @forward
// ONE: tensor<4x3xf32> {zero.placement = #zero.placement<data, sharded>}
// ONE: nn.softmax_cross_entropy {{.*}} {divisor = 4 : i64} : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"},
                   %b: tensor<5xf32> {nn.param = "fc.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %y = nn.bias_add %h, %b : tensor<4x5xf32>, tensor<5xf32>
  %g = nn.gelu %y : tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %g, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
