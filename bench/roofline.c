/*===- roofline.c - the machine's ceilings for bench/peer.py ---------------===
 *
 *   roofline gemm  < shapes     (lines "transA transB m n k", row-major)
 *   roofline triad ELEMENTS
 *
 * gemm: for every shape, the best of several timed cblas_sgemm calls (after
 * one untimed call that touches the memory), printed as "seconds GFLOP/s".
 * triad: a[i] = b[i] + s * c[i] over float arrays, the best of 5 passes,
 * printed as GB/s counting 12 bytes an element (STREAM's convention).
 * bench/peer.py starts one copy per rank at the same time, so that the cores
 * share caches and memory bandwidth as the ranks of a training job do.
 *
 *===----------------------------------------------------------------------===*/

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static float *filled(size_t n) {
  float *p = malloc(n * sizeof(float));
  if (!p) {
    fprintf(stderr, "roofline: out of memory for %zu floats\n", n);
    exit(1);
  }
  for (size_t i = 0; i < n; ++i)
    p[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
  return p;
}

static int gemm(void) {
  int ta, tb, m, n, k;
  while (scanf("%d %d %d %d %d", &ta, &tb, &m, &n, &k) == 5) {
    float *a = filled((size_t)m * k), *b = filled((size_t)k * n);
    float *c = filled((size_t)m * n);
    double flop = 2.0 * m * n * k, best = 1e30;
    /* Enough repetitions for about 0.3 s of work at 100 GFLOP/s. */
    int reps = (int)(3e10 / flop);
    reps = reps < 3 ? 3 : reps > 200 ? 200 : reps;
    for (int r = 0; r <= reps; ++r) {
      double t0 = now();
      cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
                  tb ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
                  ta ? m : k, b, tb ? k : n, 0.0f, c, n);
      double t = now() - t0;
      if (r > 0 && t < best)
        best = t;
    }
    printf("%.9f %.2f\n", best, flop / best * 1e-9);
    fflush(stdout);
    free(a);
    free(b);
    free(c);
  }
  return 0;
}

static int triad(size_t n) {
  float *a = filled(n), *b = filled(n), *c = filled(n);
  const float s = 1.0009765625f;
  double best = 1e30;
  for (int r = 0; r < 6; ++r) {
    double t0 = now();
    for (size_t i = 0; i < n; ++i)
      a[i] = b[i] + s * c[i];
    double t = now() - t0;
    if (r > 0 && t < best)
      best = t;
    b[r] = a[n - 1 - r]; /* keeps the passes from being merged */
  }
  printf("%.3f\n", 12.0 * n / best * 1e-9);
  free(a);
  free(b);
  free(c);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "gemm"))
    return gemm();
  if (argc == 3 && !strcmp(argv[1], "triad"))
    return triad((size_t)strtoull(argv[2], 0, 10));
  fprintf(stderr, "usage: roofline gemm < shapes | roofline triad ELEMENTS\n");
  return 2;
}
