/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Leaving a straggler out (--train-straggler-exclude=checkpoint), the pure
 * part: whether a node srun names may be excluded (the step can be started
 * again without it: spares, a spare left, the restart budget, srun's
 * hang-up shield, a checkpoint directory to wait for), the one line srun
 * says either way, and when the checkpoint that ends the step is there.
 * spank/srun_strag_exclude.c gathers the facts and ends the step. */
#ifndef TE_STRAG_EXCLUDE_H
#define TE_STRAG_EXCLUDE_H

#include <stddef.h>
#include <stdint.h>

#define TE_STRAG_EXCL_LINE_MAX 512
/* a checkpoint file this old at least is taken as complete */
#define TE_STRAG_EXCL_SETTLE_NS 1000000000LL

struct te_strag_excl_facts {
	uint32_t spares;	    /* --train-spares K of a step that can be
				       relaunched, 0: none */
	uint32_t spares_left;	    /* the job's nodes neither in the step nor
				       left out by relaunches */
	uint64_t budget;	    /* restarts allowed */
	uint32_t restarts;	    /* restarts so far */
	const char *no_shield;	    /* why srun cannot be started again, or
				       NULL */
	const char *checkpoint_dir; /* --train-checkpoint-dir, or NULL */
};

struct te_strag_excl_plan {
	int exclude; /* 1: watch the directory, then end the step */
	char line[TE_STRAG_EXCL_LINE_MAX]; /* without trainenv's prefix */
};

/* Decides for node (a name as the naming line has it). Fills line either
 * way: "straggler: NODE is excluded at the next checkpoint in DIR", or
 * "straggler: NODE is not excluded: WHY". Returns plan->exclude. */
int te_strag_exclude_decide(const struct te_strag_excl_facts *f,
			    const char *node, struct te_strag_excl_plan *plan);

/* 1 when the newest checkpoint (newest_ns, wall clock; <= 0: none or not
 * readable) was written after the naming (named_ns) and is settled
 * (TE_STRAG_EXCL_SETTLE_NS old at now_ns). */
int te_strag_exclude_due(int64_t named_ns, int64_t newest_ns, int64_t now_ns);

/* The step's fault's why from the naming line ("straggler: n2 (ranks
 * 2-3) waited least ..."): the line itself, cut at a word boundary to fit
 * len. Its length. */
size_t te_strag_exclude_why(const char *naming, char *why, size_t len);

#endif
