/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-stacks --watch-workers: under a torchrun task, the first end
 * of one of the node's workers, for srun's exit watchdog (torchrun's
 * agent, the Slurm task, stays in its exit barrier while a worker of
 * another node hangs, so no task ends). Started by the plugin's task_init
 * (as the job's user, detached); polls /proc once a second; a worker gone
 * for two polls with no new one for its rank is said to srun's listener
 * as "ended"; workers that come back after that (a torchrun restart) as
 * "resumed", which voids the grace. It exits when its task is gone: the
 * process of its pid and start time, which it waits for however long the
 * task takes to show as the step's. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/failrep.h"
#include "hang/proctab.h"
#include "report/sendline.h"
#include "stacks_int.h"
#include "util/strutil.h"

#define WATCH_MAX 256
#define SEND_MS 2000

static char watch_node[64]; /* the task's SLURMD_NODENAME */

struct seen {
	long rank;
	int pid;
	int misses;
};

/* The workers of job.step on the task's node now: up to max, with their
 * pids. The node is the task's own SLURMD_NODENAME (set by slurmd; the
 * host name may differ from Slurm's node name), once the task shows in the
 * scan as the step's (until then: none). */
static size_t workers(long job, long step, int task_pid, uint64_t task_start,
		      struct seen *now, size_t max)
{
	static struct te_proc t[TE_PROC_MAX];
	static struct te_rank_proc r[WATCH_MAX];
	size_t n = te_stacks_scan(t, TE_PROC_MAX, NULL, getuid()), k, i, m = 0;
	const char *node = NULL;

	for (i = 0; i < n; i++)
		if (t[i].pid == task_pid && t[i].start == task_start)
			node = t[i].node;
	if (!node)
		return 0;
	te_strlcpy(watch_node, node, sizeof(watch_node));
	k = te_proc_pick_ranks(t, n, job, step, r, WATCH_MAX);
	for (i = 0; i < k && m < max; i++) {
		if (!t[r[i].idx].elastic || strcmp(t[r[i].idx].node, node))
			continue; /* the agent itself, or another node */
		now[m].rank = r[i].rank;
		now[m].pid = t[r[i].idx].pid;
		now[m++].misses = 0;
	}
	return m;
}

/* The task is still the process it was: its pid with its start time
 * (task_start 0: the first one seen). A task another plugin's task_init
 * keeps from its program for a while is there all along. */
static int task_alive(int task_pid, uint64_t *task_start)
{
	uint64_t st;

	if (te_proc_start_time(task_pid, &st) < 0)
		return 0;
	if (!*task_start)
		*task_start = st;
	return st == *task_start;
}

/* One line to srun's listener: a worker ended, or workers are back (a
 * torchrun restart: the grace that line started is void). */
static int tell_srun(long rank, const char *node, int resumed)
{
	struct te_failrep f = { .ended = !resumed, .resumed = resumed };

	f.rank = (uint32_t)rank;
	te_strlcpy(f.node, watch_node[0] ? watch_node : node, sizeof(f.node));
	return te_failrep_tell_srun(&f, SEND_MS);
}

int te_stacks_watch_workers(long job, long step, const char *node, int task_pid,
			    uint64_t task_start)
{
	static struct seen seen[WATCH_MAX], now[WATCH_MAX];
	size_t nseen = 0, nnow, i, j;
	int ended = 0;

	signal(SIGHUP, SIG_IGN);
	for (;;) {
		poll(NULL, 0, 1000);
		if (!task_alive(task_pid, &task_start))
			return 0; /* the task (torchrun) is gone */
		nnow = workers(job, step, task_pid, task_start, now, WATCH_MAX);
		if (ended) {
			/* a worker that was not there at the end: torchrun
			 * restarted them (--max-restarts); on a node that
			 * finished only the last ones end */
			for (j = 0; j < nnow; j++) {
				for (i = 0; i < nseen; i++)
					if (seen[i].pid == now[j].pid)
						break;
				if (i == nseen)
					break;
			}
			if (j < nnow) {
				tell_srun(now[j].rank, node, 1);
				ended = 0;
				nseen = 0;
			}
			continue;
		}
		for (i = 0; i < nseen; i++) {
			for (j = 0; j < nnow; j++)
				if (now[j].rank == seen[i].rank)
					break;
			if (j < nnow) {
				seen[i].pid = now[j].pid;
				seen[i].misses = 0;
			} else if (++seen[i].misses >= 2 && !ended) {
				tell_srun(seen[i].rank, node, 0);
				ended = 1;
			}
		}
		for (j = 0; j < nnow && nseen < WATCH_MAX; j++) {
			for (i = 0; i < nseen; i++)
				if (seen[i].rank == now[j].rank)
					break;
			if (i == nseen)
				seen[nseen++] = now[j];
		}
	}
}
