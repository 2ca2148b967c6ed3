/* trainenv-stacks --watch-workers: under a torchrun task, the first end
 * of one of the node's workers, for srun's exit watchdog (torchrun's
 * agent, the Slurm task, stays in its exit barrier while a worker of
 * another node hangs, so no task ends). Started by the plugin's task_init
 * (as the job's user, detached); polls /proc once a second; a worker gone
 * for two polls with no new one for its rank (a torchrun restart) is said
 * to srun's listener as "ended"; then it exits, as it does when its task
 * is gone. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "failrep.h"
#include "proctab.h"
#include "sendline.h"
#include "stacks_int.h"
#include "strutil.h"

#define WATCH_MAX 256
#define SEND_MS 2000

struct seen {
	long rank;
	int pid;
	int misses;
};

/* The workers of job.step on this node now: up to max, with their pids. */
static size_t workers(long job, long step, const char *node,
		      struct seen *now, size_t max)
{
	static struct te_proc t[TE_PROC_MAX];
	static struct te_rank_proc r[WATCH_MAX];
	size_t n = te_stacks_scan(t, TE_PROC_MAX, node), k, i, m = 0;

	k = te_proc_pick_ranks(t, n, job, step, r, WATCH_MAX);
	for (i = 0; i < k && m < max; i++) {
		if (!t[r[i].idx].elastic)
			continue;	/* the agent itself: no worker yet */
		now[m].rank = r[i].rank;
		now[m].pid = t[r[i].idx].pid;
		now[m++].misses = 0;
	}
	return m;
}

static int say_ended(long rank, const char *node)
{
	const char *host = getenv("SLURM_SRUN_COMM_HOST");
	char token[TE_FAILREP_TOKEN_LEN + 1], line[TE_FAILREP_LINE_MAX];
	struct te_failrep f = { .ended = 1 };
	struct timespec ts;
	uint16_t port;

	if (!host || te_failrep_env_parse(getenv(TE_FAILREP_ENV), &port, token,
					  sizeof(token)) < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	f.rank = (uint32_t)rank;
	f.sec = ts.tv_sec;
	f.usec = (uint32_t)(ts.tv_nsec / 1000);
	te_strlcpy(f.node, node, sizeof(f.node));
	if (te_failrep_format(line, sizeof(line), token, &f) < 0)
		return -1;
	return te_send_line(host, port, line, SEND_MS);
}

int te_stacks_watch_workers(long job, long step, const char *node,
			    int task_pid)
{
	static struct seen seen[WATCH_MAX], now[WATCH_MAX];
	size_t nseen = 0, nnow, i, j;

	signal(SIGHUP, SIG_IGN);
	for (;;) {
		poll(NULL, 0, 1000);
		if (kill(task_pid, 0) < 0 && errno == ESRCH)
			return 0;	/* the task (torchrun) is gone */
		nnow = workers(job, step, node, now, WATCH_MAX);
		for (i = 0; i < nseen; i++) {
			for (j = 0; j < nnow; j++)
				if (now[j].rank == seen[i].rank)
					break;
			if (j < nnow) {
				seen[i].pid = now[j].pid;	/* restarted? */
				seen[i].misses = 0;
			} else if (++seen[i].misses >= 2) {
				say_ended(seen[i].rank, node);
				return 0;
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
