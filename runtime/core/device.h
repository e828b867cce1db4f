//===- device.h - The backends behind the ABI -------------------*- C++ -*-===//
//
// libzrt has one C ABI (zrt.h) and a backend behind each context: the CPU
// (cpu/), where every context starts, or a device a backend attached it to
// (cuda/, or one linked into the executable such as the emulated CUDA device
// of cuda/tests/emulation). The exported zrt_* kernels (abi/kernels.cpp) open
// the kernel's TraceScope and call the context's table of kernels
// (DeviceKernels), so the trace sees every backend alike and the generated
// program never knows which one runs.
//
// Everything else a backend does for the core is the context's
// DeviceRuntime: memory (zrt_alloc / zrt_free), moving data between the host
// and the argument buffers (the driver fills data, initialises and loads
// parameters, reads the loss back and saves on the host), waiting for the
// step's work, and the collectives' transport. The core reaches it through
// the helpers at the end of this file, which on host-addressable memory (the
// CPU's) hand out the buffers themselves, so the CPU path copies nothing.
//
// Backends register themselves by name (registerBackend) for --device to
// find; a backend that is not built is simply not registered.
//
// No CUDA type appears here: the core compiles without the CUDA toolkit.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_DEVICE_H
#define ZRT_CORE_DEVICE_H

#include "core/watchdog.h"
#include "zero/zrt.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zrt {

/// One entry per kernel of the catalogue (zero/zrt_kernels.def), typed as
/// the zrt_* function itself, so that a backend's table only compiles when
/// every signature matches the ABI.
struct DeviceKernels {
#define ZRT_KERNEL(name, backendName, params, args)                            \
  decltype(&::zrt_##name) name;
#include "zero/zrt_kernels.def"
#undef ZRT_KERNEL
};

/// One collective as abi/collectives.cpp hands it to the transport: the
/// start arguments of its catalogue line (zero/zrt_collectives.def), plus
/// what the start decided.
struct CollectiveCall {
  /// Its kind (a CollectiveKind), group, tensor bytes and label, and where
  /// it stands in the step.
  CollectiveInfo info;
  int32_t dtype = 0;
  const void *input = nullptr;
  void *output = nullptr;
  /// Elements of the whole tensor (N), and of one rank's shard (S; N for a
  /// collective of the Whole shape).
  int64_t numel = 0;
  int64_t shardNumel = 0;
  /// Null, or W*S elements of zero-filled memory for a padded collective
  /// whose tensor does not split evenly.
  void *staging = nullptr;
  /// The bytes the ledger counted for it (the trace shows them).
  int64_t countedBytes = 0;
};

/// The alignment of every buffer zrt_alloc returns and of every arena
/// offset (zero-plan-memory plans with the same).
constexpr int64_t kBufferAlignment = 64;

/// What a backend does for the core besides its kernels. One object per
/// context (zrt_context::runtime), made by the backend when the context is
/// attached to it and destroyed with the context.
class DeviceRuntime {
public:
  virtual ~DeviceRuntime() = default;

  /// `bytes` (> 0, a multiple of kBufferAlignment) of zero-filled memory,
  /// aligned to kBufferAlignment, or null when out of memory (zrt_alloc
  /// reports it, naming the size and the category).
  virtual void *allocate(int64_t bytes) = 0;
  /// An arena's block (zrt_declare_arena): as allocate(), but it need not be
  /// zero-filled, since zrt_alloc_in_arena clears every buffer placed in it.
  virtual void *allocateArena(int64_t bytes) { return allocate(bytes); }
  /// Frees what allocate() or allocateArena() returned, after every kernel
  /// queued before.
  virtual void release(void *ptr) = 0;

  /// Host memory for the host categories (ZRT_MEM_HOST_*, optimizer
  /// offload): as allocate(), but the host's CPU reads and writes it and
  /// copyToDevice / copyToHost move it (pinned on a GPU, so that the copies
  /// run at the link's speed). Null when out of memory.
  virtual void *allocateHost(int64_t bytes);
  /// Frees what allocateHost() returned; every copy from or to it has
  /// completed (the copies return once done).
  virtual void releaseHost(void *ptr);

  /// True where the host reads and writes the buffers directly and every
  /// kernel has finished when it returns (the CPU): host access then uses
  /// the buffer itself, the loss is written into host memory, and a buffer
  /// placed in an arena is cleared with memset. False on a device, also one
  /// emulated over host memory, which thus runs a GPU's paths.
  virtual bool hostAddressable() const { return false; }

