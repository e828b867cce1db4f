// RUN: zero-opt %s | FileCheck %s
// RUN: zero-opt %s | zero-opt | FileCheck %s
// RUN: zero-opt %s --mlir-print-op-generic | zero-opt | FileCheck %s
// Every zrt op reads back from its own printing (custom and generic forms).

// CHECK-LABEL: func.func @describe
func.func @describe() {
  // CHECK-NEXT: zrt.declare_program world_size 4 stage 3 task lm batch 8 x 64 features 0 classes 50257
  zrt.declare_program world_size 4 stage 3 task lm batch 8 x 64 features 0 classes 50257
  // CHECK-NEXT: zrt.declare_shard_groups size(2)
  zrt.declare_shard_groups size(2)
  // CHECK-NEXT: zrt.declare_micro_batches 2
  zrt.declare_micro_batches 2
  // CHECK-NEXT: zrt.declare_arg 0 "tokens" tokens init zeros 0.000000e+00 : tensor<128xi32>
  zrt.declare_arg 0 "tokens" tokens init zeros 0.0 : tensor<128xi32>
  // CHECK-NEXT: zrt.declare_arg 1 "h.0.w" param sharded init normal 2.000000e-02 : tensor<6x4xbf16>
  zrt.declare_arg 1 "h.0.w" param sharded init normal 0.02 : tensor<6x4xbf16>
  // CHECK-NEXT: zrt.declare_arg 2 "h.0.w" adam_m sharded host init zeros 0.000000e+00 : tensor<6x4xf32>
  zrt.declare_arg 2 "h.0.w" adam_m sharded host init zeros 0.0 : tensor<6x4xf32>
  // CHECK-NEXT: zrt.declare_arena activation 4096
  zrt.declare_arena activation 4096
  // CHECK-NEXT: zrt.declare_shared_arena 8192
  zrt.declare_shared_arena 8192
  return
}

// CHECK-LABEL: func.func @memory
func.func @memory(%a: memref<6xf32>, %loss: memref<f32> {zrt.loss}) {
  // CHECK-NEXT: %[[B:.*]] = zrt.alloc grad {arena_offset = 128 : i64} : memref<2x3xf32>
  %b = zrt.alloc grad {arena_offset = 128 : i64} : memref<2x3xf32>
  // CHECK-NEXT: %[[V:.*]] = zrt.view %[[B]] : memref<2x3xf32> to memref<6xf32>
  %v = zrt.view %b : memref<2x3xf32> to memref<6xf32>
  // CHECK-NEXT: zrt.copy 8 bytes %{{.*}}[4] to %[[V]][16] : memref<6xf32>, memref<6xf32>
  zrt.copy 8 bytes %a[4] to %v[16] : memref<6xf32>, memref<6xf32>
  // CHECK-NEXT: zrt.fill %[[B]] with -1.500000e+00 : memref<2x3xf32>
  zrt.fill %b with -1.5 : memref<2x3xf32>
  %h = zrt.alloc activation : memref<2x3xbf16>
  // CHECK: zrt.cast %[[B]] -> %{{.*}} : memref<2x3xf32> -> memref<2x3xbf16>
  zrt.cast %b -> %h : memref<2x3xf32> -> memref<2x3xbf16>
  %s = zrt.alloc optimizer : memref<2xf32>
  // CHECK: zrt.shard_slice %[[B]] -> %{{.*}} : memref<2x3xf32> -> memref<2xf32>
  zrt.shard_slice %b -> %s : memref<2x3xf32> -> memref<2xf32>
  // CHECK: zrt.free %[[V]] : memref<6xf32>
  zrt.free %v : memref<6xf32>
  zrt.free %h : memref<2x3xbf16>
  zrt.free %s : memref<2xf32>
  return
}

