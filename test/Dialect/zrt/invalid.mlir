// RUN: zero-opt %s --split-input-file --verify-diagnostics
// What each zrt verifier refuses: a kernel would otherwise read or write
// out of bounds.

func.func @declare_arg_rank() {
  // expected-error @+1 {{'zrt.declare_arg' op declares a tensor of rank 5; the runtime takes at most 4 dimensions}}
  zrt.declare_arg 0 "w" param init zeros 0.0 : tensor<1x1x1x1x2xf32>
  return
}

// -----

func.func @shard_groups_of_one() {
  // expected-error @+1 {{'zrt.declare_shard_groups' op attribute 'size' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 2}}
  zrt.declare_shard_groups size(1)
  return
}

// -----

func.func @declare_program_stage() {
  // expected-error @+1 {{'zrt.declare_program' op attribute 'stage' failed to satisfy constraint}}
  zrt.declare_program world_size 2 stage 4 task lm batch 8 x 64 features 0 classes 5
  return
}

// -----

func.func @declare_arena_empty() {
  // expected-error @+1 {{'zrt.declare_arena' op attribute 'bytes' failed to satisfy constraint}}
  zrt.declare_arena comm 0
  return
}

// -----

func.func @declare_shared_arena_empty() {
  // expected-error @+1 {{'zrt.declare_shared_arena' op attribute 'bytes' failed to satisfy constraint}}
  zrt.declare_shared_arena -64
  return
}

// -----

func.func @free_argument(%a: memref<4xf32>) {
  // expected-error @+1 {{'zrt.free' op frees a buffer that no zrt.alloc returned}}
  zrt.free %a : memref<4xf32>
  return
}

// -----

func.func @view_size(%a: memref<4xf32>) {
  // expected-error @+1 {{'zrt.view' op views 16 bytes as a buffer of 12 bytes}}
  %v = zrt.view %a : memref<4xf32> to memref<3xf32>
  return
}

// -----

func.func @copy_source(%a: memref<4xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'zrt.copy' op reads bytes [8, 24) of a source of 16 bytes}}
  zrt.copy 16 bytes %a[8] to %b[0] : memref<4xf32>, memref<8xf32>
  return
}

// -----

// Crashes of the mlir fuzz target: sizes and ends past INT64_MAX overflowed.
func.func @copy_huge(%a: memref<6xf32>, %b: memref<6xf32>) {
  // expected-error @+1 {{'zrt.copy' op reads bytes [4, 9223372036854775811) of a source of 24 bytes}}
  zrt.copy 9223372036854775807 bytes %a[4] to %b[16] : memref<6xf32>, memref<6xf32>
  return
}

// -----

func.func @view_huge(%a: memref<4611686018427387904xf32>) {
  // expected-error @+1 {{'zrt.view' op views 9223372036854775807 bytes as a buffer of 24 bytes}}
  %v = zrt.view %a : memref<4611686018427387904xf32> to memref<6xf32>
  return
}

// -----

func.func @attention_huge(%q: memref<4x8xf32>, %kv: memref<4x4611686018427387904xf32>) {
  // expected-error @+1 {{'zrt.attention' op expects q of [batch * 2, 4 * head_dim] and k, v of [batch * 2, 2 * head_dim], got 4x8 and 4x4611686018427387904}}
  zrt.attention %q, %kv, %kv -> %q seq_len 2 heads 4 kv_heads 2 : memref<4x8xf32>, memref<4x4611686018427387904xf32>
  return
}

// -----

func.func @copy_destination(%a: memref<4xf32>, %b: memref<8xf32>) {
  // expected-error @+1 {{'zrt.copy' op writes bytes [24, 40) of a destination of 32 bytes}}
  zrt.copy 16 bytes %a[0] to %b[24] : memref<4xf32>, memref<8xf32>
  return
}

// -----

func.func @cast_elements(%a: memref<4xf32>, %b: memref<5xbf16>) {
  // expected-error @+1 {{'zrt.cast' op the destination has 5 elements, expected 4}}
  zrt.cast %a -> %b : memref<4xf32> -> memref<5xbf16>
  return
}

// -----

func.func @shard_slice_size(%a: memref<2x2xf32>, %b: memref<5xf32>) {
  // expected-error @+1 {{'zrt.shard_slice' op expects a 1-D shard no larger than the whole buffer}}
  zrt.shard_slice %a -> %b : memref<2x2xf32> -> memref<5xf32>
  return
}

// -----

