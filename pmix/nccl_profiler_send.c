/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libnccl-profiler-trainenv.so's sender (issue 36 item 1): once a window
 * (TRAINENV_STRAGGLER_WINDOW seconds) a thread of the rank's process takes
 * the window's waits (the take nccl_profiler.c hands it) and sends srun one
 * "straggler" line per communicator (core/straggler/straggler.h's summary
 * of this rank, carried by the failure report's channel, kind straggler),
 * all of them in one connection with a deadline of SEND_MS.
 *
 * It starts with the process's first communicator, only where trainenv
 * asked for it: --train-straggler is on (TRAINENV_STRAGGLER), srun's
 * listener is in the job's environment (TRAINENV_REPORT,
 * SLURM_SRUN_COMM_HOST) and srun says it reads straggler lines
 * (TRAINENV_REPORT_KINDS; an older srun would refuse them). Elsewhere the
 * plugin only counts, for trainenv_nccl_profiler_take.
 *
 * Each process sends its own ranks' lines: srun's detector joins a node's
 * lines of the same window (strag_detect.c), and the node's processes
 * number their windows alike, since each starts its count at its first
 * communicator. Window numbers only order one node's lines: no clock of
 * one node is compared with another's.
 *
 * NCCL unloads the plugin after the last communicator's finalize; the
 * thread runs its code for the life of the process, so the plugin pins
 * itself (RTLD_NODELETE) before it starts the thread. */
#include "config.h"

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "glibc_compat.h"
#include "nccl_profiler.h"
#include "report/failrep.h"
#include "report/sendline.h"
#include "straggler/straggler.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define SEND_MS 2000 /* one try to reach srun, each window */

static struct {
	te_nprof_take_fn take;
	char host[64];
	uint16_t port;
	char token[TE_FAILREP_TOKEN_LEN + 1];
	char node[TE_STRAG_NODE_MAX];
	int64_t window_ms;
	uint32_t rank, local_rank; /* the process's, for v3 and the wire */
} snd;

static long env_num(const char *name, long dflt)
{
	const char *v = getenv(name);
	uint64_t n;

	return v && te_parse_u64(v, 0x7fffffff, &n) == 0 ? (long)n : dflt;
}

/* One communicator's window as srun's wire line, appended to buf. */
static void append_line(char *buf, size_t len, uint32_t window,
			const struct te_nprof_comm *c)
{
	struct te_strag_summary s;
	struct te_failrep r;
	struct timespec now;
	char line[TE_FAILREP_LINE_MAX];

	memset(&s, 0, sizeof(s));
	s.window = window;
	te_strlcpy(s.node, snd.node, sizeof(s.node));
	s.comm_hash = c->st.comm_hash;
	s.op = c->st.op;
	if (te_strag_summary_add(&s,
				 c->rank >= 0 ? (uint32_t)c->rank : snd.rank,
				 &c->st) < 0)
		return;
	memset(&r, 0, sizeof(r));
	r.straggler = 1;
	r.rank = snd.rank;
	r.local_rank = snd.local_rank;
	te_strlcpy(r.node, snd.node, sizeof(r.node));
	clock_gettime(CLOCK_REALTIME, &now);
	r.sec = now.tv_sec;
	r.usec = (uint32_t)(now.tv_nsec / 1000);
	if (te_strag_line_format(&s, r.text, sizeof(r.text)) < 0 ||
	    te_failrep_format(line, sizeof(line), snd.token, &r) < 0)
		return;
	if (strlen(buf) + strlen(line) < len)
		te_strlcpy(buf + strlen(buf), line, len - strlen(buf));
}

static void send_window(uint32_t window)
{
	struct te_nprof_comm c[TE_STRAG_COMMS];
	char buf[TE_STRAG_COMMS * TE_FAILREP_LINE_MAX];
	size_t n, i;

	buf[0] = '\0';
	n = snd.take(c, TE_STRAG_COMMS, NULL);
	for (i = 0; i < n; i++)
		if (c[i].st.count)
			append_line(buf, sizeof(buf), window, &c[i]);
	if (buf[0])
		te_send_line(snd.host, snd.port, buf, SEND_MS);
}

static void *sender(void *arg)
{
	sigset_t all;
	uint32_t window = 0;

	(void)arg;
	/* the program's signals are for its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		int64_t end = te_now_ms() + snd.window_ms, left;

		while ((left = end - te_now_ms()) > 0)
			poll(NULL, 0, left > 1000 ? 1000 : (int)left);
		if (window < TE_STRAG_WINDOW_MAX)
			window++;
		send_window(window);
	}
	return NULL;
}

/* Keeps the plugin loaded for the thread's sake: 0, or -1. */
static int pin_self(void)
{
	Dl_info info;

	if (!dladdr((void *)pin_self, &info) || !info.dli_fname)
		return -1;
	return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)
		       ? 0
		       : -1;
}

static void start(void)
{
	const char *host = getenv("SLURM_SRUN_COMM_HOST");
	const char *node = getenv("SLURMD_NODENAME");
	pthread_attr_t attr;
	pthread_t t;
	long pct = env_num("TRAINENV_STRAGGLER", 0);

	if (pct < 1 || pct > 99 || !host || !node ||
	    te_strlcpy(snd.host, host, sizeof(snd.host)) >= sizeof(snd.host) ||
	    !te_strag_node_ok(node, strlen(node)) ||
	    te_strlcpy(snd.node, node, sizeof(snd.node)) >= sizeof(snd.node) ||
	    te_failrep_env_parse(getenv(TE_FAILREP_ENV), &snd.port, snd.token,
				 sizeof(snd.token)) < 0 ||
	    !te_failrep_kind_wanted(getenv(TE_FAILREP_KINDS_ENV),
				    TE_FAILREP_KIND_STRAGGLER))
		return; /* not asked for, or no srun that reads it */
	snd.window_ms = env_num("TRAINENV_STRAGGLER_WINDOW", 60) * 1000L;
	if (snd.window_ms < 1000)
		snd.window_ms = 1000;
	snd.rank = (uint32_t)env_num("RANK", env_num("SLURM_PROCID", 0));
	snd.local_rank =
		(uint32_t)env_num("LOCAL_RANK", env_num("SLURM_LOCALID", 0));
	if (snd.rank > TE_STRAG_RANK_MAX || pin_self() < 0)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_create(&t, &attr, sender, NULL);
	pthread_attr_destroy(&attr);
}

void te_nprof_sender_start(te_nprof_take_fn take)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	snd.take = take; /* the same function at every call */
	pthread_once(&once, start);
}
