module attributes {nn.hf_config = "{\0A  \22architectures\22: [\0A    \22LlamaForCausalLM\22\0A  ],\0A  \22attention_bias\22: false,\0A  \22attention_dropout\22: 0,\0A  \22head_dim\22: 16,\0A  \22hidden_act\22: \22silu\22,\0A  \22hidden_size\22: 64,\0A  \22initializer_range\22: 0.02,\0A  \22intermediate_size\22: 176,\0A  \22max_position_embeddings\22: 64,\0A  \22mlp_bias\22: false,\0A  \22model_type\22: \22llama\22,\0A  \22num_attention_heads\22: 4,\0A  \22num_hidden_layers\22: 2,\0A  \22num_key_value_heads\22: 2,\0A  \22rms_norm_eps\22: 1.0000000000000001e-05,\0A  \22rope_scaling\22: null,\0A  \22rope_theta\22: 10000,\0A  \22tie_word_embeddings\22: false,\0A  \22torch_dtype\22: \22float32\22,\0A  \22vocab_size\22: 256\0A}\0A"} {
  func.func @forward(%arg0: tensor<8xi32> {nn.data = "tokens"}, %arg1: tensor<8xi32> {nn.data = "targets"}, %arg2: tensor<256x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.embed_tokens.weight"}, %arg3: tensor<64xbf16> {nn.init = "ones", nn.param = "model.layers.0.input_layernorm.weight"}, %arg4: tensor<64x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.0.self_attn.q_proj.weight"}, %arg5: tensor<32x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.0.self_attn.k_proj.weight"}, %arg6: tensor<32x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.0.self_attn.v_proj.weight"}, %arg7: tensor<64x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.0.self_attn.o_proj.weight"}, %arg8: tensor<64xbf16> {nn.init = "ones", nn.param = "model.layers.0.post_attention_layernorm.weight"}, %arg9: tensor<176x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.0.mlp.gate_proj.weight"}, %arg10: tensor<176x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.0.mlp.up_proj.weight"}, %arg11: tensor<64x176xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.0.mlp.down_proj.weight"}, %arg12: tensor<64xbf16> {nn.init = "ones", nn.param = "model.layers.1.input_layernorm.weight"}, %arg13: tensor<64x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.1.self_attn.q_proj.weight"}, %arg14: tensor<32x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.1.self_attn.k_proj.weight"}, %arg15: tensor<32x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.1.self_attn.v_proj.weight"}, %arg16: tensor<64x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.1.self_attn.o_proj.weight"}, %arg17: tensor<64xbf16> {nn.init = "ones", nn.param = "model.layers.1.post_attention_layernorm.weight"}, %arg18: tensor<176x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.1.mlp.gate_proj.weight"}, %arg19: tensor<176x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.1.mlp.up_proj.weight"}, %arg20: tensor<64x176xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "model.layers.1.mlp.down_proj.weight"}, %arg21: tensor<64xbf16> {nn.init = "ones", nn.param = "model.norm.weight"}, %arg22: tensor<256x64xbf16> {nn.init = "normal", nn.init_scale = 2.000000e-02 : f32, nn.param = "lm_head.weight"}) -> tensor<f32> attributes {nn.seq_len = 4 : i64} {
    %0 = nn.embedding %arg0, %arg2 : tensor<8xi32>, tensor<256x64xbf16> -> tensor<8x64xbf16>
    %1 = nn.rms_norm %0, %arg3 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xbf16>, tensor<64xbf16>
    %2 = nn.matmul %1, %arg4 transpose_rhs : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xbf16>
    %3 = nn.rope %2 {num_heads = 4 : i64, seq_len = 4 : i64, theta = 1.000000e+04 : f32} : tensor<8x64xbf16>
    %4 = nn.matmul %1, %arg5 transpose_rhs : tensor<8x64xbf16>, tensor<32x64xbf16> -> tensor<8x32xbf16>
    %5 = nn.rope %4 {num_heads = 2 : i64, seq_len = 4 : i64, theta = 1.000000e+04 : f32} : tensor<8x32xbf16>
    %6 = nn.matmul %1, %arg6 transpose_rhs : tensor<8x64xbf16>, tensor<32x64xbf16> -> tensor<8x32xbf16>
    %7 = nn.attention %3, %5, %6 {num_heads = 4 : i64, num_kv_heads = 2 : i64, seq_len = 4 : i64} : tensor<8x64xbf16>, tensor<8x32xbf16>
    %8 = nn.matmul %7, %arg7 transpose_rhs : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xbf16>
    %9 = nn.add %0, %8 : tensor<8x64xbf16>
    %10 = nn.rms_norm %9, %arg8 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xbf16>, tensor<64xbf16>
    %11 = nn.matmul %10, %arg9 transpose_rhs : tensor<8x64xbf16>, tensor<176x64xbf16> -> tensor<8x176xbf16>
    %12 = nn.matmul %10, %arg10 transpose_rhs : tensor<8x64xbf16>, tensor<176x64xbf16> -> tensor<8x176xbf16>
    %13 = nn.swiglu %11, %12 : tensor<8x176xbf16>
    %14 = nn.matmul %13, %arg11 transpose_rhs : tensor<8x176xbf16>, tensor<64x176xbf16> -> tensor<8x64xbf16>
    %15 = nn.add %9, %14 : tensor<8x64xbf16>
    %16 = nn.rms_norm %15, %arg12 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xbf16>, tensor<64xbf16>
    %17 = nn.matmul %16, %arg13 transpose_rhs : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xbf16>
    %18 = nn.rope %17 {num_heads = 4 : i64, seq_len = 4 : i64, theta = 1.000000e+04 : f32} : tensor<8x64xbf16>
    %19 = nn.matmul %16, %arg14 transpose_rhs : tensor<8x64xbf16>, tensor<32x64xbf16> -> tensor<8x32xbf16>
    %20 = nn.rope %19 {num_heads = 2 : i64, seq_len = 4 : i64, theta = 1.000000e+04 : f32} : tensor<8x32xbf16>
    %21 = nn.matmul %16, %arg15 transpose_rhs : tensor<8x64xbf16>, tensor<32x64xbf16> -> tensor<8x32xbf16>
    %22 = nn.attention %18, %20, %21 {num_heads = 4 : i64, num_kv_heads = 2 : i64, seq_len = 4 : i64} : tensor<8x64xbf16>, tensor<8x32xbf16>
    %23 = nn.matmul %22, %arg16 transpose_rhs : tensor<8x64xbf16>, tensor<64x64xbf16> -> tensor<8x64xbf16>
    %24 = nn.add %15, %23 : tensor<8x64xbf16>
    %25 = nn.rms_norm %24, %arg17 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xbf16>, tensor<64xbf16>
    %26 = nn.matmul %25, %arg18 transpose_rhs : tensor<8x64xbf16>, tensor<176x64xbf16> -> tensor<8x176xbf16>
    %27 = nn.matmul %25, %arg19 transpose_rhs : tensor<8x64xbf16>, tensor<176x64xbf16> -> tensor<8x176xbf16>
    %28 = nn.swiglu %26, %27 : tensor<8x176xbf16>
    %29 = nn.matmul %28, %arg20 transpose_rhs : tensor<8x176xbf16>, tensor<64x176xbf16> -> tensor<8x64xbf16>
    %30 = nn.add %24, %29 : tensor<8x64xbf16>
    %31 = nn.rms_norm %30, %arg21 {epsilon = 9.99999974E-6 : f32} : tensor<8x64xbf16>, tensor<64xbf16>
    %32 = nn.matmul %31, %arg22 transpose_rhs : tensor<8x64xbf16>, tensor<256x64xbf16> -> tensor<8x256xbf16>
    %33 = nn.softmax_cross_entropy %32, %arg1 : tensor<8x256xbf16>, tensor<8xi32> -> tensor<f32>
    return %33 : tensor<f32>
  }
}

