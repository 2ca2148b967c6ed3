/* srun's exit watchdog: the first task exit starts the grace; past it, one
 * hang report (trainenv-stacks, as the user, srun's stderr) for the step.
 * Runs in the failure listener's thread, which never blocks on it. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitwatch.h"
#include "plugin.h"
#include "strutil.h"

extern char **environ;

static struct {
	int armed, fired;
	unsigned grace_s;
	int64_t first_ms;		/* monotonic, 0: no exit yet */
	struct te_failrep first;	/* the first exit seen */
	char job_step[32], grace[16], action[16], helper[TE_VALUE_MAX + 32];
	pid_t pid;
} ew;

int te_exitwatch_arm(uint32_t job, uint32_t step, unsigned grace_s,
		     const char *action, const char *helper)
{
	memset(&ew, 0, sizeof(ew));
	if (te_snprintf(ew.job_step, sizeof(ew.job_step), "%u.%u", job,
			step) < 0 ||
	    te_snprintf(ew.grace, sizeof(ew.grace), "%u", grace_s) < 0 ||
	    te_strlcpy(ew.action, action, sizeof(ew.action)) >=
		    sizeof(ew.action) ||
	    te_strlcpy(ew.helper, helper, sizeof(ew.helper)) >=
		    sizeof(ew.helper))
		return -1;
	ew.grace_s = grace_s;
	ew.armed = 1;
	return 0;
}

void te_exitwatch_task_exit(const struct te_failrep *r, int64_t now_ms)
{
	if (!ew.armed || ew.first_ms)
		return;
	ew.first_ms = now_ms ? now_ms : 1;
	ew.first = *r;
}

int64_t te_exitwatch_due(void)
{
	if (!ew.armed || ew.fired || !ew.first_ms)
		return 0;
	return ew.first_ms + (int64_t)ew.grace_s * 1000;
}

void te_exitwatch_fire(int64_t now_ms)
{
	char first[160];
	char *argv[] = {
		(char *)TE_STACKS_HELPER, (char *)"--exit-report",
		ew.job_step, (char *)"--grace", ew.grace, (char *)"--action",
		ew.action, (char *)"--first-exit", first, NULL
	};
	posix_spawnattr_t attr;
	sigset_t none, all;
	int rc;

	(void)now_ms;
	if (!te_exitwatch_due() || ew.fired)
		return;
	ew.fired = 1;
	te_snprintf(first, sizeof(first), "rank %u on %s %s %d", ew.first.rank,
		    ew.first.node, ew.first.signaled ? "killed by signal" :
		    "exited with code", ew.first.value);
	/* the reporter starts with default signal handling and nothing
	 * blocked, whatever srun's threads have */
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF);
	rc = posix_spawn(&ew.pid, ew.helper, NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		fprintf(stderr, TE_PREFIX "exit-grace: %s s after the first "
			"task ended, tasks still run, but the hang report "
			"cannot start: %s: %s\n", ew.grace, ew.helper,
			strerror(rc));
		ew.pid = 0;
	}
}

void te_exitwatch_disarm(void)
{
	ew.armed = 0;
	if (ew.pid > 0)
		waitpid(ew.pid, NULL, WNOHANG);
}
