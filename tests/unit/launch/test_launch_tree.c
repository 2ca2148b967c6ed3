/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the launch tree (core/launch/launch_tree.c): tree index math,
 * Slurm's process map, the subtree summary (merge, bounds, wire form,
 * hostile lines) and rank 0's reports from it, which must read as the
 * reports over every node's facts did (te_missing_summary,
 * te_launch_verdict). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launch/launch_tree.h"
#include "settings/settings.h"
#include "util/strutil.h"
#include "flat_verdict.h"
#include "tap.h"

static const char TOK[] = "0123456789abcdef0123456789abcdef";

static void tree_math(void)
{
	size_t n, first;

	is_int(te_tree_parent(1, 32), 0, "parent of 1 is the root");
	is_int(te_tree_parent(32, 32), 0, "parent of 32 (k 32) is the root");
	is_int(te_tree_parent(33, 32), 1, "parent of 33 (k 32) is 1");
	is_int(te_tree_parent(8191, 32), 255, "parent of 8191 is 255");
	first = te_tree_children(0, 32, 8192, &n);
	ok(first == 1 && n == 32, "the root has 32 children from 1");
	first = te_tree_children(255, 32, 8192, &n);
	ok(first == 8161 && n == 31, "255 has the last 31 nodes");
	te_tree_children(256, 32, 8192, &n);
	is_int(n, 0, "256 is a leaf");
	te_tree_children(0, 32, 1, &n);
	is_int(n, 0, "one node: no child");
	is_int(te_tree_depth(1, 32), 0, "depth 1 node");
	is_int(te_tree_depth(33, 32), 1, "depth 33 nodes");
	is_int(te_tree_depth(8192, 32), 3, "depth 8192 nodes, k 32: 3 hops");
	is_int(te_tree_depth(16384, 32), 3, "depth 16384 nodes: 3 hops");
	is_int(te_tree_depth(8, 2), 3, "depth 8 nodes, k 2");
	te_tree_children(0, 1024, 3000, &n);
	is_int(n, 1024, "k 1024: 1024 children");
}

static void procmap(void)
{
	struct te_procmap m;
	uint32_t sub[8], node_of[6] = { 1, 1, 0, 0, 2, 2 };

	ok(te_procmap_parse_anl("(vector,(0,3,2))", 6, &m) == 0,
	   "block map parses");
	ok(m.nnodes == 3 && m.nruns == 3, "3 nodes, 3 runs");
	ok(te_procmap_node_of(&m, 0) == 0 && te_procmap_node_of(&m, 3) == 1 &&
		   te_procmap_node_of(&m, 5) == 2,
	   "rank to node");
	ok(m.node_lead[2] == 4 && m.node_nranks[1] == 2, "lead and ranks");
	ok(te_tree_subtree_ranks(&m, 2, sub) == 0 && sub[0] == 6 &&
		   sub[1] == 2 && sub[2] == 2,
	   "subtree ranks, k 2");
	te_procmap_free(&m);

	ok(te_procmap_parse_anl("(vector,(0,2,1),(0,2,1))", 4, &m) == 0,
	   "cyclic map parses");
	ok(m.nnodes == 2 && m.nruns == 4 && te_procmap_node_of(&m, 2) == 0 &&
		   te_procmap_node_of(&m, 3) == 1 && m.node_lead[1] == 1 &&
		   m.node_nranks[0] == 2,
	   "cyclic: ranks 0,2 on node 0");
	te_procmap_free(&m);

	/* Slurm's map of 8192 nodes x 8 is one triple */
	ok(te_procmap_parse_anl("(vector,(0,8192,8))", 65536, &m) == 0 &&
		   m.nnodes == 8192 && m.node_lead[8191] == 65528,
	   "8192 x 8");
	te_procmap_free(&m);

	ok(te_procmap_parse_anl("(vector,(0,3,2))", 7, &m) < 0,
	   "too few ranks refused");
	ok(te_procmap_parse_anl("(vector,(0,3,2))", 5, &m) < 0,
	   "too many ranks refused");
	ok(te_procmap_parse_anl("(vector,(1,2,2))", 4, &m) < 0,
	   "node 0 without ranks refused");
	ok(te_procmap_parse_anl("(vector,(0,0,2))", 4, &m) < 0,
	   "no nodes refused");
	ok(te_procmap_parse_anl("(vector,(0,2,2)) ", 4, &m) < 0,
	   "trailing bytes refused");
	ok(te_procmap_parse_anl("(vector,(0,2,99999999999))", 4, &m) < 0,
	   "a huge number refused");
	ok(te_procmap_parse_anl("(vector,(4294967295,1,1))", 1, &m) < 0,
	   "a node past the ranks refused");
	ok(te_procmap_parse_anl("(vector)", 1, &m) < 0, "empty refused");
	ok(te_procmap_parse_anl(NULL, 1, &m) < 0, "NULL refused");

	ok(te_procmap_from_nodes(node_of, 6, 3, &m) == 0 && m.root_node == 1 &&
		   te_tree_index_of(&m, 1) == 0 &&
		   te_tree_node_at(&m, 1) == 2 && te_tree_node_at(&m, 2) == 0,
	   "from nodes: rank 0's node is the root, the others follow");
	te_procmap_free(&m);
	node_of[3] = 5;
	ok(te_procmap_from_nodes(node_of, 6, 3, &m) < 0,
	   "a node id past nnodes refused");
}

