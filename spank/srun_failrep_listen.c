/* SPDX-License-Identifier: GPL-2.0-or-later */
/* First-failure report, srun's side: the listener thread that takes the
 * reports, holds the first ones briefly to sort them, and prints them.
 * Any user of the submit host can connect to the port: the listener serves
 * up to FR_CONNS connections at once, each for a short while (a stranger's
 * at most TE_FAILREP_CONN_MS), pushes out the oldest stranger when the
 * table is full, and its finish is bounded in time whatever they do. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "srun_exitwatch.h"
#include "srun_straggler.h"
#include "srun_strag_exclude.h"
#include "failrep_net.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define MAX_HELD 4096
#define HOLD_MS 300
#define FR_CONNS 128	    /* connections served at once */
#define ACCEPT_BATCH 64	    /* accepted per round, then the reads */
#define ACCEPT_PAUSE_MS 100 /* after EMFILE and the like: no spin */
#define QUIET_MS 50	    /* finish: nothing more is on its way */

static struct {
	int lfd, wake[2];
	pthread_t thread;
	int running;
	char token[TE_FAILREP_TOKEN_LEN + 1];
	struct te_failrep_conn conn[FR_CONNS];
	struct te_failrep held[MAX_HELD];
	int nheld, printed, dropped, first_done;
	struct te_failrep first; /* the first failure printed */
	int have_first;
	int64_t first_at;
	int grace_ms;	      /* set by finish before it wakes the thread */
	int print_failures;   /* failure-report=on (else only exits count) */
	int has_launch;	      /* rank 0's helper told the launch timeline */
	int64_t launch_at_ms; /* when (wall clock): the barrier passed */
	struct te_failrep kept[TE_FAILREP_KEEP]; /* for --train-requeue */
	int nkept;
	struct te_launch_skew launch;
	struct te_failrep health[TE_FAILREP_HEALTH_KEEP]; /* one per node */
	int nhealth;
	char steptime[TE_FAILREP_TEXT_MAX + 1]; /* the step watch's last */
	int nsteptime;				/* its lines said */
} fr = { .lfd = -1, .wake = { -1, -1 } };

/* the step watch's lines said at most (a step whose pace keeps changing:
 * each slow row is one line) */
#define STEPTIME_SAID_MAX 16

/* Why trainenv is ending the step (the exit watchdog's action, or a
 * straggler's exclusion), else NULL: the ranks' ends that follow are its
 * own doing. */
static const char *trainenv_ending(void)
{
	const char *why = te_exitwatch_ending();

	return why ? why : te_srun_strag_excl_ending();
}

static void print_line(const char *s)
{
	char line[TE_FAILREP_LINE_MAX + 32];

	te_snprintf(line, sizeof(line), "trainenv: %s\n", s);
	/* one write per line: srun writes to the same stderr */
	if (write(STDERR_FILENO, line, strlen(line)) < 0)
		return;
}

static void print_report(const struct te_failrep *r, int first)
{
	char line[TE_FAILREP_LINE_MAX];

	if (fr.printed >= TE_FAILREP_PRINT_MAX) {
		fr.dropped++;
		return;
	}
	te_failrep_describe(r, first, trainenv_ending(), line, sizeof(line));
	print_line(line);
	/* the record's first failure: the first that is one; else (every
	 * rank was ended by trainenv) the first ended, marked so */
	if (first || !fr.have_first)
		fr.first = *r;
	fr.have_first = 1;
	fr.printed++;
}