// CHECK-LABEL: func.func @kernels
func.func @kernels(%a: memref<5x4xf32>, %b: memref<6x5xf32>, %bias: memref<6xf32>,
                   %c: memref<4x6xf32>, %pre: memref<4x6xf32>, %ids: memref<4xi32>,
                   %table: memref<9x6xf32>, %loss: memref<f32>, %wide: memref<4x18xf32>,
                   %q: memref<4x8xf32>, %kv: memref<4x4xf32>) {
  // CHECK: zrt.matmul %{{.*}}, %{{.*}} -> %{{.*}} {transpose_a, transpose_b} : memref<5x4xf32>, memref<6x5xf32> -> memref<4x6xf32>
  zrt.matmul %a, %b -> %c {transpose_a, transpose_b} : memref<5x4xf32>, memref<6x5xf32> -> memref<4x6xf32>
  // CHECK: zrt.matmul_bias {{.*}} pre %{{.*}} epilogue bias_gelu {transpose_a, transpose_b} : memref<5x4xf32>, memref<6x5xf32>, memref<6xf32> -> memref<4x6xf32>, memref<4x6xf32>
  zrt.matmul_bias %a, %b, %bias -> %c pre %pre epilogue bias_gelu {transpose_a, transpose_b} : memref<5x4xf32>, memref<6x5xf32>, memref<6xf32> -> memref<4x6xf32>, memref<4x6xf32>
  // CHECK: zrt.bias_add {{.*}} : memref<4x6xf32>, memref<6xf32>
  zrt.bias_add %c, %bias -> %c : memref<4x6xf32>, memref<6xf32>
  // CHECK: zrt.sum_rows {{.*}} : memref<4x6xf32> -> memref<6xf32>
  zrt.sum_rows %c -> %bias : memref<4x6xf32> -> memref<6xf32>
  // CHECK: zrt.add {{.*}} : memref<4x6xf32>
  zrt.add %c, %pre -> %c : memref<4x6xf32>
  // CHECK: zrt.relu {{.*}} : memref<4x6xf32>
  zrt.relu %c -> %c : memref<4x6xf32>
  // CHECK: zrt.gelu {{.*}} : memref<4x6xf32>
  zrt.gelu %c -> %pre : memref<4x6xf32>
  // CHECK: zrt.relu_grad {{.*}} : memref<4x6xf32>
  zrt.relu_grad %c, %pre -> %pre : memref<4x6xf32>
  // CHECK: zrt.gelu_grad {{.*}} : memref<4x6xf32>
  zrt.gelu_grad %c, %pre -> %pre : memref<4x6xf32>
  // CHECK: zrt.swiglu {{.*}} : memref<4x6xf32>
  zrt.swiglu %c, %pre -> %c : memref<4x6xf32>
  // CHECK: zrt.swiglu_grad {{.*}} : memref<4x6xf32>
  zrt.swiglu_grad %c, %pre, %c -> %c, %pre : memref<4x6xf32>
  // CHECK: zrt.softmax_xent {{.*}} divisor 8.000000e+00 : memref<4x6xf32>, memref<4xi32> -> memref<f32>
  zrt.softmax_xent %c, %ids -> %loss divisor 8.0 : memref<4x6xf32>, memref<4xi32> -> memref<f32>
  // CHECK: zrt.softmax_xent_grad {{.*}} divisor 8.000000e+00 : memref<4x6xf32>, memref<4xi32>, memref<f32>
  zrt.softmax_xent_grad %c, %ids, %loss -> %pre divisor 8.0 : memref<4x6xf32>, memref<4xi32>, memref<f32>
  // CHECK: zrt.softmax_xent_fused {{.*}} divisor 8.000000e+00 : memref<4x6xf32>, memref<4xi32>, memref<f32>, memref<f32>
  zrt.softmax_xent_fused %c, %ids, %loss -> %loss, %c divisor 8.0 : memref<4x6xf32>, memref<4xi32>, memref<f32>, memref<f32>
  // CHECK: zrt.embedding {{.*}} : memref<4xi32>, memref<9x6xf32> -> memref<4x6xf32>
  zrt.embedding %ids, %table -> %c : memref<4xi32>, memref<9x6xf32> -> memref<4x6xf32>
  // CHECK: zrt.embedding_grad {{.*}} : memref<4xi32>, memref<4x6xf32> -> memref<9x6xf32>
  zrt.embedding_grad %ids, %c -> %table : memref<4xi32>, memref<4x6xf32> -> memref<9x6xf32>
  // CHECK: zrt.layer_norm {{.*}} epsilon 9.99999974E-6 : memref<4x6xf32>, memref<6xf32>
  zrt.layer_norm %c, %bias, %bias -> %pre epsilon 1.0e-5 : memref<4x6xf32>, memref<6xf32>
  // CHECK: zrt.layer_norm_grad {{.*}} epsilon 9.99999974E-6 : memref<4x6xf32>, memref<6xf32>
  zrt.layer_norm_grad %c, %bias, %pre -> %c, %bias, %bias epsilon 1.0e-5 : memref<4x6xf32>, memref<6xf32>
  // CHECK: zrt.rms_norm {{.*}} epsilon 9.99999997E-7 : memref<4x6xf32>, memref<6xf32>
  zrt.rms_norm %c, %bias -> %pre epsilon 1.0e-6 : memref<4x6xf32>, memref<6xf32>
  // CHECK: zrt.rms_norm_grad {{.*}} epsilon 9.99999997E-7 : memref<4x6xf32>, memref<6xf32>
  zrt.rms_norm_grad %c, %bias, %pre -> %c, %bias epsilon 1.0e-6 : memref<4x6xf32>, memref<6xf32>
  // CHECK: zrt.rope {{.*}} seq_len 2 heads 2 inv_freq [1.000000e+00, 1.000000e-01] {inverse} : memref<4x8xf32>
  zrt.rope %q -> %q seq_len 2 heads 2 inv_freq [1.0, 0.1] {inverse} : memref<4x8xf32>
  // CHECK: zrt.attention {{.*}} seq_len 2 heads 4 kv_heads 2 : memref<4x8xf32>, memref<4x4xf32>
  zrt.attention %q, %kv, %kv -> %q seq_len 2 heads 4 kv_heads 2 : memref<4x8xf32>, memref<4x4xf32>
  // CHECK: zrt.attention_grad {{.*}} seq_len 2 heads 4 kv_heads 2 : memref<4x8xf32>, memref<4x4xf32>
  zrt.attention_grad %q, %kv, %kv, %q -> %q, %kv, %kv seq_len 2 heads 4 kv_heads 2 : memref<4x8xf32>, memref<4x4xf32>
  // CHECK: zrt.slice_cols %{{.*}}[12] -> %{{.*}} : memref<4x18xf32> -> memref<4x6xf32>
  zrt.slice_cols %wide[12] -> %c : memref<4x18xf32> -> memref<4x6xf32>
  // CHECK: zrt.slice_cols_grad %{{.*}} -> %{{.*}}[6] : memref<4x6xf32> -> memref<4x18xf32>
  zrt.slice_cols_grad %c -> %wide[6] : memref<4x6xf32> -> memref<4x18xf32>
  // CHECK: zrt.sum_squares {{.*}} : memref<4x6xf32> -> memref<f32>
  zrt.sum_squares %c -> %loss : memref<4x6xf32> -> memref<f32>
  // CHECK: zrt.watch_gradient %{{.*}} of "fc.weight" : memref<f32>
  zrt.watch_gradient %loss of "fc.weight" : memref<f32>
  // CHECK: zrt.clip_coefficient {{.*}} : memref<f32>, memref<f32> -> memref<f32>
  zrt.clip_coefficient %loss, %loss -> %loss : memref<f32>, memref<f32> -> memref<f32>
  return
}