func.func @matmul_k(%a: memref<4x5xf32>, %b: memref<4x6xf32>, %c: memref<4x6xf32>) {
  // expected-error @+1 {{'zrt.matmul' op multiplies 4x5 by 4x6 into 4x6}}
  zrt.matmul %a, %b -> %c : memref<4x5xf32>, memref<4x6xf32> -> memref<4x6xf32>
  return
}

// -----

func.func @matmul_types(%a: memref<4x5xf32>, %b: memref<5x6xbf16>, %c: memref<4x6xf32>) {
  // expected-error @+1 {{'zrt.matmul' op expects buffers of one element type, got 'f32' and 'bf16'}}
  zrt.matmul %a, %b -> %c : memref<4x5xf32>, memref<5x6xbf16> -> memref<4x6xf32>
  return
}

// -----

func.func @matmul_bias_pre(%a: memref<4x5xf32>, %b: memref<5x6xf32>, %bias: memref<6xf32>, %c: memref<4x6xf32>) {
  // expected-error @+1 {{'zrt.matmul_bias' op with a bias_gelu epilogue needs a pre-activation buffer}}
  zrt.matmul_bias %a, %b, %bias -> %c epilogue bias_gelu : memref<4x5xf32>, memref<5x6xf32>, memref<6xf32> -> memref<4x6xf32>
  return
}

// -----

func.func @matmul_bias_no_gelu(%a: memref<4x5xf32>, %b: memref<5x6xf32>, %bias: memref<6xf32>, %c: memref<4x6xf32>) {
  // expected-error @+1 {{'zrt.matmul_bias' op has a pre-activation buffer but no GELU}}
  zrt.matmul_bias %a, %b, %bias -> %c pre %c epilogue bias : memref<4x5xf32>, memref<5x6xf32>, memref<6xf32> -> memref<4x6xf32>, memref<4x6xf32>
  return
}

// -----

func.func @bias_add_width(%x: memref<4x6xf32>, %bias: memref<5xf32>) {
  // expected-error @+1 {{'zrt.bias_add' op the bias has 5 elements, expected 6}}
  zrt.bias_add %x, %bias -> %x : memref<4x6xf32>, memref<5xf32>
  return
}

// -----

func.func @sum_rows_width(%x: memref<4x6xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'zrt.sum_rows' op the row sum has 4 elements, expected 6}}
  zrt.sum_rows %x -> %y : memref<4x6xf32> -> memref<4xf32>
  return
}

// -----

func.func @add_types(%a: memref<4xf32>, %b: memref<5xf32>) {
  // expected-error @+1 {{'zrt.add' op failed to verify that all of {a, b, y} have same type}}
  "zrt.add"(%a, %b, %a) : (memref<4xf32>, memref<5xf32>, memref<4xf32>) -> ()
  return
}

// -----

func.func @softmax_xent_labels(%logits: memref<4x6xf32>, %labels: memref<3xi32>, %loss: memref<f32>) {
  // expected-error @+1 {{'zrt.softmax_xent' op the label buffer has 3 elements, expected 4}}
  zrt.softmax_xent %logits, %labels -> %loss divisor 4.0 : memref<4x6xf32>, memref<3xi32> -> memref<f32>
  return
}

// -----

func.func @softmax_xent_grad_dloss(%logits: memref<4x6xf32>, %labels: memref<4xi32>, %dloss: memref<2xf32>) {
  // expected-error @+1 {{'zrt.softmax_xent_grad' op the loss gradient has 2 elements, expected 1}}
  zrt.softmax_xent_grad %logits, %labels, %dloss -> %logits divisor 4.0 : memref<4x6xf32>, memref<4xi32>, memref<2xf32>
  return
}

// -----

func.func @softmax_xent_fused_loss(%logits: memref<4x6xf32>, %labels: memref<4xi32>, %dloss: memref<f32>, %loss: memref<2xf32>) {
  // expected-error @+1 {{'zrt.softmax_xent_fused' op the loss has 2 elements, expected 1}}
  zrt.softmax_xent_fused %logits, %labels, %dloss -> %loss, %logits divisor 4.0 : memref<4x6xf32>, memref<4xi32>, memref<f32>, memref<2xf32>
  return
}

// -----

func.func @embedding_width(%ids: memref<4xi32>, %table: memref<9x5xf32>, %out: memref<4x6xf32>) {
  // expected-error @+1 {{'zrt.embedding' op expects rows of the table's width}}
  zrt.embedding %ids, %table -> %out : memref<4xi32>, memref<9x5xf32> -> memref<4x6xf32>
  return
}

