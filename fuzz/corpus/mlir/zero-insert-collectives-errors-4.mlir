zero.group @dp world_size(2) stage(3)

func.func @train_step(%p: tensor<4xf32> {zero.placement = #zero.placement<param, sharded>},
                      %m: tensor<4xf32> {zero.placement = #zero.placement<moment, sharded>},
                      %lr: tensor<f32> {zero.placement = #zero.placement<hyper, replicated>})
    -> (tensor<f32>, tensor<4xf32>) {
  %l = arith.constant dense<0.0> : tensor<f32>
  %twice = nn.add %p, %p : tensor<4xf32>
  %a, %b, %c = nn.adamw %twice, %p, %m, %m, lr = %lr, step = %lr
      {beta1 = 0.9 : f32, beta2 = 0.999 : f32, eps = 1.0e-08 : f32, weight_decay = 0.0 : f32}
      : tensor<4xf32>, tensor<4xf32>, tensor<f32>
  return %l, %a : tensor<f32>, tensor<4xf32>
}
