/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libnccl-profiler-trainenv.so's sender (issue 36 item 1): once a window
 * (TRAINENV_STRAGGLER_WINDOW seconds) a thread of the rank's process takes
 * the window's waits (the take nccl_profiler.c hands it); the node's
 * "straggler" lines (core/straggler/straggler.h's summary per
 * communicator, carried by the failure report's channel, kind straggler)
 * go to srun in one connection with a deadline of SEND_MS.
 *
 * It starts with the process's first communicator, only where trainenv
 * asked for it: --train-straggler is on (TRAINENV_STRAGGLER), srun's
 * listener is in the job's environment (TRAINENV_REPORT,
 * SLURM_SRUN_COMM_HOST) and srun says it reads straggler lines
 * (TRAINENV_REPORT_KINDS; an older srun would refuse them). Elsewhere the
 * plugin only counts, for trainenv_nccl_profiler_take.
 *
 * One process per node sends srun the node's lines: the process of local
 * rank 0 (LOCAL_RANK, else SLURM_LOCALID) binds an abstract unix socket
 * named after the step's token (only the job's processes know it; a
 * sender of another user is refused by its credentials) and, at its
 * window's end, waits a little (a quarter of the window, 2 s at most) for
 * the other local ranks' lines, which they send it as one datagram each
 * window, then joins them with its own into the node's summary per
 * communicator, cut into lines that fit the report's text. A process
 * whose datagram cannot go (no local rank 0 with a communicator) sends
 * srun its own lines: srun's detector joins a node's lines of one window
 * (strag_detect.c). Window numbers only order one node's lines: no clock
 * of one node is compared with another's.
 *
 * NCCL unloads the plugin after the last communicator's finalize; the
 * thread runs its code for the life of the process, so the plugin pins
 * itself (RTLD_NODELETE) before it starts the thread. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "glibc_compat.h"
#include "nccl_profiler.h"
#include "report/failrep.h"
#include "report/sendline.h"
#include "straggler/straggler.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define SEND_MS 2000   /* one try to reach srun, each window */
#define GATHER_MS 2000 /* local rank 0 waits for the others' lines */
#define NODE_COMMS (2 * TE_STRAG_COMMS) /* communicators of a node */
#define DGRAM_MAX (TE_STRAG_COMMS * (TE_STRAG_LINE_MAX + 1))
#define DGRAMS_MAX 1024 /* taken a window: the node's ranks send one each */
#define JITTER_MS 10000 /* the most a node's lines wait, spread */

static struct {
	te_nprof_take_fn take;
	char host[64];
	uint16_t port;
	char token[TE_FAILREP_TOKEN_LEN + 1];
	char node[TE_STRAG_NODE_MAX];
	int64_t window_ms;
	uint32_t rank, local_rank; /* the process's, for v3 and the wire */
	int fd;			   /* local rank 0's socket, else -1 */
	struct sockaddr_un addr;   /* the node's (abstract) */
	socklen_t addrlen;
	unsigned seed; /* the spread of the sends */
} snd = { .fd = -1 };

/* The node's summaries of one window, one per communicator. */
struct node_window {
	size_t n;
	struct te_strag_summary s[NODE_COMMS];
	int32_t size[NODE_COMMS]; /* the communicator's ranks, 0: unknown */
};

/* A quarter of the window, cap at most: local rank 0's gathering and the
 * spread of the sends each take one, so that a node's lines come within
 * half a window (srun's windows close between two windows' lines). */
static int64_t quarter_window(int64_t cap)
{
	return snd.window_ms / 4 < cap ? snd.window_ms / 4 : cap;
}

/* The summary of communicator hash in w, a new one (window, op) when
 * there is room; NULL when not. */
static struct te_strag_summary *summary_of(struct node_window *w, uint64_t hash,
					   uint32_t window, unsigned op)
{
	size_t i;

	for (i = 0; i < w->n; i++)
		if (w->s[i].comm_hash == hash)
			return &w->s[i];
	if (w->n == NODE_COMMS)
		return NULL;
	memset(&w->s[w->n], 0, sizeof(w->s[0]));
	w->size[w->n] = 0;
	w->s[w->n].window = window;
	te_strlcpy(w->s[w->n].node, snd.node, sizeof(w->s[0].node));
	w->s[w->n].comm_hash = hash;
	w->s[w->n].op = op;
	return &w->s[w->n++];
}

/* This process's waits of the window into w. */
static void take_own(struct node_window *w, uint32_t window)
{
	struct te_nprof_comm c[TE_STRAG_COMMS];
	size_t n, i;

	n = snd.take(c, TE_STRAG_COMMS, NULL);
	for (i = 0; i < n; i++) {
		struct te_strag_summary *s;

		if (!c[i].st.count)
			continue;
		s = summary_of(w, c[i].st.comm_hash, window, c[i].st.op);
		if (!s)
			continue;
		w->size[s - w->s] = c[i].nranks;
		te_strag_summary_add(
			s, c[i].rank >= 0 ? (uint32_t)c[i].rank : snd.rank,
			&c[i].st);
	}
}

