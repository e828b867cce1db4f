//===- context.h - The runtime context behind zrt_context -------*- C++ -*-===//
//
// One context per process: the data-parallel communicator, the program the
// generated code declared, the memory ledger and the collective counters.
// Internal to libzrt and its tests; generated code only sees the opaque
// pointer from zrt.h.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_CONTEXT_H
#define ZRT_CORE_CONTEXT_H

#include "core/device.h"
#include "zero/zrt.h"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace zrt {

/// What zrt_declare_program recorded.
struct ProgramDesc {
  bool declared = false;
  int64_t abiVersion = 0;
  int64_t worldSize = 0;
  int64_t stage = 0;
  int32_t task = 0;
  int64_t globalBatch = 0;
  int64_t seqLen = 0;
  int64_t numFeatures = 0;
  int64_t numClasses = 0;
  int64_t microBatches = 1; // zrt_declare_micro_batches
  std::string hfConfig;      // zrt_declare_hf_config; empty if none
  /// zrt_declare_deterministic: exact sums (ZRT_EXACT), a ZRT_EXACT loss,
  /// and the rows each rank computes per micro-batch.
  bool deterministic = false;
  int64_t chunkRows = 0;
  /// zrt_declare_shard_groups: the sharded arguments are sharded over
  /// groups of shardGroupSize consecutive ranks and replicated across the
  /// groups. Without it they are sharded over every rank.
  bool shardGroups = false;
  int64_t shardGroupSize = 0;
};

/// What zrt_declare_arg recorded for one step argument, unchecked: the
/// driver validates every declaration at once (program.cpp).
struct ArgDesc {
  bool declared = false;
  std::string name;
  int32_t role = 0;
  int32_t dtype = 0;
  int32_t rank = 0;
  std::array<int64_t, 4> dims{};
  bool sharded = false;
  int32_t init = 0;
  float initScale = 0.0f;
  /// In host memory (zrt_declare_host_arg: --offload=optimizer).
  bool host = false;

  /// Elements of the whole tensor (1 for rank 0). Only meaningful once the
  /// rank and dims are validated.
  int64_t numel() const;
};

/// Current and peak bytes per zrt_mem_category, plus the peak of their sum.
struct MemoryLedger {
  std::array<int64_t, ZRT_MEM_NUM_CATEGORIES> current{};
  std::array<int64_t, ZRT_MEM_NUM_CATEGORIES> peak{};
  /// The device's memory: every category but the host ones.
  int64_t currentTotal = 0;
  int64_t peakTotal = 0;
  /// Host memory (ZRT_MEM_HOST_*, --offload=optimizer), apart.
  int64_t currentHost = 0;
  int64_t peakHost = 0;
  /// The offload copies: [0] to the host, [1] to the device.
  std::array<int64_t, 2> offloadBytes{}, offloadCalls{};
};

/// One of the context's communicators (a zrt_group) and this rank's place
/// in it.
struct CommGroup {
  /// MPI_COMM_NULL without MPI, and for a group of this rank alone (the
  /// replica group of a program without shard groups): its collectives are
  /// local copies.
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  /// Split from the context's communicator (formShardGroups): freed with
  /// the context. WORLD's is the context's own.
  bool owned = false;
};

/// "world", "shard", "replica": how messages and the ledger name a
/// zrt_group ("invalid" for anything else).
const char *groupName(int group);

/// zrt.h's collective kinds, under the runtime's names: one per line of the
/// catalogue (zero/zrt_collectives.def).
enum CollectiveKind {
#define ZRT_COLLECTIVE(KIND, name, RuntimeName, ...) RuntimeName = ZRT_##KIND,
#include "zero/zrt_collectives.def"
#undef ZRT_COLLECTIVE
  NumCollectiveKinds
};
static_assert(int(NumCollectiveKinds) == int(ZRT_NUM_COLLECTIVES),
              "CollectiveKind mirrors zrt_collective");

/// How a collective's sizes relate (the catalogue's shape column).
enum class CollectiveShape { Gather, Scatter, Whole };

/// A collective's line of the catalogue, as the runtime reads it.
struct CollectiveSpec {
  /// "all_gather": the ledger, the trace and the watchdog's messages.
  const char *name;
  /// "zrt_all_gather": what a bad call's message names.
  const char *entryPoint;
  CollectiveShape shape;
  /// Gather and Scatter: shards of S elements, W*S of them at least the
  /// tensor's numel, staged when more (abi/collectives.cpp).
  bool padded() const { return shape != CollectiveShape::Whole; }
};
const CollectiveSpec &collectiveSpec(CollectiveKind kind);

