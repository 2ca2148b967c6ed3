/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launch tree (pure): the step's nodes as a k-ary tree with rank 0's
 * node at the root, the job's process map (which ranks run on which node),
 * and the bounded summary a node's helper sends its parent about its
 * subtree: how many ranks arrived, which are missing (a few ranges), when
 * the first and the last node arrived, the distinct version tuples and the
 * checkpoint probe's failures (a few hosts each, the rest counted). Rank
 * 0 prints from the merged summary the same reports it printed when every
 * node spoke to it (docs/pmix.md). No PMIx, no sockets: unit-tested and
 * fuzzed; every line parsed here comes from the network.
 *
 * Wire lines, child -> parent, after "TEBAR1 TOKEN " (rdzv_core.h):
 *   "grp v COUNT HOSTS VERSIONS"  COUNT nodes have these versions
 *   "grp c COUNT HOSTS TEXT"      COUNT nodes' checkpoint probe said TEXT
 *   "miss LO-HI@NODE,..."         missing ranks (at most TE_TREE_MISS_MAX)
 *   "stor RANK:HOST:W:R,..."      the storage check's figures (MB/s
 *                                 written with fsync, read back) of a
 *                                 few nodes (health_storage.h); sent
 *                                 only when the check runs
 *   "sum RANK ARRIVED NODES FINAL VMORE CMORE FAGE FHOST LAGE LHOST"
 * HOSTS is "RANK:HOST,..." (at most TE_TREE_HOSTS_MAX, the nodes' lead
 * ranks, for the order of the reports). "sum" closes a summary: the grp
 * and miss lines before it on the same connection belong to it; FINAL 1
 * says the subtree is complete (then no other summary follows). FAGE and
 * LAGE are the ages in ms, at sending, of the first and last node's
 * arrival: the parent turns them into times of its own clock. */
#ifndef TE_LAUNCH_TREE_H
#define TE_LAUNCH_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "launch/launch_timeline.h"
#include "launch/launch_verdict.h"
#include "launch/rdzv_core.h"

/* ---------------------------------------------------------------- tree
 * Node indices 0..n-1, 0 the root; parent(i) = (i-1)/k. */

size_t te_tree_parent(size_t i, unsigned k);
/* The children of i: the first one's index, and their number in *count
 * (0: a leaf; the first index is then meaningless). */
size_t te_tree_children(size_t i, unsigned k, size_t n, size_t *count);
/* Hops from the deepest node to the root (0 for one node). */
unsigned te_tree_depth(size_t n, unsigned k);

/* ---------------------------------------------------------------- map
 * Which ranks run on which node: runs of consecutive ranks, in rank
 * order, each on one node. Node ids are Slurm's (0..nnodes-1); the tree
 * index of a node counts from rank 0's node. */
struct te_procmap {
	uint32_t nranks, nnodes, nruns;
	uint32_t *run_first, *run_len, *run_node; /* [nruns] */
	uint32_t *node_lead;   /* [nnodes] its smallest rank */
	uint32_t *node_nranks; /* [nnodes] */
	uint32_t *node_run;    /* [nnodes] its first run; then run_next */
	uint32_t *run_next;    /* [nruns] the node's next run, or UINT32_MAX */
	uint32_t root_node;    /* rank 0's */
};

/* Slurm's PMIX_ANL_MAP (the PMI process mapping of the step):
 * "(vector,(NODE,COUNT,DEPTH),...)": COUNT nodes from NODE on, DEPTH
 * consecutive ranks each, in rank order. The triples must cover exactly
 * nranks ranks and every node id below the largest. 0, or -1 (malformed,
 * or out of memory) with m empty. */
int te_procmap_parse_anl(const char *s, uint32_t nranks, struct te_procmap *m);
/* The same from each rank's node id (node_of[r] < nnodes, every node
 * used): for a PMIx server without the map. */
int te_procmap_from_nodes(const uint32_t *node_of, uint32_t nranks,
			  uint32_t nnodes, struct te_procmap *m);
void te_procmap_free(struct te_procmap *m);
/* rank's node id (rank < nranks). O(log runs). */
uint32_t te_procmap_node_of(const struct te_procmap *m, uint32_t rank);
uint32_t te_tree_node_at(const struct te_procmap *m, size_t index);
size_t te_tree_index_of(const struct te_procmap *m, uint32_t node);
/* The ranks in the subtree of every tree index (out[nnodes]). 0 or -1. */
int te_tree_subtree_ranks(const struct te_procmap *m, unsigned k,
			  uint32_t *out);

/* ---------------------------------------------------------------- summary */

#define TE_TREE_MISS_MAX 16
#define TE_TREE_VGROUPS_MAX 8
#define TE_TREE_CGROUPS_MAX 4
#define TE_TREE_HOSTS_MAX 8
#define TE_TREE_VALUE_MAX TE_CKPT_TEXT_MAX
/* The storage figures a summary carries (the rest counted), and per
 * "stor" line: rank 0 compares at most that many nodes. */
#define TE_TREE_STOR_MAX 64
#define TE_TREE_STOR_PER_LINE 6
#define TE_TREE_STOR_LINES \
	((TE_TREE_STOR_MAX + TE_TREE_STOR_PER_LINE - 1) / TE_TREE_STOR_PER_LINE)
