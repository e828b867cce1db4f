//===- check.cpp - Fatal errors and checked MPI calls ---------------------===//

#include "core/check.h"

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

int worldRank() {
  int rank = 0;
  if (mpiRunning())
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

[[noreturn]] static void stopJob() {
  std::fflush(stdout);
  std::fflush(stderr);
  if (mpiRunning())
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void fatal(const char *format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  std::fprintf(stderr, "error: [rank %d] %s\n", worldRank(), message);
  stopJob();
}

// __FILE__ is absolute under CMake; the part from "runtime/" on is what a
// reader needs to find the line.
static const char *shortPath(const char *file) {
  const char *tail = std::strstr(file, "runtime/");
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
