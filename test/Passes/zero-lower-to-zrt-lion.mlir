// RUN: zero-opt %s --zero-lower-to-zrt | FileCheck %s
// RUN: zero-opt %s --zero-lower-to-zrt --zero-lower-zrt-to-calls | FileCheck %s --check-prefix=CALLS

// nn.lion lowers to zrt.lion, which updates the parameter and its momentum
// in place (optimizer memory), and then to the call of zrt_lion with the
// catalogue's arguments: the gradient's dtype, the buffers, the element
// count and the hyperparameters' one-element buffers (no grad_scale: NULL).

// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: (%{{.*}}: memref<4x3xf32>, %{{.*}}: memref<4xi32>, %[[W:arg[0-9]+]]: memref<3x5xf32>, %[[M:arg[0-9]+]]: memref<3x5xf32>, %[[LR:arg[0-9]+]]: memref<f32>, %[[B1:arg[0-9]+]]: memref<f32>, %[[B2:arg[0-9]+]]: memref<f32>, %[[WD:arg[0-9]+]]: memref<f32>
// CHECK: zrt.matmul %{{.*}}, %{{.*}} -> %[[DW:[0-9]+]] {transpose_a} :
// CHECK: zrt.lion %[[W]], %[[DW]], %[[M]] -> %[[W]], %[[M]] lr %[[LR]] beta1 %[[B1]] beta2 %[[B2]] weight_decay %[[WD]] : memref<3x5xf32>, memref<3x5xf32>, memref<f32>

// CALLS-LABEL: func.func private @zrt_lion(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CALLS-LABEL: func.func @zero_program_step
// CALLS: %[[NULL:[0-9]+]] = llvm.mlir.zero : !llvm.ptr
// CALLS: call @zrt_lion(%arg0, %{{[a-z0-9_]+}}, %[[P:[0-9]+]], %{{[0-9]+}}, %[[MOM:[0-9]+]], %[[P]], %[[MOM]], %c15_i64, %{{[0-9]+}}, %[[NULL]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) : (!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()

module {
  zero.group @dp world_size(1) stage(0)
  func.func @train_step(
      %x: tensor<4x3xf32> {zero.placement = #zero.placement<data, sharded>},
      %labels: tensor<4xi32> {zero.placement = #zero.placement<data, sharded>},
      %w: tensor<3x5xf32> {nn.param = "fc.weight", zero.placement = #zero.placement<param, replicated>},
      %m: tensor<3x5xf32> {nn.adam_m = "fc.weight", zero.placement = #zero.placement<moment, replicated>},
      %lr: tensor<f32> {nn.hyper = "lr", zero.placement = #zero.placement<hyper, replicated>},
      %beta1: tensor<f32> {nn.hyper = "beta1", zero.placement = #zero.placement<hyper, replicated>},
      %beta2: tensor<f32> {nn.hyper = "beta2", zero.placement = #zero.placement<hyper, replicated>},
      %wd: tensor<f32> {nn.hyper = "weight_decay", zero.placement = #zero.placement<hyper, replicated>})
      -> (tensor<f32>, tensor<3x5xf32> {zero.updates = 2 : i64}, tensor<3x5xf32> {zero.updates = 3 : i64})
      attributes {zero.grads = #zero.placement<grad, replicated>} {
    %h = nn.matmul %x, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
    %loss = nn.softmax_cross_entropy %h, %labels {divisor = 4 : i64} : tensor<4x5xf32>, tensor<4xi32> -> tensor<f32>
    %one = arith.constant dense<1.000000e+00> : tensor<f32>
    %dh = nn.softmax_cross_entropy_grad %h, %labels, %one {divisor = 4 : i64} : tensor<4x5xf32>, tensor<4xi32>, tensor<f32>
    %dw = nn.matmul %x, %dh transpose_lhs : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
    %new_w, %new_m = nn.lion %w, %dw, %m, lr = %lr, beta1 = %beta1, beta2 = %beta2, weight_decay = %wd : tensor<3x5xf32>, tensor<3x5xf32>, tensor<f32>
    return %loss, %new_w, %new_m : tensor<f32>, tensor<3x5xf32>, tensor<3x5xf32>
  }
}
