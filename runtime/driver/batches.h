//===- batches.h - The data and scalar arguments of a step ------*- C++ -*-===//
//
// Each step the driver writes this rank's rows of the global batch (from the
// synthetic classification data or from the token file) and the scalars
// (learning rate, step, clipping threshold) into the step's arguments. The
// rows depend only on the step and the global row index, never on the
// world size, which is what makes every world size train the same model.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_DRIVER_BATCHES_H
#define ZRT_DRIVER_BATCHES_H

#include "core/context.h"
#include "driver/data.h"
#include "driver/flags.h"
#include "driver/tokens.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace zrt {

class Batches {
public:
  Batches(zrt_context *ctx, uint64_t seed);

  /// Collective. Opens and checks the token files of an LM program
  /// (`spec`: a file, a directory or a glob, given as `flag`; each rank
  /// checks its share of the ids), and checks that every rank opened the
  /// same files. "" or, on every rank, the same error.
  std::string openTokens(const std::string &flag, const std::string &spec);

  /// Where the data stands after `steps` optimizer steps: the stream's
  /// length and the token the next step's first row starts at (a
  /// checkpoint records both). {-1, -1} for a classifier.
  std::pair<int64_t, int64_t> dataPosition(int64_t steps) const;

  /// A resumed run continues the stream at the token where the checkpoint
  /// of `steps` steps stopped (a note says so if the stream changed since).
  void resumeAt(int64_t steps, int64_t checkpointTokens, int64_t nextToken);

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
  /// "" or the error if the ranks opened different token files.
  std::string checkSameTokens();
  void fillClassify(int64_t step, const std::vector<void *> &buffers);
  void fillLm(int64_t step, const std::vector<void *> &buffers);
  void printRows(int64_t step, const ArgDesc &arg, const void *buffer);

  zrt_context *ctx;
  std::unique_ptr<SyntheticData> synthetic;
  TokenStream tokens;
};

} // namespace zrt

#endif // ZRT_DRIVER_BATCHES_H
