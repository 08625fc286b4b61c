/*
 * symgen's kernels on a microcontroller: firmware for an ARMv7E-M core with an FPU
 * (Cortex-M4F, Cortex-M7), run under qemu (`make run`) or flashed to a board.
 *
 * At one fixed state (q, v, a) it evaluates the inverse dynamics, the mass matrix and the
 * forward dynamics, checks that ID(q, v, FD(q, v, tau)) = tau and that M(q) is symmetric,
 * and prints, per kernel call, the SysTick ticks it took and the stack it used (high-water
 * mark: the stack is painted with a pattern before the call and scanned after it). It uses
 * no heap and no stdio: text goes out through semihosting (semihosting.h).
 *
 * The kernels' prefix is KERNEL_PREFIX and their size macros' KERNEL_PREFIX_UPPER (the
 * Makefile passes both). The state below is arbitrary: with a spherical or free joint, set
 * a unit quaternion (x, y, z, w) at its q indices (listed in the generated header).
 */
#include <stdint.h>

#include "semihosting.h"

#ifndef KERNEL_PREFIX
#define KERNEL_PREFIX robot
#define KERNEL_PREFIX_UPPER ROBOT
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(x) #x
#define STR(x) STR_(x)
#include STR(KERNEL_PREFIX.h)
#define KERNEL(name) CAT(KERNEL_PREFIX, CAT(_, name))
#define SIZE(name) CAT(KERNEL_PREFIX_UPPER, CAT(_, name))
#define NQ SIZE(NQ)
#define NV SIZE(NV)

typedef KERNEL(real) real; /* float (--real float) or double: software-emulated on an M4 */

/* Relative tolerance of the checks: float, or double. */
#define TOLERANCE (sizeof(real) == sizeof(float) ? 1e-3 : 1e-9)

/* ------------------------------------------------------------------ measurement */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u) /* SysTick control and status */
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u) /* reload value */
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u) /* current value (counts down) */
#define STACK_PAINT 0x5AC35AC3u

extern uint32_t __stack_bottom__;

/* The stack pointer, read into `sp`. */
#define READ_STACK_POINTER(sp) __asm__ volatile("mov %0, sp" : "=r"(sp))

/* Fill the free stack (from its bottom up to main's stack pointer) with STACK_PAINT. A
 * macro, so that main itself runs it: no frame of its own sits in the painted region (AAPCS
 * has no red zone, and no interrupt is enabled). */
#define PAINT_STACK()                                                        \
    do {                                                                     \
        uintptr_t sp_;                                                       \
        uint32_t *p_;                                                        \
        READ_STACK_POINTER(sp_);                                             \
        for (p_ = &__stack_bottom__; (uintptr_t)p_ < sp_; ++p_) {            \
            *p_ = STACK_PAINT;                                               \
        }                                                                    \
    } while (0)

/* The bytes below main's stack pointer that a call since PAINT_STACK() overwrote (its
 * high-water mark), into `used`. */
#define STACK_USED(used)                                                     \
    do {                                                                     \
        uintptr_t sp_;                                                       \
        const uint32_t *p_ = &__stack_bottom__;                              \
        READ_STACK_POINTER(sp_);                                             \
        while ((uintptr_t)p_ < sp_ && *p_ == STACK_PAINT) {                  \
            ++p_;                                                            \
        }                                                                    \
        (used) = (uint32_t)(sp_ - (uintptr_t)p_);                            \
    } while (0)

static uint32_t ticks(void)
{
    return SYST_CVR;
}

