/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which fence algorithm Slurm's mpi/pmix runs for a step (SLURM_PMIX_FENCE),
 * chosen so that a PMIx fence is a job-wide barrier, and what the job side
 * may then use. Pure: srun gathers the inputs, the PMIx side reads the two
 * variables.
 *
 * Facts (Slurm 22.05.8, src/common/reverse_tree.c, pmixp_coll_tree.c,
 * pmixp_info.c, pmixp_client.c; verified on the local cluster):
 * - slurmstepd reads SLURM_PMIX_FENCE from the step's environment (else
 *   mpi.conf's PMIxCollFence) and knows exactly "ring", "tree" and "mixed";
 *   any other value is ignored and mixed runs. mixed (the default) takes
 *   the tree for a fence without data and the ring for one with data.
 * - The tree is built by reverse_tree_info() over the step's nodes with the
 *   cluster's TreeWidth (50 in 22.05, 16 from 23.11): with fewer nodes than
 *   TreeWidth it returns no parent and no children for every node, so each
 *   node is its own root and releases its ranks as soon as they have
 *   arrived. With at least TreeWidth nodes the tree is a job-wide barrier
 *   (and the faster one: 14-15 ms against 72-95 ms for the ring at 50-64
 *   nodes here; the ring costs N-1 sequential hops).
 * - The ring is a job-wide barrier on any number of nodes. */
#ifndef TE_FENCE_CHOICE_H
#define TE_FENCE_CHOICE_H

#include <stddef.h>

#include "settings/settings.h"

#define TE_FENCE_ENV "SLURM_PMIX_FENCE"
/* The fence trainenv set (or kept) for the step after checking it against
 * the step's nodes and TreeWidth: the job side trusts a tree (or mixed)
 * fence without data only when this says the same. */
#define TE_FENCE_DECIDED_ENV "TRAINENV_FENCE"
#define TE_TREE_WIDTH_DEFAULT 50 /* Slurm 22.05's DEFAULT_TREE_WIDTH */

enum te_fence_algo {
	TE_FENCE_RING,
	TE_FENCE_TREE,
	TE_FENCE_MIXED
};

struct te_fence_in {
	unsigned nnodes;	/* the step's nodes */
	unsigned tree_width;	/* the cluster's TreeWidth; 0: unknown */
	const char *width_from; /* where it was read ("slurm.conf"); NULL */
	/* the site key fence-tree-min-nodes: its value (unset: auto) */
	const struct te_value *site;
	const char *env;     /* SLURM_PMIX_FENCE in srun's environment */
	const char *decided; /* TRAINENV_FENCE in srun's environment */
};

struct te_fence_choice {
	enum te_fence_algo algo;
	const char *value;     /* SLURM_PMIX_FENCE to set: ring, tree, mixed */
	unsigned tree_width;   /* the TreeWidth used */
	unsigned tree_min;     /* the tree from this many nodes; 0: never */
	int kept;	       /* the user's own value is kept */
	char why[TE_ERR_MAX];  /* "tree (52 nodes >= TreeWidth 50 ...)" */
	char warn[TE_ERR_MAX]; /* "" or one line, without the prefix */
};

/* The decision, for a step of in->nnodes nodes:
 * - a value trainenv set for an enclosing step (env equal to decided) or an
 *   empty one counts as unset;
 * - unset: tree when the step has at least tree_min nodes, ring below;
 *   tree_min is TreeWidth (site auto), the site's N when it is larger (a
 *   smaller N is raised to TreeWidth, said in warn when that changed the
 *   choice), never with the site's off;
 * - the user's ring is kept; the user's tree or mixed is kept on at least
 *   TreeWidth nodes and replaced by ring below, with a warning naming the
 *   variable, the node count and TreeWidth;
 * - a value Slurm does not know is replaced by the choice for unset, with a
 *   warning. */
void te_fence_choose(const struct te_fence_in *in, struct te_fence_choice *out);

/* Job side: 1 when a PMIx fence without data is a job-wide barrier under
 * this SLURM_PMIX_FENCE and TRAINENV_FENCE (either may be NULL): the ring
 * forced, or a tree/mixed that trainenv set or checked for this step.
 * Otherwise (the default mixed, a tree nobody checked) 0: the fence must
 * carry data, which only the ring (mixed, the default) or a checked tree
 * turns into a barrier. */
int te_fence_nodata_barrier(const char *env, const char *decided);

/* The text of an algorithm ("ring", "tree", "mixed"). */
const char *te_fence_name(enum te_fence_algo a);

#endif