static struct te_versions ver(const char *nccl)
{
	struct te_versions v = { .protocol = 0 };

	te_strlcpy(v.trainenv, "0.1.0", sizeof(v.trainenv));
	te_strlcpy(v.nccl, nccl, sizeof(v.nccl));
	te_strlcpy(v.cuda, "12.4", sizeof(v.cuda));
	te_strlcpy(v.cudart, "none", sizeof(v.cudart));
	return v;
}

static int host_cb(void *ctx, uint32_t rank, char *host, size_t len)
{
	/* 2 ranks per node, nodes n1, n2, ... */
	te_snprintf(host, len, "n%u", rank / 2 + 1);
	return 0;
}

/* The reports match those over every node's facts (3 nodes x 2). */
static void reports_as_before(void)
{
	struct te_procmap m;
	struct te_tree_sum a, b;
	struct te_coord_req nodes[3];
	struct te_launch_checks c = { .vcheck = TE_W_VCHECK_WARN,
				      .rank0_host = "n1" };
	unsigned char arrived[6] = { 1, 1, 0, 0, 1, 0 };
	char want[512], got[512];
	int i;

	te_procmap_parse_anl("(vector,(0,3,2))", 6, &m);
	te_tree_sum_init(&a);
	te_tree_sum_init(&b);
	a.arrived = 3;
	te_tree_sum_add_miss(&a, 5, 5, 2);
	te_tree_sum_add_miss(&b, 2, 3, 1);
	te_tree_sum_merge(&a, &b);
	te_missing_summary(6, arrived, host_cb, NULL, want, sizeof(want));
	te_tree_missing_text(&a, 6, &m, host_cb, NULL, got, sizeof(got));
	is_str(got, want, "missing report as before");
	is_str(got,
	       "3 of 6 ranks arrived; missing: ranks 2-3 (node n2), "
	       "rank 5 (node n3)",
	       "the missing report");

	/* versions: n1, n2 on 2.28.9, n3 on 2.27.3 */
	te_tree_sum_init(&a);
	te_tree_sum_init(&b);
	for (i = 0; i < 3; i++) {
		memset(&nodes[i], 0, sizeof(nodes[i]));
		nodes[i].rank = (uint32_t)i * 2;
		te_snprintf(nodes[i].host, sizeof(nodes[i].host), "n%d", i + 1);
		nodes[i].ver = ver(i == 2 ? "2.27.3" : "2.28.9");
		te_strlcpy(nodes[i].ckpt, "-", sizeof(nodes[i].ckpt));
	}
	te_tree_sum_add_node(&b, 4, "n3", 100, &nodes[2].ver, "-");
	te_tree_sum_add_node(&a, 0, "n1", 50, &nodes[0].ver, "-");
	te_tree_sum_add_node(&a, 2, "n2", 70, &nodes[1].ver, "-");
	te_tree_sum_merge(&a, &b);
	is_int(te_launch_verdict(&c, nodes, 3, want, sizeof(want)),
	       TE_VERDICT_WARN, "old verdict: warn");
	is_int(te_tree_verdict(&c, &a, got, sizeof(got)), TE_VERDICT_WARN,
	       "tree verdict: warn");
	is_str(got, want, "mismatch report as before");
	is_str(got,
	       "version mismatch: NCCL differs across nodes: 2.28.9 on "
	       "n1, n2; 2.27.3 on n3",
	       "the mismatch report");
	c.vcheck = TE_W_VCHECK_FAIL;
	te_launch_verdict(&c, nodes, 3, want, sizeof(want));
	is_int(te_tree_verdict(&c, &a, got, sizeof(got)), TE_VERDICT_REJECT,
	       "fail: reject");
	is_str(got, want, "fail report as before");

	/* checkpoint: n2, n3 cannot see rank 0's file */
	c.vcheck = TE_W_VCHECK_OFF;
	c.ckpt = "/scratch/ck";
	te_strlcpy(nodes[0].ckpt, "ok", sizeof(nodes[0].ckpt));
	te_tree_sum_init(&a);
	te_tree_sum_add_node(&a, 0, "n1", 1, &nodes[0].ver, "ok");
	for (i = 1; i < 3; i++) {
		te_strlcpy(nodes[i].ckpt, "rank 0's probe file is not there",
			   sizeof(nodes[i].ckpt));
		te_tree_sum_add_node(&a, (uint32_t)i * 2, nodes[i].host, 2,
				     &nodes[i].ver, nodes[i].ckpt);
	}
	te_launch_verdict(&c, nodes, 3, want, sizeof(want));
	is_int(te_tree_verdict(&c, &a, got, sizeof(got)), TE_VERDICT_REJECT,
	       "checkpoint: reject");
	is_str(got, want, "checkpoint report as before");
	te_tree_sum_init(&a);
	te_tree_sum_add_node(&a, 0, "n1", 1, &nodes[0].ver, "rank0 EACCES");
	te_tree_verdict(&c, &a, got, sizeof(got));
	is_str(got,
	       "checkpoint dir /scratch/ck: rank 0 (node n1) cannot "
	       "write there: EACCES",
	       "rank 0 cannot write");
	te_procmap_free(&m);
}

