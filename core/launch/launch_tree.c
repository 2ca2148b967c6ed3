/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launch tree: tree index math, the job's process map, the bounded
 * subtree summary (merge, wire form) and rank 0's reports from it (see
 * launch_tree.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch/launch_tree.h"
#include "launch/launch_tree_int.h"
#include "util/strutil.h"

/* ---------------------------------------------------------------- tree */

size_t te_tree_parent(size_t i, unsigned k)
{
	return i ? (i - 1) / k : 0;
}

size_t te_tree_children(size_t i, unsigned k, size_t n, size_t *count)
{
	unsigned long long first = (unsigned long long)i * k + 1;

	*count = 0;
	if (first >= n)
		return 0;
	*count = n - first < k ? (size_t)(n - first) : k;
	return (size_t)first;
}

unsigned te_tree_depth(size_t n, unsigned k)
{
	unsigned d = 0;

	if (n <= 1 || k < 1)
		return 0;
	for (size_t i = n - 1; i; i = te_tree_parent(i, k))
		d++;
	return d;
}

/* ---------------------------------------------------------------- map */

void te_procmap_free(struct te_procmap *m)
{
	free(m->run_first);
	free(m->run_len);
	free(m->run_node);
	free(m->run_next);
	free(m->node_lead);
	free(m->node_nranks);
	free(m->node_run);
	memset(m, 0, sizeof(*m));
}

static int map_alloc(struct te_procmap *m, uint32_t nruns, uint32_t nnodes)
{
	m->nruns = 0;
	m->nnodes = nnodes;
	m->run_first = calloc(nruns, sizeof(uint32_t));
	m->run_len = calloc(nruns, sizeof(uint32_t));
	m->run_node = calloc(nruns, sizeof(uint32_t));
	m->run_next = calloc(nruns, sizeof(uint32_t));
	m->node_lead = calloc(nnodes, sizeof(uint32_t));
	m->node_nranks = calloc(nnodes, sizeof(uint32_t));
	m->node_run = calloc(nnodes, sizeof(uint32_t));
	if (!m->run_first || !m->run_len || !m->run_node || !m->run_next ||
	    !m->node_lead || !m->node_nranks || !m->node_run)
		return -1;
	return 0;
}

/* Appends ranks first..first+len-1 on node (in rank order). */
static void map_run(struct te_procmap *m, uint32_t first, uint32_t len,
		    uint32_t node)
{
	uint32_t r = m->nruns;

	if (r && m->run_node[r - 1] == node &&
	    m->run_first[r - 1] + m->run_len[r - 1] == first) {
		m->run_len[r - 1] += len;
		return;
	}
	m->run_first[r] = first;
	m->run_len[r] = len;
	m->run_node[r] = node;
	m->nruns++;
}

/* The per-node tables, once the runs of nranks ranks are in. -1 (m
 * freed) when a node has none. */
static int map_finish(struct te_procmap *m, uint32_t nranks)
{
	uint32_t r, n;

	m->nranks = nranks;
	for (n = 0; n < m->nnodes; n++) {
		m->node_run[n] = NONE;
		m->node_nranks[n] = 0;
	}
	for (r = m->nruns; r-- > 0;) {
		n = m->run_node[r];
		m->run_next[r] = m->node_run[n];
		m->node_run[n] = r;
		m->node_nranks[n] += m->run_len[r];
		m->node_lead[n] = m->run_first[r];
	}
	for (n = 0; n < m->nnodes; n++)
		if (m->node_run[n] == NONE) {
			te_procmap_free(m);
			return -1;
		}
	m->root_node = m->nruns ? m->run_node[0] : 0;
	return 0;
}

int te_tree_num(const char **p, uint64_t max, uint64_t *v)
{
	char d[12];
	size_t n = 0;

	while ((*p)[n] >= '0' && (*p)[n] <= '9') {
		if (n >= 10)
			return -1;
		d[n] = (*p)[n];
		n++;
	}
	d[n] = '\0';
	*p += n;
	return n ? te_parse_u64(d, max, v) : -1;
}

int te_procmap_parse_anl(const char *s, uint32_t nranks, struct te_procmap *m)
{
	static const char head[] = "(vector";
	const char *p;
	uint64_t total = 0, runs = 0, nnodes = 0, a, c, d;
	int pass;

	memset(m, 0, sizeof(*m));
	if (!s || !nranks || strncmp(s, head, sizeof(head) - 1))
		return -1;
	/* pass 0 checks and counts; pass 1 fills */
	for (pass = 0; pass < 2; pass++) {
		p = s + sizeof(head) - 1;
		total = 0;
		while (*p == ',') {
			p++;
			if (*p++ != '(' || te_tree_num(&p, nranks, &a) < 0 ||
			    *p++ != ',' || te_tree_num(&p, nranks, &c) < 0 ||
			    *p++ != ',' || te_tree_num(&p, nranks, &d) < 0 ||
			    *p++ != ')' || !c || !d || a + c > nranks ||
			    c * d > nranks - total)
				goto bad;
			if (pass == 0) {
				runs += c;
				if (a + c > nnodes)
					nnodes = a + c;
			} else {
				for (uint64_t j = 0; j < c; j++)
					map_run(m, (uint32_t)(total + j * d),
						(uint32_t)d, (uint32_t)(a + j));
			}
			total += c * d;
		}
		if (*p++ != ')' || *p || total != nranks)
			goto bad;
		if (pass == 0 &&
		    map_alloc(m, (uint32_t)runs, (uint32_t)nnodes) < 0)
			goto bad;
	}
	return map_finish(m, nranks);
bad:
	te_procmap_free(m);
	return -1;
}

