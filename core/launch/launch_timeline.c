/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launch timeline: per-node arrivals at the launch barrier, the skew
 * between the first and the last node, its line and its wire form. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/launch_timeline.h"
#include "util/strutil.h"

#define FIRST_CAP 64

void te_timeline_init(struct te_timeline *t)
{
	memset(t, 0, sizeof(*t));
}

void te_timeline_free(struct te_timeline *t)
{
	free(t->slot);
	te_timeline_init(t);
}

static int host_ok(const char *s)
{
	return te_word_valid(s, TE_TIMELINE_HOST_MAX - 1, "-_.");
}

/* FNV-1a: host names are short and come from the job's own ranks */
static size_t host_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

static struct te_timeline_node *find_slot(struct te_timeline_node *slot,
					  size_t cap, const char *host)
{
	size_t i = host_hash(host) & (cap - 1);

	while (slot[i].host[0] && strcmp(slot[i].host, host))
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

/* Keeps the load at most one half: probes stay short. */
static int grow(struct te_timeline *t)
{
	size_t cap = t->cap ? t->cap * 2 : FIRST_CAP, i;
	struct te_timeline_node *n;

	if (cap < t->cap || cap > SIZE_MAX / sizeof(*n))
		return -1;
	n = calloc(cap, sizeof(*n));
	if (!n)
		return -1;
	for (i = 0; i < t->cap; i++)
		if (t->slot[i].host[0])
			*find_slot(n, cap, t->slot[i].host) = t->slot[i];
	free(t->slot);
	t->slot = n;
	t->cap = cap;
	return 0;
}

int te_timeline_note(struct te_timeline *t, const char *host, int64_t now_ms)
{
	struct te_timeline_node *n;

	if (!host || !host_ok(host))
		host = "?";
	if ((t->nnodes + 1) * 2 > t->cap && grow(t) < 0)
		return -1;
	n = find_slot(t->slot, t->cap, host);
	if (!n->host[0]) {
		te_strlcpy(n->host, host, sizeof(n->host));
		n->first_ms = n->last_ms = now_ms;
		t->nnodes++;
	}
	if (now_ms < n->first_ms)
		n->first_ms = now_ms;
	if (now_ms > n->last_ms)
		n->last_ms = now_ms;
	n->nranks++;
	t->nranks++;
	return 0;
}

/* a before b: earlier, or as early with a smaller name */
static int earlier(int64_t ta, const char *a, int64_t tb, const char *b)
{
	return ta != tb ? ta < tb : strcmp(a, b) < 0;
}

void te_timeline_skew(const struct te_timeline *t, struct te_launch_skew *s)
{
	const struct te_timeline_node *first = NULL, *last = NULL;
	size_t i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < t->cap; i++) {
		const struct te_timeline_node *n = &t->slot[i];

		if (!n->host[0])
			continue;
		if (!first ||
		    earlier(n->last_ms, n->host, first->last_ms, first->host))
			first = n;
		if (!last || n->last_ms > last->last_ms ||
		    (n->last_ms == last->last_ms &&
		     strcmp(n->host, last->host) < 0))
			last = n;
	}
	s->nranks = t->nranks;
	s->nnodes = (uint32_t)t->nnodes;
	if (!first)
		return;
	te_strlcpy(s->first, first->host, sizeof(s->first));
	te_strlcpy(s->last, last->host, sizeof(s->last));
	s->skew_ms = last->last_ms - first->last_ms;
}

int te_launch_skew_say(const struct te_launch_skew *s, long warn_ms)
{
	if (warn_ms < 0 || s->nnodes < 2)
		return 0;
	return warn_ms == 0 || s->skew_ms >= warn_ms;
}

void te_launch_skew_line(const struct te_launch_skew *s, char *out, size_t len)
{
	long long tenths = (s->skew_ms + 50) / 100;

	if (s->nnodes < 2) {
		te_snprintf(out, len, "barrier: %u rank%s on 1 node", s->nranks,
			    s->nranks == 1 ? "" : "s");
		return;
	}
	if (tenths < 1) {
		te_snprintf(out, len,
			    "barrier: %u ranks on %u nodes; all "
			    "arrived within 0.1 s",
			    s->nranks, s->nnodes);
		return;
	}
	te_snprintf(out, len,
		    "barrier: %u ranks on %u nodes; the last, %s, "
		    "arrived %lld.%lld s after the first",
		    s->nranks, s->nnodes, s->last, tenths / 10, tenths % 10);
}

int te_launch_skew_format(const struct te_launch_skew *s, char *buf, size_t len)
{
	if (s->skew_ms < 0 || s->skew_ms > TE_LAUNCH_SKEW_MAX_MS ||
	    (s->nnodes && (!host_ok(s->first) || !host_ok(s->last))))
		return -1;
	return te_snprintf(buf, len, "%u %u %lld %s %s", s->nranks, s->nnodes,
			   (long long)s->skew_ms, s->nnodes ? s->first : "-",
			   s->nnodes ? s->last : "-");
}

int te_launch_skew_parse(const char *text, struct te_launch_skew *s)
{
	char ranks[16], nodes[16], skew[24], first[TE_TIMELINE_HOST_MAX],
		last[TE_TIMELINE_HOST_MAX], extra[2];
	uint64_t v;

	memset(s, 0, sizeof(*s));
	if (te_strnlen_cap(text, 256) >= 256 ||
	    sscanf(text, "%15s %15s %23s %63s %63s %1s", ranks, nodes, skew,
		   first, last, extra) != 5)
		return -1;
	if (te_parse_u64(ranks, UINT32_MAX, &v) < 0)
		return -1;
	s->nranks = (uint32_t)v;
	if (te_parse_u64(nodes, UINT32_MAX, &v) < 0 || v > s->nranks)
		return -1;
	s->nnodes = (uint32_t)v;
	if (te_parse_u64(skew, (uint64_t)TE_LAUNCH_SKEW_MAX_MS, &v) < 0)
		return -1;
	s->skew_ms = (int64_t)v;
	if (!s->nnodes)
		return strcmp(first, "-") || strcmp(last, "-") || s->skew_ms
			       ? -1
			       : 0;
	if (!host_ok(first) || !host_ok(last))
		return -1;
	te_strlcpy(s->first, first, sizeof(s->first));
	te_strlcpy(s->last, last, sizeof(s->last));
	return 0;
}