/* The tree's summary of nodes (one rank each) */
static void sum_nodes(const struct te_coord_req *nodes, int n,
		      struct te_tree_sum *a)
{
	te_tree_sum_init(a);
	for (int i = 0; i < n; i++)
		te_tree_sum_add_node(a, nodes[i].rank, nodes[i].host, 10,
				     &nodes[i].ver, "-");
}

/* The tree's verdict over nodes is rc, with the flat reference's text;
 * the text in got. */
static void same_verdict(const struct te_launch_checks *c,
			 const struct te_coord_req *nodes, int n, int rc,
			 char *got, size_t len, const char *name)
{
	struct te_tree_sum a;
	char want[512];
	int flat = te_launch_verdict(c, nodes, (size_t)n, want, sizeof(want));

	sum_nodes(nodes, n, &a);
	is_int(te_tree_verdict(c, &a, got, len), rc, "%s", name);
	ok(flat == rc && !strcmp(got, want), "  as the flat verdict (%d: %s)",
	   flat, want);
}

/* A node without a GPU (TE_VER_NOGPU for NCCL and both CUDA versions) is
 * left out of their comparison, in the tree's verdict as in the flat one;
 * its trainenv still counts. */
static void nogpu_nodes(void)
{
	static const char *const nccl[4] = { "2.28.9", TE_VER_NOGPU, "2.27.3",
					     TE_VER_NOGPU };
	struct te_coord_req nodes[4];
	struct te_launch_checks c = { .vcheck = TE_W_VCHECK_FAIL,
				      .rank0_host = "n1" };
	char got[512];
	int i;

	for (i = 0; i < 4; i++) {
		memset(&nodes[i], 0, sizeof(nodes[i]));
		nodes[i].rank = (uint32_t)i;
		te_snprintf(nodes[i].host, sizeof(nodes[i].host), "n%d", i + 1);
		nodes[i].ver = ver(nccl[i]);
		if (!te_version_compared(nccl[i])) {
			te_strlcpy(nodes[i].ver.cuda, TE_VER_NOGPU,
				   sizeof(nodes[i].ver.cuda));
			te_strlcpy(nodes[i].ver.cudart, TE_VER_NOGPU,
				   sizeof(nodes[i].ver.cudart));
		}
		te_strlcpy(nodes[i].ckpt, "-", sizeof(nodes[i].ckpt));
	}
	same_verdict(&c, nodes, 4, TE_VERDICT_REJECT, got, sizeof(got),
		     "GPU nodes differ: rejected");
	is_str(got,
	       "version mismatch (version-check=fail): NCCL differs "
	       "across nodes: 2.28.9 on n1; 2.27.3 on n3",
	       "  naming only the nodes with a GPU");

	/* n3 agrees now: GPU and CPU-only nodes of one image */
	nodes[2].ver = ver("2.28.9");
	same_verdict(&c, nodes, 4, TE_VERDICT_OK, got, sizeof(got),
		     "GPU nodes agree, CPU-only nodes beside them: fine");
	is_str(got, "", "  no text");

	/* a CPU-only node with another trainenv is still named */
	te_strlcpy(nodes[3].ver.trainenv, "0.2.0",
		   sizeof(nodes[3].ver.trainenv));
	same_verdict(&c, nodes, 4, TE_VERDICT_REJECT, got, sizeof(got),
		     "another trainenv on a CPU-only node: rejected");
	like(got,
	     "trainenv differs across nodes: 0.1.0 on n1, n2, n3; 0.2.0 "
	     "on n4",
	     "  named, trainenv only: %s", got);
	ok(!strstr(got, "NCCL") && !strstr(got, "CUDA"),
	   "  no NCCL or CUDA difference from it");
}

