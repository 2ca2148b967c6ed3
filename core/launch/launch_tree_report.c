/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rank 0's reports from the launch tree's summary: who is missing, the
 * version and checkpoint verdict, the timeline (launch_tree.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/health_storage.h"
#include "launch/launch_tree.h"
#include "launch/launch_tree_int.h"
#include "util/strutil.h"
#include "launch/version.h"

/* ---------------------------------------------------------------- reports */

static void node_host(const struct te_procmap *m, uint32_t node,
		      te_host_fn host_fn, void *ctx, char *host, size_t len)
{
	if (node >= m->nnodes || !host_fn ||
	    host_fn(ctx, m->node_lead[node], host, len) < 0 ||
	    !te_host_valid(host))
		te_strlcpy(host, "?", len);
}

void te_tree_missing_text(const struct te_tree_sum *s, uint32_t total,
			  const struct te_procmap *m, te_host_fn host_fn,
			  void *ctx, char *out, size_t len)
{
	uint32_t missing = total > s->arrived ? total - s->arrived : 0;
	uint32_t listed = 0, i = 0;
	int first = 1;

	if (!len)
		return;
	te_snprintf(out, len, "%u of %u ranks arrived", s->arrived, total);
	if (!missing)
		return;
	te_appendf(out, len, "; missing:");
	while (i < s->nmiss) {
		char host[TE_HOST_MAX], next[TE_HOST_MAX], item[160];
		uint32_t lo = s->miss[i].lo, hi = s->miss[i].hi;

		node_host(m, s->miss[i].node, host_fn, ctx, host, sizeof(host));
		/* the next range, contiguous on the same host, joins it */
		while (i + 1 < s->nmiss && s->miss[i + 1].lo == hi + 1) {
			node_host(m, s->miss[i + 1].node, host_fn, ctx, next,
				  sizeof(next));
			if (strcmp(next, host))
				break;
			hi = s->miss[++i].hi;
		}
		i++;
		if (lo == hi)
			te_snprintf(item, sizeof(item), "%s rank %u (node %s)",
				    first ? "" : ",", lo, host);
		else
			te_snprintf(item, sizeof(item),
				    "%s ranks %u-%u (node "
				    "%s)",
				    first ? "" : ",", lo, hi, host);
		if (strlen(out) + strlen(item) + 40 >= len)
			break;
		te_appendf(out, len, "%s", item);
		listed += hi - lo + 1;
		first = 0;
	}
	if (listed < missing)
		te_appendf(out, len, "%s and %u more ranks", listed ? "," : "",
			   missing - listed);
}

static int by_first_rank(const void *x, const void *y)
{
	const struct te_tree_group *a = x, *b = y;
	uint32_t ra = a->nhosts ? a->hosts[0].rank : NONE;
	uint32_t rb = b->nhosts ? b->hosts[0].rank : NONE;

	return ra < rb ? -1 : ra > rb;
}

/* "h1, h2 and N more nodes" */
static void hosts_text(const struct te_tree_group *g, char *out, size_t len)
{
	for (uint32_t i = 0; i < g->nhosts; i++)
		te_appendf(out, len, "%s%s", i ? ", " : "", g->hosts[i].host);
	if (g->count > g->nhosts)
		te_appendf(out, len, " and %u more nodes",
			   g->count - g->nhosts);
}

/* "V on h1, h2; V2 on h3" (hosts_first: "h1, h2: V; h3: V2") */
static void groups_text(struct te_tree_group *g, uint32_t n, uint32_t more,
			int hosts_first, char *out, size_t len)
{
	qsort(g, n, sizeof(*g), by_first_rank);
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			te_appendf(out, len, "; ");
		if (!hosts_first)
			te_appendf(out, len, "%s on ", g[i].value);
		hosts_text(&g[i], out, len);
		if (hosts_first)
			te_appendf(out, len, ": %s", g[i].value);
	}
	if (more)
		te_appendf(out, len, "; and %u more nodes", more);
}

static const char *component(const struct te_versions *v, int c)
{
	return c == 0	? v->trainenv
	       : c == 1 ? v->nccl
	       : c == 2 ? v->cuda
			: v->cudart;
}

