/* Shared by the benchmark's C timing programs (symgen, MuJoCo, CasADi): reading the state
 * files, printing results as JSON, and the timing loop. Include it before anything else. */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* n doubles from a binary file written by numpy's tofile (exits on error) */
static double *bench_load(const char *path, size_t n) {
    double *x = (double *)malloc(n * sizeof(double) + 1);
    FILE *f = fopen(path, "rb");
    if (!x || !f || fread(x, sizeof(double), n, f) != n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    return x;
}

static double bench_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int bench_by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* "key": [x0, x1, ...],  (a JSON member followed by a comma) */
static void bench_print(const char *key, const double *x, int n) {
    printf("\"%s\": [", key);
    for (int i = 0; i < n; ++i) printf("%s%.17g", i ? ", " : "", x[i]);
    printf("], ");
}

/* R passes over S states running the statements that follow (state index k); RESULT gets
 * the median pass divided by S: ns per call. PASSES must hold R doubles. */
#define BENCH_TIME(RESULT, S, R, PASSES, ...) do { \
    for (int r_ = 0; r_ < (R); ++r_) { \
        double t0_ = bench_now_ns(); \
        for (int k = 0; k < (S); ++k) { __VA_ARGS__ } \
        (PASSES)[r_] = (bench_now_ns() - t0_) / (S); \
    } \
    qsort((PASSES), (size_t)(R), sizeof(double), bench_by_value); \
    (RESULT) = (PASSES)[(R) / 2]; \
} while (0)

#endif
