/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the "0-3,8" list parser and formatter (core/bind/cpulist.c). */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bind/cpulist.h"
#include "tap.h"

#define CAP 4096

static unsigned out[CAP];
static char err[256];

/* Parses s and returns the formatted result, or "ERR" (err holds why). */
static const char *roundtrip(const char *s, unsigned max_index, size_t cap)
{
	static char buf[65536];
	size_t n = 12345;

	err[0] = '\0';
	if (te_cpulist_parse(s, 1000, max_index, out, cap, &n, err,
			     sizeof(err)))
		return n == 0 ? "ERR" : "ERR-with-count";
	if (te_cpulist_format(out, n, buf, sizeof(buf)) < 0)
		return "FMT";
	return buf;
}

/* Test names must stay on one TAP line. */
static const char *shown(const char *s)
{
	static char buf[128];
	size_t i, o = 0;

	for (i = 0; s[i] && o + 5 < sizeof(buf); i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, sizeof(buf) - o,
					      "\\x%02x", c);
	}
	buf[o] = '\0';
	return buf;
}

/* An error message is one line, without a prefix or a final newline. */
static int one_line(const char *s)
{
	return s[0] && !strchr(s, '\n') && strncmp(s, "error", 5) != 0;
}

static void test_valid(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "", "" },
		{ "   ", "" },
		{ "\n", "" },
		{ "0", "0" },
		{ "7", "7" },
		{ "0-3", "0-3" },
		{ "0-3,8", "0-3,8" },
		{ "8,0-3", "0-3,8" },
		{ "0,1,2,3", "0-3" },
		{ "1,3,5", "1,3,5" },
		{ "3-3", "3" },
		{ "0-1", "0-1" },
		{ "5,4,3,2,1,0", "0-5" },
		{ "0-3,4-7", "0-7" },
		{ "007", "7" },
		{ " 0-3,8\n", "0-3,8" },
		{ "\t2,4\r\n", "2,4" },
		{ "0-2,10-12,20", "0-2,10-12,20" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_str(roundtrip(cases[i].in, 4095, CAP), cases[i].want,
		       "parse \"%s\"", shown(cases[i].in));
}

static void test_junk(void)
{
	static const char *const junk[] = {
		"a",	 "1,",	",1",	 "1,,2",  "1-",		  "-1",
		"1-2-3", "3-1", "1 ,2",	 "1, 2",  "1 2",	  "+1",
		"0x1",	 "1:2", "0-7:2", "1.5",	  "1;2",	  "1-,2",
		"--1",	 ",",	"-",	 "1,-2",  "\xef\xbc\x91", "1\xff",
		"1\x01", "all", "none",	 "1-\n2", "0 - 3",
	};
	size_t i;

	for (i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		const char *r = roundtrip(junk[i], 4095, CAP);
		is_str(r, "ERR", "junk %zu rejected", i);
		ok(one_line(err), "junk %zu: one-line reason: %s", i, err);
	}
	is_str(roundtrip("3-1", 4095, CAP), "ERR", "reversed range");
	like(err, "reversed", "reversed range is named");
	is_str(roundtrip("1,x", 4095, CAP), "ERR", "bad character");
	like(err, "offset 2", "offset of the bad character");
	is_str(roundtrip("1\x01", 4095, CAP), "ERR", "control byte");
	like(err, "0x01", "control byte shown in hex, not raw");
}

static void test_duplicates(void)
{
	static const char *const dup[] = {
		"1,1", "0-3,2", "0-3,3-5", "5,0-7", "2,1,2",
	};
	size_t i;

	for (i = 0; i < sizeof(dup) / sizeof(dup[0]); i++) {
		is_str(roundtrip(dup[i], 4095, CAP), "ERR",
		       "duplicate in "
		       "\"%s\" rejected",
		       dup[i]);
		like(err, "listed twice", "duplicate named");
	}
}

