/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libtrainenv's heartbeat (--train-stall, --train-step-watch):
 * trainenv_heartbeat() stores the time of the call and counts it (a vDSO
 * clock read, an atomic store and an atomic add: no system call); its
 * first call starts a watchdog thread that
 *  - once the last call is older than TRAINENV_STALL seconds, tells srun's
 *    listener (the failure report's channel, TRAINENV_REPORT) which rank
 *    stalled, once;
 *  - on rank 0, each TRAINENV_STEP_WATCH_WINDOW seconds, gives the
 *    window's mean step time (from the calls' times and count) to the
 *    step watch (core/straggler/steptime.h) and sends srun its line when
 *    the steps have been slow for TRAINENV_STEP_WATCH_WINDOWS windows.
 * The thread runs whatever the calling thread is blocked in. */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/failrep.h"
#include "straggler/steptime.h"
#include "report/sendline.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "trainenv/trainenv.h"

#define SEND_MS 2000 /* one try to reach srun */

static int64_t last_ms; /* atomic */
static uint64_t beats;	/* atomic: calls so far */
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* What the watchdog needs, read from the environment by the first
 * heartbeat, before the thread exists (getenv is not safe against a
 * setenv on another thread). */
static struct {
	long stall_s;
	char host[64];
	uint16_t port;
	char token[TE_FAILREP_TOKEN_LEN + 1];
	struct te_failrep r;
	/* the step watch (rank 0 only; window_ms 0: off) */
	struct te_steptime st;
	int64_t window_ms, window_end_ms;
	int64_t window_last_ms; /* the last call's time at the window's start */
	uint64_t window_beats;	/* the calls counted then */
} wd;

/* Seconds a poll of one second may take before it means the process was
 * stopped (scontrol suspend, gang scheduling): its heartbeat's age then
 * counts from the resume. */
#define SUSPENDED_MS 3000

/* A line to srun, kind r (stall or steptime), stamped now. */
static void send_report(struct te_failrep *r)
{
	char line[TE_FAILREP_LINE_MAX];
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	r->sec = now.tv_sec;
	r->usec = (uint32_t)(now.tv_nsec / 1000);
	if (te_failrep_format(line, sizeof(line), wd.token, r) == 0)
		te_send_line(wd.host, wd.port, line, SEND_MS);
}

/* The window [window's start, now] goes from the last call before it to
 * the last call in it; a stop of the process (resumed) starts it again. */
static void window_start(int64_t now)
{
	wd.window_last_ms = __atomic_load_n(&last_ms, __ATOMIC_RELAXED);
	wd.window_beats = __atomic_load_n(&beats, __ATOMIC_RELAXED);
	wd.window_end_ms = now + wd.window_ms;
}

static void step_watch(int64_t now)
{
	struct te_steptime_verdict v;
	struct te_failrep r;
	int64_t last = __atomic_load_n(&last_ms, __ATOMIC_RELAXED);
	uint64_t n = __atomic_load_n(&beats, __ATOMIC_RELAXED);

	if (!wd.window_ms || now < wd.window_end_ms)
		return;
	if (last > wd.window_last_ms &&
	    te_steptime_window(&wd.st,
			       (uint64_t)(last - wd.window_last_ms) * 1000000u,
			       n - wd.window_beats, &v) == 1) {
		r = wd.r;
		r.stalled = 0;
		r.steptime = 1;
		r.value = 0;
		if (te_steptime_line(&v, r.rank, r.text, sizeof(r.text)) == 0)
			send_report(&r);
	}
	window_start(now);
}

static void *watchdog(void *arg)
{
	sigset_t all;

	(void)arg;
	/* the program's signals are for its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	window_start(te_now_ms());
	for (;;) {
		int64_t before = te_now_ms(), age;

		poll(NULL, 0, 1000);
		if (te_now_ms() - before > SUSPENDED_MS) {
			__atomic_store_n(&last_ms, te_now_ms(),
					 __ATOMIC_RELAXED);
			window_start(te_now_ms());
			continue;
		}
		step_watch(te_now_ms());
		age = te_now_ms() - __atomic_load_n(&last_ms, __ATOMIC_RELAXED);
		if (wd.stall_s > 0 && age >= wd.stall_s * 1000) {
			wd.r.value = (int)(age / 1000);
			send_report(&wd.r);
			wd.stall_s = 0; /* once: the report ends the step */
			if (!wd.window_ms)
				return NULL;
		}
	}
}

/* The step watch's settings from the job's environment: rank 0 only, and
 * only when srun reads its lines. */
static void step_watch_setup(uint32_t rank)
{
	struct te_steptime_cfg c;

	wd.window_ms = 0;
	c.threshold_pct = (uint32_t)te_env_long("TRAINENV_STEP_WATCH", 0);
	c.windows = (uint32_t)te_env_long("TRAINENV_STEP_WATCH_WINDOWS", 3);
	if (rank != 0 || c.threshold_pct == 0 ||
	    !te_failrep_kind_wanted(getenv(TE_FAILREP_KINDS_ENV),
				    TE_FAILREP_KIND_STEPTIME) ||
	    te_steptime_init(&wd.st, &c) < 0)
		return;
	wd.window_ms = te_env_long("TRAINENV_STEP_WATCH_WINDOW", 60) * 1000L;
}

static void start_watchdog(void)
{
	const char *host = getenv("SLURM_SRUN_COMM_HOST");
	const char *node = getenv("SLURMD_NODENAME");
	pthread_attr_t attr;
	pthread_t t;

	wd.stall_s = te_env_long("TRAINENV_STALL", 0);
	if (!host || !node ||
	    te_strlcpy(wd.host, host, sizeof(wd.host)) >= sizeof(wd.host) ||
	    te_failrep_env_parse(getenv(TE_FAILREP_ENV), &wd.port, wd.token,
				 sizeof(wd.token)) < 0)
		return; /* not under srun with trainenv's listener */
	wd.r.rank =
		(uint32_t)te_env_long("RANK", te_env_long("SLURM_PROCID", 0));
	wd.r.local_rank = (uint32_t)te_env_long(
		"LOCAL_RANK", te_env_long("SLURM_LOCALID", 0));
	te_strlcpy(wd.r.node, node, sizeof(wd.r.node));
	wd.r.stalled = 1;
	step_watch_setup(wd.r.rank);
	if (wd.stall_s <= 0 && !wd.window_ms)
		return; /* neither --train-stall nor the step watch */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_create(&t, &attr, watchdog, NULL);
	pthread_attr_destroy(&attr);
}

void trainenv_heartbeat(void)
{
	__atomic_store_n(&last_ms, te_now_ms(), __ATOMIC_RELAXED);
	__atomic_add_fetch(&beats, 1, __ATOMIC_RELAXED);
	pthread_once(&once, start_watchdog);
}
