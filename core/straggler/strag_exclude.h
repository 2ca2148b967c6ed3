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
/* a newest checkpoint unchanged this long (srun's own monotonic clock) is
 * taken as complete */
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
	uint32_t shrink_nodes;	    /* --train-shrink=yes: the nodes the step
				  starts again on when no spare is left (the
				  relaunch's own rule, te_relaunch_shrink_to),
				  0: it cannot */
};

struct te_strag_excl_plan {
	int exclude; /* 1: watch the directory, then end the step */
	char line[TE_STRAG_EXCL_LINE_MAX]; /* without trainenv's prefix */
};

/* Decides for node (a name as the naming line has it). Fills line either
 * way: "straggler: NODE is excluded at the next checkpoint in DIR" (with
 * no spare left and --train-shrink: "...; no spare is left: the step starts
 * again on the N nodes left (--train-shrink)"), or "straggler: NODE is not
 * excluded: WHY". Returns plan->exclude. */
int te_strag_exclude_decide(const struct te_strag_excl_facts *f,
			    const char *node, struct te_strag_excl_plan *plan);

/* When the checkpoint that ends the step is there, from the directory's
 * newest mtime as each look finds it. Mtimes are compared only with each
 * other (the file system's clock, or the writing node's) and their
 * stillness is timed on srun's monotonic clock: no two machines' clocks
 * are compared. */
struct te_strag_excl_watch {
	int64_t base;  /* the newest mtime when the watch began; -1 not yet
			  read (the first readable look sets it) */
	int64_t last;  /* the newest mtime of the last look */
	int64_t since; /* srun's monotonic time last changed */
};
void te_strag_exclude_watch_init(struct te_strag_excl_watch *w);
/* One look: newest_ns the newest mtime (<= 0: none or not readable),
 * mono_ns srun's monotonic clock. 1 when a checkpoint newer than the one
 * there at the watch's start has stayed the newest, unchanged, for
 * TE_STRAG_EXCL_SETTLE_NS (its writing is over). */
int te_strag_exclude_due(struct te_strag_excl_watch *w, int64_t newest_ns,
			 int64_t mono_ns);

/* The step's fault's why from the naming line ("straggler: n2 (ranks
 * 2-3) waited least ..."): the line itself, cut at a word boundary to fit
 * len. Its length. */
size_t te_strag_exclude_why(const char *naming, char *why, size_t len);

#endif
