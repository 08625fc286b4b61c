/*
 * Output and exit through ARM semihosting: the debugger (or qemu's -semihosting) performs
 * the call when the core executes BKPT 0xAB (ARM "Semihosting for AArch32 and AArch64",
 * version 2.0, sections 5.1 and 6: SYS_WRITE0, SYS_EXIT). No heap, no stdio.
 *
 * On a board without a debugger attached, BKPT halts the core: replace these two functions
 * with your UART driver (and an endless loop for the exit).
 */
#ifndef SEMIHOSTING_H
#define SEMIHOSTING_H

#include <stdint.h>

/* Write the zero-terminated `text` to the host's console. */
void semihosting_write(const char *text);

/* Write `x` in decimal (no printf). */
void semihosting_write_unsigned(uint32_t x);

/* Stop the program; qemu exits with status 0 when `failed` is 0, else 1. */
void semihosting_exit(int failed);

#endif