// CHECK-LABEL: func.func @optimizer
func.func @optimizer(%p: memref<8xf32>, %g: memref<8xbf16>, %m: memref<8xf32>,
                     %v: memref<8xf32>, %lr: memref<f32>, %step: memref<f32>,
                     %scale: memref<f32>, %b1: memref<f32>, %b2: memref<f32>,
                     %eps: memref<f32>, %wd: memref<f32>) {
  // CHECK: zrt.adamw {{.*}} lr %{{.*}} step %{{.*}} beta1 %{{.*}} beta2 %{{.*}} eps %{{.*}} weight_decay %{{.*}} scale %{{.*}} : memref<8xf32>, memref<8xbf16>, memref<f32>, memref<f32>
  zrt.adamw %p, %g, %m, %v -> %p, %m, %v lr %lr step %step beta1 %b1 beta2 %b2 eps %eps weight_decay %wd scale %scale : memref<8xf32>, memref<8xbf16>, memref<f32>, memref<f32>
  return
}

// CHECK-LABEL: func.func @lion
func.func @lion(%p: memref<8xf32>, %g: memref<8xbf16>, %m: memref<8xf32>,
                %lr: memref<f32>, %b1: memref<f32>, %b2: memref<f32>,
                %wd: memref<f32>) {
  // CHECK: zrt.lion %{{.*}}, %{{.*}}, %{{.*}} -> %{{.*}}, %{{.*}} lr %{{.*}} beta1 %{{.*}} beta2 %{{.*}} weight_decay %{{.*}} : memref<8xf32>, memref<8xbf16>, memref<f32>
  zrt.lion %p, %g, %m -> %p, %m lr %lr beta1 %b1 beta2 %b2 weight_decay %wd : memref<8xf32>, memref<8xbf16>, memref<f32>
  return
}