/// Calls and bytes moved per rank, per collective kind and per group (see
/// abi/collectives.cpp for how bytes are counted): each collective counts
/// once in each.
struct CollectiveCounters {
  std::array<int64_t, NumCollectiveKinds> calls{};
  std::array<int64_t, NumCollectiveKinds> bytes{};
  std::array<int64_t, ZRT_NUM_GROUPS> groupCalls{};
  std::array<int64_t, ZRT_NUM_GROUPS> groupBytes{};
};

/// --check-finite: the gradients zrt_watch_gradient showed in this step, in
/// order, and the first whose squared norm (this rank's part) is not finite.
struct GradientWatch {
  bool enabled = false;
  std::vector<const char *> params;
  int64_t firstNonFinite = -1;
};

/// Where the driver is, for the watchdog: the step it runs (1, 2, ...; 0
/// before the first), whether in a validation pass after it, and the
/// collectives the program started in it so far.
struct StepPosition {
  int64_t step = 0;
  bool validation = false;
  int64_t collectives = 0;
};

const char *categoryName(int category);
/// The name of arena `index` (a category, or ZRT_ARENA_SHARED: "shared").
const char *arenaName(int index);
/// The catalogue's name of `kind` ("invalid" for anything else: a kind
/// read from another rank).
const char *collectiveName(int kind);

class CommQueue;
class HostTasks;
class ScheduleCheck;
class Tracer;

} // namespace zrt

struct zrt_context {
  /// MPI_COMM_NULL for a single-process context made without MPI.
  MPI_Comm comm = MPI_COMM_NULL;
  /// Where to ask the other ranks when a collective stalls (watchdog.h).
  zrt::WatchdogChannel watchdog;
  int rank = 0;
  int worldSize = 1;
  /// The communicator of each zrt_group. Until formShardGroups splits them
  /// (a program that declares shard groups), SHARD is WORLD and REPLICA
  /// this rank alone.
  zrt::CommGroup groups[ZRT_NUM_GROUPS];
  zrt::ProgramDesc program;
  /// The first zrt_declare_* call made out of order (one that
  /// zrt_declare_program would silently overwrite, or a second one), which
  /// validateProgram reports with the other declaration errors; "" if none.
  std::string declarationError;
  std::vector<zrt::ArgDesc> args;
  zrt::MemoryLedger ledger;
  struct Allocation {
    int64_t bytes;
    int32_t category;
    /// Placed in its category's arena (zrt_alloc_in_arena): freeing it
    /// gives the range back to the plan, not to the allocator.
    bool inArena = false;
    /// Host memory (DeviceRuntime::allocateHost).
    bool host = false;
  };
  std::unordered_map<void *, Allocation> allocations;
  /// The compiler's arenas (zrt_declare_arena), one block per category, or
  /// the one that every category shares (index ZRT_ARENA_SHARED).
  struct Arena {
    char *base = nullptr;
    int64_t bytes = 0;
    /// The highest byte a temporary reached: the plan's size when every
    /// planned buffer ran.
    int64_t used = 0;
  };
  Arena arenas[ZRT_MEM_NUM_CATEGORIES + 1];
  /// Staging buffers of padded collectives in flight, by handle: allocated
  /// by the start and freed by the wait (abi/collectives.cpp).
  std::unordered_map<int64_t, void *> stagingByHandle;
  /// The communication thread frees and allocates collective staging while
  /// the main thread allocates: the ledger and `allocations` need a lock.
  std::mutex memoryMutex;
  /// Counted on the main thread when a collective starts.
  zrt::CollectiveCounters collectives;
  /// Set by the driver before each step and validation pass.
  zrt::StepPosition position;
  /// --check-collectives: compare every collective across ranks before it
  /// runs (CPU backend).
  bool checkCollectives = false;
  /// Whether the step ran zrt_clip_coefficient, which copied the squared
  /// global gradient norm into the runtime's step scalars (the driver
  /// clears it before each step).
  bool gradNormRecorded = false;
  /// --calibrate: while `on`, the kernels (abi/kernels.cpp; only the
  /// outermost, as zrt_matmul_bias runs zrt_matmul inside) add their count
  /// and time here, the GEMMs also their FLOPs, and the collectives
  /// (abi/collectives.cpp) the time of their starts and waits, so that the
  /// calibration has the program's own GEMM rate and what a step spends
  /// outside kernels and waits.
  struct StepTiming {
    bool on = false;
    int depth = 0;
    double gemmFlops = 0;
    int64_t gemmNs = 0, kernels = 0, kernelNs = 0;
    int64_t starts = 0, startNs = 0, waitNs = 0;
  } timing;
  zrt::GradientWatch gradientWatch;
  /// Runs the CPU transport's collectives (cpu/mpi_transport.h): on a thread
  /// of its own with MPI, inline without.
  std::unique_ptr<zrt::CommQueue> commQueue;
  /// The host tasks of zero-overlap-offload (core/host_tasks.h): on a
  /// thread of their own with MPI, inline without; never null.
  std::unique_ptr<zrt::HostTasks> hostTasks;
  /// Set by --trace before the first step; null otherwise.
  std::unique_ptr<zrt::Tracer> tracer;
  /// The compiler's plan of each collective (zrt_declare_collective_plan)
  /// and, with --check-schedule, what the run measured (never null).
  std::unique_ptr<zrt::ScheduleCheck> schedule;
  /// --check-schedule: measure every collective against the plan.
  bool checkSchedule = false;
  /// The backend the context runs on (core/device.h), never null: the CPU's
  /// from creation until a device backend attaches it. Its kernels, which
  /// the zrt_* entry points call (abi/kernels.cpp)...
  const zrt::DeviceKernels *kernels = nullptr;
  /// ... and its memory, host transfers, synchronisation and collectives.
  std::unique_ptr<zrt::DeviceRuntime> runtime;
};

