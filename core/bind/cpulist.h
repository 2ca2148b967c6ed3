/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpulist: the "0-3,8" list syntax of Linux cpusets, Slurm and hwloc, used for
 * CPU lists (PU OS indexes) and for GPU index lists such as SLURM_STEP_GPUS.
 *
 * Grammar accepted by te_cpulist_parse():
 *     list  := "" | item ("," item)*
 *     item  := index | index "-" index        (first <= last)
 *     index := [0-9]+                         (value <= max_index)
 * Leading and trailing blanks (space, tab, newline) are ignored so that the
 * content of a sysfs or cgroup file can be passed as read. Nothing else is:
 * no blanks inside, no signs, no strides ("0-7:2"), no empty items ("1,,2",
 * "1,"), no index listed twice ("1,0-3"). The values come out sorted.
 *
 * Strings come from the environment of a job and from command lines: every
 * length, value and count is bounded before it is used.
 */
#ifndef TE_CPULIST_H
#define TE_CPULIST_H

#include <stddef.h>

/* Largest index any caller may ask for: well above the PU count of any
 * machine Slurm runs on, small enough that index + 1 never overflows. */
#define TE_CPULIST_INDEX_LIMIT 1048575u

/*
 * Parses at most maxlen characters of s (a longer string is an error, so a
 * string without terminator within maxlen is never read past it).
 * Indexes above max_index (itself capped at TE_CPULIST_INDEX_LIMIT) are
 * rejected. The sorted indexes go to out[0..*n); more than outcap of them is
 * an error. out may be NULL when outcap is 0 (counting only the empty list).
 * Returns 0, or -1 with a one-line reason in err.
 */
int te_cpulist_parse(const char *s, size_t maxlen, unsigned max_index,
		     unsigned *out, size_t outcap, size_t *n, char *err,
		     size_t errlen);

/*
 * Same on exactly len bytes of s, which need no terminator (a NUL byte inside
 * is junk like any other): the entry point for fuzzers.
 */
int te_cpulist_parse_mem(const char *s, size_t len, unsigned max_index,
			 unsigned *out, size_t outcap, size_t *n, char *err,
			 size_t errlen);

/*
 * Writes idx[0..n) (ascending, no duplicates) as "0-3,8" into buf, "" for
 * n == 0. Returns the length written, or -1 when idx is not ascending or buf
 * is too small (buf then holds "" when buflen > 0).
 */
int te_cpulist_format(const unsigned *idx, size_t n, char *buf, size_t buflen);

#endif
