/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The launch's checkpoint probe in trainenv-rdzv (rdzv_ckpt.c). */
#ifndef TE_RDZV_CKPT_H
#define TE_RDZV_CKPT_H

#include <stddef.h>

#include "barrier.h"
#include "health/health_storage.h"
#include "launch/rdzv_args.h"

/* Rank 0, before the barrier: a file with a random token in the
 * directory; "NAME TOKEN" (or "error REASON") into val, the probe the
 * barrier passes down the launch tree. */
void te_rdzv_ckpt_write(const struct te_rdzv_opts *o, char *val, size_t len);
/* Removes rank 0's file, if this helper made one (again: a no-op). */
void te_rdzv_ckpt_remove(void);

/* One try of this node's look at the directory with rank 0's info: 1
 * when done, out "ok" or what is wrong ("rank0 REASON" when rank 0 could
 * not write its file); 0 to try again in half a second (3 s in all while
 * a network file system does not show rank 0's file), without blocking
 * the barrier's loop meanwhile. */
int te_rdzv_ckpt_node_try(const struct te_rdzv_opts *o, const char *info,
			  char *out, size_t len);
/* The same as te_barrier_opts.probe_check (opts: the te_rdzv_opts). */
int te_rdzv_ckpt_probe_check(void *opts, const char *probe, char *out,
			     size_t len);

/* The storage check the plugin asked for (TRAINENV_HEALTH_STORAGE; junk
 * is a warning and no check). */
const struct te_storage_opts *te_rdzv_storage_load(void);
/* Runs this node's storage check once, if asked and a checkpoint
 * directory is set (bounded by health_timeout); the node's checkpoint
 * fact then carries its figures or why it failed. */
void te_rdzv_storage_run(const struct te_rdzv_opts *o);

#endif
