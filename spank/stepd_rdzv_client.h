/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin's side of the launch rendezvous: task_init runs the helper
 * trainenv-rdzv (a PMIx client; the plugin never calls PMIx itself) with
 * the task's environment, reads its results from a pipe and enforces a
 * deadline. Runs in the forked task process, as the job user, before
 * exec. */
#ifndef TE_RDZV_CLIENT_H
#define TE_RDZV_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "launch/rdzv_proto.h"
#include "util/runcap.h"

#define TE_RDZV_HELPER "trainenv-rdzv"
#define TE_PREFLIGHT_HELPER "trainenv-preflight"

/* Runs path with argv and envp, stdin from /dev/null, stdout into a pipe,
 * stderr inherited, every other descriptor closed, in its own process
 * group. Waits at most timeout_ms for its output and its exit; past that
 * the helper is killed (SIGKILL to its group). Returns 0 with r filled
 * from its output (r->failed may be set: the helper's verdict), or -1 with
 * a reason in err when the helper could not run or its output is not
 * believable, or -2 with the one line of core/launch/version.h in err when the
 * helper speaks another protocol (it answered "trainenv-protocol N V", or
 * refused --protocol as trainenv 0.1.0's does, or, killed before it
 * answered, answers so when asked --protocol-version again), or -3 when
 * something outside killed it (SIGKILL) before it answered: the step's
 * cancellation or the OOM killer, not the rendezvous. */
int te_rdzv_spawn(const char *path, char *const argv[], char *const envp[],
		  int timeout_ms, struct te_rdzv_result *r, char *err,
		  size_t errlen);

/* A task that is not its node's first: says it is here (an arrival file
 * in dir/trainenv-arrived, dir being the step's private PMIx directory)
 * and waits at most timeout_ms for the result the node's first task's
 * helper leaves in dir. 0 with r filled, or -1 with a reason in err (a
 * task that could not say it is here leaves a failure file instead). */
int te_rdzv_follow(const char *dir, uint32_t rank, int timeout_ms,
		   struct te_rdzv_result *r, char *err, size_t errlen);

/* The node's first task could not run its helper: leaves err as the
 * node's result, so that the node's other tasks fail at once. */
void te_rdzv_leave_error(const char *dir, const char *err);

/* The node's first task, before it starts its helper: a file in dir held
 * locked for as long as the task lives (the descriptor returned, -1 when
 * it cannot be made). A follower that finds it no longer held, and no
 * result, knows the node's first task ended (killed while waiting) and
 * fails at once instead of waiting for its deadline. Close it once the
 * node's result is there. */
int te_rdzv_lead_lock(const char *dir);

/* A task that is not its node's first failed before the barrier: leaves
 * why (cleaned, cut) in dir/trainenv-failed.RANK instead of its arrival
 * file; the node's helper tells rank 0, which fails the step at once.
 * 0, or -1 when the file cannot be written. */
int te_rdzv_leave_failed(const char *dir, uint32_t rank, const char *why);

#endif
