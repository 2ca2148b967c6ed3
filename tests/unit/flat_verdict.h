/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The flat launch verdict (test support, not built into trainenv): rank
 * 0's judgement over every node's facts at once, as the star coordinator
 * made it before the launch tree. It walks all nodes for each version
 * (quadratic in the nodes), so only the tests use it: the reference that
 * the tree's verdict over bounded summaries (te_tree_verdict) must agree
 * with, word for word. */
#ifndef TE_FLAT_VERDICT_H
#define TE_FLAT_VERDICT_H

#include <stddef.h>

#include "launch/launch_verdict.h"
#include "launch/rdzv_core.h"

struct te_nodever {
	const char *host;
	const char *ver;
};

/* Groups the (host, version) pairs by version: returns the number of
 * distinct versions (1: all agree, 0: n == 0) and, when there are more
 * than one, writes "NCCL differs across nodes: 2.28.9 on n1, n2; 2.27.3
 * on n3" into out (what = "NCCL"). Duplicate pairs count once. At most
 * TE_VERSION_GROUPS_MAX versions and TE_VERSION_HOSTS_SHOWN hosts per
 * version are named; the rest is counted. */
#define TE_VERSION_GROUPS_MAX 16
#define TE_VERSION_HOSTS_SHOWN 8
int te_version_summary(const char *what, const struct te_nodever *v, size_t n,
		       char *out, size_t outlen);

/* The grouping behind it, for any (host, value) pairs: "2.28.9 on n1, n2;
 * 2.27.3 on n3", or with hosts_first "n2, n3: not writable; n4: ...".
 * Returns the number of distinct values; out may be NULL (len 0) to count. */
int te_group_by_value(const struct te_nodever *v, size_t n, int hosts_first,
		      char *out, size_t outlen);

/* Rank 0, once every rank is there: the n nodes' facts, judged once for
 * the job. Returns a te_verdict; text (always terminated, "" when fine)
 * says why. A checkpoint failure comes first; a version mismatch then is
 * appended under version-check=fail and left out under warn. */
int te_launch_verdict(const struct te_launch_checks *c,
		      const struct te_coord_req *nodes, size_t n, char *text,
		      size_t len);

#endif
