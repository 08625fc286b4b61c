/* ARM semihosting calls (see semihosting.h). */
#include "semihosting.h"

#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
/* Exit reasons (semihosting 2.0, table 6-7): a normal end, and a run-time error. */
#define ADP_STOPPED_APPLICATION_EXIT 0x20026
#define ADP_STOPPED_RUN_TIME_ERROR 0x20023

static void semihosting_call(int operation, const void *argument)
{
    register int r0 __asm__("r0") = operation;
    register const void *r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
}

void semihosting_write(const char *text)
{
    semihosting_call(SYS_WRITE0, text);
}

void semihosting_write_unsigned(uint32_t x)
{
    char text[11]; /* 4294967295 and the terminator */
    int i = 10;
    text[i] = '\0';
    do {
        text[--i] = (char)('0' + x % 10u);
        x /= 10u;
    } while (x != 0u);
    semihosting_write(text + i);
}

void semihosting_exit(int failed)
{
    /* on 32-bit targets SYS_EXIT takes the reason itself, not a pointer to it */
    semihosting_call(SYS_EXIT, (const void *)(failed ? ADP_STOPPED_RUN_TIME_ERROR
                                                      : ADP_STOPPED_APPLICATION_EXIT));
    for (;;) {
    }
}
