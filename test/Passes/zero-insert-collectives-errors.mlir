// RUN: zero-opt %s --split-input-file --verify-diagnostics --zero-insert-collectives

// expected-error @+1 {{zero-insert-collectives: the module has no zero.group @dp with a stage (run zero-placement first)}}
func.func @train_step(%w: tensor<4xf32>) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

// A group without a stage: zero-split-batch ran, zero-placement did not.
zero.group @dp world_size(2)

// expected-error @+1 {{zero-insert-collectives: the module has no zero.group @dp with a stage (run zero-placement first)}}
func.func @train_step(%w: tensor<4xf32>) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

zero.group @dp world_size(2) stage(1)

// expected-error @+1 {{zero-insert-collectives: argument #0 of @train_step has no placement}}
func.func @train_step(%w: tensor<4xf32>) -> tensor<f32> {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l : tensor<f32>
}

// -----

zero.group @dp world_size(2) stage(3)

func.func @train_step(%p: tensor<4xf32> {zero.placement = #zero.placement<param, sharded>},
                      %m: tensor<4xf32> {zero.placement = #zero.placement<moment, sharded>},
                      %lr: tensor<f32> {zero.placement = #zero.placement<hyper, replicated>})
    -> (tensor<f32>, tensor<4xf32>) {
  %l = arith.constant dense<0.0> : tensor<f32>
  %twice = nn.add %p, %p : tensor<4xf32>
  // expected-error @+1 {{'nn.adamw' op must update arguments of @train_step in place (zero-insert-collectives)}}
  %a, %b, %c = nn.adamw %twice, %p, %m, %m, lr = %lr, step = %lr, beta1 = %lr,
      beta2 = %lr, eps = %lr, weight_decay = %lr
      : tensor<4xf32>, tensor<4xf32>, tensor<f32>
  return %l, %a : tensor<f32>, tensor<4xf32>
}
