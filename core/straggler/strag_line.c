/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stragglers: one node's window summary line, its writer and its strict
 * parser (straggler.h, part 2; the line comes from the network). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "straggler/straggler.h"

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

int te_strag_node_ok(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || len >= TE_STRAG_NODE_MAX || name[0] == '-' ||
	    name[0] == '.')
		return 0;
	for (i = 0; i < len; i++)
		if (!name_char(name[i]))
			return 0;
	return 1;
}

static uint64_t clamp(uint64_t v, uint64_t max)
{
	return v > max ? max : v;
}

int te_strag_summary_add(struct te_strag_summary *s, uint32_t rank,
			 const struct te_strag_stat *st)
{
	unsigned i, at;

	if (s->nranks >= TE_STRAG_NODE_RANKS || rank > TE_STRAG_RANK_MAX)
		return -1;
	for (at = 0; at < s->nranks && s->ranks[at].rank < rank; at++)
		;
	if (at < s->nranks && s->ranks[at].rank == rank)
		return -1;
	for (i = s->nranks; i > at; i--)
		s->ranks[i] = s->ranks[i - 1];
	s->ranks[at].rank = rank;
	s->ranks[at].count = (uint32_t)clamp(st->count, TE_STRAG_COUNT_MAX);
	s->ranks[at].mean_ns = clamp(st->mean_ns, TE_STRAG_NS_MAX);
	s->ranks[at].median_ns = clamp(st->median_ns, TE_STRAG_NS_MAX);
	if (!s->ranks[at].count)
		s->ranks[at].mean_ns = s->ranks[at].median_ns = 0;
	s->nranks++;
	return 0;
}

/* What the parser demands of a parsed summary, checked before writing. */
static const char *summary_wrong(const struct te_strag_summary *s)
{
	unsigned i;

	if (s->window > TE_STRAG_WINDOW_MAX)
		return "window out of bounds";
	if (!te_strag_node_ok(s->node, strnlen(s->node, TE_STRAG_NODE_MAX)))
		return "bad node name";
	if (s->op >= TE_STRAG_OPS)
		return "unknown op";
	if (s->nranks < 1 || s->nranks > TE_STRAG_NODE_RANKS)
		return "rank count out of bounds";
	for (i = 0; i < s->nranks; i++) {
		const struct te_strag_rank_sum *r = &s->ranks[i];

		if (r->rank > TE_STRAG_RANK_MAX ||
		    (i && r->rank <= s->ranks[i - 1].rank))
			return "ranks not increasing";
		if (r->count > TE_STRAG_COUNT_MAX ||
		    r->mean_ns > TE_STRAG_NS_MAX ||
		    r->median_ns > TE_STRAG_NS_MAX)
			return "value out of bounds";
		if (!r->count && (r->mean_ns || r->median_ns))
			return "a rank without collectives has a wait";
	}
	return NULL;
}

int te_strag_line_format(const struct te_strag_summary *s, char *buf,
			 size_t len)
{
	size_t at;
	unsigned i;
	int n;

	if (summary_wrong(s) || len == 0)
		return -1;
	n = snprintf(buf, len, "strag 1 %u %s %016llx %s %u", s->window,
		     s->node, (unsigned long long)s->comm_hash,
		     te_strag_op_name(s->op), s->nranks);
	for (i = 0; n >= 0 && (size_t)n < len && i < s->nranks; i++) {
		const struct te_strag_rank_sum *r = &s->ranks[i];

		at = (size_t)n;
		n = snprintf(buf + at, len - at, " %u:%u:%llu:%llu", r->rank,
			     r->count, (unsigned long long)r->mean_ns,
			     (unsigned long long)r->median_ns);
		n = n < 0 ? n : (int)at + n;
	}
	if (n < 0 || (size_t)n >= len || n >= TE_STRAG_LINE_MAX) {
		buf[0] = '\0';
		return -1;
	}
	return n;
}

int te_strag_line_part(const struct te_strag_summary *s, unsigned from,
		       char *buf, size_t len)
{
	struct te_strag_summary part;
	unsigned n;

	if (summary_wrong(s) || from >= s->nranks)
		return -1;
	part = *s;
	/* the most ranks from `from` on that fit: at most 16 tries */
	for (n = s->nranks - from; n > 0; n--) {
		part.nranks = n;
		memmove(part.ranks, s->ranks + from, n * sizeof(s->ranks[0]));
		if (te_strag_line_format(&part, buf, len) >= 0)
			return (int)(from + n);
	}
	return -1;
}

/* The parser's cursor over exactly len bytes. */
struct cur {
	const char *p, *end;
	const char *err;
};

static int fail(struct cur *c, const char *why)
{
	if (!c->err)
		c->err = why;
	return -1;
}

