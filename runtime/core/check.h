//===- check.h - Fatal errors and checked MPI calls -------------*- C++ -*-===//
//
// Every runtime failure goes through fatal(): one rank may be the only one to
// notice a problem (a bad label in its slice of the batch), and if it simply
// exit()ed the others would wait forever in their next collective. fatal()
// therefore brings the whole job down with MPI_Abort whenever MPI is running.
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_CORE_CHECK_H
#define ZRT_CORE_CHECK_H

#include <mpi.h>

namespace zrt {

/// Prints "error: [rank R] <message>" to stderr and stops the job: MPI_Abort
/// when MPI is initialised, exit(1) otherwise (single-process unit tests).
[[noreturn]] void fatal(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/// Prints "error: [rank R] <message>" to stderr, flushed, and returns: for
/// a rank that must let others speak before it stops the job (stopJob).
void printError(const char *format, ...) __attribute__((format(printf, 1, 2)));

/// Stops the job after an error was printed: MPI_Abort when MPI is
/// initialised, exit(1) otherwise.
[[noreturn]] void stopJob();

/// Reports a failed MPI call (file, line, rank, operation and MPI's own error
/// string) and aborts the job. `call` is the stringified call expression.
[[noreturn]] void mpiFailure(int code, const char *call, const char *file,
                             int line);

/// The rank in MPI_COMM_WORLD, or 0 when MPI is not running. Cached by
/// initMpi, so that fatal() on one thread never calls MPI_Comm_rank while
/// the communication thread is inside MPI.
int worldRank();

/// MPI_Init_thread at MPI_THREAD_SERIALIZED (collectives run on a thread of
/// their own, and the runtime guarantees that only one thread calls MPI at
/// a time), with MPI_ERRORS_RETURN on MPI_COMM_WORLD. Stops the job with a
/// message when the library provides less.
void initMpi(int *argc, char ***argv);

/// "MPI_THREAD_SINGLE" ... "MPI_THREAD_MULTIPLE".
const char *threadLevelName(int level);

} // namespace zrt

/// Checks one MPI call. Communicators use MPI_ERRORS_RETURN, so without this
/// an MPI failure would be silently ignored.
#define ZRT_MPI_CHECK(call)                                                    \
  do {                                                                         \
    int zrtMpiCode_ = (call);                                                  \
    if (zrtMpiCode_ != MPI_SUCCESS)                                            \
      ::zrt::mpiFailure(zrtMpiCode_, #call, __FILE__, __LINE__);               \
  } while (0)

#endif // ZRT_CORE_CHECK_H