// CHECK-LABEL: func.func @collectives
func.func @collectives(%shard: memref<5xbf16>, %full: memref<3x3xbf16>, %x: memref<4xf32>) {
  // CHECK: zrt.all_gather {{.*}} {staging_offset = 64 : i64} : memref<5xbf16> -> memref<3x3xbf16>
  zrt.all_gather %shard -> %full {staging_offset = 64 : i64} : memref<5xbf16> -> memref<3x3xbf16>
  // CHECK: zrt.reduce_scatter %{{.*}} -> %{{.*}} of "h.0.mlp.c_fc.weight" : memref<3x3xbf16> -> memref<5xbf16>
  zrt.reduce_scatter %full -> %shard of "h.0.mlp.c_fc.weight" : memref<3x3xbf16> -> memref<5xbf16>
  // Hybrid sharding: in this rank's shard group, then across the replicas;
  // over every rank (the default) is not printed.
  // CHECK: zrt.reduce_scatter %{{.*}} -> %{{.*}} over shard of "w" : memref<3x3xbf16> -> memref<5xbf16>
  zrt.reduce_scatter %full -> %shard over shard of "w" : memref<3x3xbf16> -> memref<5xbf16>
  // CHECK: zrt.all_reduce_start %{{.*}} -> %{{.*}} over replica : memref<5xbf16> -> memref<5xbf16>
  %rr = zrt.all_reduce_start %shard -> %shard over replica : memref<5xbf16> -> memref<5xbf16>
  zrt.wait %rr
  // CHECK: zrt.all_reduce %{{.*}} -> %{{.*}} : memref<4xf32> -> memref<4xf32>
  zrt.all_reduce %x -> %x over world : memref<4xf32> -> memref<4xf32>
  // CHECK: zrt.all_reduce {{.*}} : memref<4xf32> -> memref<4xf32>
  zrt.all_reduce %x -> %x : memref<4xf32> -> memref<4xf32>
  // CHECK: %[[H:.*]] = zrt.all_gather_start {{.*}} : memref<5xbf16> -> memref<3x3xbf16>
  %h = zrt.all_gather_start %shard -> %full : memref<5xbf16> -> memref<3x3xbf16>
  // CHECK-NEXT: zrt.wait %[[H]]
  zrt.wait %h
  %r = zrt.reduce_scatter_start %full -> %shard : memref<3x3xbf16> -> memref<5xbf16>
  zrt.wait %r
  // CHECK: zrt.all_reduce_start %{{.*}} -> %{{.*}} of "bucket of 2: a, b" {staging_offset = 0 : i64} : memref<4xf32>
  %a = zrt.all_reduce_start %x -> %x of "bucket of 2: a, b" {staging_offset = 0 : i64} : memref<4xf32> -> memref<4xf32>
  zrt.wait %a
  return
}

// Optimizer offload: copies between device and host buffers, and AdamW and
// the cast on the host.
// CHECK-LABEL: func.func @offload
func.func @offload(%p: memref<8xbf16>, %g: memref<8xbf16>, %master: memref<8xf32>,
                   %m: memref<8xf32>, %v: memref<8xf32>, %s: memref<f32>) {
  // CHECK: %[[G:.*]] = zrt.alloc host_staging : memref<8xbf16>
  %hg = zrt.alloc host_staging : memref<8xbf16>
  // CHECK-NEXT: zrt.copy_to_host %{{.*}} to %[[G]] : memref<8xbf16>
  zrt.copy_to_host %g to %hg : memref<8xbf16>
  // CHECK: zrt.adamw {{.*}} on_host : memref<8xf32>, memref<8xbf16>, memref<f32>
  zrt.adamw %master, %hg, %m, %v -> %master, %m, %v lr %s step %s beta1 %s beta2 %s eps %s weight_decay %s on_host : memref<8xf32>, memref<8xbf16>, memref<f32>
  %hp = zrt.alloc host_staging : memref<8xbf16>
  // CHECK: zrt.cast %{{.*}} -> %{{.*}} on_host : memref<8xf32> -> memref<8xbf16>
  zrt.cast %master -> %hp on_host : memref<8xf32> -> memref<8xbf16>
  // CHECK-NEXT: zrt.copy_to_device %{{.*}} to %{{.*}} : memref<8xbf16>
  zrt.copy_to_device %hp to %p : memref<8xbf16>
  zrt.free %hp : memref<8xbf16>
  zrt.free %hg : memref<8xbf16>
  return
}
