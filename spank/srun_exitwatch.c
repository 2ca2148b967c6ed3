/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's exit watchdog: the first task exit starts the grace; past it, or
 * at a rank's stall, one hang report (trainenv-stacks, as the user, srun's
 * stderr) for the step. Runs in the failure listener's thread, which never
 * blocks on it. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "slurm_compat.h"

#include "srun_exitwatch.h"
#include "state.h"
#include "util/strutil.h"
#include "launch/version.h"

extern char **environ;

static struct {
	int armed, fired;
	unsigned grace_s;
	int64_t first_ms;	 /* monotonic, 0: no exit yet */
	struct te_failrep first; /* the first exit seen */
	int64_t stall_ms;	 /* monotonic, 0: no stall said */
	char why_opt[16];	 /* --first-exit or --stall */
	char why[192];
	char cause[256]; /* why trainenv ends the step */
	char job_step[32], grace[16], stall[16], action[16];
	char helper[TE_VALUE_MAX + 32];
	char record_dir[TE_VALUE_MAX + 1];
	char stall_node[sizeof(((struct te_failrep *)0)->node)];
	pid_t pid;
	uint32_t job, step;
	/* nodes a task of which has ended (each node tells its first end):
	 * the hang is blamed on the one node that has none */
	char ended[TE_EXITWATCH_NODES][sizeof(((struct te_failrep *)0)->node)];
	int nended, ended_full;
	int ended_at_fire, full_at_fire; /* at the report */
	int hang_node_done;
	char hang_node[sizeof(((struct te_failrep *)0)->node)];
} ew;

static void note_ended(const char *node)
{
	int i;

	for (i = 0; i < ew.nended; i++)
		if (!strcmp(ew.ended[i], node))
			return;
	if (ew.nended == TE_EXITWATCH_NODES) {
		ew.ended_full = 1;
		return;
	}
	te_strlcpy(ew.ended[ew.nended++], node, sizeof(ew.ended[0]));
}

/* Whether node had a task end before the report ran (the step's end,
 * which the report causes, ends them all). */
static int has_ended(const char *node)
{
	int i;

	for (i = 0; i < ew.ended_at_fire; i++)
		if (!strcmp(ew.ended[i], node))
			return 1;
	return 0;
}

/* At the report: the one node of the step none of whose tasks has ended
 * (the step's layout from slurmctld), or the stalled rank's node. */
static void find_hang_node(void)
{
	slurm_step_layout_t *l;
	slurm_step_id_t id = te_slurm_step_id(ew.job, ew.step);
	te_hostlist_t hl;
	char *h;
	int still = 0;

	ew.hang_node[0] = 0;
	if (ew.stall_ms) {
		te_strlcpy(ew.hang_node, ew.stall_node, sizeof(ew.hang_node));
		return;
	}
	if (ew.full_at_fire || !(l = slurm_job_step_layout_get(&id)))
		return;
	hl = l->node_list ? slurm_hostlist_create(l->node_list) : NULL;
	while (hl && (h = slurm_hostlist_shift(hl))) {
		if (!has_ended(h) && still++ == 0)
			te_strlcpy(ew.hang_node, h, sizeof(ew.hang_node));
		free(h);
	}
	if (hl)
		slurm_hostlist_destroy(hl);
	slurm_job_step_layout_free(l);
	if (still != 1)
		ew.hang_node[0] = 0;
}

int te_exitwatch_arm(uint32_t job, uint32_t step, unsigned grace_s,
		     unsigned stall_s, const char *action, const char *helper,
		     const char *record_dir)
{
	memset(&ew, 0, sizeof(ew));
	if (te_snprintf(ew.job_step, sizeof(ew.job_step), "%u.%u", job, step) <
		    0 ||
	    te_snprintf(ew.grace, sizeof(ew.grace), "%u", grace_s) < 0 ||
	    te_snprintf(ew.stall, sizeof(ew.stall), "%u", stall_s) < 0 ||
	    te_strlcpy(ew.action, action, sizeof(ew.action)) >=
		    sizeof(ew.action) ||
	    te_strlcpy(ew.helper, helper, sizeof(ew.helper)) >=
		    sizeof(ew.helper) ||
	    te_strlcpy(ew.record_dir, record_dir ? record_dir : "",
		       sizeof(ew.record_dir)) >= sizeof(ew.record_dir))
		return -1;
	ew.grace_s = grace_s;
	ew.job = job;
	ew.step = step;
	ew.armed = 1;
	return 0;
}

void te_exitwatch_task_exit(const struct te_failrep *r, int64_t now_ms)
{
	if (!ew.armed || !ew.grace_s)
		return;
	if (!r->resumed && !r->stalled && !r->launched)
		note_ended(r->node);
	if (ew.first_ms)
		return;
	ew.first_ms = now_ms ? now_ms : 1;
	ew.first = *r;
}

