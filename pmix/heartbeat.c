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

#include "failrep.h"
#include "sendline.h"
#include "strutil.h"
#include "sysutil.h"
#include "trainenv/trainenv.h"

#define SEND_MS 2000		/* one try to reach srun */

static int64_t last_ms;			/* atomic */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static long env_num(const char *name, long dflt)
{
	const char *v = getenv(name);
	uint64_t n;

	return v && te_parse_u64(v, 0x7fffffff, &n) == 0 ? (long)n : dflt;
}

static void *watchdog(void *arg)
{
	long stall_s = (long)(intptr_t)arg;
	const char *host = getenv("SLURM_SRUN_COMM_HOST");
	const char *node = getenv("SLURMD_NODENAME");
	char token[TE_FAILREP_TOKEN_LEN + 1], line[TE_FAILREP_LINE_MAX];
	struct te_failrep r = { 0 };
	struct timespec now;
	uint16_t port;
	sigset_t all;

	/* the program's signals are for its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	if (!host || !node || te_failrep_env_parse(getenv(TE_FAILREP_ENV),
						   &port, token,
						   sizeof(token)) < 0)
		return NULL;	/* not under srun with trainenv's listener */
	r.rank = (uint32_t)env_num("RANK", env_num("SLURM_PROCID", 0));
	r.local_rank = (uint32_t)env_num("LOCAL_RANK",
					 env_num("SLURM_LOCALID", 0));
	te_strlcpy(r.node, node, sizeof(r.node));
	r.stalled = 1;
	for (;;) {
		int64_t age = te_now_ms() - __atomic_load_n(&last_ms,
							  __ATOMIC_RELAXED);

		if (age >= stall_s * 1000) {
			clock_gettime(CLOCK_REALTIME, &now);
			r.value = (int)(age / 1000);
			r.sec = now.tv_sec;
			r.usec = (uint32_t)(now.tv_nsec / 1000);
			if (te_failrep_format(line, sizeof(line), token, &r) == 0)
				te_send_line(host, port, line, SEND_MS);
			return NULL;	/* once: the report ends the step */
		}
		poll(NULL, 0, 1000);
	}
}

static void start_watchdog(void)
{
	long stall_s = env_num("TRAINENV_STALL", 0);
	pthread_attr_t attr;
	pthread_t t;

	if (stall_s <= 0)
		return;		/* --train-stall not given (or off) */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_create(&t, &attr, watchdog, (void *)(intptr_t)stall_s);
	pthread_attr_destroy(&attr);
}

void trainenv_heartbeat(void)
{
	__atomic_store_n(&last_ms, te_now_ms(), __ATOMIC_RELAXED);
	pthread_once(&once, start_watchdog);
}
