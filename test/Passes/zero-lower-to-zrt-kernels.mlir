// RUN: zero-opt %s --zero-split-batch=world-size=1 --nn-autodiff --zero-adamw --zero-placement=stage=0 --zero-insert-collectives --zero-lower-to-zrt | FileCheck %s

// The nn pattern family of zero-lower-to-zrt (LowerKernels.cpp): each nn
// op of a small transformer block, forward and backward, becomes its zrt
// kernel on its operands' buffers. A result gets a new zrt.alloc of its
// ledger category (activation, or grad for a whole parameter gradient)
// right before its producer, or the buffer of an operand that dies there
// when the kernel may write in place (rope, add, the activations'
// gradients, AdamW); every buffer is freed right after its last use.

// CHECK-LABEL: func.func @zero_program_step
// CHECK-SAME: (%[[IDS:arg0]]: memref<8xi32>, %[[TARGETS:arg1]]: memref<8xi32>, %[[WTE:arg2]]: memref<16x8xf32>, %[[G:arg3]]: memref<8xf32>, %[[BT:arg4]]: memref<8xf32>, %[[WQKV:arg5]]: memref<8x24xf32>, %[[GATE:arg6]]: memref<8x8xf32>, %[[UP:arg7]]: memref<8x8xf32>, %[[RG:arg8]]: memref<8xf32>, %[[OUT:arg9]]: memref<8x16xf32>
// CHECK-SAME: %[[LOSS_OUT:arg32]]: memref<f32> {zrt.loss})
// CHECK-NEXT: %[[X:.*]] = zrt.alloc activation : memref<8x8xf32>
// CHECK-NEXT: zrt.embedding %[[IDS]], %[[WTE]] -> %[[X]] : memref<8xi32>, memref<16x8xf32> -> memref<8x8xf32>
// CHECK-NEXT: %[[N:.*]] = zrt.alloc activation : memref<8x8xf32>
// CHECK-NEXT: zrt.layer_norm %[[X]], %[[G]], %[[BT]] -> %[[N]] epsilon 9.99999974E-6
// CHECK-NEXT: %[[QKV:.*]] = zrt.alloc activation : memref<8x24xf32>
// CHECK-NEXT: zrt.matmul %[[N]], %[[WQKV]] -> %[[QKV]]
// CHECK-NEXT: %[[Q:.*]] = zrt.alloc activation : memref<8x8xf32>
// CHECK-NEXT: zrt.slice_cols %[[QKV]][0] -> %[[Q]]
// CHECK-NEXT: %[[K:.*]] = zrt.alloc activation : memref<8x8xf32>
// CHECK-NEXT: zrt.slice_cols %[[QKV]][8] -> %[[K]]
// CHECK-NEXT: %[[V:.*]] = zrt.alloc activation : memref<8x8xf32>
// CHECK-NEXT: zrt.slice_cols %[[QKV]][16] -> %[[V]]
// CHECK-NEXT: zrt.free %[[QKV]] : memref<8x24xf32>
// CHECK-NEXT: zrt.rope %[[Q]] -> %[[Q]] seq_len 4 heads 2 inv_freq [1.000000e+00, 1.000000e-02]
// CHECK-NEXT: zrt.rope %[[K]] -> %[[K]] seq_len 4 heads 2
// CHECK-NEXT: %[[A:.*]] = zrt.alloc activation : memref<8x8xf32>
// CHECK-NEXT: zrt.attention %[[Q]], %[[K]], %[[V]] -> %[[A]] seq_len 4 heads 2 kv_heads 2
// The residual's input is read again in the backward: a new buffer.
// CHECK-NEXT: %[[H:.*]] = zrt.alloc activation : memref<8x8xf32>
// CHECK-NEXT: zrt.add %[[X]], %[[A]] -> %[[H]]
// CHECK-NEXT: zrt.free %[[A]]
// CHECK-NEXT: %[[M:.*]] = zrt.alloc activation : memref<8x8xf32>
// CHECK-NEXT: zrt.rms_norm %[[H]], %[[RG]] -> %[[M]] epsilon 9.99999997E-7
// CHECK-NEXT: %[[GT:.*]] = zrt.alloc activation
// CHECK-NEXT: zrt.matmul %[[M]], %[[GATE]] -> %[[GT]]
// CHECK-NEXT: %[[U:.*]] = zrt.alloc activation
// CHECK-NEXT: zrt.matmul %[[M]], %[[UP]] -> %[[U]]
// CHECK-NEXT: %[[S:.*]] = zrt.alloc activation
// CHECK-NEXT: zrt.swiglu %[[GT]], %[[U]] -> %[[S]]
// CHECK-NEXT: %[[R:.*]] = zrt.alloc activation
// CHECK-NEXT: zrt.relu %[[S]] -> %[[R]]
// CHECK-NEXT: %[[E:.*]] = zrt.alloc activation
// CHECK-NEXT: zrt.gelu %[[R]] -> %[[E]]
// CHECK-NEXT: %[[LOGITS:.*]] = zrt.alloc activation : memref<8x16xf32>
// CHECK-NEXT: zrt.matmul %[[E]], %[[OUT]] -> %[[LOGITS]]
// The loss and its gradient in one kernel (fusedGradient).
// CHECK-NEXT: %[[LOSS:.*]] = zrt.alloc activation : memref<f32>
// CHECK-NEXT: %[[SEED:.*]] = zrt.alloc activation : memref<f32>
// CHECK-NEXT: zrt.fill %[[SEED]] with 1.000000e+00
// CHECK-NEXT: %[[DLOGITS:.*]] = zrt.alloc activation : memref<8x16xf32>
// CHECK-NEXT: zrt.softmax_xent_fused %[[LOGITS]], %[[TARGETS]], %[[SEED]] -> %[[LOSS]], %[[DLOGITS]] divisor 8.000000e+00
// CHECK-NEXT: zrt.free %[[LOGITS]]
// CHECK-NEXT: zrt.free %[[SEED]]
// CHECK-NEXT: %[[DE:.*]] = zrt.alloc activation : memref<8x8xf32>
// CHECK-NEXT: zrt.matmul %[[DLOGITS]], %[[OUT]] -> %[[DE]] {transpose_b}
// A whole parameter gradient is grad memory.
// CHECK-NEXT: %[[DOUT:.*]] = zrt.alloc grad : memref<8x16xf32>
// CHECK-NEXT: zrt.matmul %[[E]], %[[DLOGITS]] -> %[[DOUT]] {transpose_a}
// CHECK-NEXT: zrt.free %[[E]]
// CHECK-NEXT: zrt.free %[[DLOGITS]]
// CHECK-NEXT: zrt.all_reduce %[[DOUT]] -> %[[DOUT]]
// The activations' gradients write over the gradient they read.
// CHECK-NEXT: zrt.gelu_grad %[[R]], %[[DE]] -> %[[DE]]
// CHECK-NEXT: zrt.free %[[R]]
// CHECK-NEXT: zrt.relu_grad %[[S]], %[[DE]] -> %[[DE]]
// CHECK-NEXT: zrt.free %[[S]]
// CHECK-NEXT: %[[DGT:.*]] = zrt.alloc activation
// CHECK-NEXT: %[[DU:.*]] = zrt.alloc activation
// CHECK-NEXT: zrt.swiglu_grad %[[GT]], %[[U]], %[[DE]] -> %[[DGT]], %[[DU]]
// CHECK: %[[DRG:.*]] = zrt.alloc grad : memref<8xf32>
// CHECK-NEXT: zrt.rms_norm_grad %[[H]], %[[RG]], %{{.*}} -> %[[DH:.*]], %[[DRG]] epsilon 9.99999997E-7
// CHECK: zrt.attention_grad %[[Q]], %[[K]], %[[V]], %[[DH]] -> %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] seq_len 4 heads 2 kv_heads 2
// CHECK: zrt.rope %[[DK]] -> %[[DK]] {{.*}} {inverse}
// CHECK-NEXT: zrt.rope %[[DQ]] -> %[[DQ]] {{.*}} {inverse}
// CHECK-NEXT: %[[DQKV:.*]] = zrt.alloc activation : memref<8x24xf32>
// CHECK-NEXT: zrt.slice_cols_grad %[[DV]] -> %[[DQKV]][16]
// CHECK: zrt.add %[[DQKV]], %{{.*}} -> %[[DQKV]]
// CHECK: zrt.layer_norm_grad %[[X]], %[[G]], %{{.*}} -> %{{.*}}, %[[DG:.*]], %[[DBT:.*]] epsilon 9.99999974E-6
// CHECK: %[[DWTE:.*]] = zrt.alloc grad : memref<16x8xf32>
// CHECK-NEXT: zrt.embedding_grad %[[IDS]], %{{.*}} -> %[[DWTE]]
// AdamW updates each parameter and its moments in their own buffers.
// CHECK: zrt.adamw %[[WTE]], %[[DWTE]], %[[WTE_M:arg10]], %[[WTE_V:arg11]] -> %[[WTE]], %[[WTE_M]], %[[WTE_V]] lr %arg26 step %arg27 beta1 %arg28 beta2 %arg29 eps %arg30 weight_decay %arg31
// CHECK-NEXT: zrt.free %[[DWTE]]
// CHECK: zrt.adamw %[[OUT]], %[[DOUT]],
// CHECK-NEXT: zrt.free %[[DOUT]]
// CHECK-NEXT: zrt.all_reduce %[[LOSS]] -> %[[LOSS]]
// CHECK-NEXT: zrt.copy 4 bytes %[[LOSS]][0] to %[[LOSS_OUT]][0]
// CHECK-NEXT: zrt.free %[[LOSS]]
// CHECK-NEXT: return
// CHECK-NOT: nn.
// CHECK-NOT: tensor<

