/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libtrainenv's heartbeat (--train-stall): trainenv_heartbeat() stores the
 * time of the call (a vDSO clock read and an atomic store: no system
 * call); its first call starts a watchdog thread that, once the last call
 * is older than TRAINENV_STALL seconds, tells srun's listener (the failure
 * report's channel, TRAINENV_REPORT) which rank stalled, once. The thread
 * runs whatever the calling thread is blocked in. */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "report/failrep.h"
#include "report/sendline.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "trainenv/trainenv.h"

#define SEND_MS 2000 /* one try to reach srun */

static int64_t last_ms; /* atomic */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static long env_num(const char *name, long dflt)
{
	const char *v = getenv(name);
	uint64_t n;

	return v && te_parse_u64(v, 0x7fffffff, &n) == 0 ? (long)n : dflt;
}

/* What the watchdog needs, read from the environment by the first
 * heartbeat, before the thread exists (getenv is not safe against a
 * setenv on another thread). */
static struct {
	long stall_s;
	char host[64];
	uint16_t port;
	char token[TE_FAILREP_TOKEN_LEN + 1];
	struct te_failrep r;
} wd;

/* Seconds a poll of one second may take before it means the process was
 * stopped (scontrol suspend, gang scheduling): its heartbeat's age then
 * counts from the resume. */
#define SUSPENDED_MS 3000

static void *watchdog(void *arg)
{
	char line[TE_FAILREP_LINE_MAX];
	struct timespec now;
	sigset_t all;

	(void)arg;
	/* the program's signals are for its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		int64_t before = te_now_ms(), age;

		poll(NULL, 0, 1000);
		if (te_now_ms() - before > SUSPENDED_MS) {
			__atomic_store_n(&last_ms, te_now_ms(),
					 __ATOMIC_RELAXED);
			continue;
		}
		age = te_now_ms() - __atomic_load_n(&last_ms, __ATOMIC_RELAXED);
		if (age >= wd.stall_s * 1000) {
			clock_gettime(CLOCK_REALTIME, &now);
			wd.r.value = (int)(age / 1000);
			wd.r.sec = now.tv_sec;
			wd.r.usec = (uint32_t)(now.tv_nsec / 1000);
			if (te_failrep_format(line, sizeof(line), wd.token,
					      &wd.r) == 0)
				te_send_line(wd.host, wd.port, line, SEND_MS);
			return NULL; /* once: the report ends the step */
		}
	}
}

static void start_watchdog(void)
{
	const char *host = getenv("SLURM_SRUN_COMM_HOST");
	const char *node = getenv("SLURMD_NODENAME");
	pthread_attr_t attr;
	pthread_t t;

	wd.stall_s = env_num("TRAINENV_STALL", 0);
	if (wd.stall_s <= 0)
		return; /* --train-stall not given (or off) */
	if (!host || !node ||
	    te_strlcpy(wd.host, host, sizeof(wd.host)) >= sizeof(wd.host) ||
	    te_failrep_env_parse(getenv(TE_FAILREP_ENV), &wd.port, wd.token,
				 sizeof(wd.token)) < 0)
		return; /* not under srun with trainenv's listener */
	wd.r.rank = (uint32_t)env_num("RANK", env_num("SLURM_PROCID", 0));
	wd.r.local_rank =
		(uint32_t)env_num("LOCAL_RANK", env_num("SLURM_LOCALID", 0));
	te_strlcpy(wd.r.node, node, sizeof(wd.r.node));
	wd.r.stalled = 1;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_create(&t, &attr, watchdog, NULL);
	pthread_attr_destroy(&attr);
}

void trainenv_heartbeat(void)
{
	__atomic_store_n(&last_ms, te_now_ms(), __ATOMIC_RELAXED);
	pthread_once(&once, start_watchdog);
}
