/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpulist: strict parser and formatter for "0-3,8" index lists. */
#include "config.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bind/cpulist.h"

struct range {
	unsigned first, last;
};

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Describes an offending byte without echoing raw control bytes into logs. */
static void describe_char(char c, char *buf, size_t len)
{
	unsigned char u = (unsigned char)c;

	if (u >= 0x21 && u < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else if (u == 0)
		snprintf(buf, len, "a NUL byte");
	else if (u == ' ' || u == '\t')
		snprintf(buf, len, "a blank");
	else
		snprintf(buf, len, "byte 0x%02x", u);
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* Reads one index at s[*pos..len); bounds the value before each digit is
 * added so that no input can overflow. */
static int read_index(const char *s, size_t len, size_t *pos, unsigned max,
		      unsigned *val, char *err, size_t errlen)
{
	unsigned v = 0;
	size_t start = *pos;

	if (*pos >= len) {
		snprintf(err, errlen, "list ends where an index was expected");
		return -1;
	}
	if (!is_digit(s[*pos])) {
		char what[16];
		describe_char(s[*pos], what, sizeof(what));
		snprintf(err, errlen,
			 "unexpected %s at offset %zu "
			 "(expected an index: the syntax is like 0-3,8)",
			 what, *pos);
		return -1;
	}
	while (*pos < len && is_digit(s[*pos])) {
		unsigned d = (unsigned)(s[*pos] - '0');
		if (v > (max - d) / 10) {
			snprintf(err, errlen,
				 "index at offset %zu is larger "
				 "than %u",
				 start, max);
			return -1;
		}
		v = v * 10 + d;
		(*pos)++;
	}
	*val = v;
	return 0;
}

/* The ranges of s[pos..end) (trimmed, not empty) into r[0..cap), in
 * list order, their count in *nr. 0, or -1 with err. */
static int read_ranges(const char *s, size_t pos, size_t end,
		       unsigned max_index, size_t outcap, struct range *r,
		       size_t cap, size_t *nr, char *err, size_t errlen)
{
	size_t total = 0;

	for (;;) {
		unsigned a, b;
		int ranged = 0;

		if (read_index(s, end, &pos, max_index, &a, err, errlen))
			return -1;
		b = a;
		if (pos < end && s[pos] == '-') {
			pos++;
			ranged = 1;
			if (read_index(s, end, &pos, max_index, &b, err,
				       errlen))
				return -1;
			if (b < a) {
				snprintf(err, errlen,
					 "range %u-%u is reversed "
					 "(write the smaller index first)",
					 a, b);
				return -1;
			}
		}
		if (*nr == cap) { /* cannot happen given the caller's bound */
			snprintf(err, errlen, "too many items in the list");
			return -1;
		}
		r[*nr].first = a;
		r[*nr].last = b;
		(*nr)++;
		total += (size_t)(b - a) + 1;
		if (total > outcap) {
			snprintf(err, errlen,
				 "list names more than %zu indexes", outcap);
			return -1;
		}
		if (pos == end)
			return 0;
		if (s[pos] != ',') {
			char what[16];
			describe_char(s[pos], what, sizeof(what));
			snprintf(err, errlen,
				 "unexpected %s at offset %zu "
				 "(expected %s)",
				 what, pos, ranged ? "','" : "',' or '-'");
			return -1;
		}
		pos++;
		if (pos == end) {
			snprintf(err, errlen, "list ends with ','");
			return -1;
		}
	}
}

/* The ranges sorted, checked for overlaps and written out one index at a
 * time (their total fits: read_ranges checked). */
static int expand_ranges(struct range *r, size_t nr, unsigned *out, size_t *n,
			 char *err, size_t errlen)
{
	size_t i, k;

	qsort(r, nr, sizeof(*r), range_cmp);
	for (i = 1; i < nr; i++) {
		if (r[i].first <= r[i - 1].last) {
			snprintf(err, errlen, "index %u is listed twice",
				 r[i].first);
			return -1;
		}
	}
	k = 0;
	for (i = 0; i < nr; i++) {
		unsigned v = r[i].first;
		for (;;) {
			out[k++] = v;
			if (v == r[i].last)
				break;
			v++;
		}
	}
	*n = k;
	return 0;
}

int te_cpulist_parse_mem(const char *s, size_t len, unsigned max_index,
			 unsigned *out, size_t outcap, size_t *n, char *err,
			 size_t errlen)
{
	struct range *r = NULL;
	size_t nr = 0, cap, pos, end;

	if (!n || (!out && outcap)) {
		snprintf(err, errlen,
			 "internal error: bad arguments to the list parser");
		return -1;
	}
	*n = 0;
	if (!s) {
		snprintf(err, errlen, "no list given");
		return -1;
	}
	if (max_index > TE_CPULIST_INDEX_LIMIT)
		max_index = TE_CPULIST_INDEX_LIMIT;

	pos = 0;
	end = len;
	while (pos < end && is_blank(s[pos]))
		pos++;
	while (end > pos && is_blank(s[end - 1]))
		end--;
	if (pos == end)
		return 0;

	/* Every item but the last needs at least two characters ("0,"), so
	 * this bounds the number of ranges by the input length. */
	cap = (end - pos) / 2 + 1;
	r = calloc(cap, sizeof(*r));
	if (!r) {
		snprintf(err, errlen,
			 "out of memory parsing a list of %zu "
			 "characters",
			 end - pos);
		return -1;
	}
	if (read_ranges(s, pos, end, max_index, outcap, r, cap, &nr, err,
			errlen) ||
	    expand_ranges(r, nr, out, n, err, errlen)) {
		free(r);
		*n = 0;
		return -1;
	}
	free(r);
	return 0;
}

int te_cpulist_parse(const char *s, size_t maxlen, unsigned max_index,
		     unsigned *out, size_t outcap, size_t *n, char *err,
		     size_t errlen)
{
	size_t len;

	if (!s) {
		if (n)
			*n = 0;
		snprintf(err, errlen, "no list given");
		return -1;
	}
	/* strnlen stops at the terminator, so looking one byte beyond maxlen
	 * only happens inside a string that is still going on. */
	len = strnlen(s, maxlen < (size_t)PTRDIFF_MAX ? maxlen + 1
						      : (size_t)PTRDIFF_MAX);
	if (len > maxlen) {
		if (n)
			*n = 0;
		snprintf(err, errlen, "list is longer than %zu characters",
			 maxlen);
		return -1;
	}
	return te_cpulist_parse_mem(s, len, max_index, out, outcap, n, err,
				    errlen);
}

/* Appends ",a" or ",a-b" (no comma first) to buf at *used; returns -1 once
 * it no longer fits. */
static int append_item(char *buf, size_t buflen, size_t *used, int first,
		       unsigned a, unsigned b)
{
	int w;

	if (*used >= buflen)
		return -1;
	if (a == b)
		w = snprintf(buf + *used, buflen - *used, "%s%u",
			     first ? "" : ",", a);
	else
		w = snprintf(buf + *used, buflen - *used, "%s%u-%u",
			     first ? "" : ",", a, b);
	if (w < 0 || (size_t)w >= buflen - *used)
		return -1;
	*used += (size_t)w;
	return 0;
}

int te_cpulist_format(const unsigned *idx, size_t n, char *buf, size_t buflen)
{
	size_t used = 0, i = 0;

	if (!buf || buflen == 0)
		return -1;
	buf[0] = '\0';
	if (n && !idx)
		return -1;
	while (i < n) {
		size_t j = i;

		while (j + 1 < n && idx[j] != UINT_MAX &&
		       idx[j + 1] == idx[j] + 1)
			j++;
		if (j + 1 < n && idx[j + 1] <= idx[j])
			goto fail;
		if (append_item(buf, buflen, &used, i == 0, idx[i], idx[j]))
			goto fail;
		i = j + 1;
	}
	if (used > (size_t)INT32_MAX)
		goto fail;
	return (int)used;
fail:
	buf[0] = '\0';
	return -1;
}