static int by_time(const void *a, const void *b)
{
	const struct te_failrep *x = a, *y = b;

	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	if (x->usec != y->usec)
		return x->usec < y->usec ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The first reports are held briefly and sorted by their nodes' clocks, so
 * that "first" means first to fail, not first to arrive. */
static void flush_held(void)
{
	int i, want_first = !fr.first_done;

	if (!fr.nheld)
		return;
	qsort(fr.held, (size_t)fr.nheld, sizeof(fr.held[0]), by_time);
	for (i = 0; i < fr.nheld; i++) {
		int first = want_first && !fr.held[i].by_trainenv;

		if (first)
			want_first = 0;
		print_report(&fr.held[i], first);
	}
	fr.first_done = 1;
	fr.nheld = 0;
}

/* A failure: held with the first ones, printed when they are. One that
 * comes once trainenv ends the step (its own SIGTERM, mostly) is marked:
 * it is none of the step's first failure. */
static void hold_or_print(const struct te_failrep *report)
{
	struct te_failrep r = *report;

	r.by_trainenv = trainenv_ending() != NULL;
	if (fr.first_done) {
		print_report(&r, 0);
		return;
	}
	if (!fr.nheld)
		fr.first_at = te_now_ms();
	if (fr.nheld < MAX_HELD)
		fr.held[fr.nheld++] = r;
	else
		fr.dropped++;
}

/* A node's verdict, once per node (each of its tasks may send it). */
static void keep_health(const struct te_failrep *r)
{
	int i;

	for (i = 0; i < fr.nhealth; i++)
		if (!strcmp(fr.health[i].node, r->node))
			return;
	if (fr.nhealth < TE_FAILREP_HEALTH_KEEP)
		fr.health[fr.nhealth++] = *r;
}

static void (*failure_fn)(const struct te_failrep *r);

void te_failrep_on_failure(void (*fn)(const struct te_failrep *r))
{
	failure_fn = fn;
}

static void on_report(const struct te_failrep *r, void *ctx)
{
	(void)ctx;
	if (r->launched) { /* for the step's record, once */
		if (!fr.has_launch) {
			struct timespec ts;

			fr.launch = r->launch;
			fr.has_launch = 1;
			clock_gettime(CLOCK_REALTIME, &ts);
			fr.launch_at_ms = (int64_t)ts.tv_sec * 1000 +
					  ts.tv_nsec / 1000000;
		}
		return;
	}
	if (r->resumed) {
		te_exitwatch_resumed();
		return;
	}
	if (r->health) { /* for the step's record: its node printed it */
		keep_health(r);
		return;
	}
	if (r->straggler) { /* a rank's window: the detector's */
		te_srun_strag_report(r);
		return;
	}
	if (r->steptime) { /* said, and the last kept for the record */
		if (fr.nsteptime < STEPTIME_SAID_MAX) /* no count past it */
			print_line(r->text);
		if (fr.nsteptime <= STEPTIME_SAID_MAX)
			fr.nsteptime++;
		te_strlcpy(fr.steptime, r->text, sizeof(fr.steptime));
		return;
	}
	/* the exit watchdog counts every exit; a task that exited 0 is only
	 * sent for it (its node's first exit) and is no failure. A stall is
	 * one, and may be the first (the reason trainenv ends the step). */
	if (r->stalled) {
		te_exitwatch_stall(r, te_now_ms());
	} else {
		te_exitwatch_task_exit(r, te_now_ms());
		if (!r->signaled && r->value == 0)
			return;
		if (fr.nkept < TE_FAILREP_KEEP)
			fr.kept[fr.nkept++] = *r;
		if (failure_fn)
			failure_fn(r);
	}
	if (!fr.print_failures)
		return;
	hold_or_print(r);
}

static void conn_close(struct te_failrep_conn *c)
{
	close(c->fd);
	c->fd = -1;
	c->authed = 0;
	c->got = 0;
}

/* Reads what is there; closes on end, error or garbage. 1 if data came. */
static int conn_read(struct te_failrep_conn *c)
{
	ssize_t n = read(c->fd, c->buf + c->got, TE_FAILREP_LINE_MAX - c->got);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		conn_close(c);
		return n == 0;
	}
	c->got += (size_t)n;
	if (te_failrep_conn_take(c, fr.token, on_report, NULL) < 0)
		conn_close(c);
	return 1;
}