// -----

func.func @embedding_grad_ids(%ids: memref<3xi32>, %dout: memref<4x6xf32>, %dtable: memref<9x6xf32>) {
  // expected-error @+1 {{'zrt.embedding_grad' op the id buffer has 3 elements, expected 4}}
  zrt.embedding_grad %ids, %dout -> %dtable : memref<3xi32>, memref<4x6xf32> -> memref<9x6xf32>
  return
}

// -----

func.func @layer_norm_gamma(%x: memref<4x6xf32>, %g: memref<5xf32>) {
  // expected-error @+1 {{'zrt.layer_norm' op gamma has 5 elements, expected 6}}
  zrt.layer_norm %x, %g, %g -> %x epsilon 1.0e-5 : memref<4x6xf32>, memref<5xf32>
  return
}

// -----

func.func @layer_norm_grad_gamma(%x: memref<4x6xf32>, %g: memref<5xf32>) {
  // expected-error @+1 {{'zrt.layer_norm_grad' op gamma has 5 elements, expected 6}}
  zrt.layer_norm_grad %x, %g, %x -> %x, %g, %g epsilon 1.0e-5 : memref<4x6xf32>, memref<5xf32>
  return
}

// -----

func.func @rms_norm_gamma(%x: memref<4x6xf32>, %g: memref<7xf32>) {
  // expected-error @+1 {{'zrt.rms_norm' op gamma has 7 elements, expected 6}}
  zrt.rms_norm %x, %g -> %x epsilon 1.0e-6 : memref<4x6xf32>, memref<7xf32>
  return
}

// -----

func.func @rms_norm_grad_gamma(%x: memref<4x6xf32>, %g: memref<7xf32>) {
  // expected-error @+1 {{'zrt.rms_norm_grad' op gamma has 7 elements, expected 6}}
  zrt.rms_norm_grad %x, %g, %x -> %x, %g epsilon 1.0e-6 : memref<4x6xf32>, memref<7xf32>
  return
}

// -----

func.func @rope_shape(%x: memref<4x6xf32>) {
  // expected-error @+1 {{'zrt.rope' op expects [batch * 3, 2 * even head_dim], got 4x6}}
  zrt.rope %x -> %x seq_len 3 heads 2 inv_freq [1.0] : memref<4x6xf32>
  return
}

// -----

func.func @rope_table(%x: memref<4x8xf32>) {
  // expected-error @+1 {{'zrt.rope' op expects 2 inverse frequencies, got 3}}
  zrt.rope %x -> %x seq_len 2 heads 2 inv_freq [1.0, 0.5, 0.25] : memref<4x8xf32>
  return
}

// -----

func.func @attention_heads(%q: memref<4x8xf32>, %kv: memref<4x4xf32>) {
  // expected-error @+1 {{'zrt.attention' op expects q of [batch * 2, 4 * head_dim] and k, v of [batch * 2, 1 * head_dim], got 4x8 and 4x4}}
  zrt.attention %q, %kv, %kv -> %q seq_len 2 heads 4 kv_heads 1 : memref<4x8xf32>, memref<4x4xf32>
  return
}

// -----

func.func @attention_grad_rows(%q: memref<4x8xf32>, %kv: memref<3x4xf32>) {
  // expected-error @+1 {{'zrt.attention_grad' op expects q of [batch * 2, 4 * head_dim] and k, v of [batch * 2, 2 * head_dim], got 4x8 and 3x4}}
  zrt.attention_grad %q, %kv, %kv, %q -> %q, %kv, %kv seq_len 2 heads 4 kv_heads 2 : memref<4x8xf32>, memref<3x4xf32>
  return
}

// -----

func.func @slice_cols_range(%x: memref<4x18xf32>, %y: memref<4x6xf32>) {
  // expected-error @+1 {{'zrt.slice_cols' op takes columns [14, 20) of 4x18 as 4x6}}
  zrt.slice_cols %x[14] -> %y : memref<4x18xf32> -> memref<4x6xf32>
  return
}

// -----

func.func @slice_cols_grad_rows(%dy: memref<3x6xf32>, %dx: memref<4x18xf32>) {
  // expected-error @+1 {{'zrt.slice_cols_grad' op takes columns [0, 6) of 4x18 as 3x6}}
  zrt.slice_cols_grad %dy -> %dx[0] : memref<3x6xf32> -> memref<4x18xf32>
  return
}

