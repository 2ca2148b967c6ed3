/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launch checks' decisions (pure): a node against rank 0's versions
 * without the barrier, and what a node makes of rank 0's checkpoint probe
 * (rank 0's verdict over every node's facts is the launch tree's,
 * te_tree_verdict in launch_tree.h).
 *
 * A node's checkpoint fact (te_coord_req.ckpt) is "-" (not checked), "ok",
 * "rank0 REASON" (rank 0 could not write its probe file) or what is wrong
 * from that node ("no such directory", ...). */
#ifndef TE_LAUNCH_VERDICT_H
#define TE_LAUNCH_VERDICT_H

#include <stddef.h>

#include "launch/rdzv_core.h"
#include "settings/settings.h"

/* What a launch check concludes: go on, go on with a warning, or fail the
 * step (rank 0 reports it). */
enum te_verdict {
	TE_VERDICT_OK = 0,
	TE_VERDICT_WARN = 1,
	TE_VERDICT_REJECT = 2
};

struct te_launch_checks {
	int vcheck;		/* --version-check: enum te_w_version_check */
	const char *ckpt;	/* checkpoint directory; NULL: none */
	const char *rank0_host; /* named in the checkpoint reports */
	/* the storage check (health_storage.h): the fraction of the other
	 * nodes' median in thousandths (0: not compared), and whether a
	 * node below it fails the step (exclude) or is only named (warn) */
	unsigned storage_permille;
	int storage_exclude;
};

/* 1 when the protocols and the four versions of a and b are the same. */
int te_versions_equal(const struct te_versions *a, const struct te_versions *b);

/* Without the barrier each node is compared with rank 0's node only: node
 * host with mine against host0 with v0. TE_VERDICT_OK with text "" when
 * they agree or vcheck is off; else "version mismatch: node ..." in text
 * and TE_VERDICT_REJECT under fail, TE_VERDICT_WARN under warn. Another
 * protocol is TE_VERDICT_REJECT whatever vcheck says: "node n2 speaks
 * protocol 2 (trainenv X), rank 0's node n1 protocol 1 (trainenv Y):
 * install the same trainenv on every node (...)". */
int te_rank0_versions_verdict(int vcheck, const char *host,
			      const struct te_versions *mine, const char *host0,
			      const struct te_versions *v0, char *text,
			      size_t len);

/* ---------------------------------------------------------------- checkpoint
 * Rank 0 writes a file named ".trainenv-ckpt-JOB.STEP-T" (T: the first 16
 * digits of a random token) holding the token and a newline in the
 * checkpoint directory, and puts "NAME TOKEN" (or "error REASON") over
 * PMIx; every node reads the file back through its own mount. */

#define TE_CKPT_NAME_MAX 128
/* a node's checkpoint fact when rank 0 could not write its probe file */
#define TE_CKPT_RANK0_PREFIX "rank0 "

struct te_ckpt_probe {
	char name[TE_CKPT_NAME_MAX];
	char token[TE_TOKEN_LEN + 2];
};

/* The probe file's name for job.step and token into name; 0, or -1 when
 * it does not fit. */
int te_ckpt_probe_name(unsigned long job, unsigned long step, const char *token,
		       char *name, size_t len);

/* Rank 0's value: 0 with the probe's name and token, or -1 with this
 * node's checkpoint fact in out ("rank0 REASON" when rank 0 put "error
 * REASON", or that the value is unreadable). */
int te_ckpt_probe_parse(const char *info, struct te_ckpt_probe *p, char *out,
			size_t outlen);

/* What this node read in the probe file (content, terminated: the text up
 * to its first NUL counts): its checkpoint fact, "ok" when it is the
 * token with at most one newline after it. */
const char *te_ckpt_probe_content(const char *content, const char *token);

#endif