static void test_bounds(void)
{
	size_t n;
	unsigned *big;

	is_str(roundtrip("15", 15, CAP), "15", "max_index itself accepted");
	is_str(roundtrip("16", 15, CAP), "ERR", "max_index + 1 rejected");
	like(err, "larger than 15", "bound named");
	is_str(roundtrip("0-16", 15, CAP), "ERR", "range past max_index");
	is_str(roundtrip("4294967295", UINT_MAX, CAP), "ERR",
	       "UINT_MAX capped to the index limit");
	is_str(roundtrip("4294967296", UINT_MAX, CAP), "ERR",
	       "2^32 does not wrap");
	is_str(roundtrip("99999999999999999999999999", UINT_MAX, CAP), "ERR",
	       "huge number does not overflow");
	is_str(roundtrip("18446744073709551617", UINT_MAX, CAP), "ERR",
	       "2^64+1 does not wrap to 1");
	is_str(roundtrip("0-4095", 4095, CAP), "0-4095", "full cap accepted");
	is_str(roundtrip("0-4096", 4096, CAP), "ERR", "one more than cap");
	like(err, "more than 4096", "cap named");
	is_str(roundtrip("0-10", 4095, 4), "ERR", "small cap");
	is_str(roundtrip("0-1048575", TE_CPULIST_INDEX_LIMIT, CAP), "ERR",
	       "huge range stops at the cap, before expanding");

	/* A range of a million indexes when the caller has room for them. */
	big = calloc(TE_CPULIST_INDEX_LIMIT + 1, sizeof(*big));
	ok(big != NULL, "allocated a million slots");
	if (big) {
		ok(te_cpulist_parse("0-1048575", 100, TE_CPULIST_INDEX_LIMIT,
				    big, TE_CPULIST_INDEX_LIMIT + 1, &n, err,
				    sizeof(err)) == 0 &&
			   n == TE_CPULIST_INDEX_LIMIT + 1 &&
			   big[n - 1] == TE_CPULIST_INDEX_LIMIT,
		   "million-index range expanded");
		free(big);
	}

	/* Counting only: out may be NULL with outcap 0. */
	ok(te_cpulist_parse("", 10, 10, NULL, 0, &n, err, sizeof(err)) == 0 &&
		   n == 0,
	   "empty list without output array");
	ok(te_cpulist_parse("1", 10, 10, NULL, 0, &n, err, sizeof(err)) == -1,
	   "non-empty list without room");
	ok(te_cpulist_parse(NULL, 10, 10, out, CAP, &n, err, sizeof(err)) ==
			   -1 &&
		   n == 0,
	   "NULL string rejected");
	ok(te_cpulist_parse("1", 10, 10, out, CAP, NULL, err, sizeof(err)) ==
		   -1,
	   "NULL count rejected");
}

static void test_maxlen(void)
{
	size_t n;
	char lng[8192];

	ok(te_cpulist_parse("0-3,8", 5, 100, out, CAP, &n, err, sizeof(err)) ==
			   0 &&
		   n == 5,
	   "string of exactly maxlen accepted");
	ok(te_cpulist_parse("0-3,10", 5, 100, out, CAP, &n, err, sizeof(err)) ==
		   -1,
	   "maxlen + 1 rejected");
	like(err, "longer than 5", "length named");
	ok(te_cpulist_parse("", 0, 100, out, CAP, &n, err, sizeof(err)) == 0,
	   "empty string with maxlen 0");
	ok(te_cpulist_parse("1", 0, 100, out, CAP, &n, err, sizeof(err)) == -1,
	   "one character with maxlen 0");
	ok(te_cpulist_parse("1", SIZE_MAX, 100, out, CAP, &n, err,
			    sizeof(err)) == 0,
	   "maxlen SIZE_MAX");

	/* A long but valid list, then the same one byte past the bound. */
	memset(lng, 0, sizeof(lng));
	{
		size_t used = 0;
		unsigned v;
		for (v = 0; v < 1000; v++)
			used += (size_t)snprintf(lng + used, sizeof(lng) - used,
						 v ? ",%u" : "%u", v * 2);
		ok(te_cpulist_parse(lng, used, 4095, out, CAP, &n, err,
				    sizeof(err)) == 0 &&
			   n == 1000,
		   "1000-item list of %zu characters", used);
		ok(te_cpulist_parse(lng, used - 1, 4095, out, CAP, &n, err,
				    sizeof(err)) == -1,
		   "same, maxlen one short");
	}

	/* parse_mem reads exactly len bytes: no terminator needed, and a
	 * NUL inside is junk, not an end. */
	{
		char raw[4] = { '1', ',', '2', '9' };
		ok(te_cpulist_parse_mem(raw, 3, 100, out, CAP, &n, err,
					sizeof(err)) == 0 &&
			   n == 2 && out[1] == 2,
		   "parse_mem on an unterminated buffer");
		ok(te_cpulist_parse_mem("1\0002", 3, 100, out, CAP, &n, err,
					sizeof(err)) == -1,
		   "parse_mem: embedded NUL is junk");
		like(err, "NUL", "NUL named");
	}
}

