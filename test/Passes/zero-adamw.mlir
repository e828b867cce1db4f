// RUN: zero-opt %s --nn-autodiff --zero-adamw | FileCheck %s

// Each parameter gets two moment arguments, then the hyperparameters lr,
// step, beta1, beta2, eps and weight_decay are appended (runtime scalars);
// the new parameters and moments are returned, each tied to the argument it
// replaces by zero.updates.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:[^:]*]]: tensor<3x5xf32> {nn.param = "fc.weight"}, %[[B:[^:]*]]: tensor<5xf32> {nn.param = "fc.bias"}
// CHECK-SAME: %[[MW:[^:]*]]: tensor<3x5xf32> {nn.adam_m = "fc.weight"}, %[[VW:[^:]*]]: tensor<3x5xf32> {nn.adam_v = "fc.weight"}
// CHECK-SAME: %[[MB:[^:]*]]: tensor<5xf32> {nn.adam_m = "fc.bias"}, %[[VB:[^:]*]]: tensor<5xf32> {nn.adam_v = "fc.bias"}
// CHECK-SAME: %[[LR:[^:]*]]: tensor<f32> {nn.hyper = "lr"}, %[[STEP:[^:]*]]: tensor<f32> {nn.hyper = "step"},
// CHECK-SAME: %[[B1:[^:]*]]: tensor<f32> {nn.hyper = "beta1"}, %[[B2:[^:]*]]: tensor<f32> {nn.hyper = "beta2"},
// CHECK-SAME: %[[EPS:[^:]*]]: tensor<f32> {nn.hyper = "eps"}, %[[WD:[^:]*]]: tensor<f32> {nn.hyper = "weight_decay"})
// CHECK-SAME: -> (tensor<f32>, tensor<3x5xf32> {zero.updates = 2 : i64}, tensor<5xf32> {zero.updates = 3 : i64}, tensor<3x5xf32> {zero.updates = 4 : i64}, tensor<5xf32> {zero.updates = 6 : i64}, tensor<3x5xf32> {zero.updates = 5 : i64}, tensor<5xf32> {zero.updates = 7 : i64})
// CHECK: %[[DW:.*]] = nn.matmul %{{.*}}, %{{.*}} transpose_lhs
// CHECK: %[[PW:.*]], %[[NMW:.*]], %[[NVW:.*]] = nn.adamw %[[W]], %[[DW]], %[[MW]], %[[VW]], lr = %[[LR]], step = %[[STEP]], beta1 = %[[B1]], beta2 = %[[B2]], eps = %[[EPS]], weight_decay = %[[WD]] : tensor<3x5xf32>, tensor<3x5xf32>, tensor<f32>
// CHECK: %[[PB:.*]], %[[NMB:.*]], %[[NVB:.*]] = nn.adamw %[[B]], %{{.*}}, %[[MB]], %[[VB]], lr = %[[LR]], step = %[[STEP]], beta1 = %[[B1]]
// CHECK: return %{{.*}}, %[[PW]], %[[PB]], %[[NMW]], %[[NMB]], %[[NVW]], %[[NVB]]
func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"},
                   %b: tensor<5xf32> {nn.param = "fc.bias"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %y = nn.bias_add %h, %b : tensor<4x5xf32>, tensor<5xf32>
  %loss = nn.softmax_cross_entropy %y, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
