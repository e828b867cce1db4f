//===- hf_config_fuzzer.cpp - the Hugging Face config reader --------------===//
//
// parseHFConfigText (lib/Frontend/TransformerConfig.cpp) on any text: a
// configuration, checked by validateConfig, or an error naming the field,
// never a crash or an assertion (the reader asserts that every key it reads
// is in its tables).
//
//===----------------------------------------------------------------------===//
#include "lib/Frontend/TransformerConfig.h"

#include "llvm/Support/Error.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::Expected<zero::TransformerConfig> config =
      zero::parseHFConfigText(text, "fuzz/config.json");
  if (!config) {
    llvm::consumeError(config.takeError());
    return 0;
  }
  llvm::consumeError(zero::validateConfig(*config, "fuzz/config.json"));
  return 0;
}
