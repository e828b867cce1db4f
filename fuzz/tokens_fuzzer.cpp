//===- tokens_fuzzer.cpp - the token file reader --------------------------===//
//
// TokenStream::open (runtime/driver/tokens.cpp) on any file, for a program of
// sequences of 4 tokens below 64: a file it accepts is then read for a few
// steps, every id below the vocabulary; one it refuses gets a message.
//
//===----------------------------------------------------------------------===//
#include "driver/tokens.h"
#include "file_input.h"

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = writeInput(".bin", data, size);
  const int64_t vocab = 64, seqLen = 4, batch = 3;
  {
    zrt::TokenStream tokens;
    if (tokens.open("--data", path, vocab, seqLen, /*rank=*/0, /*worldSize=*/1)
            .empty()) {
      std::vector<int32_t> ids(batch * seqLen), targets(batch * seqLen);
      for (int64_t step = 0; step < 3; ++step) {
        tokens.fill(step, 0, batch, batch, seqLen, ids.data(), targets.data(),
                    nullptr);
        for (size_t i = 0; i < ids.size(); ++i)
          if (ids[i] < 0 || ids[i] >= vocab || targets[i] < 0 ||
              targets[i] >= vocab)
            std::abort(); // an id the open() check let through
      }
    }
  }
  unlink(path.c_str());
  return 0;
}
