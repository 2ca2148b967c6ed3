/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The flat launch verdict (test support): see flat_verdict.h. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flat_verdict.h"
#include "util/strutil.h"
#include "launch/version.h"

/* Appends the hosts that have version ver (from index first on), each
 * once, at most TE_VERSION_HOSTS_SHOWN of them; returns how many. */
static size_t list_hosts(const struct te_nodever *v, size_t n, size_t first,
			 const char *ver, char *out, size_t outlen)
{
	size_t shown = 0, more = 0, i, j;

	for (i = first; i < n; i++) {
		if (strcmp(v[i].ver, ver))
			continue;
		for (j = first; j < i; j++)
			if (!strcmp(v[j].ver, ver) &&
			    !strcmp(v[j].host, v[i].host))
				break;
		if (j < i)
			continue; /* this host is listed already */
		if (shown < TE_VERSION_HOSTS_SHOWN) {
			te_appendf(out, outlen, "%s%s", shown ? ", " : "",
				   v[i].host);
			shown++;
		} else {
			more++;
		}
	}
	if (more)
		te_appendf(out, outlen, " and %zu more nodes", more);
	return shown + more;
}

int te_group_by_value(const struct te_nodever *v, size_t n, int hosts_first,
		      char *out, size_t outlen)
{
	size_t g_first[TE_VERSION_GROUPS_MAX]; /* index of each group */
	size_t ngroups = 0, extra_groups = 0, i, j, g;

	if (outlen)
		out[0] = '\0';
	for (i = 0; i < n; i++) {
		for (g = 0; g < ngroups; g++)
			if (!strcmp(v[g_first[g]].ver, v[i].ver))
				break;
		if (g < ngroups)
			continue;
		/* not a named group: among the uncounted ones before i? */
		for (j = 0; j < i; j++)
			if (!strcmp(v[j].ver, v[i].ver))
				break;
		if (j < i)
			continue;
		if (ngroups < TE_VERSION_GROUPS_MAX)
			g_first[ngroups++] = i;
		else
			extra_groups++;
	}
	if (!outlen)
		return (int)(ngroups + extra_groups);
	for (g = 0; g < ngroups; g++) {
		const char *val = v[g_first[g]].ver;

		if (g)
			te_appendf(out, outlen, "; ");
		if (!hosts_first)
			te_appendf(out, outlen, "%s on ", val);
		list_hosts(v, n, g_first[g], val, out, outlen);
		if (hosts_first)
			te_appendf(out, outlen, ": %s", val);
	}
	if (extra_groups)
		te_appendf(out, outlen, "; and %zu more %s", extra_groups,
			   hosts_first ? "reasons" : "versions");
	return (int)(ngroups + extra_groups);
}

int te_version_summary(const char *what, const struct te_nodever *v, size_t n,
		       char *out, size_t outlen)
{
	char groups[TE_COORD_TEXT_MAX + 1];
	int distinct = te_group_by_value(v, n, 0, NULL, 0);

	if (outlen)
		out[0] = '\0';
	if (distinct < 2 || !outlen)
		return distinct;
	te_group_by_value(v, n, 0, groups, sizeof(groups));
	te_snprintf(out, outlen, "%s differs across nodes: %s", what, groups);
	return distinct;
}

static int is_rank0_error(const char *fact)
{
	return !strncmp(fact, TE_CKPT_RANK0_PREFIX,
			strlen(TE_CKPT_RANK0_PREFIX));
}

/* The checkpoint directory: TE_VERDICT_REJECT when rank 0 could not write
 * there, or when a node could not see or write rank 0's file. */
static int ckpt_verdict(const struct te_launch_checks *c,
			const struct te_coord_req *nodes, size_t n,
			struct te_nodever *bad, char *text, size_t len)
{
	char part[TE_COORD_TEXT_MAX + 1];
	const char *rank0_err = NULL;
	size_t i, nbad = 0;

	for (i = 0; i < n; i++) {
		if (is_rank0_error(nodes[i].ckpt)) {
			rank0_err =
				nodes[i].ckpt + strlen(TE_CKPT_RANK0_PREFIX);
		} else if (strcmp(nodes[i].ckpt, "ok")) {
			bad[nbad].host = nodes[i].host;
			bad[nbad].ver = nodes[i].ckpt;
			nbad++;
		}
	}
	if (rank0_err) {
		te_snprintf(text, len,
			    "checkpoint dir %s: rank 0 (node %s) "
			    "cannot write there: %s",
			    c->ckpt, c->rank0_host, rank0_err);
		return TE_VERDICT_REJECT;
	}
	if (!nbad)
		return TE_VERDICT_OK;
	te_group_by_value(bad, nbad, 1, part, sizeof(part));
	te_snprintf(text, len,
		    "checkpoint dir %s is not one shared directory "
		    "writable from every node (rank 0 is on %s): %s",
		    c->ckpt, c->rank0_host, part);
	return TE_VERDICT_REJECT;
}

