/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: under --train-exit-grace, a torchrun task gets a
 * watcher of its workers (trainenv-stacks --watch-workers), because the
 * task itself (torchrun's agent) does not end when its workers do. Started
 * from task_init, in the task's process as the job's user, detached and
 * without the task's output streams (te_stepd_spawn_detached,
 * stepd_step.c); it ends with the task. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hang/proctab.h"
#include "stepd_step.h"
#include "stepd_watch.h"
#include "util/strutil.h"
#include "launch/version.h"

void te_stepd_watch_workers(spank_t sp)
{
	char path[TE_VALUE_MAX + 32], js[32], spid[16], sstart[24], proto[12];
	/* a watcher of another protocol would say so on its stderr, which
	 * is /dev/null here: it only does not watch (docs/RELIABILITY.md) */
	char *argv[] = { (char *)TE_STACKS_HELPER,
			 (char *)"--protocol-say",
			 proto,
			 (char *)"--watch-workers",
			 js,
			 (char *)"--node",
			 te_step.node,
			 (char *)"--task-pid",
			 spid,
			 (char *)"--task-start",
			 sstart,
			 NULL };
	char **env = NULL, **env2;
	uint64_t start;

	if (!te_step.report)
		return;
	/* Its exec happens in a detached grandchild, where a failure would
	 * go unseen: said here, once per node, instead. */
	if (te_helper_path(TE_STACKS_HELPER, path, sizeof(path)) < 0 ||
	    access(path, X_OK) < 0) {
		fprintf(stderr,
			TE_PREFIX
			"warning: --train-exit-grace: cannot "
			"run the worker watcher %s: %s (helper-dir); this "
			"torchrun task's workers are not watched\n",
			path, strerror(errno));
		fflush(stderr);
		return;
	}
	if (spank_get_item(sp, S_JOB_ENV, &env) != ESPANK_SUCCESS || !env)
		return;
	te_snprintf(js, sizeof(js), "%u.%u", te_step.job_id, te_step.step_id);
	te_snprintf(proto, sizeof(proto), "%d", te_protocol_version());
	te_snprintf(spid, sizeof(spid), "%d", (int)getpid());
	/* the task by its pid and start time: the watcher never takes a
	 * later process of the same pid for it */
	if (te_proc_start_time(getpid(), &start) < 0)
		return;
	te_snprintf(sstart, sizeof(sstart), "%llu", (unsigned long long)start);
	env2 = te_stepd_env_not_a_rank(env, NULL);
	if (!env2)
		return;
	te_stepd_spawn_detached(path, argv, env2, -1, 0);
	free(env2);
}
