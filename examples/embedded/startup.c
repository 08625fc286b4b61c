/*
 * Startup code for an ARMv7E-M core with a floating-point unit (Cortex-M4F, Cortex-M7) that
 * runs symgen's kernels bare-metal: the vector table, and a reset handler that
 *   1. enables the FPU (full access to coprocessors CP10 and CP11 in the CPACR, ARMv7-M
 *      Architecture Reference Manual B3.2.20). The generated kernels use floating-point
 *      instructions from their first line; without this step the first one raises a
 *      UsageFault (NOCP) that escalates to a HardFault;
 *   2. copies .data from its load address and zeroes .bss (symbols of the linker script);
 *   3. calls main() and reports its result through semihosting.
 * A fault prints the Configurable Fault Status Register and stops.
 *
 * Vendor startup files (CMSIS SystemInit) do step 1 when __FPU_USED is set; check yours.
 */
#include <stdint.h>

#include "semihosting.h"

int main(void);
void reset_handler(void);
void fault_handler(void);

/* Symbols of the linker script (mps2.ld). */
extern uint32_t __data_load__, __data_start__, __data_end__, __bss_start__, __bss_end__;
extern uint32_t __stack_top__;

#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u) /* coprocessor access control */
#define SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)  /* configurable fault status */

void reset_handler(void)
{
    uint32_t *from = &__data_load__, *to = &__data_start__;
    SCB_CPACR |= 0xFu << 20; /* CP10 and CP11: full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    while (to < &__data_end__) {
        *to++ = *from++;
    }
    for (to = &__bss_start__; to < &__bss_end__; ++to) {
        *to = 0u;
    }
    semihosting_exit(main() != 0);
}

void fault_handler(void)
{
    static const char digits[] = "0123456789abcdef";
    char text[] = "fault: CFSR 0x00000000\n";
    uint32_t cfsr = SCB_CFSR;
    int i;
    for (i = 0; i < 8; ++i) {
        text[21 - i] = digits[(cfsr >> (4 * i)) & 0xFu];
    }
    semihosting_write(text);
    semihosting_exit(1);
}

/* The vector table (ARMv7-M B1.5.3): initial stack pointer, reset, NMI, HardFault,
 * MemManage, BusFault, UsageFault, reserved x4, SVCall, DebugMonitor, reserved, PendSV,
 * SysTick. Placed first in flash by the linker script. */
__attribute__((section(".vectors"), used))
static const uintptr_t vectors[16] = {
    (uintptr_t)&__stack_top__, (uintptr_t)reset_handler, (uintptr_t)fault_handler,
    (uintptr_t)fault_handler, (uintptr_t)fault_handler, (uintptr_t)fault_handler,
    (uintptr_t)fault_handler, 0u, 0u, 0u, 0u, (uintptr_t)fault_handler,
    (uintptr_t)fault_handler, 0u, (uintptr_t)fault_handler, (uintptr_t)fault_handler,
};
