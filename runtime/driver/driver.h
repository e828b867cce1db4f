/*===- driver.h - The entry point of a compiled program ---------*- C -*-===*
 *
 * Internal to the runtime (not part of zrt.h, which generated code sees):
 * zrt_main's main() hands the program's exported functions to zrt_run.
 * Passing them as pointers, rather than having libzrt reference the symbols,
 * keeps libzrt.so free of undefined symbols, so its own test executables
 * link without a program.
 *
 *===----------------------------------------------------------------------===*/
#ifndef ZRT_DRIVER_DRIVER_H
#define ZRT_DRIVER_DRIVER_H

#include "zero/zrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*zrt_describe_fn)(zrt_context *ctx);
typedef void (*zrt_step_fn)(zrt_context *ctx, void **args, void *loss);
typedef void (*zrt_apply_fn)(zrt_context *ctx, void **args);

/* Initialises MPI, parses the flags, runs the training loop and returns the
 * process exit code (0 on success). Errors every rank sees alike end every
 * rank with MPI_Finalize and a non-zero code; errors only one rank sees
 * abort the job. */
/* `apply` may be NULL (a program without an optimizer step of its own);
 * `eval` may be NULL (a hand-written program without validation). */
int zrt_run(int argc, char **argv, zrt_describe_fn describe, zrt_step_fn step,
            zrt_apply_fn apply, zrt_step_fn eval);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ZRT_DRIVER_DRIVER_H */