/* ------------------------------------------------------------------ output */
/* x in scientific notation with 7 significant digits (plain arithmetic, no printf). */
static void print_real(double x)
{
    char text[16];
    int exponent = 0, i;
    uint32_t digits;
    semihosting_write(x < 0 ? " -" : " ");
    x = x < 0 ? -x : x;
    if (x != 0.0) {
        while (x >= 10.0) {
            x /= 10.0;
            ++exponent;
        }
        while (x < 1.0) {
            x *= 10.0;
            --exponent;
        }
    }
    digits = (uint32_t)(x * 1e6 + 0.5);
    if (digits >= 10000000u) { /* rounding carried to the next decade */
        digits /= 10u;
        ++exponent;
    }
    for (i = 8; i >= 2; --i) {
        text[i] = (char)('0' + digits % 10u);
        digits /= 10u;
    }
    text[0] = text[2];
    text[1] = '.';
    text[2] = text[3];
    for (i = 3; i < 8; ++i) {
        text[i] = text[i + 1];
    }
    text[8] = 'e';
    text[9] = exponent < 0 ? '-' : '+';
    exponent = exponent < 0 ? -exponent : exponent;
    text[10] = (char)('0' + exponent / 10);
    text[11] = (char)('0' + exponent % 10);
    text[12] = '\0';
    semihosting_write(text);
}

static void print_vector(const char *name, const real *x, int n)
{
    int i;
    semihosting_write(name);
    semihosting_write(" =");
    for (i = 0; i < n; ++i) {
        print_real((double)x[i]);
    }
    semihosting_write("\n");
}

static void print_cost(const char *name, uint32_t start, uint32_t end, uint32_t stack)
{
    semihosting_write(name);
    semihosting_write(": ");
    semihosting_write_unsigned((start - end) & 0xFFFFFFu);
    semihosting_write(" SysTick ticks, ");
    semihosting_write_unsigned(stack);
    semihosting_write(" bytes of stack\n");
}

static double magnitude(double x)
{
    return x < 0 ? -x : x;
}

/* ------------------------------------------------------------------ the kernels */
int main(void)
{
    real q[NQ], v[NV], a[NV], tau[NV], qdd[NV], tau_back[NV], M[NV * NV];
    double error = 0.0, scale = 1.0, asymmetry = 0.0;
    uint32_t start, end, stack;
    int i, j;

    for (i = 0; i < NQ; ++i) {
        q[i] = (real)(0.1 * (i + 1));
    }
    for (i = 0; i < NV; ++i) {
        v[i] = (real)(0.05 * (i + 1));
        a[i] = (real)(0.2 - 0.03 * i);
    }
    SYST_RVR = 0xFFFFFFu; /* 24-bit down-counter on the processor clock */
    SYST_CVR = 0u;
    SYST_CSR = 5u; /* enable, processor clock */

    PAINT_STACK();
    start = ticks();
    KERNEL(inverse_dynamics)(q, v, a, tau);
    end = ticks();
    STACK_USED(stack);
    print_cost("inverse_dynamics", start, end, stack);

    PAINT_STACK();
    start = ticks();
    KERNEL(mass_matrix)(q, M);
    end = ticks();
    STACK_USED(stack);
    print_cost("mass_matrix", start, end, stack);

    PAINT_STACK();
    start = ticks();
    KERNEL(forward_dynamics)(q, v, tau, qdd);
    end = ticks();
    STACK_USED(stack);
    print_cost("forward_dynamics", start, end, stack);

    KERNEL(inverse_dynamics)(q, v, qdd, tau_back);
    print_vector("tau", tau, NV);
    print_vector("qdd", qdd, NV);
    for (i = 0; i < NV; ++i) {
        error = magnitude((double)(tau_back[i] - tau[i])) > error
                    ? magnitude((double)(tau_back[i] - tau[i])) : error;
        scale = magnitude((double)tau[i]) > scale ? magnitude((double)tau[i]) : scale;
        error = magnitude((double)(qdd[i] - a[i])) > error
                    ? magnitude((double)(qdd[i] - a[i])) : error;
        for (j = 0; j < NV; ++j) {
            double d = magnitude((double)(M[i * NV + j] - M[j * NV + i]));
            asymmetry = d > asymmetry ? d : asymmetry;
        }
    }
    semihosting_write(error <= TOLERANCE * scale && asymmetry == 0.0
                          ? "check: ID(FD(tau)) = tau, FD(ID(a)) = a, M = M^T: ok\n"
                          : "check: FAILED\n");
    return error <= TOLERANCE * scale && asymmetry == 0.0 ? 0 : 1;
}
