/*
 * Calling symgen's generated C kernels from plain C (no Python at run time).
 *
 * Generate the kernels first (see README.md):
 *
 *     symgen generate ../models/puma560.yaml -o generated_c
 *
 * then build with `make` or CMake. This program evaluates, at one fixed state (q, v, a),
 * the inverse dynamics, the mass matrix and the forward dynamics, prints them, and checks
 *   - ID(q, v, FD(q, v, tau)) = tau  (forward and inverse dynamics agree),
 *   - M(q) = M(q)^T                  (the mass matrix is symmetric),
 * returning 1 when a check fails. No heap: every array has the size of the header's macros.
 *
 * The kernels' prefix (`symgen generate --prefix`, by default the model name in lower
 * case) is the macro KERNEL_PREFIX, and KERNEL_PREFIX_UPPER is the same in upper case (the
 * prefix of the header's size macros); the Makefile and CMakeLists.txt pass both.
 * With another model, the state below is arbitrary: set a unit quaternion (x, y, z, w)
 * for spherical and free joints (the header lists each joint's q indices).
 */
#include <math.h>
#include <stdio.h>

#ifndef KERNEL_PREFIX
#define KERNEL_PREFIX puma560
#define KERNEL_PREFIX_UPPER PUMA560
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(x) #x
#define STR(x) STR_(x)

/* "<prefix>.h", e.g. "puma560.h" */
#include STR(KERNEL_PREFIX.h)

/* <prefix>_<name>, e.g. puma560_inverse_dynamics */
#define KERNEL(name) CAT(KERNEL_PREFIX, CAT(_, name))
/* <PREFIX>_<NAME>, e.g. PUMA560_NV */
#define SIZE(name) CAT(KERNEL_PREFIX_UPPER, CAT(_, name))

#define NQ SIZE(NQ)
#define NV SIZE(NV)

#if SIZE(NPARAMS) != 0
#error "this example calls kernels without runtime parameters: add a params argument \
(the model's parameters, in declaration order) before the outputs of each call"
#endif

typedef KERNEL(real) real; /* <prefix>_real: double, or float with --real float */

/* Relative tolerance of the checks: double, or float (symgen generate --real float). */
#define TOLERANCE (sizeof(real) == sizeof(float) ? 1e-3 : 1e-9)

static void print_vector(const char *name, const real *x, int n)
{
    int i;
    printf("%s =", name);
    for (i = 0; i < n; ++i) {
        printf(" %.17g", (double)x[i]);
    }
    printf("\n");
}

static double max_abs(const real *x, int n)
{
    double m = 0.0;
    int i;
    for (i = 0; i < n; ++i) {
        if (fabs((double)x[i]) > m) {
            m = fabs((double)x[i]);
        }
    }
    return m;
}

int main(void)
{
    real q[NQ], v[NV], a[NV], tau[NV], tau_in[NV], qdd[NV], tau_back[NV];
    real M[NV * NV];
    double error, scale, asymmetry, m_scale;
    int i, j, failures = 0;

    /* A fixed, arbitrary state. */
    for (i = 0; i < NQ; ++i) {
        q[i] = (real)(0.3 + 0.1 * i);
    }
    for (i = 0; i < NV; ++i) {
        v[i] = (real)(0.5 - 0.2 * i);
        a[i] = (real)(1.0 - 0.3 * i);
        tau_in[i] = (real)(2.0 + 0.5 * i);
    }
    printf("kernels: %s (nq = %d, nv = %d)\n", STR(KERNEL_PREFIX), NQ, NV);
    print_vector("q", q, NQ);
    print_vector("v", v, NV);
    print_vector("a", a, NV);

    /* Inverse dynamics: tau = M(q) a + C(q, v) v + g(q). */
    KERNEL(inverse_dynamics)(q, v, a, tau);
    print_vector("inverse_dynamics", tau, NV);

    /* Mass matrix, row-major nv x nv. */
    KERNEL(mass_matrix)(q, M);
    printf("mass_matrix =\n");
    for (i = 0; i < NV; ++i) {
        print_vector("  row", &M[i * NV], NV);
    }

    /* Forward dynamics of a given torque, then back through the inverse dynamics. */
    print_vector("tau", tau_in, NV);
    KERNEL(forward_dynamics)(q, v, tau_in, qdd);
    print_vector("forward_dynamics", qdd, NV);
    KERNEL(inverse_dynamics)(q, v, qdd, tau_back);

    error = 0.0;
    for (i = 0; i < NV; ++i) {
        double e = fabs((double)tau_back[i] - (double)tau_in[i]);
        error = e > error ? e : error;
    }
    scale = max_abs(tau_in, NV) > 1.0 ? max_abs(tau_in, NV) : 1.0;
    if (error <= TOLERANCE * scale) {
        printf("check ID(FD(tau)) = tau: ok (max error %.3g)\n", error);
    } else {
        printf("check ID(FD(tau)) = tau: FAILED (max error %.3g)\n", error);
        ++failures;
    }

    asymmetry = 0.0;
    for (i = 0; i < NV; ++i) {
        for (j = 0; j < i; ++j) {
            double e = fabs((double)M[i * NV + j] - (double)M[j * NV + i]);
            asymmetry = e > asymmetry ? e : asymmetry;
        }
    }
    m_scale = max_abs(M, NV * NV) > 1.0 ? max_abs(M, NV * NV) : 1.0;
    if (asymmetry <= TOLERANCE * m_scale) {
        printf("check M = M^T: ok (max asymmetry %.3g)\n", asymmetry);
    } else {
        printf("check M = M^T: FAILED (max asymmetry %.3g)\n", asymmetry);
        ++failures;
    }

    if (failures != 0) {
        printf("%d check(s) FAILED\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
