//===- batches.h - The data and scalar arguments of a step ------*- C++ -*-===//
//
// Each step the driver writes this rank's rows of the global batch (from the
// synthetic classification data or from the token file) and the scalars
// (learning rate, step, clipping threshold) into the step's arguments. The
// rows depend only on the step and the global row index, never on the
// world size, which is what makes every world size train the same model.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_BATCHES_H
#define ZRT_CORE_BATCHES_H

#include "core/context.h"
#include "core/data.h"
#include "core/flags.h"
#include "core/tokens.h"

#include <memory>
#include <string>
#include <vector>

namespace zrt {

class Batches {
public:
  Batches(zrt_context *ctx, uint64_t seed);

  /// Opens and checks the token file of an LM program (this rank's share of
  /// the ids); "" or the error. Not collective: the caller agrees.
  std::string openTokens(const std::string &path);

  /// Fills every data and scalar argument for `step` (0-based).
  /// Fills the scalars of `step` and the data of its micro-batch `micro`
  /// (the global batches follow one another: step * micro-batches + micro).
  void fill(int64_t step, int64_t micro, const std::vector<void *> &buffers,
            const Options &options);

  /// --dump-batch (collective): fills the first `steps` steps and prints
  /// every global row of every data argument from rank 0, so that runs at
  /// different world sizes can be compared line by line.
  void dump(int64_t steps, const std::vector<void *> &buffers,
            const Options &options);

private:
  void fillClassify(int64_t step, const std::vector<void *> &buffers);
  void fillLm(int64_t step, const std::vector<void *> &buffers);
  void printRows(int64_t step, const ArgDesc &arg, const void *buffer);

  zrt_context *ctx;
  std::unique_ptr<SyntheticData> synthetic;
  TokenFile tokens;
};

} // namespace zrt

#endif // ZRT_CORE_BATCHES_H