func.func @forward(%ids: tensor<8xi32> {nn.data = "tokens"}, %labels: tensor<8xi32> {nn.data = "targets"},
                   %wte: tensor<16x8xf32> {nn.param = "wte"},
                   %g: tensor<8xf32> {nn.param = "ln.g"},
                   %bt: tensor<8xf32> {nn.param = "ln.b"},
                   %wqkv: tensor<8x24xf32> {nn.param = "qkv"},
                   %gate: tensor<8x8xf32> {nn.param = "gate"},
                   %up: tensor<8x8xf32> {nn.param = "up"},
                   %rg: tensor<8xf32> {nn.param = "rms.g"},
                   %out: tensor<8x16xf32> {nn.param = "out"}) -> tensor<f32> attributes {nn.seq_len = 4 : i64} {
  %x = nn.embedding %ids, %wte : tensor<8xi32>, tensor<16x8xf32> -> tensor<8x8xf32>
  %n = nn.layer_norm %x, %g, %bt {epsilon = 1.0e-05 : f32} : tensor<8x8xf32>, tensor<8xf32>
  %qkv = nn.matmul %n, %wqkv : tensor<8x8xf32>, tensor<8x24xf32> -> tensor<8x24xf32>
  %q = nn.slice_cols %qkv {offset = 0 : i64} : tensor<8x24xf32> -> tensor<8x8xf32>
  %k = nn.slice_cols %qkv {offset = 8 : i64} : tensor<8x24xf32> -> tensor<8x8xf32>
  %v = nn.slice_cols %qkv {offset = 16 : i64} : tensor<8x24xf32> -> tensor<8x8xf32>
  %qr = nn.rope %q {num_heads = 2 : i64, seq_len = 4 : i64, theta = 1.0e+04 : f32} : tensor<8x8xf32>
  %kr = nn.rope %k {num_heads = 2 : i64, seq_len = 4 : i64, theta = 1.0e+04 : f32} : tensor<8x8xf32>
  %a = nn.attention %qr, %kr, %v {num_heads = 2 : i64, num_kv_heads = 2 : i64, seq_len = 4 : i64} : tensor<8x8xf32>, tensor<8x8xf32>
  %h = nn.add %x, %a : tensor<8x8xf32>
  %m = nn.rms_norm %h, %rg {epsilon = 1.0e-06 : f32} : tensor<8x8xf32>, tensor<8xf32>
  %gt = nn.matmul %m, %gate : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %u = nn.matmul %m, %up : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %s = nn.swiglu %gt, %u : tensor<8x8xf32>
  %r = nn.relu %s : tensor<8x8xf32>
  %e = nn.gelu %r : tensor<8x8xf32>
  %logits = nn.matmul %e, %out : tensor<8x8xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  %loss = nn.softmax_cross_entropy %logits, %labels : tensor<8x16xf32>, tensor<8xi32> -> tensor<f32>
  return %loss : tensor<f32>
}
