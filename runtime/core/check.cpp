//===- check.cpp - Fatal errors and checked MPI calls ---------------------===//

#include "core/check.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace zrt {

static bool mpiRunning() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

static std::atomic<int> cachedWorldRank{-1};

int worldRank() {
  int rank = cachedWorldRank.load(std::memory_order_relaxed);
  if (rank >= 0)
    return rank;
  rank = 0;
  if (mpiRunning())
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

const char *threadLevelName(int level) {
  switch (level) {
  case MPI_THREAD_SINGLE:
    return "MPI_THREAD_SINGLE";
  case MPI_THREAD_FUNNELED:
    return "MPI_THREAD_FUNNELED";
  case MPI_THREAD_SERIALIZED:
    return "MPI_THREAD_SERIALIZED";
  case MPI_THREAD_MULTIPLE:
    return "MPI_THREAD_MULTIPLE";
  }
  return "unknown";
}

// SERIALIZED, not MULTIPLE: the main thread and the communication thread
// both call MPI, but never at once (see core/comm_queue.h). MULTIPLE would
// make Open MPI lock around every call for nothing, and on this machine it
// made one run in six of a small model's 2000 steps take 25 s instead of
// 1 s; the watchdog asks the other ranks over TCP instead (watchdog.cpp).
void initMpi(int *argc, char ***argv) {
  int provided = MPI_THREAD_SINGLE;
  ZRT_MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided));
  ZRT_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  int rank = 0;
  ZRT_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  cachedWorldRank.store(rank);
  if (provided < MPI_THREAD_SERIALIZED)
    fatal("this MPI library provides only %s; libzrt runs collectives on a "
          "communication thread and needs MPI_THREAD_SERIALIZED",
          threadLevelName(provided));
}

void stopJob() {
  std::fflush(stdout);
  std::fflush(stderr);
  if (mpiRunning())
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

static void printErrorV(const char *format, va_list args) {
  char message[2048];
  std::vsnprintf(message, sizeof(message), format, args);
  std::fprintf(stderr, "error: [rank %d] %s\n", worldRank(), message);
  std::fflush(stderr);
}

void printError(const char *format, ...) {
  va_list args;
  va_start(args, format);
  printErrorV(format, args);
  va_end(args);
}

void fatal(const char *format, ...) {
  va_list args;
  va_start(args, format);
  printErrorV(format, args);
  va_end(args);
  stopJob();
}

// CMake compiles libzrt with __FILE__ relative to the checkout
// (-fmacro-prefix-map); a build without it gives an absolute path, of which
// the part from the last "/runtime/" on is what a reader needs.
static const char *shortPath(const char *file) {
  const char *tail = nullptr;
  for (const char *at = std::strstr(file, "/runtime/"); at;
       at = std::strstr(at + 1, "/runtime/"))
    tail = at + 1;
  return tail ? tail : file;
}

void mpiFailure(int code, const char *call, const char *file, int line) {
  char mpiMessage[MPI_MAX_ERROR_STRING] = "unknown MPI error";
  int length = 0;
  MPI_Error_string(code, mpiMessage, &length);
  // The operation is the function name at the front of the call text.
  std::string operation(call, std::strcspn(call, "( "));
  fatal("%s failed at %s:%d: %s", operation.c_str(), shortPath(file), line,
        mpiMessage);
}

} // namespace zrt