static void version_differences(const struct te_tree_sum *s, char *vers,
				size_t len)
{
	static const char *const what[4] = { "trainenv", "NCCL", "CUDA driver",
					     "CUDA runtime" };
	struct te_tree_group g[TE_TREE_VGROUPS_MAX];

	vers[0] = '\0';
	for (int c = 0; c < 4; c++) {
		uint32_t n = 0, more = 0, i;
		char part[TE_COORD_TEXT_MAX + 1] = "";

		for (i = 0; i < s->nver; i++) {
			struct te_versions v;

			if (te_versions_parse(s->ver[i].value, &v) < 0 ||
			    (c > 0 && !te_version_compared(component(&v, c))))
				continue; /* a node without a GPU */
			te_tree_group_add(g, &n, TE_TREE_VGROUPS_MAX, &more,
					  component(&v, c), s->ver[i].count,
					  s->ver[i].hosts, s->ver[i].nhosts);
		}
		if (n + (s->ver_more ? 1 : 0) < 2)
			continue;
		groups_text(g, n, s->ver_more, 0, part, sizeof(part));
		te_appendf(vers, len, "%s%s differs across nodes: %s",
			   vers[0] ? "; " : "", what[c], part);
	}
}

/* Nodes of more than one protocol: one line naming them and every
 * protocol with its trainenv version, "node n2 speaks protocol 2
 * (trainenv X), nodes n1, n3 protocol 1 (trainenv Y): install ...", the
 * nodes of rank 0's protocol last. 1 when they differ (text filled), else
 * 0. From the bounded version groups: a protocol seen only among the
 * nodes beyond TE_TREE_VGROUPS_MAX tuples goes unnamed. */
static int protocol_differences(const struct te_tree_sum *s, char *text,
				size_t len)
{
	struct te_tree_group g[TE_TREE_VGROUPS_MAX];
	uint32_t i, n = 0, more = 0;
	int p0, first = 1;

	for (i = 0; i < s->nver; i++) {
		struct te_versions v;
		char key[TE_VER_MAX + 48];

		if (te_versions_parse(s->ver[i].value, &v) < 0)
			continue;
		te_snprintf(key, sizeof(key), "protocol %d (trainenv %s)",
			    v.protocol, v.trainenv);
		te_tree_group_add(g, &n, TE_TREE_VGROUPS_MAX, &more, key,
				  s->ver[i].count, s->ver[i].hosts,
				  s->ver[i].nhosts);
	}
	if (n < 2)
		return 0;
	qsort(g, n, sizeof(g[0]), by_first_rank);
	p0 = atoi(g[0].value + 9); /* the smallest rank's: rank 0's */
	for (i = 1; i < n && atoi(g[i].value + 9) == p0; i++)
		;
	if (i == n)
		return 0; /* one protocol, trainenv versions differ */
	text[0] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			if ((atoi(g[i].value + 9) == p0) != pass)
				continue;
			te_appendf(text, len, "%s%s ", first ? "" : ", ",
				   g[i].count > 1 ? "nodes" : "node");
			hosts_text(&g[i], text, len);
			te_appendf(text, len, " %s%s", first ? "speaks " : "",
				   g[i].value);
			first = 0;
		}
	}
	te_appendf(text, len, ": " TE_PROTOCOL_ADVICE);
	return 1;
}

/* 1 when every checkpoint failure is the storage check's own ("storage:
 * did not finish ..."): the directory is shared, only slow or failing. */
static int storage_only(const struct te_tree_sum *s)
{
	uint32_t i;

	if (s->ck_more || !s->nck)
		return 0;
	for (i = 0; i < s->nck; i++)
		if (strncmp(s->ck[i].value, "storage: ", 9))
			return 0;
	return 1;
}

/* The storage check's verdict over the figures the root has: the nodes
 * below the fraction, in text after what is there ("; " between). */