static void timeline(void)
{
	struct te_tree_sum a, b;
	struct te_launch_skew s;
	char line[256];

	te_tree_sum_init(&a);
	te_tree_sum_init(&b);
	te_tree_sum_add_node(&a, 0, "n1", 1000, NULL, NULL);
	te_tree_sum_add_node(&b, 8, "n2", 1100, NULL, NULL);
	te_tree_sum_add_node(&b, 16, "n3", 21300, NULL, NULL);
	te_tree_sum_merge(&a, &b);
	a.arrived = 24;
	te_tree_skew(&a, 24, &s);
	te_launch_skew_line(&s, line, sizeof(line));
	is_str(line,
	       "barrier: 24 ranks on 3 nodes; the last, n3, arrived "
	       "20.3 s after the first",
	       "the launch line from the tree");
	te_tree_sum_init(&a);
	te_tree_sum_add_node(&a, 0, "nb", 5, NULL, NULL);
	te_tree_sum_add_node(&a, 2, "na", 5, NULL, NULL);
	ok(!strcmp(a.first_host, "na") && !strcmp(a.last_host, "na"),
	   "ties go to the smaller name");
}

static void bounds(void)
{
	struct te_tree_sum s, t;
	struct te_procmap m;
	uint32_t i;
	char got[2048];

	te_tree_sum_init(&s);
	for (i = 100; i-- > 0;)
		te_tree_sum_add_miss(&s, i * 10, i * 10 + 1, i);
	is_int(s.nmiss, TE_TREE_MISS_MAX, "missing ranges bounded");
	ok(s.miss[0].lo == 0 && s.miss[TE_TREE_MISS_MAX - 1].lo ==
					(TE_TREE_MISS_MAX - 1) * 10,
	   "the smallest ranges kept, in order");
	for (i = 0; i < 30; i++) {
		char h[16];
		struct te_versions v = { .protocol = 0 };

		te_snprintf(h, sizeof(h), "n%u", i);
		te_snprintf(v.nccl, sizeof(v.nccl), "2.%u.0", i % 12);
		te_strlcpy(v.trainenv, "1", sizeof(v.trainenv));
		te_strlcpy(v.cuda, "1", sizeof(v.cuda));
		te_strlcpy(v.cudart, "1", sizeof(v.cudart));
		te_tree_sum_add_node(&s, i * 8, h, i, &v, i % 5 ? "ok" : "bad");
	}
	ok(s.nver == TE_TREE_VGROUPS_MAX && s.ver_more == 30 - 8 * 3 + 2,
	   "version groups bounded, the rest counted");
	ok(s.nck == 1 && s.ck[0].count == 6 && s.ck[0].nhosts == 6,
	   "one checkpoint reason, 6 nodes");
	ok(s.ver[0].nhosts == 3 && s.ver[0].count == 3,
	   "group of 3 nodes lists 3 hosts");
	te_tree_sum_init(&t);
	for (i = 0; i < 20; i++)
		te_tree_sum_add_node(&t, 1000 - i, "x", 0, NULL, "bad");
	ok(t.ck[0].count == 20 && t.ck[0].nhosts == TE_TREE_HOSTS_MAX &&
		   t.ck[0].hosts[0].rank == 981,
	   "host list bounded: smallest ranks");

	/* a subtree nobody heard from: its first ranges */
	te_procmap_parse_anl("(vector,(0,8192,8))", 65536, &m);
	te_tree_sum_init(&s);
	te_tree_sum_absent(&s, &m, 32, 1);
	ok(s.nmiss == TE_TREE_MISS_MAX && s.miss[0].lo == 8 &&
		   s.miss[0].hi == 15 && s.miss[1].lo == 33 * 8,
	   "absent subtree of node 1: node 1, then its children");
	te_tree_missing_text(&s, 65536, &m, NULL, NULL, got, sizeof(got));
	like(got, "0 of 65536 ranks arrived; missing: ranks 8-15 (node ?)",
	     "absent report");
	like(got, "more ranks", "cut with 'and N more ranks'");
	ok(strlen(got) < TE_COORD_TEXT_MAX, "report fits a line");
	te_procmap_free(&m);
}

