//===- MemoryPrediction.h - each rank's predicted memory and traffic -*- C++
//-*-===//
//
// The compiler placed every buffer, so it knows each rank's peak: the zrt
// program's allocations and collectives replayed the way libzrt executes
// and counts them (runtime/abi/memory.cpp, abi/collectives.cpp). zero-report
// prints the prediction; zero-check-memory-limit refuses a program whose
// peak is over a limit; zero-opt --memory-limit searches the configurations
// that would fit with it.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_PASSES_ANALYSIS_MEMORYPREDICTION_H
#define ZERO_PASSES_ANALYSIS_MEMORYPREDICTION_H

#include "zero/zrt.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

#include <array>
#include <cstdint>
#include <optional>

namespace zero {

/// The ledger's category names, indexed by zrt_mem_category.
extern const char *const kMemoryCategoryNames[ZRT_MEM_NUM_CATEGORIES];
/// Indexed by zrt_collective (the catalogue, include/zero/
/// zrt_collectives.def: its names are the runtime ledger's).
constexpr int kNumCollectiveKinds = ZRT_NUM_COLLECTIVES;
extern const char *const kCollectiveKindNames[kNumCollectiveKinds];
/// Indexed by zrt_group: the runtime ledger's names ("world", "shard",
/// "replica").
extern const char *const kGroupNames[ZRT_NUM_GROUPS];

/// Allocations and traffic of one rank, as the runtime's ledger counts them.
struct MemoryLedger {
  std::array<int64_t, ZRT_MEM_NUM_CATEGORIES> current{}, peak{};
  /// The device's memory: every category but the host ones.
  int64_t currentTotal = 0, peakTotal = 0;
  /// Host memory, for --offload=optimizer (ZRT_MEM_HOST_*).
  int64_t currentHost = 0, peakHost = 0;
  /// --offload's copies: [0] to the host, [1] to the device.
  std::array<int64_t, 2> offloadBytes{}, offloadCalls{};
  std::array<int64_t, kNumCollectiveKinds> bytes{}, calls{}, elements{};
  /// The element sizes each kind moved (bit b: 2^b bytes), so the report
  /// can say that --reduce-dtype=fp32 moves 4-byte gradient elements.
  std::array<unsigned, kNumCollectiveKinds> elementBytesSeen{};
  /// The same bytes and calls per group the collectives ran over.
  std::array<int64_t, ZRT_NUM_GROUPS> groupBytes{}, groupCalls{};
  /// On the CUDA backend, outside the categories: the attention backward's
  /// statistics buffer, grown to the largest call (zrt.h).
  int64_t attentionStatistics = 0;

  void allocate(int32_t category, int64_t size);
  void release(int32_t category, int64_t size);
  /// The device category of the largest peak.
  int32_t largestCategory() const;
};

/// Arena sizes per category: the arguments, and the temporaries as
/// zero-plan-memory laid them out (absent when it did not run).
struct PlannedArenas {
  bool planned = false;
  std::array<int64_t, ZRT_MEM_NUM_CATEGORIES> persistent{}, transient{};
  /// The plan with one arena for the temporaries of every category, and
  /// whether it binds (the description declares it) instead of `transient`.
  int64_t shared = 0;
  bool sharedBinds = false;
  /// The staging copies of padded collectives: planned, not reserved (the
  /// runtime allocates them as they run).
  int64_t staging = 0;
};

/// The model and placement facts the ZeRO formulas need.
struct ProgramFacts {
  int64_t worldSize = 1, stage = 0, microBatches = 1;
  /// Hybrid sharding's group size (zrt.declare_shard_groups); 0 without.
  int64_t shardGroupSize = 0;
  /// --deterministic: the rows each rank computes per micro-batch (0: the
  /// program's sums are in floating point).
  int64_t deterministicChunkRows = 0;
  int64_t numParams = 0;  // Psi
  int64_t paramBytes = 0; // bytes per parameter element (2 or 4)
  /// Times the gradients are reduced per step: once per micro-batch, or
  /// once from local accumulators in the apply function.
  int64_t gradientReductions = 1;
};

struct RankPrediction {
  MemoryLedger ledger;
  PlannedArenas arenas;
  ProgramFacts facts;
};

/// Replays the zrt program of `module` (zero-lower-to-zrt's output,
/// planned or not): one step (every micro-batch) and the apply function.
/// Fails with an error on the module, naming `passName`, when it is not a
/// zrt program.
mlir::FailureOr<RankPrediction> predictRank(mlir::ModuleOp module,
                                            llvm::StringRef passName);

/// The prediction for a copy of `module` compiled through `pm` (which must
/// end at the zrt program), or nullopt when the copy does not compile. The
/// copy is nested in `module`, because a pass may run a pipeline only on
/// what it owns (`runPipeline`, the pass's own), and is erased before this
/// returns; its diagnostics are dropped (the real pipeline reports them).
std::optional<RankPrediction> predictCompiledCopy(
    mlir::ModuleOp module, mlir::OpPassManager &pm, llvm::StringRef passName,
    llvm::function_ref<mlir::LogicalResult(mlir::OpPassManager &,
                                           mlir::ModuleOp)>
        runPipeline);

/// A byte count as users write it: 123, 1.5e9, 512KiB, 80GiB, 40GB, 2MB
/// (K/M/G/T: powers of 1000 with B or alone, of 1024 with iB). nullopt when
/// the text is not one, or is not positive.
std::optional<int64_t> parseByteSize(llvm::StringRef text);

/// A pass's `limit` option as bytes, or an error on `op` naming `passName`
/// and the text (the memory-limit passes word it alike).
mlir::FailureOr<int64_t> parseLimitOption(mlir::Operation *op,
                                          llvm::StringRef passName,
                                          llvm::StringRef limit);

} // namespace zero

#endif // ZERO_PASSES_ANALYSIS_MEMORYPREDICTION_H