int te_procmap_from_nodes(const uint32_t *node_of, uint32_t nranks,
			  uint32_t nnodes, struct te_procmap *m)
{
	uint32_t r, runs = 0;

	memset(m, 0, sizeof(*m));
	if (!nranks || !nnodes || nnodes > nranks)
		return -1;
	for (r = 0; r < nranks; r++) {
		if (node_of[r] >= nnodes)
			return -1;
		if (!r || node_of[r] != node_of[r - 1])
			runs++;
	}
	if (map_alloc(m, runs, nnodes) < 0)
		goto bad;
	for (r = 0; r < nranks; r++)
		map_run(m, r, 1, node_of[r]);
	return map_finish(m, nranks);
bad:
	te_procmap_free(m);
	return -1;
}

uint32_t te_procmap_node_of(const struct te_procmap *m, uint32_t rank)
{
	uint32_t lo = 0, hi = m->nruns;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->run_first[mid] <= rank)
			lo = mid;
		else
			hi = mid;
	}
	return m->nruns ? m->run_node[lo] : 0;
}

uint32_t te_tree_node_at(const struct te_procmap *m, size_t index)
{
	return (uint32_t)((m->root_node + index) % m->nnodes);
}

size_t te_tree_index_of(const struct te_procmap *m, uint32_t node)
{
	return (size_t)((node + m->nnodes - m->root_node) % m->nnodes);
}

int te_tree_subtree_ranks(const struct te_procmap *m, unsigned k, uint32_t *out)
{
	size_t t;

	if (!m->nnodes || k < 1)
		return -1;
	for (t = 0; t < m->nnodes; t++)
		out[t] = m->node_nranks[te_tree_node_at(m, t)];
	for (t = m->nnodes - 1; t > 0; t--)
		out[te_tree_parent(t, k)] += out[t];
	return 0;
}

/* ---------------------------------------------------------------- summary */

void te_tree_sum_init(struct te_tree_sum *s)
{
	memset(s, 0, sizeof(*s));
}

/* The timeline's order: a node before another when earlier, or as early
 * with a smaller name (launch_timeline.c does the same). */
static int before(int64_t ta, const char *a, int64_t tb, const char *b)
{
	return ta != tb ? ta < tb : strcmp(a, b) < 0;
}

static void note_times(struct te_tree_sum *s, const char *fh, int64_t ft,
		       const char *lh, int64_t lt)
{
	if (!s->nodes || before(ft, fh, s->first_ms, s->first_host)) {
		te_strlcpy(s->first_host, fh, sizeof(s->first_host));
		s->first_ms = ft;
	}
	if (!s->nodes || lt > s->last_ms ||
	    (lt == s->last_ms && strcmp(lh, s->last_host) < 0)) {
		te_strlcpy(s->last_host, lh, sizeof(s->last_host));
		s->last_ms = lt;
	}
}

/* Host lists stay sorted by rank, each rank once, the first 8 kept. */
static void hosts_merge(struct te_tree_group *g, const struct te_tree_host *h,
			uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = 0;

		while (j < g->nhosts && g->hosts[j].rank < h[i].rank)
			j++;
		if (j < g->nhosts && g->hosts[j].rank == h[i].rank)
			continue;
		if (j >= TE_TREE_HOSTS_MAX)
			continue;
		if (g->nhosts == TE_TREE_HOSTS_MAX)
			g->nhosts--; /* the largest rank goes */
		memmove(&g->hosts[j + 1], &g->hosts[j],
			(g->nhosts - j) * sizeof(g->hosts[0]));
		g->hosts[j] = h[i];
		g->nhosts++;
	}
}

void te_tree_group_add(struct te_tree_group *groups, uint32_t *n, uint32_t max,
		       uint32_t *more, const char *value, uint32_t count,
		       const struct te_tree_host *hosts, uint32_t nhosts)
{
	uint32_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(groups[i].value, value))
			break;
	if (i == *n) {
		if (*n >= max) {
			*more += count;
			return;
		}
		memset(&groups[i], 0, sizeof(groups[i]));
		te_strlcpy(groups[i].value, value, sizeof(groups[i].value));
		(*n)++;
	}
	groups[i].count += count;
	hosts_merge(&groups[i], hosts, nhosts);
}