static void test_small_err_buffers(void)
{
	size_t n;
	char tiny[4];

	ok(te_cpulist_parse("x", 10, 10, out, CAP, &n, tiny, sizeof(tiny)) ==
			   -1 &&
		   strlen(tiny) == 3,
	   "error truncated into a 4-byte buffer");
	ok(te_cpulist_parse("x", 10, 10, out, CAP, &n, NULL, 0) == -1,
	   "no error buffer at all");
}

static void test_format(void)
{
	unsigned a[] = { 0, 1, 2, 3, 8 };
	unsigned desc[] = { 3, 2 };
	unsigned dup[] = { 1, 1 };
	unsigned top[] = { UINT_MAX - 1, UINT_MAX };
	unsigned wrap[] = { UINT_MAX, 0 };
	char buf[64];

	is_int(te_cpulist_format(a, 5, buf, sizeof(buf)), 5, "format length");
	is_str(buf, "0-3,8", "format 0-3,8");
	is_int(te_cpulist_format(a, 0, buf, sizeof(buf)), 0, "empty format");
	is_str(buf, "", "empty is \"\"");
	is_int(te_cpulist_format(desc, 2, buf, sizeof(buf)), -1,
	       "descending refused");
	is_int(te_cpulist_format(dup, 2, buf, sizeof(buf)), -1,
	       "duplicate refused");
	is_int(te_cpulist_format(wrap, 2, buf, sizeof(buf)), -1,
	       "UINT_MAX then 0 is not a range");
	ok(te_cpulist_format(top, 2, buf, sizeof(buf)) > 0 &&
		   !strcmp(buf, "4294967294-4294967295"),
	   "top of range: %s", buf);
	is_int(te_cpulist_format(a, 5, buf, 6), 5, "exact fit");
	is_int(te_cpulist_format(a, 5, buf, 5), -1, "one byte short");
	is_str(buf, "", "buffer emptied on overflow");
	is_int(te_cpulist_format(a, 5, buf, 0), -1, "zero-size buffer");
	is_int(te_cpulist_format(NULL, 2, buf, sizeof(buf)), -1, "NULL array");
}

/* Deterministic pseudo-random numbers (no libc state shared with others). */
static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return n ? (unsigned)(rng % n) : 0;
}

static void test_random_roundtrips(void)
{
	static char buf[65536];
	unsigned set[512], got[512];
	int i, bad = 0;

	for (i = 0; i < 2000; i++) {
		size_t n = 0, m;
		unsigned v = rnd(4), k, len = rnd(200);

		for (k = 0; k < len && n < 512; k++) {
			set[n++] = v;
			v += 1 + (rnd(3) ? 0 : rnd(50));
		}
		if (te_cpulist_format(set, n, buf, sizeof(buf)) < 0 ||
		    te_cpulist_parse(buf, sizeof(buf), 1u << 20, got, 512, &m,
				     err, sizeof(err)) ||
		    m != n || memcmp(set, got, n * sizeof(*set))) {
			bad++;
			printf("# round trip failed: %s\n", buf);
		}
	}
	is_int(bad, 0, "2000 random sets survive format then parse");
}

/* Random bytes over the grammar's alphabet: never a crash, and whatever is
 * accepted formats back to something that parses to the same set. */
static void test_random_junk(void)
{
	static const char alphabet[] = "0123456789,,,---  \n\tx:9";
	char s[64], buf[8192];
	unsigned again[CAP];
	int i, accepted = 0, bad = 0;

	for (i = 0; i < 20000; i++) {
		size_t len = rnd(sizeof(s) - 1), k, n, m;

		for (k = 0; k < len; k++)
			s[k] = alphabet[rnd(sizeof(alphabet) - 1)];
		s[len] = '\0';
		if (te_cpulist_parse(s, sizeof(s), 4095, out, CAP, &n, err,
				     sizeof(err))) {
			if (!one_line(err))
				bad++;
			continue;
		}
		accepted++;
		if (te_cpulist_format(out, n, buf, sizeof(buf)) < 0 ||
		    te_cpulist_parse(buf, sizeof(buf), 4095, again, CAP, &m,
				     err, sizeof(err)) ||
		    m != n || memcmp(out, again, n * sizeof(*out)))
			bad++;
	}
	is_int(bad, 0, "20000 random strings: no inconsistency (%d accepted)",
	       accepted);
	ok(accepted > 100, "random strings exercise the accepting path");
}

int main(void)
{
	test_valid();
	test_junk();
	test_duplicates();
	test_bounds();
	test_maxlen();
	test_small_err_buffers();
	test_format();
	test_random_roundtrips();
	test_random_junk();
	return tap_done();
}