/* w's summaries as srun's wire lines (each cut to the report's text) into
 * buf. */
static void wire_lines(const struct node_window *w, char *buf, size_t len)
{
	struct te_failrep r;
	struct timespec now;
	char line[TE_FAILREP_LINE_MAX];
	size_t i, at = 0;

	buf[0] = '\0';
	memset(&r, 0, sizeof(r));
	r.straggler = 1;
	r.rank = snd.rank;
	r.local_rank = snd.local_rank;
	te_strlcpy(r.node, snd.node, sizeof(r.node));
	clock_gettime(CLOCK_REALTIME, &now);
	r.sec = now.tv_sec;
	r.usec = (uint32_t)(now.tv_nsec / 1000);
	for (i = 0; i < w->n; i++) {
		int next = 0;

		/* a communicator of this node's ranks only (tensor
		 * parallel): no other node to compare with */
		if (w->size[i] > 0 && w->s[i].nranks >= (unsigned)w->size[i])
			continue;

		while (next >= 0 && (unsigned)next < w->s[i].nranks) {
			next = te_strag_line_part(&w->s[i], (unsigned)next,
						  r.text, sizeof(r.text));
			if (next < 0 || te_failrep_format(line, sizeof(line),
							  snd.token, &r) < 0)
				break;
			if (at + strlen(line) >= len)
				return;
			memcpy(buf + at, line, strlen(line) + 1);
			at += strlen(line);
		}
	}
}

/* Every node's window ends at about the same time (each counts from its
 * first communicator, which all ranks make together): a random wait of
 * up to a quarter of the window (JITTER_MS at most) spreads the nodes'
 * connections to srun's one listener. */
static void send_srun(const struct node_window *w)
{
	char buf[NODE_COMMS * 2 * TE_FAILREP_LINE_MAX];
	int64_t span = quarter_window(JITTER_MS);

	wire_lines(w, buf, sizeof(buf));
	if (!buf[0])
		return;
	te_sleep_ms(span > 0 ? rand_r(&snd.seed) % span : 0);
	te_send_line(snd.host, snd.port, buf, SEND_MS);
}