static void wire(void)
{
	struct te_tree_sum s, p;
	char buf[8192], line[TE_COORD_LINE_MAX + 2];
	const char *l, *nl;
	uint32_t rank = 0, i;
	int kinds = 0, rc;

	te_tree_sum_init(&s);
	for (i = 0; i < 6; i++) {
		char h[TE_HOST_MAX];
		struct te_versions v = ver(i % 2 ? "2.27.3" : "2.28.9");

		/* the longest host names */
		memset(h, 'h', TE_HOST_MAX - 1);
		h[TE_HOST_MAX - 1] = '\0';
		h[0] = (char)('a' + i);
		te_tree_sum_add_node(&s, i * 8, h, 1000 + i, &v,
				     i == 3 ? "no such directory" : "ok");
	}
	s.arrived = 47;
	te_tree_sum_add_miss(&s, 17, 17, 2);
	s.final = 0;
	ok(te_tree_sum_format(buf, sizeof(buf), TOK, 8, &s, 5000) == 0,
	   "format");
	te_tree_sum_init(&p);
	for (l = buf; *l; l = nl + 1) {
		size_t n;

		nl = strchr(l, '\n');
		n = (size_t)(nl - l + 1);
		ok(n <= TE_COORD_LINE_MAX, "a line fits (%zu)", n);
		memcpy(line, l, n);
		line[n] = '\0';
		rc = te_tree_line_parse(line, TOK, 64, 8, 9000, &p, &rank);
		ok(rc >= 0, "line parses: %.40s", line);
		kinds |= 1 << (rc < 0 ? 7 : rc);
	}
	ok(kinds == 7, "grp, miss and sum lines");
	ok(rank == 8 && p.arrived == 47 && p.nodes == 6 && !p.final,
	   "counts through the wire");
	ok(p.first_ms == 9000 - 4000 && p.last_ms == 9000 - 3995,
	   "ages become the reader's times");
	ok(p.nver == 2 && p.ver[0].count == 3 && p.nck == 1 &&
		   p.ck[0].count == 1 && p.nmiss == 1 && p.miss[0].lo == 17,
	   "groups and missing ranges through the wire");

	/* hostile lines */
	{
		static const char *const bad[] = {
			"TEBAR1 0123456789abcdef0123456789abcdee sum 1 0 0 0 0 0 0 - 0 -",
			"TEBAR1 0123456789abcdef0123456789abcdef sum 64 0 0 0 0 0 0 - 0 -",
			"TEBAR1 0123456789abcdef0123456789abcdef sum 1 65 0 0 0 0 0 - 0 -",
			"TEBAR1 0123456789abcdef0123456789abcdef sum 1 0 0 2 0 0 0 - 0 -",
			"TEBAR1 0123456789abcdef0123456789abcdef sum 1 0 1 0 0 0 0 a/b 0 n1",
			"TEBAR1 0123456789abcdef0123456789abcdef sum 1 0 0 0 0 0 5 - 0 -",
			"TEBAR1 0123456789abcdef0123456789abcdef sum 1 0 0 0 0 0 0 - 0 - x",
			"TEBAR1 0123456789abcdef0123456789abcdef sum 1  0 0 0 0 0 0 - 0 -",
			"TEBAR1 0123456789abcdef0123456789abcdef miss 5-4@1",
			"TEBAR1 0123456789abcdef0123456789abcdef miss 1-2@8",
			"TEBAR1 0123456789abcdef0123456789abcdef miss 1-2@1,",
			"TEBAR1 0123456789abcdef0123456789abcdef miss ",
			"TEBAR1 0123456789abcdef0123456789abcdef grp v 1 0:n1 trainenv=1 nccl=1 cuda=1",
			"TEBAR1 0123456789abcdef0123456789abcdef grp v 2 0:n1,1:n2,2:n3 trainenv=1 nccl=1 cuda=1 cudart=1",
			"TEBAR1 0123456789abcdef0123456789abcdef grp c 1 0:n1 ok",
			"TEBAR1 0123456789abcdef0123456789abcdef grp c 9 0:n1 x",
			"TEBAR1 0123456789abcdef0123456789abcdef grp c 1 0:n/1 x",
			"TEBAR1 0123456789abcdef0123456789abcdef grp c 1 64:n1 x",
			"TEBAR1 0123456789abcdef0123456789abcdef grp x 1 0:n1 x",
			"TEBAR1 0123456789abcdef0123456789abcdef grp c 1 0:n1 x\ty",
			"TEBAR1 0123456789abcdef0123456789abcdef arrived 1 n1",
			"TEBAR1 0123456789abcdef0123456789abcdef sum 1 0 0 0 0 0 0 - 0 -\nx",
		};
		size_t b;
		int refused = 0;

		for (b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			te_tree_sum_init(&p);
			if (te_tree_line_parse(bad[b], TOK, 64, 8, 0, &p,
					       &rank) < 0)
				refused++;
			else
				printf("# accepted: %s\n", bad[b]);
		}
		is_int(refused, (int)(sizeof(bad) / sizeof(bad[0])),
		       "every hostile line refused");
	}
}

