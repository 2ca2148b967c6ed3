/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Minimal TAP producer for the unit tests: each check is one "ok N - name" or
 * "not ok N - name" line; tests/run-tests.sh counts them. Header-only so that
 * every test program stays one file. */
#ifndef TE_TAP_H
#define TE_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3), unused)) static int
tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __VA_ARGS__)

#define is_int(got, want, ...)                                              \
	do {                                                                \
		long long g_ = (long long)(got), w_ = (long long)(want);    \
		if (!tap_ok(g_ == w_, __VA_ARGS__))                         \
			printf("#   got %lld, want %lld (%s:%d)\n", g_, w_, \
			       __FILE__, __LINE__);                         \
	} while (0)

#define is_str(got, want, ...)                                             \
	do {                                                               \
		const char *g_ = (got), *w_ = (want);                      \
		int same_ = (g_ && w_) ? strcmp(g_, w_) == 0 : g_ == w_;   \
		if (!tap_ok(same_, __VA_ARGS__))                           \
			printf("#   got \"%s\"\n#  want \"%s\" (%s:%d)\n", \
			       g_ ? g_ : "(null)", w_ ? w_ : "(null)",     \
			       __FILE__, __LINE__);                        \
	} while (0)

#define like(got, needle, ...)                                                      \
	do {                                                                        \
		const char *g_ = (got), *n_ = (needle);                             \
		if (!tap_ok(g_ && strstr(g_, n_) != NULL, __VA_ARGS__))             \
			printf("#   \"%s\"\n#   does not contain \"%s\" (%s:%d)\n", \
			       g_ ? g_ : "(null)", n_, __FILE__, __LINE__);         \
	} while (0)

__attribute__((unused)) static void tap_skip(const char *why)
{
	printf("ok %d # SKIP %s\n", ++tap_n, why);
}

__attribute__((unused)) static int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