/* A datagram of another local rank (its uid checked) into w. */
static void join_dgram(struct node_window *w, int fd, uint32_t window)
{
	char data[DGRAM_MAX + 1], ctl[CMSG_SPACE(sizeof(struct ucred))];
	struct iovec iov = { data, DGRAM_MAX };
	struct msghdr m = { .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl,
			    .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	const struct ucred *cred = NULL;
	ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	char *line, *save = NULL, err[96];

	if (n <= 0 || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_CREDENTIALS)
			cred = (const struct ucred *)(void *)CMSG_DATA(c);
	if (!cred || cred->uid != getuid())
		return; /* not the job's user */
	data[n] = '\0';
	for (line = strtok_r(data, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		struct te_strag_summary got, *s;
		struct te_strag_stat st;
		unsigned k;

		if (te_strag_line_parse(line, strlen(line), &got, err,
					sizeof(err)) < 0 ||
		    strcmp(got.node, snd.node))
			continue;
		s = summary_of(w, got.comm_hash, window, got.op);
		for (k = 0; s && k < got.nranks; k++) {
			st.comm_hash = got.comm_hash;
			st.count = got.ranks[k].count;
			st.mean_ns = got.ranks[k].mean_ns;
			st.median_ns = got.ranks[k].median_ns;
			st.op = got.op;
			te_strag_summary_add(s, got.ranks[k].rank, &st);
		}
	}
}

/* Local rank 0: its own window, the others' lines that came within the
 * gathering time, all to srun. */
static void collect_window(uint32_t window)
{
	static struct node_window w;
	int64_t until = te_now_ms() + quarter_window(GATHER_MS), left;
	struct pollfd p = { .fd = snd.fd, .events = POLLIN };
	unsigned taken = 0;

	w.n = 0;
	take_own(&w, window);
	/* bounded: a process of the user's that floods the socket cannot
	 * hold the node's lines */
	while ((left = until - te_now_ms()) > 0 && taken < DGRAMS_MAX)
		if (poll(&p, 1, (int)left) > 0 && ++taken)
			join_dgram(&w, snd.fd, window);
	while (taken++ < DGRAMS_MAX && poll(&p, 1, 0) > 0 &&
	       (p.revents & POLLIN))
		join_dgram(&w, snd.fd, window);
	send_srun(&w);
}

/* Another local rank: its lines to local rank 0 in one datagram, or to
 * srun when local rank 0 does not take them. */
static void give_window(uint32_t window)
{
	static struct node_window w;
	char dgram[DGRAM_MAX];
	size_t i, at = 0;
	int fd, sent = -1;

	w.n = 0;
	take_own(&w, window);
	if (!w.n)
		return;
	for (i = 0; i < w.n; i++) {
		int n = te_strag_line_format(&w.s[i], dgram + at,
					     sizeof(dgram) - at - 1);

		if (n < 0)
			break;
		at += (size_t)n;
		dgram[at++] = '\n';
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		sent = (int)sendto(fd, dgram, at, MSG_DONTWAIT | MSG_NOSIGNAL,
				   (struct sockaddr *)&snd.addr, snd.addrlen);
		close(fd);
	}
	if (sent < 0)
		send_srun(&w);
}

/* The program's signals are for its own threads, but those that end a
 * process keep the mask the thread was started with: a program whose
 * main thread ended (pthread_exit) with this thread left must still end
 * at srun's SIGTERM; one that blocks them everywhere for a sigwait thread
 * keeps them blocked here too. */
static void block_signals(void)
{
	static const int ending[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
	sigset_t was, mask;
	size_t i;

	pthread_sigmask(SIG_SETMASK, NULL, &was);
	sigfillset(&mask);
	for (i = 0; i < sizeof(ending) / sizeof(ending[0]); i++)
		if (!sigismember(&was, ending[i]))
			sigdelset(&mask, ending[i]);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
}

static void *sender(void *arg)
{
	uint32_t window = 0;
	int64_t start = te_now_ms(), slot = 0;

	(void)arg;
	block_signals();
	for (;;) {
		/* on a fixed schedule: the time sending takes does not
		 * shift the node's windows against the others'; a process
		 * stopped for windows (suspended) skips them */
		slot++;
		if (start + slot * snd.window_ms < te_now_ms())
			slot = (te_now_ms() - start) / snd.window_ms + 1;
		te_sleep_ms(start + slot * snd.window_ms - te_now_ms());
		if (window < TE_STRAG_WINDOW_MAX)
			window++;
		if (snd.fd >= 0)
			collect_window(window);
		else
			give_window(window);
	}
	return NULL;
}

/* The node's abstract socket name, from the step's token; local rank 0
 * binds it (a failed bind: it sends its own lines, as the others do). */
static void node_socket(void)
{
	int on = 1, n;

	snd.addr.sun_family = AF_UNIX;
	n = snprintf(snd.addr.sun_path + 1, sizeof(snd.addr.sun_path) - 1,
		     "trainenv-strag.%s", snd.token);
	snd.addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				  (size_t)n);
	if (snd.local_rank != 0)
		return;
	snd.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (snd.fd < 0)
		return;
	if (setsockopt(snd.fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0 ||
	    bind(snd.fd, (struct sockaddr *)&snd.addr, snd.addrlen) < 0) {
		close(snd.fd);
		snd.fd = -1;
	}
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
	long pct = te_env_long("TRAINENV_STRAGGLER", 0);

	if (pct < 1 || pct > 99 || !host || !node ||
	    te_strlcpy(snd.host, host, sizeof(snd.host)) >= sizeof(snd.host) ||
	    !te_strag_node_ok(node, strlen(node)) ||
	    te_strlcpy(snd.node, node, sizeof(snd.node)) >= sizeof(snd.node) ||
	    te_failrep_env_parse(getenv(TE_FAILREP_ENV), &snd.port, snd.token,
				 sizeof(snd.token)) < 0 ||
	    !te_failrep_kind_wanted(getenv(TE_FAILREP_KINDS_ENV),
				    TE_FAILREP_KIND_STRAGGLER))
		return; /* not asked for, or no srun that reads it */
	snd.window_ms = te_env_long("TRAINENV_STRAGGLER_WINDOW", 60) * 1000L;
	if (snd.window_ms < 1000)
		snd.window_ms = 1000;
	snd.rank =
		(uint32_t)te_env_long("RANK", te_env_long("SLURM_PROCID", 0));
	snd.local_rank = (uint32_t)te_env_long("LOCAL_RANK",
					       te_env_long("SLURM_LOCALID", 0));
	if (snd.rank > TE_STRAG_RANK_MAX || pin_self() < 0)
		return;
	snd.seed = (unsigned)getpid() ^ (unsigned)te_now_ms();
	node_socket();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_create(&t, &attr, sender, NULL);
	pthread_attr_destroy(&attr);
}

void te_nprof_sender_start(te_nprof_take_fn take)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	/* the same function at every call, stored before the thread reads
	 * it */
	__atomic_store_n(&snd.take, take, __ATOMIC_RELEASE);
	pthread_once(&once, start);
}
