/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launch's checkpoint probe in trainenv-rdzv (rdzv_ckpt.c). */
#ifndef TE_RDZV_CKPT_H
#define TE_RDZV_CKPT_H

#include <stddef.h>

#include "barrier.h"
#include "launch/rdzv_args.h"

/* Rank 0, before the barrier: a file with a random token in the
 * directory, and "NAME TOKEN" (or "error REASON") put under te.ckpt. 0, or
 * -1 when the put failed (err says why). */
int te_rdzv_ckpt_write(struct te_pmix *p, const struct te_rdzv_opts *o,
		       char *err, size_t errlen);
/* Removes rank 0's file, if this helper made one (again: a no-op). */
void te_rdzv_ckpt_remove(void);

/* Between te_barrier_prepare (defer_start) and te_barrier_start: rank 0's
 * probe into info, from the launch tree's parent (rank 0 put it; every
 * helper with children puts what it got again), so rank 0's node answers
 * its k children, not every node; each level's direct modexes wait for
 * the level above, within the barrier's deadline. 0, or -1 with the
 * node's error line in msg (naming the parent that never passed it on). */
int te_rdzv_ckpt_from_parent(struct te_pmix *p, struct te_barrier *b,
			     unsigned timeout, char *info, size_t len,
			     char *msg, size_t msglen);

/* This node's look at the directory with rank 0's info: "ok", or what is
 * wrong ("rank0 REASON" when rank 0 could not write its file). Up to 3 s
 * of retries while a network file system does not show rank 0's file. */
void te_rdzv_ckpt_node_check(const struct te_rdzv_opts *o, const char *info,
			     char *out, size_t len);

#endif