// -----

func.func @adamw_grad(%p: memref<8xf32>, %g: memref<7xf32>, %lr: memref<f32>) {
  // expected-error @+1 {{'zrt.adamw' op the gradient has 7 elements, expected 8}}
  zrt.adamw %p, %g, %p, %p -> %p, %p, %p lr %lr step %lr beta1 %lr beta2 %lr eps %lr weight_decay %lr : memref<8xf32>, memref<7xf32>, memref<f32>
  return
}

// -----

func.func @adamw_lr(%p: memref<8xf32>, %lr: memref<2xf32>) {
  // expected-error @+1 {{'zrt.adamw' op expects hyperparameters of one element, got 'memref<2xf32>'}}
  zrt.adamw %p, %p, %p, %p -> %p, %p, %p lr %lr step %lr beta1 %lr beta2 %lr eps %lr weight_decay %lr : memref<8xf32>, memref<8xf32>, memref<2xf32>
  return
}

// -----

func.func @lion_grad(%p: memref<8xf32>, %g: memref<7xf32>, %lr: memref<f32>) {
  // expected-error @+1 {{'zrt.lion' op the gradient has 7 elements, expected 8}}
  zrt.lion %p, %g, %p -> %p, %p lr %lr beta1 %lr beta2 %lr weight_decay %lr : memref<8xf32>, memref<7xf32>, memref<f32>
  return
}

// -----

func.func @lion_lr(%p: memref<8xf32>, %lr: memref<2xf32>) {
  // expected-error @+1 {{'zrt.lion' op expects hyperparameters of one element, got 'memref<2xf32>'}}
  zrt.lion %p, %p, %p -> %p, %p lr %lr beta1 %lr beta2 %lr weight_decay %lr : memref<8xf32>, memref<8xf32>, memref<2xf32>
  return
}

// -----

func.func @all_gather_shard(%s: memref<2x5xf32>, %full: memref<3x3xf32>) {
  // expected-error @+1 {{'zrt.all_gather' op expects a 1-D shard of 1 to 9 elements, got 'memref<2x5xf32>'}}
  zrt.all_gather %s -> %full : memref<2x5xf32> -> memref<3x3xf32>
  return
}

// -----

func.func @reduce_scatter_types(%full: memref<3x3xf32>, %s: memref<5xbf16>) {
  // expected-error @+1 {{'zrt.reduce_scatter_start' op expects buffers of one element type, got 'f32' and 'bf16'}}
  %h = zrt.reduce_scatter_start %full -> %s : memref<3x3xf32> -> memref<5xbf16>
  return
}

// -----

func.func @all_reduce_types(%x: memref<4xf32>, %y: memref<2x2xf32>) {
  // expected-error @+1 {{'zrt.all_reduce' op expects input and output of one type}}
  zrt.all_reduce %x -> %y : memref<4xf32> -> memref<2x2xf32>
  return
}

// -----

func.func @dynamic_buffer(%x: memref<?xf32>) {
  // expected-error @+1 {{'zrt.relu' op operand #0 must be statically shaped memref of 32-bit float or bfloat16 type values}}
  zrt.relu %x -> %x : memref<?xf32>
  return
}

// -----

func.func @watch_gradient_size(%sq: memref<2xf32>) {
  // expected-error @+1 {{'zrt.watch_gradient' op expects a one-element squared norm, got 'memref<2xf32>'}}
  zrt.watch_gradient %sq of "fc.weight" : memref<2xf32>
  return
}

// -----

func.func @watch_gradient_name(%sq: memref<f32>) {
  // expected-error @+1 {{'zrt.watch_gradient' op expects the name of a parameter}}
  zrt.watch_gradient %sq of "" : memref<f32>
  return
}

// -----

func.func @copy_to_host_into_device(%g: memref<8xf32>) {
  %d = zrt.alloc grad : memref<8xf32>
  // expected-error @+1 {{'zrt.copy_to_host' op expects the destination in host memory, got a buffer of category 'grad'}}
  zrt.copy_to_host %g to %d : memref<8xf32>
  return
}

// -----

func.func @copy_to_device_from_device(%p: memref<8xf32>) {
  %d = zrt.alloc comm : memref<8xf32>
  // expected-error @+1 {{'zrt.copy_to_device' op expects the source in host memory, got a buffer of category 'comm'}}
  zrt.copy_to_device %d to %p : memref<8xf32>
  return
}