/* Accepts up to a batch. Returns 1 if any came, -1 when accepting must
 * pause (out of descriptors or memory). */
static int accept_some(void)
{
	int i, any = 0;

	for (i = 0; i < ACCEPT_BATCH; i++) {
		int slot = te_failrep_conn_slot(fr.conn, FR_CONNS), fd;

		if (slot < 0)
			return any; /* every slot is a sender: backlog */
		fd = accept4(fr.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return any;
			return -1; /* EMFILE, ENFILE, ENOBUFS, ENOMEM */
		}
		if (fr.conn[slot].fd >= 0)
			conn_close(&fr.conn[slot]); /* the oldest stranger */
		fr.conn[slot].fd = fd;
		fr.conn[slot].since = te_now_ms();
		any = 1;
	}
	return any;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* The listener's state across rounds, and one round's poll set. */
struct round {
	struct pollfd p[2 + FR_CONNS];
	int idx[2 + FR_CONNS]; /* a connection; -1 the port, -2 the wake */
	int np, open;
	int64_t now, wake_at;
	int64_t pause_until; /* accepting paused (out of descriptors) */
	int64_t drain_until, last_activity;
	int draining; /* finish asked: serve grace_ms more */
};

static void round_add(struct round *rd, int fd, int idx)
{
	rd->p[rd->np] = (struct pollfd){ .fd = fd, .events = POLLIN };
	rd->idx[rd->np++] = idx;
}

/* 1 when the held first reports are due out; else wakes for them. */
static int held_due(struct round *rd)
{
	if (!fr.nheld || fr.first_done)
		return 0;
	if (rd->now >= fr.first_at + HOLD_MS)
		return 1;
	rd->wake_at = min64(rd->wake_at, fr.first_at + HOLD_MS);
	return 0;
}

/* The connections to read, the expired ones closed. */
static void round_conns(struct round *rd)
{
	int i;

	for (i = 0; i < FR_CONNS; i++) {
		struct te_failrep_conn *c = &fr.conn[i];

		if (c->fd < 0)
			continue;
		if (te_failrep_conn_expired(c, rd->now)) {
			/* what came meanwhile is read first: a report
			 * sent in time counts, however busy this
			 * thread was (its token makes it a sender,
			 * who may stay longer) */
			conn_read(c);
			if (c->fd >= 0 && te_failrep_conn_expired(c, rd->now))
				conn_close(c);
			if (c->fd < 0)
				continue;
		}
		rd->open++;
		rd->wake_at =
			min64(rd->wake_at,
			      c->since + (c->authed ? TE_FAILREP_AUTHED_MS
						    : TE_FAILREP_CONN_MS));
		round_add(rd, c->fd, i);
	}
}

/* 1 when a timer at due (0: none) is due, unless the finish drains;
 * else the round wakes for it: the exit watchdog, the stragglers'
 * window. */
static int timer_due(struct round *rd, int64_t due)
{
	if (rd->draining || !due)
		return 0;
	if (rd->now >= due)
		return 1;
	rd->wake_at = min64(rd->wake_at, due);
	return 0;
}

/* 1 when the finish's drain is over: bounded whatever others do; early
 * once all is quiet. */
static int drain_over(struct round *rd)
{
	if (!rd->draining)
		return 0;
	if (rd->now >= rd->drain_until ||
	    (!rd->open && rd->now - rd->last_activity >= QUIET_MS))
		return 1;
	rd->wake_at = min64(rd->wake_at, min64(rd->drain_until,
					       rd->last_activity + QUIET_MS));
	return 0;
}

/* The port (unless paused or every slot is a sender's) and the wake. */
static void round_listen(struct round *rd)
{
	int full = te_failrep_conn_slot(fr.conn, FR_CONNS) < 0;

	if (rd->now >= rd->pause_until && !full) {
		round_add(rd, fr.lfd, -1);
	} else if (rd->now < rd->pause_until) {
		rd->wake_at = min64(rd->wake_at, rd->pause_until);
	}
	if (!rd->draining) {
		round_add(rd, fr.wake[0], -2);
	}
}

/* What poll found; 1 if anything came. */
static int round_serve(struct round *rd)
{
	int i, any = 0;

	/* reads first: a sender shows its token before strangers
	 * accepted in this round could push it out */
	for (i = 0; i < rd->np; i++)
		if (rd->idx[i] >= 0 &&
		    (rd->p[i].revents & (POLLIN | POLLHUP | POLLERR)))
			any |= conn_read(&fr.conn[rd->idx[i]]);
	for (i = 0; i < rd->np; i++) {
		if (rd->idx[i] == -1 && (rd->p[i].revents & POLLIN)) {
			int a = accept_some();

			if (a < 0)
				rd->pause_until = te_now_ms() + ACCEPT_PAUSE_MS;
			any |= a > 0;
		}
		if (rd->idx[i] == -2 &&
		    (rd->p[i].revents & (POLLIN | POLLHUP))) {
			rd->draining = 1;
			rd->drain_until =
				te_now_ms() +
				__atomic_load_n(&fr.grace_ms, __ATOMIC_ACQUIRE);
			any = 1;
		}
	}
	return any;
}

static void *listener(void *arg)
{
	struct round rd = { .last_activity = te_now_ms() };
	sigset_t all;
	int i;

	(void)arg;
	/* srun's signal thread must receive every signal, not us */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		int rc;

		rd.now = te_now_ms();
		rd.wake_at = rd.now + 60000;
		rd.np = rd.open = 0;
		/* the report's process is reaped within a second of its end
		 * (exit-action=report: the step goes on, srun too) */
		if (te_exitwatch_reap())
			rd.wake_at = rd.now + 1000;

		if (held_due(&rd)) {
			flush_held();
			continue;
		}
		round_conns(&rd);
		if (timer_due(&rd, te_srun_strag_due())) {
			te_srun_strag_close(rd.now);
			continue;
		}
		if (timer_due(&rd, te_exitwatch_due())) {
			te_exitwatch_fire(rd.now);
			continue;
		}
		if (drain_over(&rd))
			break;
		round_listen(&rd);
		rc = poll(rd.p, (nfds_t)rd.np,
			  (int)(rd.wake_at > rd.now ? rd.wake_at - rd.now : 0));
		if (rc < 0 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		if (round_serve(&rd))
			rd.last_activity = te_now_ms();
	}
	for (i = 0; i < FR_CONNS; i++)
		if (fr.conn[i].fd >= 0)
			conn_close(&fr.conn[i]);
	return NULL;
}

/* Binds fd to a port in lo..hi (0..0: any), starting at a random one so
 * that two sruns on the host do not race for the same. */
static int bind_in_range(int fd, int family, uint16_t lo, uint16_t hi)
{
	uint32_t span = lo ? (uint32_t)hi - lo + 1 : 1, start = 0, k;

	if (te_random_bytes(&start, sizeof(start)) < 0)
		start = (uint32_t)getpid();
	for (k = 0; k < span; k++) {
		uint16_t port = lo ? (uint16_t)(lo + (start + k) % span) : 0;
		struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
					   .sin6_port = htons(port) };
		struct sockaddr_in a4 = { .sin_family = AF_INET,
					  .sin_port = htons(port) };
		int rc = family == AF_INET6
				 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6))
				 : bind(fd, (struct sockaddr *)&a4, sizeof(a4));

		if (rc == 0)
			return 0;
		if (errno != EADDRINUSE && errno != EACCES)
			return -1;
	}
	errno = EADDRINUSE;
	return -1;
}

