/*===- main.c - main() of every compiled program (libzrt_main.a) ----------===*
 *
 * Linked into the generated executable, so the references to the program's
 * two functions resolve there.
 *
 *===----------------------------------------------------------------------===*/

#include "core/driver.h"

int main(int argc, char **argv) {
  return zrt_run(argc, argv, zero_program_describe, zero_program_step);
}
