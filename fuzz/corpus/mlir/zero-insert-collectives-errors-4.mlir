zero.group @dp world_size(2) stage(3)

func.func @train_step(%p: tensor<4xf32> {zero.placement = #zero.placement<param, sharded>},
                      %m: tensor<4xf32> {zero.placement = #zero.placement<moment, sharded>},
                      %lr: tensor<f32> {zero.placement = #zero.placement<hyper, replicated>})
    -> (tensor<f32>, tensor<4xf32>) {
  %l = arith.constant dense<0.0> : tensor<f32>
  %twice = nn.add %p, %p : tensor<4xf32>
  %a, %b, %c = nn.adamw %twice, %p, %m, %m, lr = %lr, step = %lr, beta1 = %lr,
      beta2 = %lr, eps = %lr, weight_decay = %lr
      : tensor<4xf32>, tensor<4xf32>, tensor<f32>
  return %l, %a : tensor<f32>, tensor<4xf32>
}
