//===- TransformerConfig.h - GPT-2 and Llama configurations -----*- C++ -*-===//
#ifndef ZERO_LIB_FRONTEND_TRANSFORMERCONFIG_H
#define ZERO_LIB_FRONTEND_TRANSFORMERCONFIG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace zero {

/// The hyperparameters of a GPT-2 or Llama model, in Hugging Face's terms.
struct TransformerConfig {
  enum class Family { GPT2, Llama };
  Family family = Family::GPT2;
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
  float initStd = 0.02f;
  bool tieEmbeddings = true;

  int64_t numParameters() const;
};

/// A built-in configuration: gpt2-tiny, gpt2, gpt2-medium, gpt2-large,
/// gpt2-xl, llama-tiny, llama-1b; nullopt for any other name.
std::optional<TransformerConfig> getPresetConfig(llvm::StringRef name);

/// The names getPresetConfig knows, for messages.
llvm::StringRef presetNames();

/// Reads a Hugging Face config.json (GPT2Config or LlamaConfig). Errors name
/// the file and the field.
llvm::Expected<TransformerConfig> parseHFConfig(llvm::StringRef path);

/// Checks the configuration describes a model zero-opt can build.
llvm::Error validateConfig(const TransformerConfig &config,
                           llvm::StringRef source);

} // namespace zero

#endif // ZERO_LIB_FRONTEND_TRANSFORMERCONFIG_H