/* Nodes of another protocol (core/launch/version.h): rejected whatever
 * --version-check says, one line naming each protocol's nodes and
 * trainenv version, rank 0's protocol last; the flat walk says the same. */
static void protocol_nodes(void)
{
	struct te_coord_req nodes[12];
	struct te_launch_checks c = { .vcheck = TE_W_VCHECK_OFF,
				      .rank0_host = "n1" };
	char got[1024];
	int i;

	for (i = 0; i < 12; i++) {
		memset(&nodes[i], 0, sizeof(nodes[i]));
		nodes[i].rank = (uint32_t)(2 * i);
		te_snprintf(nodes[i].host, sizeof(nodes[i].host), "n%d", i + 1);
		nodes[i].ver = ver("2.28.9");
		nodes[i].ver.protocol = 1;
		te_strlcpy(nodes[i].ver.trainenv, "0.9.0",
			   sizeof(nodes[i].ver.trainenv));
	}
	same_verdict(&c, nodes, 3, TE_VERDICT_OK, got, sizeof(got),
		     "one protocol: no verdict");
	nodes[1].ver.protocol = 2;
	te_strlcpy(nodes[1].ver.trainenv, "1.0.0",
		   sizeof(nodes[1].ver.trainenv));
	same_verdict(&c, nodes, 3, TE_VERDICT_REJECT, got, sizeof(got),
		     "n2 of protocol 2, version-check=off: rejected");
	is_str(got,
	       "node n2 speaks protocol 2 (trainenv 1.0.0), nodes n1, n3 "
	       "protocol 1 (trainenv 0.9.0): install the same trainenv on "
	       "every node (plugin, helpers and libtrainenv)",
	       "  one line: the odd node first, then rank 0's protocol");
	nodes[2].ver = ver("2.27.3"); /* and another NCCL: not said */
	nodes[2].ver.protocol = 1;
	te_strlcpy(nodes[2].ver.trainenv, "0.9.0",
		   sizeof(nodes[2].ver.trainenv));
	c.vcheck = TE_W_VCHECK_FAIL;
	same_verdict(&c, nodes, 3, TE_VERDICT_REJECT, got, sizeof(got),
		     "under version-check=fail, an NCCL mismatch beside it");
	is_str(got,
	       "node n2 speaks protocol 2 (trainenv 1.0.0), nodes n1, n3 "
	       "protocol 1 (trainenv 0.9.0): install the same trainenv on "
	       "every node (plugin, helpers and libtrainenv)",
	       "  only the protocols are named (two tuples, one group)");
	nodes[0].ver.protocol = 2; /* rank 0 is of protocol 2 */
	same_verdict(&c, nodes, 3, TE_VERDICT_REJECT, got, sizeof(got),
		     "rank 0's node of protocol 2");
	is_str(got,
	       "node n3 speaks protocol 1 (trainenv 0.9.0), node n1 "
	       "protocol 2 (trainenv 0.9.0), node n2 protocol 2 (trainenv "
	       "1.0.0): install the same trainenv on every node (plugin, "
	       "helpers and libtrainenv)",
	       "  rank 0's protocol last");
	{
		struct te_versions p1 = nodes[3].ver, p2 = nodes[1].ver;

		for (i = 0; i < 12; i++)
			nodes[i].ver = (i % 3) ? p1 : p2;
	}
	same_verdict(&c, nodes, 12, TE_VERDICT_REJECT, got, sizeof(got),
		     "12 nodes, 4 of protocol 2");
	is_str(got,
	       "nodes n2, n3, n5, n6, n8, n9, n11, n12 speaks protocol 1 "
	       "(trainenv 0.9.0), nodes n1, n4, n7, n10 protocol 2 (trainenv "
	       "1.0.0): install the same trainenv on every node (plugin, "
	       "helpers and libtrainenv)",
	       "  eight hosts named, none counted; rank 0's (n1) last");
	nodes[0].ver = nodes[3].ver; /* a node of 0.1.0 says none */
	nodes[0].ver.protocol = 0;
	same_verdict(&c, nodes, 2, TE_VERDICT_REJECT, got, sizeof(got),
		     "a node that says no protocol (0.1.0) beside protocol 1");
	like(got,
	     "node n2 speaks protocol 1 (trainenv 0.9.0), node n1 "
	     "protocol 0 (trainenv 1.0.0): install",
	     "  says protocol 0");
}

int main(void)
{
	tree_math();
	procmap();
	reports_as_before();
	nogpu_nodes();
	protocol_nodes();
	timeline();
	bounds();
	wire();
	return tap_done();
}
