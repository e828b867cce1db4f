/*===- main.c - main() of every compiled program (libzrt_main.a) ----------===*
 *
 * Linked into the generated executable, so the references to the program's
 * two functions resolve there.
 *
 *===----------------------------------------------------------------------===*/

#include "driver/driver.h"

/* Compiled programs always export zero_program_apply and zero_program_eval;
 * hand-written test programs may not, and run without them. */
extern void zero_program_apply(zrt_context *ctx, void **args)
    __attribute__((weak));
extern void zero_program_eval(zrt_context *ctx, void **args, void *loss)
    __attribute__((weak));

int main(int argc, char **argv) {
  return zrt_run(argc, argv, zero_program_describe, zero_program_step,
                 zero_program_apply, zero_program_eval);
}
