//===- TransformerConfig.h - Hugging Face transformer configs ---*- C++ -*-===//
//
// The decoder-only models zero-opt builds, described in Hugging Face's terms:
// GPT-2, and the Llama-shaped family (llama, mistral, qwen2) that shares one
// block (RMSNorm, rotary embeddings, grouped-query attention, SwiGLU) and
// differs in biases, sliding windows and rope scaling.
//
// parseHFConfig reads a config.json through one table of fields per family
// (TransformerConfig.cpp): every field is read into this struct, ignored
// because it cannot change the computation, or accepted only at the value
// that leaves the math unchanged and refused by name otherwise.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_LIB_FRONTEND_TRANSFORMERCONFIG_H
#define ZERO_LIB_FRONTEND_TRANSFORMERCONFIG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace zero {

/// How the rotary embedding's inverse frequencies are rescaled
/// (transformers' rope_type; see nn.rope).
struct RopeScaling {
  enum class Kind { None, Linear, Llama3 };
  Kind kind = Kind::None;
  float factor = 1.0f;         // linear, llama3
  float lowFreqFactor = 0.0f;  // llama3
  float highFreqFactor = 0.0f; // llama3
  int64_t originalMaxPositions = 0; // llama3
};

/// The hyperparameters of a GPT-2 or Llama-shaped model.
struct TransformerConfig {
  enum class Family { GPT2, Llama };
  Family family = Family::GPT2;
  std::string modelType = "gpt2"; // gpt2, llama, mistral, qwen2
  int64_t vocabSize = 0;
  int64_t maxPositions = 0;
  int64_t hidden = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t kvHeads = 0;      // Llama: grouped-query heads; GPT-2: heads.
  int64_t headDim = 0;      // hidden / heads unless the config says.
  int64_t intermediate = 0; // MLP width.
  float normEps = 1e-5f;
  float ropeTheta = 10000.0f;
  RopeScaling ropeScaling;
  float initStd = 0.02f;
  bool tieEmbeddings = true;
  bool qkvBias = false;    // bias on q_proj, k_proj, v_proj (qwen2, llama)
  bool outputBias = false; // bias on o_proj (llama's attention_bias)
  bool mlpBias = false;    // bias on gate_proj, up_proj, down_proj (llama)
  /// The config's sliding_window, when some attention layer sees only the
  /// latest this many tokens (mistral; qwen2's sliding layers): refused when
  /// shorter than the sequence.
  std::optional<int64_t> slidingWindow;
  /// Fields of the file that no table lists, each a line for a warning.
  std::vector<std::string> warnings;
};

/// A built-in configuration: gpt2-tiny, gpt2, ..., llama-tiny and the
/// published config.json of llama3.2-1b, llama3.1-8b, qwen2.5-0.5b,
/// smollm2-135m and mistral-7b (lib/Frontend/presets/); nullopt for any other
/// name.
std::optional<TransformerConfig> getPresetConfig(llvm::StringRef name);

/// The names getPresetConfig knows, for messages.
llvm::StringRef presetNames();

/// Reads a Hugging Face config.json (GPT2Config, LlamaConfig, MistralConfig,
/// Qwen2Config; transformers 4 and 5 spellings). Errors name the file, the
/// field and its value.
llvm::Expected<TransformerConfig> parseHFConfig(llvm::StringRef path);

/// parseHFConfig on text already in memory; `source` names it in messages.
llvm::Expected<TransformerConfig> parseHFConfigText(llvm::StringRef text,
                                                    llvm::StringRef source);

/// Writes the field tables as markdown (docs/HFConfigFields.md).
void printConfigFieldTables(llvm::raw_ostream &os);

/// `config` as a Hugging Face config.json (HFConfigExport.cpp): what
/// `--export-hf` writes next to the trained weights.
std::string exportHFConfig(const TransformerConfig &config);

/// Checks the configuration describes a model zero-opt can build.
llvm::Error validateConfig(const TransformerConfig &config,
                           llvm::StringRef source);

} // namespace zero

#endif // ZERO_LIB_FRONTEND_TRANSFORMERCONFIG_H
