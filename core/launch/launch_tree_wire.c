/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launch tree's wire: a subtree summary as lines for the parent,
 * and the strict parser of what a child sends (launch_tree.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/launch_tree.h"
#include "launch/launch_tree_int.h"
#include "util/strutil.h"

/* ---------------------------------------------------------------- wire */

static int group_line(char *buf, size_t len, const char *token, char kind,
		      const struct te_tree_group *g)
{
	char hosts[LINE_BUDGET];
	size_t fixed;
	uint32_t i;

	/* "TEBAR1 TOKEN grp v COUNT " + hosts + " " + value + "\n" */
	fixed = strlen(MAGIC_HEAD) + TE_TOKEN_LEN + 20 + strlen(g->value) + 2;
	hosts[0] = '\0';
	for (i = 0; i < g->nhosts; i++) {
		char one[TE_HOST_MAX + 16];

		te_snprintf(one, sizeof(one), "%s%u:%s", i ? "," : "",
			    g->hosts[i].rank, g->hosts[i].host);
		if (fixed + strlen(hosts) + strlen(one) >= LINE_BUDGET)
			break;
		te_appendf(hosts, sizeof(hosts), "%s", one);
	}
	if (!hosts[0])
		return -1;
	return te_snprintf(buf, len, MAGIC_HEAD "%s grp %c %u %s %s\n", token,
			   kind, g->count, hosts, g->value);
}

/* The storage figures f[0..n) (n <= TE_TREE_STOR_PER_LINE) as one "stor"
 * line: each item at most 10+1+63+1+10+1+10+1 bytes, 6 fit a line. */
static void stor_line(char *buf, size_t len, const char *token,
		      const struct te_tree_stor *f, uint32_t n)
{
	uint32_t i;

	te_snprintf(buf, len, MAGIC_HEAD "%s stor ", token);
	for (i = 0; i < n; i++)
		te_appendf(buf, len, "%s%u:%s:%llu:%llu", i ? "," : "",
			   f[i].rank, f[i].host,
			   (unsigned long long)f[i].write_mbps,
			   (unsigned long long)f[i].read_mbps);
	te_appendf(buf, len, "\n");
}

static int64_t age(int64_t now, int64_t t)
{
	int64_t a = now - t;

	if (a < 0)
		return 0;
	return a > TE_LAUNCH_SKEW_MAX_MS ? TE_LAUNCH_SKEW_MAX_MS : a;
}

int te_tree_sum_format(char *buf, size_t len, const char *token, uint32_t rank,
		       const struct te_tree_sum *s, int64_t now_ms)
{
	char line[TE_COORD_LINE_MAX + 1];
	size_t used = 0;
	uint32_t i;

#define PUT()                                     \
	do {                                      \
		size_t l_ = strlen(line);         \
		if (used + l_ + 1 > len)          \
			return -1;                \
		memcpy(buf + used, line, l_ + 1); \
		used += l_;                       \
	} while (0)

	if (!te_token_valid(token) || !len)
		return -1;
	buf[0] = '\0';
	for (i = 0; i < s->nver; i++)
		if (group_line(line, sizeof(line), token, 'v', &s->ver[i]) == 0)
			PUT();
	for (i = 0; i < s->nck; i++)
		if (group_line(line, sizeof(line), token, 'c', &s->ck[i]) == 0)
			PUT();
	for (i = 0; i < s->nstor; i += TE_TREE_STOR_PER_LINE) {
		stor_line(line, sizeof(line), token, &s->stor[i],
			  s->nstor - i < TE_TREE_STOR_PER_LINE
				  ? s->nstor - i
				  : TE_TREE_STOR_PER_LINE);
		PUT();
	}
	if (s->nmiss) {
		te_snprintf(line, sizeof(line), MAGIC_HEAD "%s miss ", token);
		for (i = 0; i < s->nmiss; i++)
			te_appendf(line, sizeof(line), "%s%u-%u@%u",
				   i ? "," : "", s->miss[i].lo, s->miss[i].hi,
				   s->miss[i].node);
		te_appendf(line, sizeof(line), "\n");
		PUT();
	}
	if (s->nodes)
		te_snprintf(line, sizeof(line),
			    MAGIC_HEAD "%s sum %u %u %u %d "
				       "%u %u %lld %s %lld %s\n",
			    token, rank, s->arrived, s->nodes, s->final ? 1 : 0,
			    s->ver_more, s->ck_more,
			    (long long)age(now_ms, s->first_ms), s->first_host,
			    (long long)age(now_ms, s->last_ms), s->last_host);
	else
		te_snprintf(line, sizeof(line),
			    MAGIC_HEAD "%s sum %u %u 0 %d "
				       "%u %u 0 - 0 -\n",
			    token, rank, s->arrived, s->final ? 1 : 0,
			    s->ver_more, s->ck_more);
	PUT();
#undef PUT
	return 0;
}

static int word_num(const char **p, uint64_t max, uint64_t *v)
{
	char w[24];

	return te_next_word(p, w, sizeof(w)) < 0 ? -1 : te_parse_u64(w, max, v);
}

/* "RANK:HOST,..." */
static int parse_hosts(const char *s, uint32_t nranks, struct te_tree_host *h,
		       uint32_t *n)
{
	*n = 0;
	while (*s) {
		const char *colon = strchr(s, ':'), *end;
		char w[16];
		uint64_t r;
		size_t hl;

		if (!colon || (size_t)(colon - s) >= sizeof(w) ||
		    *n >= TE_TREE_HOSTS_MAX)
			return -1;
		memcpy(w, s, (size_t)(colon - s));
		w[colon - s] = '\0';
		if (te_parse_u64(w, nranks - 1, &r) < 0)
			return -1;
		end = strchr(colon + 1, ',');
		hl = end ? (size_t)(end - colon - 1) : strlen(colon + 1);
		if (hl >= TE_HOST_MAX)
			return -1;
		h[*n].rank = (uint32_t)r;
		memcpy(h[*n].host, colon + 1, hl);
		h[*n].host[hl] = '\0';
		if (!te_host_valid(h[*n].host))
			return -1;
		(*n)++;
		if (!end)
			break;
		s = end + 1;
		if (!*s)
			return -1;
	}
	return *n ? 0 : -1;
}

static int parse_grp(const char *p, uint32_t nranks, uint32_t nnodes,
		     struct te_tree_sum *pend)
{
	char kind[4], hosts[TE_COORD_LINE_MAX];
	struct te_tree_host h[TE_TREE_HOSTS_MAX];
	struct te_versions v;
	uint64_t count;
	uint32_t nh;

	if (te_next_word(&p, kind, sizeof(kind)) < 0 || strlen(kind) != 1 ||
	    word_num(&p, nnodes, &count) < 0 || !count ||
	    te_next_word(&p, hosts, sizeof(hosts)) < 0 ||
	    parse_hosts(hosts, nranks, h, &nh) < 0 || nh > count || !*p ||
	    strlen(p) > TE_TREE_VALUE_MAX ||
	    !te_is_printable(p, TE_TREE_VALUE_MAX))
		return -1;
	if (kind[0] == 'v') {
		char again[192];

		/* the canonical form only: one group per tuple */
		if (te_versions_parse(p, &v) < 0 ||
		    te_versions_format(again, sizeof(again), &v) < 0 ||
		    strcmp(again, p))
			return -1;
		te_tree_group_add(pend->ver, &pend->nver, TE_TREE_VGROUPS_MAX,
				  &pend->ver_more, p, (uint32_t)count, h, nh);
	} else if (kind[0] == 'c') {
		if (!strcmp(p, "-") || !strcmp(p, "ok"))
			return -1;
		te_tree_group_add(pend->ck, &pend->nck, TE_TREE_CGROUPS_MAX,
				  &pend->ck_more, p, (uint32_t)count, h, nh);
	} else {
		return -1;
	}
	return TE_TL_GRP;
}

static int parse_miss(const char *p, uint32_t nranks, uint32_t nnodes,
		      struct te_tree_sum *pend)
{
	struct te_tree_miss items[TE_TREE_MISS_MAX];
	uint32_t n = 0, i;

	while (*p) {
		uint64_t lo, hi, node;

		if (n >= TE_TREE_MISS_MAX ||
		    te_tree_num(&p, nranks - 1, &lo) < 0 || *p++ != '-' ||
		    te_tree_num(&p, nranks - 1, &hi) < 0 || hi < lo ||
		    *p++ != '@' || te_tree_num(&p, nnodes - 1, &node) < 0)
			return -1;
		items[n++] = (struct te_tree_miss){ (uint32_t)lo, (uint32_t)hi,
						    (uint32_t)node };
		if (!*p)
			break;
		if (*p++ != ',' || !*p)
			return -1;
	}
	if (!n)
		return -1;
	for (i = 0; i < n; i++)
		te_tree_sum_add_miss(pend, items[i].lo, items[i].hi,
				     items[i].node);
	return TE_TL_MISS;
}

/* "RANK:HOST:W:R,..." */
static int parse_stor(const char *p, uint32_t nranks, struct te_tree_sum *pend)
{
	struct te_tree_stor items[TE_TREE_STOR_PER_LINE];
	uint32_t n = 0;

	while (*p) {
		uint64_t rank;
		const char *colon;
		size_t hl;

		if (n >= TE_TREE_STOR_PER_LINE ||
		    te_tree_num(&p, nranks - 1, &rank) < 0 || *p++ != ':' ||
		    !(colon = strchr(p, ':')) ||
		    (hl = (size_t)(colon - p)) >= TE_HOST_MAX)
			return -1;
		memset(&items[n], 0, sizeof(items[n]));
		items[n].rank = (uint32_t)rank;
		memcpy(items[n].host, p, hl);
		p = colon + 1;
		if (!te_host_valid(items[n].host) ||
		    te_tree_num(&p, UINT32_MAX, &items[n].write_mbps) < 0 ||
		    *p++ != ':' ||
		    te_tree_num(&p, UINT32_MAX, &items[n].read_mbps) < 0)
			return -1;
		n++;
		if (!*p)
			break;
		if (*p++ != ',' || !*p)
			return -1;
	}
	if (!n)
		return -1;
	te_tree_stor_add(pend, items, n);
	return TE_TL_STOR;
}

static int parse_sum(const char *p, uint32_t nranks, uint32_t nnodes,
		     int64_t now_ms, struct te_tree_sum *pend, uint32_t *rank)
{
	uint64_t r, arrived, nodes, fin, vmore, cmore, fage, lage;
	char fh[TE_HOST_MAX], lh[TE_HOST_MAX];

	if (word_num(&p, nranks - 1, &r) < 0 ||
	    word_num(&p, nranks, &arrived) < 0 ||
	    word_num(&p, nnodes, &nodes) < 0 || word_num(&p, 1, &fin) < 0 ||
	    word_num(&p, nnodes, &vmore) < 0 ||
	    word_num(&p, nnodes, &cmore) < 0 ||
	    word_num(&p, TE_LAUNCH_SKEW_MAX_MS, &fage) < 0 ||
	    te_next_word(&p, fh, sizeof(fh)) < 0 ||
	    word_num(&p, TE_LAUNCH_SKEW_MAX_MS, &lage) < 0 ||
	    te_next_word(&p, lh, sizeof(lh)) < 0 || *p)
		return -1;
	if (nodes ? !te_host_valid(fh) || !te_host_valid(lh)
		  : strcmp(fh, "-") || strcmp(lh, "-") || fage || lage)
		return -1;
	*rank = (uint32_t)r;
	pend->arrived = (uint32_t)arrived;
	pend->nodes = (uint32_t)nodes;
	pend->final = (int)fin;
	pend->ver_more += (uint32_t)vmore;
	pend->ck_more += (uint32_t)cmore;
	if (nodes) {
		te_strlcpy(pend->first_host, fh, sizeof(pend->first_host));
		te_strlcpy(pend->last_host, lh, sizeof(pend->last_host));
		pend->first_ms = now_ms - (int64_t)fage;
		pend->last_ms = now_ms - (int64_t)lage;
	}
	return TE_TL_SUM;
}

int te_tree_line_parse(const char *line, const char *token, uint32_t nranks,
		       uint32_t nnodes, int64_t now_ms,
		       struct te_tree_sum *pend, uint32_t *rank)
{
	char l[TE_COORD_LINE_MAX + 1], w[TE_TOKEN_LEN + 2];
	const char *p;

	if (!nranks || !nnodes || te_coord_line_open(line, l, &p) < 0)
		return -1;
	if (te_next_word(&p, w, sizeof(w)) < 0 ||
	    !te_token_equal(w, token, TE_TOKEN_LEN) ||
	    te_next_word(&p, w, sizeof(w)) < 0)
		return -1;
	if (!strcmp(w, "grp"))
		return parse_grp(p, nranks, nnodes, pend);
	if (!strcmp(w, "miss"))
		return parse_miss(p, nranks, nnodes, pend);
	if (!strcmp(w, "stor"))
		return parse_stor(p, nranks, pend);
	if (!strcmp(w, "sum"))
		return parse_sum(p, nranks, nnodes, now_ms, pend, rank);
	return -1;
}
