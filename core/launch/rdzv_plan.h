/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv launch rendezvous planning: what one task does at launch (no
 * rendezvous, follow the node's helper, run the helper) and the helper's
 * command line, as pure functions of the settings and the step's facts. */
#ifndef TE_RDZV_PLAN_H
#define TE_RDZV_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "settings/settings.h"

/* What a task does at launch. */
enum te_rdzv_role {
	TE_RDZV_SKIP,	       /* no PMIx rendezvous: computed, or auto
				   without PMIx (srun said it once) */
	TE_RDZV_NO_PMIX,       /* rdzv=pmix without a PMIx server: fail */
	TE_RDZV_FOLLOW,	       /* wait for the node's helper's result */
	TE_RDZV_FOLLOW_FAILED, /* a follower that already failed: leave a
				   failure file (barrier mode) and fail */
	TE_RDZV_FAIL_ALONE,    /* failed, and nobody waits for this task */
	TE_RDZV_RUN_HELPER,    /* run trainenv-rdzv (for the node: lead) */
};

/* The step's facts that decide the role. */
struct te_rdzv_facts {
	int has_pmix;	   /* PMIX_RANK and PMIX_NAMESPACE are set */
	int nodes_files;   /* a private PMIx directory, >1 task here: the
				   node's first task stands for the others */
	uint32_t local_id; /* the task's index on its node */
	int failed;	   /* this task already failed (pre-flight) */
	int explain;	   /* --train-explain: the barrier's line too */
};

struct te_rdzv_plan {
	enum te_rdzv_role role;
	unsigned long barrier_secs; /* 0: no launch barrier */
	int barrier_mode;	    /* a barrier or a checkpoint check: every
				   rank registers with rank 0 */
	int timeout_ms;		    /* slurmstepd's deadline for the helper or
				   the node's result */
	int lead;	 /* RUN_HELPER: for the node's other tasks too */
	int pass_failed; /* RUN_HELPER: --failed, rank 0 fails the step */
	/* barrier mode: rank 0's task names the last node to arrive when it
	 * came skew_warn_ms or more after the first (0: always, with
	 * --train-explain); -1: never */
	long skew_warn_ms;
};

/* Whether the step has a PMIx rendezvous at all: SKIP, NO_PMIX, or
 * RUN_HELPER meaning "yes: ask te_rdzv_plan_make() what this task does". */
enum te_rdzv_role te_rdzv_wanted(const struct te_config *cfg, int has_pmix);

/* This task's role, the barrier's seconds and slurmstepd's deadline. */
void te_rdzv_plan_make(const struct te_config *cfg,
		       const struct te_rdzv_facts *f, struct te_rdzv_plan *p);

/* A node whose helper speaks another protocol ends the step through
 * slurmctld (spank/stepd_rdzv.c). Slurm drops that signal on a node
 * whose slurmstepd is not up yet (slurmd: "signal for nonexistent
 * step"), and srun sends it again only KillWait + 2 s later, so such a
 * node's ranks would wait for the barrier's deadline. The end is sent
 * once the step has been TE_END_STEP_SETTLE_MS on this node: the same
 * launch reaches the other nodes by then. */
#define TE_END_STEP_SETTLE_MS 2000
/* How long to wait before that signal, the step having been on_node_ms
 * on this node (a clock that went back counts as 0). */
int te_end_step_wait_ms(int64_t on_node_ms);

/* The helper's command line: its protocol, then the step's facts that are
 * not settings (job, step, --lead, --failed WHY). The helper takes every
 * setting from the effective settings in its environment
 * (TRAINENV_SETTINGS: core/launch/rdzv_args.h), not from here. */
#define TE_RDZV_ARGV_MAX 12
struct te_rdzv_argv {
	char *argv[TE_RDZV_ARGV_MAX];
	char job[16], step[16], proto[12];
};

/* Fills out->argv (NULL-terminated; its strings point into out and
 * failed, which must outlive it). failed: the task's failure text, or
 * NULL. */
void te_rdzv_helper_argv(const struct te_rdzv_plan *p, const char *helper_name,
			 uint32_t job_id, uint32_t step_id, const char *failed,
			 struct te_rdzv_argv *out);

#endif