/* "NCCL differs across nodes: ...; CUDA driver differs ..." into vers, ""
 * when every version agrees. */
static void version_differences(const struct te_coord_req *nodes, size_t n,
				struct te_nodever *nv, char *vers, size_t len)
{
	static const char *const what[4] = { "trainenv", "NCCL", "CUDA driver",
					     "CUDA runtime" };
	char part[TE_COORD_TEXT_MAX + 1];
	size_t i;
	int c;

	vers[0] = '\0';
	for (c = 0; c < 4; c++) {
		size_t m = 0;

		for (i = 0; i < n; i++) {
			const char *v = c == 0	 ? nodes[i].ver.trainenv
					: c == 1 ? nodes[i].ver.nccl
					: c == 2 ? nodes[i].ver.cuda
						 : nodes[i].ver.cudart;

			if (c > 0 && !te_version_compared(v))
				continue; /* a node without a GPU */
			nv[m].host = nodes[i].host;
			nv[m].ver = v;
			m++;
		}
		if (te_version_summary(what[c], nv, m, part, sizeof(part)) > 1)
			te_appendf(vers, len, "%s%s", vers[0] ? "; " : "",
				   part);
	}
}

/* Nodes (in rank order) of more than one protocol: 1 with "node n2 speaks
 * protocol 2 (trainenv X), nodes n1, n3 protocol 1 (trainenv Y): install
 * ..." in text (the nodes of rank 0's protocol last), else 0. */
typedef char protocol_key[TE_VER_MAX + 48];
static int protocol_differences(const struct te_coord_req *nodes, size_t n,
				char *text, size_t len)
{
	protocol_key *key;
	size_t i, j;
	int first = 1, differ = 0;

	for (i = 1; i < n; i++)
		differ |= nodes[i].ver.protocol != nodes[0].ver.protocol;
	if (!differ || !(key = calloc(n, sizeof(*key))))
		return 0;
	for (i = 0; i < n; i++)
		te_snprintf(key[i], sizeof(key[i]), "protocol %d (trainenv %s)",
			    nodes[i].ver.protocol, nodes[i].ver.trainenv);
	text[0] = '\0';
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			size_t count = 0, shown = 0;

			if ((nodes[i].ver.protocol == nodes[0].ver.protocol) !=
			    pass)
				continue;
			for (j = 0; j < i && strcmp(key[j], key[i]); j++)
				;
			if (j < i)
				continue; /* named with its first node */
			for (j = i; j < n; j++)
				count += !strcmp(key[j], key[i]);
			te_appendf(text, len, "%s%s ", first ? "" : ", ",
				   count > 1 ? "nodes" : "node");
			for (j = i; j < n && shown < TE_VERSION_HOSTS_SHOWN;
			     j++)
				if (!strcmp(key[j], key[i]))
					te_appendf(text, len, "%s%s",
						   shown++ ? ", " : "",
						   nodes[j].host);
			if (count > shown)
				te_appendf(text, len, " and %zu more nodes",
					   count - shown);
			te_appendf(text, len, " %s%s", first ? "speaks " : "",
				   key[i]);
			first = 0;
		}
	}
	te_appendf(text, len, ": " TE_PROTOCOL_ADVICE);
	free(key);
	return 1;
}

int te_launch_verdict(const struct te_launch_checks *c,
		      const struct te_coord_req *nodes, size_t n, char *text,
		      size_t len)
{
	struct te_nodever *nv = calloc(n ? n : 1, sizeof(*nv));
	char vers[TE_COORD_TEXT_MAX + 1];
	int rc = TE_VERDICT_OK;

	text[0] = '\0';
	if (!nv) {
		te_snprintf(text, len, "launch checks: out of memory");
		return TE_VERDICT_WARN;
	}
	if (protocol_differences(nodes, n, text, len)) {
		free(nv);
		return TE_VERDICT_REJECT;
	}
	if (c->ckpt)
		rc = ckpt_verdict(c, nodes, n, nv, text, len);
	if (c->vcheck != TE_W_VCHECK_OFF) {
		version_differences(nodes, n, nv, vers, sizeof(vers));
		if (vers[0] && rc == TE_VERDICT_OK) {
			if (c->vcheck == TE_W_VCHECK_FAIL) {
				te_snprintf(text, len,
					    "version mismatch "
					    "(version-check=fail): %s",
					    vers);
				rc = TE_VERDICT_REJECT;
			} else {
				te_snprintf(text, len, "version mismatch: %s",
					    vers);
				rc = TE_VERDICT_WARN;
			}
		} else if (vers[0] && c->vcheck == TE_W_VCHECK_FAIL) {
			te_appendf(text, len, "; version mismatch: %s", vers);
		}
	}
	free(nv);
	return rc;
}