void te_tree_stor_add(struct te_tree_sum *s, const struct te_tree_stor *f,
		      uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (s->nstor >= TE_TREE_STOR_MAX) {
			s->stor_more += n - i;
			return;
		}
		s->stor[s->nstor++] = f[i];
	}
}

int te_ckpt_storage_parse(const char *ckpt, uint64_t *w, uint64_t *r)
{
	size_t l = strlen(TE_CKPT_STORAGE_PREFIX);
	const char *p = ckpt + l;

	if (strncmp(ckpt, TE_CKPT_STORAGE_PREFIX, l) ||
	    te_tree_num(&p, UINT32_MAX, w) < 0 || *p++ != ' ' ||
	    te_tree_num(&p, UINT32_MAX, r) < 0 || *p)
		return 0;
	return 1;
}

void te_tree_sum_add_node(struct te_tree_sum *s, uint32_t lead,
			  const char *host, int64_t at_ms,
			  const struct te_versions *v, const char *ckpt)
{
	struct te_tree_host h = { .rank = lead };
	char val[192];
	uint64_t w, r;

	te_strlcpy(h.host, host && te_host_valid(host) ? host : "?",
		   sizeof(h.host));
	note_times(s, h.host, at_ms, h.host, at_ms);
	s->nodes++;
	if (v && te_versions_format(val, sizeof(val), v) == 0)
		te_tree_group_add(s->ver, &s->nver, TE_TREE_VGROUPS_MAX,
				  &s->ver_more, val, 1, &h, 1);
	if (ckpt && te_ckpt_storage_parse(ckpt, &w, &r)) {
		struct te_tree_stor f = { .rank = lead,
					  .write_mbps = w,
					  .read_mbps = r };

		te_strlcpy(f.host, h.host, sizeof(f.host));
		te_tree_stor_add(s, &f, 1);
	} else if (ckpt && ckpt[0] && strcmp(ckpt, "-") && strcmp(ckpt, "ok") &&
		   te_is_printable(ckpt, TE_TREE_VALUE_MAX))
		te_tree_group_add(s->ck, &s->nck, TE_TREE_CGROUPS_MAX,
				  &s->ck_more, ckpt, 1, &h, 1);
}

void te_tree_sum_add_miss(struct te_tree_sum *s, uint32_t lo, uint32_t hi,
			  uint32_t node)
{
	uint32_t j = 0;

	if (hi < lo)
		return;
	while (j < s->nmiss && s->miss[j].lo < lo)
		j++;
	if (j >= TE_TREE_MISS_MAX)
		return;
	if (s->nmiss == TE_TREE_MISS_MAX)
		s->nmiss--;
	memmove(&s->miss[j + 1], &s->miss[j],
		(s->nmiss - j) * sizeof(s->miss[0]));
	s->miss[j] = (struct te_tree_miss){ .lo = lo, .hi = hi, .node = node };
	s->nmiss++;
}

void te_tree_sum_merge(struct te_tree_sum *dst, const struct te_tree_sum *src)
{
	uint32_t i;

	if (src->nodes)
		note_times(dst, src->first_host, src->first_ms, src->last_host,
			   src->last_ms);
	dst->arrived += src->arrived;
	dst->nodes += src->nodes;
	for (i = 0; i < src->nmiss; i++)
		te_tree_sum_add_miss(dst, src->miss[i].lo, src->miss[i].hi,
				     src->miss[i].node);
	for (i = 0; i < src->nver; i++)
		te_tree_group_add(dst->ver, &dst->nver, TE_TREE_VGROUPS_MAX,
				  &dst->ver_more, src->ver[i].value,
				  src->ver[i].count, src->ver[i].hosts,
				  src->ver[i].nhosts);
	dst->ver_more += src->ver_more;
	for (i = 0; i < src->nck; i++)
		te_tree_group_add(dst->ck, &dst->nck, TE_TREE_CGROUPS_MAX,
				  &dst->ck_more, src->ck[i].value,
				  src->ck[i].count, src->ck[i].hosts,
				  src->ck[i].nhosts);
	dst->ck_more += src->ck_more;
	te_tree_stor_add(dst, src->stor, src->nstor);
	dst->stor_more += src->stor_more;
}

void te_tree_sum_absent(struct te_tree_sum *s, const struct te_procmap *m,
			unsigned k, size_t index)
{
	unsigned long long lo = index, hi = index, i;

	/* a subtree's nodes, level by level: contiguous index ranges */
	while (lo < m->nnodes && s->nmiss < TE_TREE_MISS_MAX) {
		for (i = lo;
		     i <= hi && i < m->nnodes && s->nmiss < TE_TREE_MISS_MAX;
		     i++) {
			uint32_t node = te_tree_node_at(m, (size_t)i), r;

			for (r = m->node_run[node];
			     r != NONE && s->nmiss < TE_TREE_MISS_MAX;
			     r = m->run_next[r])
				te_tree_sum_add_miss(s, m->run_first[r],
						     m->run_first[r] +
							     m->run_len[r] - 1,
						     node);
		}
		lo = lo * k + 1;
		hi = hi * k + k;
	}
}
