/* Small OS helpers shared by every side, one per job: the monotonic clock
 * every deadline is measured on, and random hex tokens. */
#ifndef TE_SYSUTIL_H
#define TE_SYSUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Milliseconds on CLOCK_MONOTONIC (deadlines never follow the wall clock). */
int64_t te_now_ms(void);

/* ndigits (even, > 0) random lower-case hex digits from the kernel's
 * generator (getrandom), terminated, into buf of size > ndigits. 0, or -1
 * (buf too small, ndigits odd or 0, no randomness): then buf is "". */
int te_random_hex(char *buf, size_t size, size_t ndigits);

#endif
