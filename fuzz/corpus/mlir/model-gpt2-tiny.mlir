module attributes {nn.hf_config = "{\0A  \22activation_function\22: \22gelu_new\22,\0A  \22architectures\22: [\0A    \22GPT2LMHeadModel\22\0A  ],\0A  \22attn_pdrop\22: 0,\0A  \22embd_pdrop\22: 0,\0A  \22initializer_range\22: 0.02,\0A  \22layer_norm_epsilon\22: 1.0000000000000001e-05,\0A  \22model_type\22: \22gpt2\22,\0A  \22n_embd\22: 64,\0A  \22n_head\22: 4,\0A  \22n_inner\22: 256,\0A  \22n_layer\22: 2,\0A  \22n_positions\22: 64,\0A  \22resid_pdrop\22: 0,\0A  \22tie_word_embeddings\22: true,\0A  \22torch_dtype\22: \22float32\22,\0A  \22vocab_size\22: 256\0A}\0A"} {
  func.func @forward(%arg0: tensor<8xi32> {nn.data = "tokens"}, %arg1: tensor<8xi32> {nn.data = "targets"}, %arg2: tensor<8xi32> {nn.data = "positions"}, %arg3: tensor<256x64xf32> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "wte.weight"}, %arg4: tensor<64x64xf32> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "wpe.weight"}, %arg5: tensor<64xf32> {nn.init = "ones", nn.param = "h.0.ln_1.weight"}, %arg6: tensor<64xf32> {nn.init = "zeros", nn.param = "h.0.ln_1.bias"}, %arg7: tensor<64x192xf32> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "h.0.attn.c_attn.weight"}, %arg8: tensor<192xf32> {nn.init = "zeros", nn.param = "h.0.attn.c_attn.bias"}, %arg9: tensor<64x64xf32> {nn.init = "normal", nn.init_scale = 0.00999999977 : f32, nn.param = "h.0.attn.c_proj.weight"}, %arg10: tensor<64xf32> {nn.init = "zeros", nn.param = "h.0.attn.c_proj.bias"}, %arg11: tensor<64xf32> {nn.init = "ones", nn.param = "h.0.ln_2.weight"}, %arg12: tensor<64xf32> {nn.init = "zeros", nn.param = "h.0.ln_2.bias"}, %arg13: tensor<64x256xf32> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "h.0.mlp.c_fc.weight"}, %arg14: tensor<256xf32> {nn.init = "zeros", nn.param = "h.0.mlp.c_fc.bias"}, %arg15: tensor<256x64xf32> {nn.init = "normal", nn.init_scale = 0.00999999977 : f32, nn.param = "h.0.mlp.c_proj.weight"}, %arg16: tensor<64xf32> {nn.init = "zeros", nn.param = "h.0.mlp.c_proj.bias"}, %arg17: tensor<64xf32> {nn.init = "ones", nn.param = "h.1.ln_1.weight"}, %arg18: tensor<64xf32> {nn.init = "zeros", nn.param = "h.1.ln_1.bias"}, %arg19: tensor<64x192xf32> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "h.1.attn.c_attn.weight"}, %arg20: tensor<192xf32> {nn.init = "zeros", nn.param = "h.1.attn.c_attn.bias"}, %arg21: tensor<64x64xf32> {nn.init = "normal", nn.init_scale = 0.00999999977 : f32, nn.param = "h.1.attn.c_proj.weight"}, %arg22: tensor<64xf32> {nn.init = "zeros", nn.param = "h.1.attn.c_proj.bias"}, %arg23: tensor<64xf32> {nn.init = "ones", nn.param = "h.1.ln_2.weight"}, %arg24: tensor<64xf32> {nn.init = "zeros", nn.param = "h.1.ln_2.bias"}, %arg25: tensor<64x256xf32> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "h.1.mlp.c_fc.weight"}, %arg26: tensor<256xf32> {nn.init = "zeros", nn.param = "h.1.mlp.c_fc.bias"}, %arg27: tensor<256x64xf32> {nn.init = "normal", nn.init_scale = 0.00999999977 : f32, nn.param = "h.1.mlp.c_proj.weight"}, %arg28: tensor<64xf32> {nn.init = "zeros", nn.param = "h.1.mlp.c_proj.bias"}, %arg29: tensor<64xf32> {nn.init = "ones", nn.param = "ln_f.weight"}, %arg30: tensor<64xf32> {nn.init = "zeros", nn.param = "ln_f.bias"}) -> tensor<f32> attributes {nn.seq_len = 4 : i64} {
    %0 = nn.embedding %arg0, %arg3 : tensor<8xi32>, tensor<256x64xf32> -> tensor<8x64xf32>
    %1 = nn.embedding %arg2, %arg4 : tensor<8xi32>, tensor<64x64xf32> -> tensor<8x64xf32>
    %2 = nn.add %0, %1 : tensor<8x64xf32>
    %3 = nn.layer_norm %2, %arg5, %arg6 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xf32>, tensor<64xf32>
    %4 = nn.matmul %3, %arg7 : tensor<8x64xf32>, tensor<64x192xf32> -> tensor<8x192xf32>
    %5 = nn.bias_add %4, %arg8 : tensor<8x192xf32>, tensor<192xf32>
    %6 = nn.slice_cols %5 {offset = 0 : i64} : tensor<8x192xf32> -> tensor<8x64xf32>
    %7 = nn.slice_cols %5 {offset = 64 : i64} : tensor<8x192xf32> -> tensor<8x64xf32>
    %8 = nn.slice_cols %5 {offset = 128 : i64} : tensor<8x192xf32> -> tensor<8x64xf32>
    %9 = nn.attention %6, %7, %8 {num_heads = 4 : i64, num_kv_heads = 4 : i64, seq_len = 4 : i64} : tensor<8x64xf32>, tensor<8x64xf32>
    %10 = nn.matmul %9, %arg9 : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
    %11 = nn.bias_add %10, %arg10 : tensor<8x64xf32>, tensor<64xf32>
    %12 = nn.add %2, %11 : tensor<8x64xf32>
    %13 = nn.layer_norm %12, %arg11, %arg12 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xf32>, tensor<64xf32>
    %14 = nn.matmul %13, %arg13 : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
    %15 = nn.bias_add %14, %arg14 : tensor<8x256xf32>, tensor<256xf32>
    %16 = nn.gelu %15 : tensor<8x256xf32>
    %17 = nn.matmul %16, %arg15 : tensor<8x256xf32>, tensor<256x64xf32> -> tensor<8x64xf32>
    %18 = nn.bias_add %17, %arg16 : tensor<8x64xf32>, tensor<64xf32>
    %19 = nn.add %12, %18 : tensor<8x64xf32>
    %20 = nn.layer_norm %19, %arg17, %arg18 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xf32>, tensor<64xf32>
    %21 = nn.matmul %20, %arg19 : tensor<8x64xf32>, tensor<64x192xf32> -> tensor<8x192xf32>
    %22 = nn.bias_add %21, %arg20 : tensor<8x192xf32>, tensor<192xf32>
    %23 = nn.slice_cols %22 {offset = 0 : i64} : tensor<8x192xf32> -> tensor<8x64xf32>
    %24 = nn.slice_cols %22 {offset = 64 : i64} : tensor<8x192xf32> -> tensor<8x64xf32>
    %25 = nn.slice_cols %22 {offset = 128 : i64} : tensor<8x192xf32> -> tensor<8x64xf32>
    %26 = nn.attention %23, %24, %25 {num_heads = 4 : i64, num_kv_heads = 4 : i64, seq_len = 4 : i64} : tensor<8x64xf32>, tensor<8x64xf32>
    %27 = nn.matmul %26, %arg21 : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32>
    %28 = nn.bias_add %27, %arg22 : tensor<8x64xf32>, tensor<64xf32>
    %29 = nn.add %19, %28 : tensor<8x64xf32>
    %30 = nn.layer_norm %29, %arg23, %arg24 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xf32>, tensor<64xf32>
    %31 = nn.matmul %30, %arg25 : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
    %32 = nn.bias_add %31, %arg26 : tensor<8x256xf32>, tensor<256xf32>
    %33 = nn.gelu %32 : tensor<8x256xf32>
    %34 = nn.matmul %33, %arg27 : tensor<8x256xf32>, tensor<256x64xf32> -> tensor<8x64xf32>
    %35 = nn.bias_add %34, %arg28 : tensor<8x64xf32>, tensor<64xf32>
    %36 = nn.add %29, %35 : tensor<8x64xf32>
    %37 = nn.layer_norm %36, %arg29, %arg30 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xf32>, tensor<64xf32>
    %38 = nn.matmul %37, %arg3 transpose_rhs : tensor<8x64xf32>, tensor<256x64xf32> -> tensor<8x256xf32>
    %39 = nn.softmax_cross_entropy %38, %arg1 : tensor<8x256xf32>, tensor<8xi32> -> tensor<f32>
    return %39 : tensor<f32>
  }
}