/* A node's checkpoint fact with the storage check's figures: "ok
 * storage W R" (MB/s), a pass. */
#define TE_CKPT_STORAGE_PREFIX "ok storage "

struct te_tree_stor {
	uint32_t rank; /* the node's lead rank */
	char host[TE_HOST_MAX];
	uint64_t write_mbps, read_mbps;
};

struct te_tree_host {
	uint32_t rank; /* the node's lead rank: the reports' order */
	char host[TE_HOST_MAX];
};

/* Nodes that share one value (a version tuple, a checkpoint failure). */
struct te_tree_group {
	char value[TE_TREE_VALUE_MAX + 1];
	uint32_t count;	 /* nodes */
	uint32_t nhosts; /* the first of them by rank, at most 8 */
	struct te_tree_host hosts[TE_TREE_HOSTS_MAX];
};

/* Missing ranks lo..hi, all on node. */
struct te_tree_miss {
	uint32_t lo, hi, node;
};

struct te_tree_sum {
	uint32_t arrived; /* ranks */
	uint32_t nodes;	  /* nodes whose ranks all arrived */
	int final;	  /* the subtree is complete */
	/* the node that arrived first and last (its last rank's arrival) */
	char first_host[TE_HOST_MAX], last_host[TE_HOST_MAX];
	int64_t first_ms, last_ms;
	/* missing ranks, the smallest first; those left out are counted by
	 * the caller (expected - arrived - listed) */
	uint32_t nmiss;
	struct te_tree_miss miss[TE_TREE_MISS_MAX];
	uint32_t nver, ver_more; /* groups; nodes in groups left out */
	struct te_tree_group ver[TE_TREE_VGROUPS_MAX];
	uint32_t nck, ck_more;
	struct te_tree_group ck[TE_TREE_CGROUPS_MAX];
	uint32_t nstor, stor_more; /* figures; nodes' left out */
	struct te_tree_stor stor[TE_TREE_STOR_MAX];
};

void te_tree_sum_init(struct te_tree_sum *s);
/* One node arrived whole at at_ms: it counts, with its version tuple and
 * checkpoint fact ("-", "ok" and "ok storage W R" are no failure; the
 * last one's figures are kept). lead: its lead rank. */
void te_tree_sum_add_node(struct te_tree_sum *s, uint32_t lead,
			  const char *host, int64_t at_ms,
			  const struct te_versions *v, const char *ckpt);
/* Missing ranks lo..hi of node, kept if among the smallest. */
void te_tree_sum_add_miss(struct te_tree_sum *s, uint32_t lo, uint32_t hi,
			  uint32_t node);
/* Adds src (another subtree) into dst: counts, timeline, missing ranges,
 * groups, each still bounded. final is left to the caller. */
void te_tree_sum_merge(struct te_tree_sum *dst, const struct te_tree_sum *src);
/* The missing ranges of a subtree nobody has heard from yet: its nodes in
 * tree order (those of the smallest ranks first for the usual layouts),
 * at most TE_TREE_MISS_MAX ranges. */
void te_tree_sum_absent(struct te_tree_sum *s, const struct te_procmap *m,
			unsigned k, size_t index);

/* Wire: the lines of a summary for token, each with its '\n', into buf
 * (one after another). ages from now_ms. 0, or -1 when buf is too small. */
int te_tree_sum_format(char *buf, size_t len, const char *token, uint32_t rank,
		       const struct te_tree_sum *s, int64_t now_ms);

enum te_tree_line {
	TE_TL_SUM,
	TE_TL_MISS,
	TE_TL_GRP,
	TE_TL_STOR
};

/* One whole line (with or without its '\n'): "TEBAR1 TOKEN" with the
 * token (compared in constant time), then a grp, miss or sum line. A grp
 * or miss line adds to pend; a sum line completes pend (*rank: the
 * sender's rank, < nranks; node ids < nnodes), turning its ages into
 * times of now_ms. Returns the kind, or -1 (malformed; pend unchanged). */
int te_tree_line_parse(const char *line, const char *token, uint32_t nranks,
		       uint32_t nnodes, int64_t now_ms,
		       struct te_tree_sum *pend, uint32_t *rank);

/* ---------------------------------------------------------------- reports */

/* "A of T ranks arrived; missing: ranks 10-11 (node n2), rank 5 (node n3)
 * and N more ranks": like te_missing_summary(), from a summary. host_fn
 * gets the node's lead rank. */
void te_tree_missing_text(const struct te_tree_sum *s, uint32_t total,
			  const struct te_procmap *m, te_host_fn host_fn,
			  void *ctx, char *out, size_t len);

/* Rank 0's verdict over the whole tree's summary: the version and
 * checkpoint reports (TE_VERDICT_*, launch_verdict.h) for the whole job,
 * from bounded groups; the tests hold it to what a flat walk over every
 * node's facts says (tests/unit/flat_verdict.c). */
int te_tree_verdict(const struct te_launch_checks *c,
		    const struct te_tree_sum *s, char *text, size_t len);

/* "ok storage W R": 1 with the figures, else 0 (another fact, or junk). */
int te_ckpt_storage_parse(const char *ckpt, uint64_t *w, uint64_t *r);

/* The launch timeline from the root's summary. */
void te_tree_skew(const struct te_tree_sum *s, uint32_t nranks,
		  struct te_launch_skew *out);

#endif