namespace zrt {

/// A context on the CPU over a duplicate of `comm`, with a communication
/// thread that runs its collectives. MPI must be initialised with at least
/// MPI_THREAD_SERIALIZED (initMpi in check.h). Sets MPI_ERRORS_RETURN so
/// that every failure reaches ZRT_MPI_CHECK.
zrt_context *createContext(MPI_Comm comm);

/// A context on the CPU that needs no MPI: it pretends to be `rank` of
/// `worldSize` for kernels that only look at the rank (zrt_shard_slice).
/// Collectives on it work only when worldSize is 1.
zrt_context *createLocalContext(int rank = 0, int worldSize = 1);

/// Runs every collective still queued, joins the communication thread (a
/// warning names handles never waited for), then frees every buffer still
/// allocated and the communicator.
void destroyContext(zrt_context *ctx);

/// Blocks until the context's communication thread is idle. Every MPI call
/// the main thread makes on its own (agreement, ledger, checkpoints, trace)
/// comes after this, so MPI never sees two threads at once.
void quiesceComm(zrt_context *ctx);

/// Blocks until every host task (core/host_tasks.h) has run and its
/// uploads to the device have arrived: before the host reads or writes the
/// parameters and optimizer state (checkpoints, validation, --save,
/// teardown) or reuses the host buffers the tasks read
/// (zrt_host_wait_all).
void quiesceHostTasks(zrt_context *ctx);

/// Whether host tasks (core/host_tasks.h) run on a thread of their own:
/// ZRT_HOST_TASKS=thread (the default) or inline (each piece runs where it
/// is queued, as without zero-overlap-offload: to compare).
bool hostTasksThreaded();

/// How long a rank waits for a collective before it stops the job
/// (ZRT_COLLECTIVE_TIMEOUT_S, default 300 s; --collective-timeout sets it).
double collectiveTimeoutSeconds();

/// ceil(numel / worldSize): the element count of one shard.
int64_t shardNumel(int64_t numel, int64_t worldSize);

/// How many shards a sharded argument has: the declared shard group size,
/// or the world size without shard groups. Inline: the CUDA kernels
/// (compiled by nvcc) use it too.
inline int64_t shardCount(const zrt_context *ctx) {
  const zrt::ProgramDesc &p = ctx->program;
  return p.shardGroups && p.shardGroupSize > 0 ? p.shardGroupSize
                                               : ctx->worldSize;
}

/// Which shard of every sharded argument this rank holds: its number in its
/// shard group, rank % G (the rank itself without shard groups).
inline int64_t shardIndex(const zrt_context *ctx) {
  return ctx->rank % shardCount(ctx);
}

/// Collective over the context's communicator, once the program's
/// declarations are validated (validateProgram): a program that declared
/// shard groups of G ranks gets its SHARD communicator (ranks r / G alike)
/// and its REPLICA one (ranks r % G alike), both in rank order; otherwise
/// nothing changes. Before a device backend attaches, which makes its own
/// communicators from these.
void formShardGroups(zrt_context *ctx);

/// The group `group` of the context, or a fatal error naming `op` when it is
/// no zrt_group.
const CommGroup &commGroup(const zrt_context *ctx, int32_t group,
                           const char *op);

} // namespace zrt

#endif // ZRT_CORE_CONTEXT_H
