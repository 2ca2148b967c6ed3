/* slurmstepd, per task: under --train-exit-grace, a torchrun task gets a
 * watcher of its workers (trainenv-stacks --watch-workers), because the
 * task itself (torchrun's agent) does not end when its workers do. Started
 * from task_init, in the task's process as the job's user, detached and
 * without the task's output streams; it ends with the task. Also the one
 * way the plugin starts a helper detached (the container check and the
 * barrier proxy, stepd_container.c).
 * SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "srun_exitwatch.h"
#include "hang/proctab.h"
#include "launch/rankenv.h"
#include "util/runcap.h"
#include "slurmstepd.h"
#include "util/strutil.h"
#include "launch/version.h"

/* The task's environment without SLURM_JOB_ID, SLURM_STEP_ID and
 * TRAINENV_TASK (the hang report's three ways to a task), for a
 * process trainenv starts beside the task (the torchrun watcher, the
 * container check, the barrier proxy): it is not one of the step's ranks
 * when the hang report looks for them. */
char **te_stepd_env_not_a_rank(char **env, const char *also)
{
	const char *const ids[] = { "SLURM_JOB_ID=", "SLURM_STEP_ID=",
				    TE_TASK_ENV "=", also, NULL };

	return te_env_without_dup(env, ids, NULL);
}

int te_stepd_spawn_detached(const char *path, char *const argv[],
			    char *const env[], int fd, int keep_stderr)
{
	int st[2], keep = fd >= 0 ? 4 : 3, e = 0;
	pid_t pid;

	/* the grandchild's exec or its errno: close-on-exec, at a number
	 * of its own past the descriptors the helper keeps */
	if (pipe2(st, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		e = errno;
		close(st[0]);
		close(st[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		pid_t g;

		close(st[0]);
		setsid();
		g = fork();
		if (g != 0) {
			e = errno;
			if (g < 0 && write(st[1], &e, sizeof(e)) < 0)
				_exit(1);
			_exit(0);
		}
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			if (!keep_stderr)
				dup2(null, 2);
		}
		if (fd == 3)
			fcntl(3, F_SETFD, 0);
		else if (fd >= 0 && dup2(fd, 3) < 0)
			_exit(127);
		if (st[1] != keep && (dup3(st[1], keep, O_CLOEXEC) < 0))
			_exit(127);
		close_range(keep + 1, ~0U, 0);
		execve(path, argv, env);
		e = errno;
		if (write(keep, &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(st[1]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* end of file: the helper runs (its exec closed the pipe) */
	while (read(st[0], &e, sizeof(e)) < 0 && errno == EINTR)
		;
	close(st[0]);
	if (e) {
		errno = e;
		return -1;
	}
	return 0;
}

void te_stepd_watch_workers(spank_t sp)
{
	char path[TE_VALUE_MAX + 32], js[32], spid[16], sstart[24], proto[12];
	/* a watcher of another protocol would say so on its stderr, which
	 * is /dev/null here: it only does not watch (docs/RELIABILITY.md) */
	char *argv[] = { (char *)TE_STACKS_HELPER, (char *)"--protocol-say",
			 proto, (char *)"--watch-workers",
			 js, (char *)"--node", te_step.node,
			 (char *)"--task-pid", spid, (char *)"--task-start",
			 sstart, NULL };
	char **env = NULL, **env2;
	uint64_t start;

	if (!te_step.report)
		return;
	/* Its exec happens in a detached grandchild, where a failure would
	 * go unseen: said here, once per node, instead. */
	if (te_helper_path(TE_STACKS_HELPER, path, sizeof(path)) < 0 ||
	    access(path, X_OK) < 0) {
		fprintf(stderr, TE_PREFIX "warning: --train-exit-grace: cannot "
			"run the worker watcher %s: %s (helper-dir); this "
			"torchrun task's workers are not watched\n", path,
			strerror(errno));
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
