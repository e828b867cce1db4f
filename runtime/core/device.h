//===- device.h - Which backend runs a context's kernels --------*- C++ -*-===//
//
// libzrt has one C ABI (zrt.h) and two backends behind it. Every context
// carries a table of its backend's kernels (DeviceKernels): the CPU's
// (cpu/kernels_table.cpp) from its creation, or an accelerator's once the
// context is attached to one. The exported zrt_* kernels (abi/kernels.cpp)
// open the kernel's TraceScope and call that table, so the trace sees both
// backends, the dispatch is one indirect call, and the generated program
// never knows which backend runs.
//
// Everything else a backend must do differently is the DeviceRuntime of the
// context: memory (zrt_alloc / zrt_free), moving data between the host and the
// argument buffers (the driver fills data, initialises and loads parameters,
// reads the loss back and saves on the host), waiting for the step's work,
// and the collectives' transport. The core reaches it only through the
// helpers at the end of this file, which are plain memcpy and no-ops on a CPU
// context, so the CPU path is unchanged.
//
// No CUDA type appears here: the core compiles without the CUDA toolkit.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_DEVICE_H
#define ZRT_CORE_DEVICE_H

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

/// What a device backend does for the core besides its kernels. One object
/// per context (zrt_context::deviceRuntime), made by the backend when the
/// context is attached to a device and destroyed with the context.
class DeviceRuntime {
public:
  virtual ~DeviceRuntime() = default;

  /// `bytes` (> 0) of zero-filled device memory, or null when the device is
  /// out of memory (zrt_alloc reports it as on the CPU).
  virtual void *allocate(int64_t bytes) = 0;
  /// Frees what allocate() returned, after every kernel queued before.
  virtual void release(void *ptr) = 0;

  /// Host memory -> device buffer and back, ordered after every kernel
  /// queued before; both return once the host memory may be reused (the
  /// copy to the host has arrived).
  virtual void copyToDevice(void *dst, const void *src, int64_t bytes) = 0;
  virtual void copyToHost(void *dst, const void *src, int64_t bytes) = 0;

  /// Blocks until every kernel and collective queued so far has completed,
  /// then stops the job if a kernel recorded a data error (a bad label or
  /// token id) or a collective failed or did not complete in time.
  virtual void synchronize() = 0;

  /// Four bytes of device memory the step function writes its loss into
  /// (outside the ledger: the compiler's memory plan does not model it).
  virtual void *lossSlot() = 0;

  /// Memory the backend holds for itself (GEMM workspace, scratch), which
  /// the ledger does not charge to any of the compiler's categories, in
  /// named parts (the same parts, in the same order, on every rank).
  struct WorkspacePart {
    const char *name;
    int64_t bytes;
  };
  virtual std::vector<WorkspacePart> workspaceParts() const = 0;

  /// The collectives' transport. cpu/collectives.cpp checks the arguments,
  /// counts the bytes and allocates (and later frees) the staging of padded
  /// collectives exactly as on the CPU, then hands over here. `staging` is
  /// null or W*S elements of zero-filled memory. Returns the handle (> 0).
  virtual int64_t startAllGather(int32_t dtype, const void *shard, void *full,
                                 int64_t numel, int64_t shardNumel,
                                 void *staging, int64_t countedBytes) = 0;
  virtual int64_t startReduceScatter(int32_t dtype, const void *full,
                                     void *shard, int64_t numel,
                                     int64_t shardNumel, void *staging,
                                     int64_t countedBytes) = 0;
  virtual int64_t startAllReduce(int32_t dtype, const void *x, void *y,
                                 int64_t n, int64_t countedBytes) = 0;
  /// Orders the work queued after this call behind the collective of
  /// `handle` (it need not block the host); an unknown handle or a second
  /// wait stops the job with the CPU backend's message.
  virtual void wait(int64_t handle) = 0;
  /// Handles started and never waited for, in order (a teardown warning).
  virtual std::vector<int64_t> unwaited() const = 0;

  /// True for a device whose memory is host memory and whose kernels have
  /// finished when they return (the emulated CUDA device of
  /// runtime/cuda/tests/emulation): its collectives then run on the CPU
  /// backend's transport, and the start/wait methods above are not called.
  virtual bool collectivesOnHost() const { return false; }
};

/// --device: where a program's kernels run. External: the device an
/// executable registered with registerExternalDevice.
enum class DeviceChoice { Auto, Cpu, Cuda, External };

/// A device backend that is not libzrt's own but linked into the
/// executable: a test's main registers it before zrt_run, and --device=NAME
/// then calls `attach` on every rank's context (which must give the context
/// its DeviceKernels and DeviceRuntime, as cuda::attach does). One at most.
void registerExternalDevice(const char *name, void (*attach)(zrt_context *));
/// The registered device's name, or null.
const char *externalDeviceName();

/// Collective over ctx's communicator (every rank must call it, and every
/// rank reaches the same outcome). Attaches the chosen backend to `ctx`:
///  - cpu: nothing to do;
///  - cuda: one GPU per rank, chosen by the rank's index among the ranks on
///    its node; an error when this libzrt has no CUDA backend, when a rank
///    sees no GPU, or when a node has more ranks than GPUs;
///  - auto: cuda when this libzrt has it and every rank can have a GPU of
///    its own, else cpu.
/// Returns "" and sets `banner` to the startup line ("device: cpu", "device:
/// cuda (NVIDIA H200, local rank 0 -> GPU 0)", rank 0's view), or returns the
/// error every rank agreed on (the lowest failing rank's message).
///  - external: the registered device, on every rank.
std::string selectDevice(zrt_context *ctx, DeviceChoice choice,
                         std::string &banner);

/// Host <-> argument buffer copies: memcpy on a CPU context. Every place
/// where the host reads or writes a buffer zrt_alloc returned goes through
/// these (or storeFloatsTo / HostBuffer below).
void copyToDevice(const zrt_context *ctx, void *dst, const void *src,
                  int64_t bytes);
void copyToHost(const zrt_context *ctx, void *dst, const void *src,
                int64_t bytes);

/// storeFloats (convert.h) into an argument buffer of `dtype`, from element
/// `first` on: in place on a CPU context, through host staging on a device.
void storeFloatsTo(const zrt_context *ctx, int32_t dtype, const float *src,
                   void *dst, int64_t first, int64_t count);

/// The device runtime whose transport runs ctx's collectives, or null where
/// the CPU backend's does (a CPU context, or a device whose
/// collectivesOnHost() is true).
DeviceRuntime *deviceTransport(const zrt_context *ctx);

/// Waits for the step's work on a device (see DeviceRuntime::synchronize);
/// nothing on a CPU context, whose kernels have finished when they return.
void synchronizeDevice(const zrt_context *ctx);

/// `bytes` of an argument buffer as host memory: the buffer itself on a
/// CPU context; on a device a host copy, read from the buffer at
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