/* The token up to the next ' ' or sep (or the end); its length. */
static size_t token(const struct cur *c, char sep)
{
	const char *q = c->p;

	while (q < c->end && *q != ' ' && *q != sep)
		q++;
	return (size_t)(q - c->p);
}

/* Decimal digits (no sign, no leading zero), at most max. */
static int number(struct cur *c, char sep, uint64_t max, uint64_t *v)
{
	size_t n = token(c, sep), i;
	uint64_t x = 0;

	if (n == 0 || n > 20 || (n > 1 && c->p[0] == '0'))
		return fail(c, "bad number");
	for (i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)c->p[i] - '0';

		if (d > 9)
			return fail(c, "bad number");
		if (x > (max - d) / 10)
			return fail(c, "number out of bounds");
		x = x * 10 + d;
	}
	c->p += n;
	*v = x;
	return 0;
}

/* The one separator ch, which must be there. */
static int expect(struct cur *c, char ch)
{
	if (c->p >= c->end || *c->p != ch)
		return fail(c, ch == ' ' ? "fields not one space apart"
					 : "bad rank field");
	c->p++;
	return 0;
}

static int comm_hex(struct cur *c, uint64_t *v)
{
	size_t n = token(c, ' '), i;
	uint64_t x = 0;

	if (n != 16)
		return fail(c, "communicator not 16 hex digits");
	for (i = 0; i < n; i++) {
		char ch = c->p[i];
		unsigned d;

		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			d = (unsigned)(ch - 'a' + 10);
		else
			return fail(c, "communicator not 16 hex digits");
		x = x << 4 | d;
	}
	c->p += n;
	*v = x;
	return 0;
}

static int rank_field(struct cur *c, struct te_strag_rank_sum *r)
{
	uint64_t rank, count, mean, median;

	if (expect(c, ' ') || number(c, ':', TE_STRAG_RANK_MAX, &rank) ||
	    expect(c, ':') || number(c, ':', TE_STRAG_COUNT_MAX, &count) ||
	    expect(c, ':') || number(c, ':', TE_STRAG_NS_MAX, &mean) ||
	    expect(c, ':') || number(c, ':', TE_STRAG_NS_MAX, &median))
		return -1;
	r->rank = (uint32_t)rank;
	r->count = (uint32_t)count;
	r->mean_ns = mean;
	r->median_ns = median;
	return 0;
}

/* "strag 1 WINDOW NODE COMM OP N". */
static int head(struct cur *c, struct te_strag_summary *s)
{
	static const char magic[] = "strag 1 ";
	size_t n;
	uint64_t v;
	int op;

	if ((size_t)(c->end - c->p) < sizeof(magic) - 1 ||
	    memcmp(c->p, magic, sizeof(magic) - 1))
		return fail(c, "not a straggler line of version 1");
	c->p += sizeof(magic) - 1;
	if (number(c, ' ', TE_STRAG_WINDOW_MAX, &v) || expect(c, ' '))
		return -1;
	s->window = (uint32_t)v;
	n = token(c, ' ');
	if (!te_strag_node_ok(c->p, n))
		return fail(c, "bad node name");
	memcpy(s->node, c->p, n);
	s->node[n] = '\0';
	c->p += n;
	if (expect(c, ' ') || comm_hex(c, &s->comm_hash) || expect(c, ' '))
		return -1;
	n = token(c, ' ');
	op = te_strag_op_of(c->p, n);
	if (op < 0)
		return fail(c, "unknown op");
	s->op = (unsigned)op;
	c->p += n;
	if (expect(c, ' ') || number(c, ' ', TE_STRAG_NODE_RANKS, &v))
		return -1;
	if (v == 0)
		return fail(c, "rank count out of bounds");
	s->nranks = (unsigned)v;
	return 0;
}

int te_strag_line_parse(const char *line, size_t len,
			struct te_strag_summary *s, char *err, size_t errlen)
{
	struct cur c = { line, line + len, NULL };
	const char *wrong;
	unsigned i;

	memset(s, 0, sizeof(*s));
	if (len >= TE_STRAG_LINE_MAX)
		fail(&c, "line too long");
	else if (head(&c, s) == 0) {
		for (i = 0; i < s->nranks; i++)
			if (rank_field(&c, &s->ranks[i]))
				break;
		if (!c.err && c.p != c.end)
			fail(&c, "extra fields");
	}
	if (!c.err) {
		wrong = summary_wrong(s);
		if (wrong)
			fail(&c, wrong);
	}
	if (c.err) {
		if (errlen)
			snprintf(err, errlen, "straggler line: %s", c.err);
		memset(s, 0, sizeof(*s));
		return -1;
	}
	return 0;
}