  /// Host memory -> buffer and back, ordered after every kernel queued
  /// before; both return once the host memory may be reused (the copy to
  /// the host has arrived).
  virtual void copyToDevice(void *dst, const void *src, int64_t bytes) = 0;
  virtual void copyToHost(void *dst, const void *src, int64_t bytes) = 0;

  //===--- The optimizer offload's copies (abi/offload.cpp) --------------===//
  //
  // Under zero-overlap-offload each parameter's host update is a host task
  // (core/host_tasks.h) that runs on the host-task thread while the main
  // thread queues the rest of the step. On a device, the copies around it
  // must then not block the main thread, yet stay ordered:
  //
  //   main:    ... grad kernels, copyToHostQueued(g) [fence F] ... more kernels
  //   task:    waitForFence(F); AdamW on the host; uploadAfter(F, p)
  //   main:    (next use of p) orderAfterUpload(p); kernels reading p ...
  //
  // The fence F is taken where the task opens: every kernel queued before
  // it (the gradient's copy down, and the last reads of p) is done once F
  // is, so the task may read the host copies, and the upload may overwrite
  // p. The defaults are the blocking forms, right for the CPU (where the
  // device is host memory and every copy has arrived when it returns) and
  // for any backend without asynchronous copies.

  /// Whether host tasks may run on the host-task thread with this backend:
  /// the CPU, and a device that implements the ordered copies below.
  /// Otherwise each task's pieces run where the program queues them.
  virtual bool overlapsHostTasks() const { return hostAddressable(); }
  /// zrt_copy_to_host: as copyToHost, ordered after the kernels queued
  /// before, but it may return before the copy has arrived. The host reads
  /// `dst` only after waiting for a fence taken after this call.
  virtual void copyToHostQueued(void *dst, const void *src, int64_t bytes) {
    copyToHost(dst, src, bytes);
  }
  /// Main thread: a fence after all the work queued so far (0: nothing to
  /// wait for, as on the CPU). Valid until finishUploads().
  virtual int64_t fence() { return 0; }
  /// Any thread: blocks until the work before `fence` is done.
  virtual void waitForFence(int64_t fence) { (void)fence; }
  /// Host-task thread: copies host memory to `dst` once the work before
  /// `fence` is done, without waiting for the copy; the host must not
  /// write `src` again before finishUploads(). Device work queued after
  /// orderAfterUpload(dst) sees the new bytes.
  virtual void uploadAfter(int64_t fence, void *dst, const void *src,
                           int64_t bytes) {
    waitForFence(fence);
    copyToDevice(dst, src, bytes);
  }
  /// Main thread, after the task that uploads to `dst` has run: the device
  /// work queued from now on runs after that upload. Nothing if no upload
  /// to `dst` is pending.
  virtual void orderAfterUpload(const void *dst) { (void)dst; }
  /// Main thread, once no host task is pending: blocks until every upload
  /// has arrived, so their host sources may be written again, and retires
  /// the fences.
  virtual void finishUploads() {}

  /// Blocks until every kernel and collective queued so far has completed,
  /// then stops the job if a kernel recorded a data error (a bad label or
  /// token id) or a collective failed or did not complete in time.
  virtual void synchronize() = 0;

  /// The scalars of a step the driver reads back, in the backend's memory
  /// (outside the ledger: the compiler's memory plan does not model them),
  /// kNumStepScalars floats indexed by StepScalar: the loss the step
  /// function writes when the memory is not hostAddressable(), and the
  /// squared global gradient norm zrt_clip_coefficient saw (abi/kernels.cpp).
  enum StepScalar { kLoss = 0, kGradNormSquared = 1, kNumStepScalars = 2 };
  virtual float *stepScalars() = 0;

  /// Memory the backend holds for itself (GEMM workspace, scratch), which
  /// the ledger does not charge to any of the compiler's categories, in
  /// named parts (the same parts, in the same order, on every rank). None
  /// on the CPU, whose ledger then has no runtime workspace line.
  struct WorkspacePart {
    const char *name;
    int64_t bytes;
  };
  virtual std::vector<WorkspacePart> workspaceParts() const = 0;