static int open_listener(int family, uint16_t lo, uint16_t hi)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int zero = 0;

	if (fd < 0)
		return -1;
	/* Dual-stack when possible: SLURM_SRUN_COMM_HOST may be either. */
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind_in_range(fd, family, lo, hi) < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int te_failrep_listen(uint16_t lo, uint16_t hi, int print_failures,
		      char *envval, size_t envlen, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t alen = sizeof(ss);
	uint16_t port;
	int i;

	if (te_random_hex(fr.token, sizeof(fr.token), TE_FAILREP_TOKEN_LEN) < 0)
		return te_err(err, errlen, "getrandom: %s", strerror(errno));
	for (i = 0; i < FR_CONNS; i++)
		fr.conn[i].fd = -1;
	fr.print_failures = print_failures;
	fr.lfd = open_listener(AF_INET6, lo, hi);
	if (fr.lfd < 0)
		fr.lfd = open_listener(AF_INET, lo, hi);
	if (fr.lfd < 0) {
		if (lo)
			te_snprintf(err, errlen,
				    "no free port in SrunPortRange "
				    "%u-%u: %s",
				    lo, hi, strerror(errno));
		else
			te_snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	if (listen(fr.lfd, 512) < 0) {
		te_snprintf(err, errlen, "listen: %s", strerror(errno));
		goto fail;
	}
	if (getsockname(fr.lfd, (struct sockaddr *)&ss, &alen) < 0) {
		te_snprintf(err, errlen, "getsockname: %s", strerror(errno));
		goto fail;
	}
	port = ntohs(ss.ss_family == AF_INET6
			     ? ((struct sockaddr_in6 *)&ss)->sin6_port
			     : ((struct sockaddr_in *)&ss)->sin_port);
	if (pipe2(fr.wake, O_CLOEXEC) < 0) {
		te_snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (pthread_create(&fr.thread, NULL, listener, NULL) != 0) {
		te_snprintf(err, errlen, "cannot start the report thread");
		goto fail;
	}
	fr.running = 1;
	te_snprintf(envval, envlen, "%u:%s", port, fr.token);
	return 0;
fail:
	if (fr.lfd >= 0)
		close(fr.lfd);
	fr.lfd = -1;
	for (i = 0; i < 2; i++)
		if (fr.wake[i] >= 0)
			close(fr.wake[i]);
	fr.wake[0] = fr.wake[1] = -1;
	return -1;
}

void te_failrep_finish(int grace_ms)
{
	if (!fr.running)
		return;
	/* Reports sent just before the step ended may still be on their
	 * way: the thread serves them for at most grace_ms more, then ends,
	 * however many connections strangers hold. */
	__atomic_store_n(&fr.grace_ms, grace_ms, __ATOMIC_RELEASE);
	close(fr.wake[1]);
	fr.wake[1] = -1;
	pthread_join(fr.thread, NULL);
	fr.running = 0;
	te_exitwatch_disarm();
	flush_held();
	if (fr.dropped) {
		char line[128];

		te_snprintf(line, sizeof(line), "... and %d more failed tasks",
			    fr.dropped);
		print_line(line);
	}
	close(fr.lfd);
	close(fr.wake[0]);
	fr.lfd = fr.wake[0] = -1;
}

int te_failrep_failed(struct te_failrep *first)
{
	if (fr.have_first)
		*first = fr.first;
	return fr.printed + fr.dropped;
}

int te_failrep_list(struct te_failrep *out, int max)
{
	int n = fr.nkept < max ? fr.nkept : max;

	memcpy(out, fr.kept, (size_t)n * sizeof(out[0]));
	return n;
}

const char *te_failrep_steptime(void)
{
	return fr.nsteptime ? fr.steptime : NULL;
}

int te_failrep_health(const struct te_failrep **health)
{
	*health = fr.health;
	return fr.nhealth;
}

int te_failrep_launch(struct te_launch_skew *launch, int64_t *at_ms)
{
	if (fr.has_launch) {
		*launch = fr.launch;
		*at_ms = fr.launch_at_ms;
	}
	return fr.has_launch;
}
