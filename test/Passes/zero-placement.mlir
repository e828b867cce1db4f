// RUN: zero-opt %s --nn-autodiff --zero-adamw --zero-placement=stage=0 | FileCheck %s --check-prefix=S0
// RUN: zero-opt %s --nn-autodiff --zero-adamw --zero-placement=stage=1 | FileCheck %s --check-prefix=S1
// RUN: zero-opt %s --nn-autodiff --zero-adamw --zero-placement=stage=2 | FileCheck %s --check-prefix=S2
// RUN: zero-opt %s --nn-autodiff --zero-adamw --zero-placement=stage=3 | FileCheck %s --check-prefix=S3

// The placement pass only annotates: which roles are sharded is the stage,
// recorded on the module's group.
// S0: zero.group @dp world_size(2) stage(0)
// S1: zero.group @dp world_size(2) stage(1)
// S2: zero.group @dp world_size(2) stage(2)
// S3: zero.group @dp world_size(2) stage(3)
// S0-LABEL: func.func @train_step
// S0: {nn.param = "fc.weight", zero.placement = #zero.placement<param, replicated>}
// S0: {nn.adam_m = "fc.weight", zero.placement = #zero.placement<moment, replicated>}
// S0: {nn.hyper = "lr", zero.placement = #zero.placement<hyper, replicated>}
// S0: attributes {zero.grads = #zero.placement<grad, replicated>}
// S0-NOT: zero.all_reduce

// S1-LABEL: func.func @train_step
// S1: {nn.param = "fc.weight", zero.placement = #zero.placement<param, replicated>}
// S1: {nn.adam_m = "fc.weight", zero.placement = #zero.placement<moment, sharded>}
// S1: attributes {zero.grads = #zero.placement<grad, replicated>}

// S2-LABEL: func.func @train_step
// S2: {nn.param = "fc.weight", zero.placement = #zero.placement<param, replicated>}
// S2: {nn.adam_m = "fc.weight", zero.placement = #zero.placement<moment, sharded>}
// S2: attributes {zero.grads = #zero.placement<grad, sharded>}

// S3-LABEL: func.func @train_step
// S3: tensor<4x3xf32> {zero.placement = #zero.placement<data, sharded>}
// S3: {nn.param = "fc.weight", zero.placement = #zero.placement<param, sharded>}
// S3: {nn.adam_v = "fc.weight", zero.placement = #zero.placement<moment, sharded>}
// S3: {nn.hyper = "step", zero.placement = #zero.placement<hyper, replicated>}
// S3: attributes {zero.grads = #zero.placement<grad, sharded>}

// Already split for 2 ranks: the group zero-split-batch would declare.
zero.group @dp world_size(2)

func.func @forward(%x: tensor<4x3xf32>, %labels: tensor<4xi32>,
                   %w: tensor<3x5xf32> {nn.param = "fc.weight"}) -> tensor<f32> {
  %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %loss = nn.softmax_cross_entropy %h, %labels : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