  /// The collectives' transport. abi/collectives.cpp checks the arguments,
  /// counts the bytes and allocates (and later frees) the staging of padded
  /// collectives alike for every backend, then hands every collective of
  /// the catalogue (zero/zrt_collectives.def) over here; each backend
  /// dispatches on call.info.kind to its implementation of that kind.
  /// Returns the handle (> 0). Each transport records its collectives on
  /// the trace's comm track (with --trace), and keeps call.info for its
  /// watchdog's message.
  virtual int64_t start(const CollectiveCall &call) = 0;
  /// Orders the work queued after this call behind the collective of
  /// `handle` (the CPU blocks until it has run); an unknown handle or a
  /// second wait stops the job with the CPU backend's message.
  virtual void wait(int64_t handle) = 0;
  /// Handles started and never waited for, in order (a teardown warning).
  virtual std::vector<int64_t> unwaited() const = 0;
};

//===--- Backends ---------------------------------------------------------===//

/// A backend --device=NAME can put a context on.
struct Backend {
  const char *name;
  /// Collective over ctx's communicator (every rank calls it, and every
  /// rank reaches the same outcome). Puts `ctx`, which is on the CPU and
  /// holds no buffer yet, on the backend and sets `banner` (the startup
  /// line, rank 0's view: "device: cuda (NVIDIA H200, local rank 0 -> GPU
  /// 0)"), returning "". When some rank cannot run on it: `required`
  /// (--device=NAME) returns the error every rank agreed on (the lowest
  /// failing rank's message); otherwise (--device=auto) leaves ctx and
  /// `banner` as they are and returns "".
  std::string (*select)(zrt_context *ctx, bool required, std::string &banner);
  /// The host backend only (the CPU's), where every context starts: gives
  /// `ctx`, a context being created whose communication queue exists, the
  /// backend's kernels and runtime. Null for a device backend.
  void (*attachHost)(zrt_context *ctx) = nullptr;
};

/// Adds `backend` (a static object's constructor in the backend's own
/// translation unit, or a test's main before zrt_run). A second backend of
/// the same name replaces the first.
void registerBackend(const Backend &backend);

/// Registers a backend from a static initialiser of its translation unit.
struct BackendRegistration {
  explicit BackendRegistration(const Backend &backend) {
    registerBackend(backend);
  }
};

/// The names --device accepts besides auto, cpu and cuda (which it always
/// accepts): backends an executable registered, such as cuda-emulated.
std::vector<std::string> otherBackendNames();

/// Whether --device accepts `name`.
bool isDeviceName(const std::string &name);

/// Collective over ctx's communicator (every rank must call it, and every
/// rank reaches the same outcome). Puts ctx on the backend `name` chooses:
///  - cpu: where it already is;
///  - cuda, or any registered NAME: that backend (Backend::select); cuda in
///    a libzrt built without the CUDA backend (none registered) is an error;
///  - auto: cuda when this libzrt has it and every rank can have a GPU of
///    its own, else cpu.
/// Returns "" and sets `banner` to the startup line ("device: cpu", ...),
/// or returns the error every rank agreed on.
std::string selectDevice(zrt_context *ctx, const std::string &name,
                         std::string &banner);

/// Puts `ctx`, a context being created, on the host backend (the one
/// registered with an attachHost: the CPU's). The core reaches it through
/// the registry, never by a backend's header.
void attachHostBackend(zrt_context *ctx);

/// Stops the job unless `who` ("zrt::cuda::attach") may put `ctx` on a
/// device: the context must still be on the CPU, where every context
/// starts, and hold no buffer yet (its memory would be the CPU's).
void checkAttachable(const zrt_context *ctx, const char *who);

//===--- Host access to argument buffers ----------------------------------===//

/// Host <-> argument buffer copies: memcpy on a CPU context. Every place
/// where the host reads or writes a buffer zrt_alloc returned goes through
/// these (or storeFloatsTo / HostBuffer below).
void copyToDevice(const zrt_context *ctx, void *dst, const void *src,
                  int64_t bytes);
void copyToHost(const zrt_context *ctx, void *dst, const void *src,
                int64_t bytes);

/// storeFloats (convert.h) into an argument buffer of `dtype`, from element
/// `first` on: in place on host-addressable memory, through host staging on
/// a device.
void storeFloatsTo(const zrt_context *ctx, int32_t dtype, const float *src,
                   void *dst, int64_t first, int64_t count);

/// Waits for the step's work (DeviceRuntime::synchronize); nothing on a CPU
/// context, whose kernels have finished when they return.
void synchronizeDevice(const zrt_context *ctx);

/// `bytes` of an argument buffer as host memory: the buffer itself on
/// host-addressable memory; on a device a host copy, read from the buffer at
/// construction when `load` is set, and written back by flush().
class HostBuffer {
public:
  HostBuffer(const zrt_context *ctx, void *buffer, int64_t bytes, bool load);
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  void *data() { return host; }
  /// Device: copies the host bytes into the buffer. CPU: nothing.
  void flush();

private:
  const zrt_context *ctx;
  void *buffer;
  int64_t bytes;
  std::vector<unsigned char> copy;
  void *host;
};

} // namespace zrt

#endif // ZRT_CORE_DEVICE_H