void te_exitwatch_resumed(void)
{
	if (ew.armed && !ew.fired && ew.first.ended)
		ew.first_ms = 0;
}

void te_exitwatch_stall(const struct te_failrep *r, int64_t now_ms)
{
	if (!ew.armed || ew.stall_ms)
		return;
	ew.stall_ms = now_ms ? now_ms : 1;
	te_strlcpy(ew.stall_node, r->node, sizeof(ew.stall_node));
	te_snprintf(ew.why, sizeof(ew.why),
		    "rank %u on %s sent no heartbeat "
		    "for %d s (--train-stall=%s)",
		    r->rank, r->node, r->value, ew.stall);
	te_strlcpy(ew.why_opt, "--stall", sizeof(ew.why_opt));
}

int64_t te_exitwatch_due(void)
{
	if (!ew.armed || ew.fired)
		return 0;
	if (ew.stall_ms)
		return ew.stall_ms; /* at once */
	if (!ew.first_ms)
		return 0;
	return ew.first_ms + (int64_t)ew.grace_s * 1000;
}

void te_exitwatch_fire(int64_t now_ms)
{
	/* a reporter of another protocol says so on srun's stderr (its
	 * own) in one line and stops */
	char proto[12];
	char *argv[] = { (char *)TE_STACKS_HELPER,
			 (char *)"--protocol-say",
			 proto,
			 (char *)"--exit-report",
			 ew.job_step,
			 (char *)"--grace",
			 ew.grace,
			 (char *)"--action",
			 ew.action,
			 ew.why_opt,
			 ew.why,
			 NULL,
			 NULL,
			 NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int rc;

	(void)now_ms;
	if (!te_exitwatch_due() || ew.fired)
		return;
	ew.fired = 1;
	/* the hang node is found at srun's end (te_exitwatch_hang_node):
	 * this thread asks slurmctld nothing */
	ew.ended_at_fire = ew.nended;
	ew.full_at_fire = ew.ended_full;
	if (!ew.stall_ms) {
		te_strlcpy(ew.why_opt, "--first-exit", sizeof(ew.why_opt));
		if (ew.first.ended)
			te_snprintf(ew.why, sizeof(ew.why),
				    "worker rank %u "
				    "on %s ended",
				    ew.first.rank, ew.first.node);
		else
			te_snprintf(ew.why, sizeof(ew.why),
				    "rank %u on %s %s "
				    "%d",
				    ew.first.rank, ew.first.node,
				    ew.first.signaled ? "killed by signal"
						      : "exited with code",
				    ew.first.value);
	}
	if (ew.stall_ms)
		te_strlcpy(ew.cause, ew.why, sizeof(ew.cause));
	else
		te_snprintf(ew.cause, sizeof(ew.cause),
			    "ranks still ran "
			    "%u s after %s (--train-exit-grace=%u)",
			    ew.grace_s, ew.why, ew.grace_s);
	te_snprintf(proto, sizeof(proto), "%d", te_protocol_version());
	if (ew.record_dir[0]) {
		argv[11] = (char *)"--record-dir";
		argv[12] = ew.record_dir;
	}
	/* the reporter starts with default signal handling and nothing
	 * blocked, whatever srun's threads have */
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK |
						POSIX_SPAWN_SETSIGDEF);
	/* the report goes to srun's stderr; srun's stdout (a pipe a caller
	 * reads to its end) and every other descriptor stay srun's */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	rc = posix_spawn(&ew.pid, ew.helper, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	if (rc != 0) {
		fprintf(stderr,
			TE_PREFIX "%s, but the hang report cannot "
				  "start: %s: %s\n",
			ew.why, ew.helper, strerror(rc));
		ew.pid = 0;
	}
}

int te_exitwatch_reap(void)
{
	if (ew.pid > 0 && waitpid(ew.pid, NULL, WNOHANG) == ew.pid)
		ew.pid = 0;
	return ew.pid > 0;
}

void te_exitwatch_disarm(void)
{
	ew.armed = 0;
	te_exitwatch_reap();
}

const char *te_exitwatch_hang_node(void)
{
	if (!ew.fired)
		return NULL;
	if (!ew.hang_node_done) {
		ew.hang_node_done = 1;
		find_hang_node();
	}
	return ew.hang_node[0] ? ew.hang_node : NULL;
}

const char *te_exitwatch_fired(void)
{
	return ew.fired ? ew.why : NULL;
}

const char *te_exitwatch_ending(void)
{
	return ew.fired && strcmp(ew.action, "report") ? ew.cause : NULL;
}
