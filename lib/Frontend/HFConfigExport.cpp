//===- HFConfigExport.cpp - A TransformerConfig as Hugging Face's JSON ----===//
//
// The config.json of `--export-hf`: the fields that decide what the model
// computes, in the form transformers' GPT2Config, LlamaConfig,
// MistralConfig and Qwen2Config read, so that `from_pretrained` on the
// exported directory builds the model zero-opt trained. Written from the
// parsed config (not the text it came from) so that built-in presets export
// too; test/e2e/export-hf.test loads the result in transformers.
//
//===----------------------------------------------------------------------===//

#include "lib/Frontend/TransformerConfig.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cstdio>
#include <cstdlib>

using namespace zero;

/// The shortest decimal that reads back as `value` (0.02, not the
/// double nearest the float 0.02, 0.019999999552965164).
static double decimal(float value) {
  for (int digits = 6;; ++digits) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.*g", digits, (double)value);
    double parsed = std::strtod(text, nullptr);
    if ((float)parsed == value || digits >= 9)
      return parsed;
  }
}

static llvm::json::Value ropeScalingJson(const RopeScaling &scaling) {
  switch (scaling.kind) {
  case RopeScaling::Kind::None:
    return nullptr;
  case RopeScaling::Kind::Linear:
    return llvm::json::Object{{"rope_type", "linear"},
                              {"factor", decimal(scaling.factor)}};
  case RopeScaling::Kind::Llama3:
    return llvm::json::Object{
        {"rope_type", "llama3"},
        {"factor", decimal(scaling.factor)},
        {"low_freq_factor", decimal(scaling.lowFreqFactor)},
        {"high_freq_factor", decimal(scaling.highFreqFactor)},
        {"original_max_position_embeddings", scaling.originalMaxPositions}};
  }
  return nullptr;
}

std::string zero::exportHFConfig(const TransformerConfig &config) {
  llvm::json::Object json;
  if (config.family == TransformerConfig::Family::GPT2) {
    json = llvm::json::Object{
        {"model_type", "gpt2"},
        {"architectures", llvm::json::Array{"GPT2LMHeadModel"}},
        {"vocab_size", config.vocabSize},
        {"n_positions", config.maxPositions},
        {"n_embd", config.hidden},
        {"n_layer", config.layers},
        {"n_head", config.heads},
        {"n_inner", config.intermediate},
        {"activation_function", "gelu_new"},
        {"layer_norm_epsilon", decimal(config.normEps)},
        {"initializer_range", decimal(config.initStd)},
        {"tie_word_embeddings", config.tieEmbeddings},
        {"resid_pdrop", 0.0},
        {"embd_pdrop", 0.0},
        {"attn_pdrop", 0.0}};
  } else {
    std::string architecture = config.modelType == "mistral" ? "Mistral"
                               : config.modelType == "qwen2" ? "Qwen2"
                                                             : "Llama";
    json = llvm::json::Object{
        {"model_type", config.modelType},
        {"architectures",
         llvm::json::Array{architecture + "ForCausalLM"}},
        {"vocab_size", config.vocabSize},
        {"hidden_size", config.hidden},
        {"intermediate_size", config.intermediate},
        {"num_hidden_layers", config.layers},
        {"num_attention_heads", config.heads},
        {"num_key_value_heads", config.kvHeads},
        {"head_dim", config.headDim},
        {"max_position_embeddings", config.maxPositions},
        {"rms_norm_eps", decimal(config.normEps)},
        {"rope_theta", decimal(config.ropeTheta)},
        {"rope_scaling", ropeScalingJson(config.ropeScaling)},
        {"hidden_act", "silu"},
        {"initializer_range", decimal(config.initStd)},
        {"tie_word_embeddings", config.tieEmbeddings},
        {"attention_dropout", 0.0}};
    if (config.modelType == "llama") {
      // Llama's one switch covers q, k, v and o alike.
      json["attention_bias"] = config.qkvBias;
      json["mlp_bias"] = config.mlpBias;
    }
    if (config.modelType == "mistral")
      json["sliding_window"] = config.slidingWindow
                                   ? llvm::json::Value(*config.slidingWindow)
                                   : llvm::json::Value(nullptr);
    if (config.modelType == "qwen2")
      json["use_sliding_window"] = false;
  }
  json["torch_dtype"] = "float32";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(json))) << "\n";
  return text;
}