static int storage_verdict(const struct te_launch_checks *c,
			   const struct te_tree_sum *s, char *text, size_t len)
{
	struct te_storage_figure f[TE_TREE_STOR_MAX];
	char lines[TE_COORD_TEXT_MAX + 1], *nl, *line;
	uint32_t i;
	long named;

	if (!c->storage_permille || !c->ckpt || s->nstor < 2)
		return TE_VERDICT_OK;
	for (i = 0; i < s->nstor; i++) {
		te_strlcpy(f[i].host, s->stor[i].host, sizeof(f[i].host));
		f[i].have = 1;
		f[i].write_mbps = s->stor[i].write_mbps;
		f[i].read_mbps = s->stor[i].read_mbps;
	}
	named = te_storage_slow_nodes(f, s->nstor, c->storage_permille, c->ckpt,
				      4, lines, sizeof(lines));
	if (named <= 0)
		return TE_VERDICT_OK;
	/* one line for the report: "; " between the nodes' */
	for (line = lines; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		te_appendf(text, len, "%s%s", text[0] ? "; " : "", line);
	}
	return c->storage_exclude ? TE_VERDICT_REJECT : TE_VERDICT_WARN;
}

int te_tree_verdict(const struct te_launch_checks *c,
		    const struct te_tree_sum *s, char *text, size_t len)
{
	char vers[TE_COORD_TEXT_MAX + 1];
	int rc = TE_VERDICT_OK;
	uint32_t i;

	text[0] = '\0';
	/* whatever --version-check says: nodes of two protocols cannot be
	 * trusted to read each other's data; nothing else is said */
	if (protocol_differences(s, text, len))
		return TE_VERDICT_REJECT;
	if (c->ckpt && (s->nck || s->ck_more)) {
		struct te_tree_group g[TE_TREE_CGROUPS_MAX];
		char part[TE_COORD_TEXT_MAX + 1] = "";

		rc = TE_VERDICT_REJECT;
		for (i = 0; i < s->nck; i++)
			if (!strncmp(s->ck[i].value, TE_CKPT_RANK0_PREFIX,
				     strlen(TE_CKPT_RANK0_PREFIX)))
				break;
		if (i < s->nck) {
			te_snprintf(text, len,
				    "checkpoint dir %s: rank 0 (node "
				    "%s) cannot write there: %s",
				    c->ckpt, c->rank0_host,
				    s->ck[i].value +
					    strlen(TE_CKPT_RANK0_PREFIX));
		} else {
			memcpy(g, s->ck, s->nck * sizeof(g[0]));
			groups_text(g, s->nck, s->ck_more, 1, part,
				    sizeof(part));
			te_snprintf(text, len,
				    storage_only(s)
					    ? "checkpoint dir %s: the storage "
					      "check failed (rank 0 is on %s): "
					      "%s"
					    : "checkpoint dir %s is not one "
					      "shared directory writable from "
					      "every node (rank 0 is on %s): "
					      "%s",
				    c->ckpt, c->rank0_host, part);
		}
	}
	if (rc == TE_VERDICT_OK)
		rc = storage_verdict(c, s, text, len);
	if (c->vcheck == TE_W_VCHECK_OFF)
		return rc;
	version_differences(s, vers, sizeof(vers));
	if (!vers[0])
		return rc;
	if (rc == TE_VERDICT_OK) {
		if (c->vcheck == TE_W_VCHECK_FAIL) {
			te_snprintf(text, len,
				    "version mismatch "
				    "(version-check=fail): %s",
				    vers);
			return TE_VERDICT_REJECT;
		}
		te_snprintf(text, len, "version mismatch: %s", vers);
		return TE_VERDICT_WARN;
	}
	if (c->vcheck == TE_W_VCHECK_FAIL)
		te_appendf(text, len, "; version mismatch: %s", vers);
	return rc;
}

void te_tree_skew(const struct te_tree_sum *s, uint32_t nranks,
		  struct te_launch_skew *out)
{
	memset(out, 0, sizeof(*out));
	out->nranks = nranks;
	out->nnodes = s->nodes;
	if (!s->nodes)
		return;
	te_strlcpy(out->first, s->first_host, sizeof(out->first));
	te_strlcpy(out->last, s->last_host, sizeof(out->last));
	out->skew_ms = s->last_ms - s->first_ms;
	if (out->skew_ms < 0)
		out->skew_ms = 0;
}
