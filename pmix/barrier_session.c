/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier's PMIx session: PMIx_Init and the job's facts, put, get and
 * commit, the non-blocking fence and get with their callbacks (from PMIx's
 * progress thread), commit and finalize with a bound on their wait, and
 * the epoll set and wake pipe the barriers share. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "barrier_int.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"

/* ---------------------------------------------------------------- callbacks
 * PMIx calls these from its progress thread. A generation number in cbdata
 * ties each callback to the operation that asked for it: a callback of an
 * abandoned operation (deadline passed) is ignored, and the wake pipe is
 * only written while its operation still owns it. */

static pthread_mutex_t cb_mu = PTHREAD_MUTEX_INITIALIZER;
/* A waiter with nothing but the fence to watch sleeps on this instead of
 * the pipe and epoll: the fast path of a later barrier costs what a
 * blocking PMIx_Fence costs. */
static pthread_cond_t cb_cv = PTHREAD_COND_INITIALIZER;
static struct {
	uintptr_t fence_gen, get_gen, next_gen;
	int cv_waiting;
	int pipe_dirty; /* something written since the last drain */
	int wake_fd;
	int fence_done, get_done;
	pmix_status_t fence_st, get_st;
	char get_val[512];
} cb = { .wake_fd = -1 };

static void wake_locked(void)
{
	char c = 1;

	if (cb.cv_waiting) {
		pthread_cond_signal(&cb_cv);
		return;
	}
	if (cb.wake_fd < 0)
		return;
	cb.pipe_dirty = 1;
	if (write(cb.wake_fd, &c, 1) < 0) {
		/* the pipe is full: the waiter is awake anyway */
	}
}

static void fence_cb(pmix_status_t st, void *cbdata)
{
	pthread_mutex_lock(&cb_mu);
	if ((uintptr_t)cbdata == cb.fence_gen) {
		cb.fence_done = 1;
		cb.fence_st = st;
		wake_locked();
	}
	pthread_mutex_unlock(&cb_mu);
}

static void get_cb(pmix_status_t st, pmix_value_t *kv, void *cbdata)
{
	pthread_mutex_lock(&cb_mu);
	if ((uintptr_t)cbdata == cb.get_gen) {
		cb.get_done = 1;
		cb.get_st = st;
		cb.get_val[0] = '\0';
		if (st == PMIX_SUCCESS) {
			if (kv && kv->type == PMIX_STRING && kv->data.string &&
			    te_strlcpy(cb.get_val, kv->data.string,
				       sizeof(cb.get_val)) < sizeof(cb.get_val))
				;
			else
				cb.get_st = PMIX_ERR_BAD_PARAM;
		}
		wake_locked();
	}
	pthread_mutex_unlock(&cb_mu);
	if (kv)
		PMIX_VALUE_RELEASE(kv);
}

void te_bsess_cb_attach(int wake_fd)
{
	pthread_mutex_lock(&cb_mu);
	cb.wake_fd = wake_fd;
	pthread_mutex_unlock(&cb_mu);
}

/* Forgets pending operations and the pipe: nothing is written to the fd
 * once this returns. */
void te_bsess_cb_detach(void)
{
	pthread_mutex_lock(&cb_mu);
	cb.wake_fd = -1;
	cb.fence_gen = ++cb.next_gen;
	cb.get_gen = ++cb.next_gen;
	pthread_mutex_unlock(&cb_mu);
}

int te_bsess_start_fence(int collect, char *err, size_t errlen)
{
	static pmix_info_t info; /* packed by PMIx before return */
	bool c = true;
	uintptr_t gen;
	pmix_status_t rc;

	pthread_mutex_lock(&cb_mu);
	gen = cb.fence_gen = ++cb.next_gen;
	cb.fence_done = 0;
	pthread_mutex_unlock(&cb_mu);
	/* no info at all for a fence without data: Slurm takes the mere
	 * presence of PMIX_COLLECT_DATA for "collect" (and the fast path
	 * of a held session loads none) */
	if (collect)
		PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &c, PMIX_BOOL);
	rc = PMIx_Fence_nb(NULL, 0, collect ? &info : NULL, collect ? 1 : 0,
			   fence_cb, (void *)gen);
	if (collect)
		PMIX_INFO_DESTRUCT(&info);
	if (rc == PMIX_OPERATION_SUCCEEDED) {
		pthread_mutex_lock(&cb_mu);
		cb.fence_done = 1;
		cb.fence_st = PMIX_SUCCESS;
		pthread_mutex_unlock(&cb_mu);
		return 0;
	}
	if (rc != PMIX_SUCCESS)
		return te_err(err, errlen, "PMIx_Fence_nb: %s",
			      PMIx_Error_string(rc));
	return 0;
}

int te_bsess_start_get(struct te_pmix *p, uint32_t rank, const char *key,
		       int refresh)
{
	static pmix_info_t info;
	pmix_proc_t proc;
	bool t = true;
	uintptr_t gen;
	pmix_status_t rc;

	pthread_mutex_lock(&cb_mu);
	gen = cb.get_gen = ++cb.next_gen;
	cb.get_done = 0;
	pthread_mutex_unlock(&cb_mu);
	PMIX_LOAD_PROCID(&proc, p->me.nspace, rank);
	PMIX_INFO_LOAD(&info, PMIX_GET_REFRESH_CACHE, &t, PMIX_BOOL);
	rc = PMIx_Get_nb(&proc, key, refresh ? &info : NULL, refresh ? 1 : 0,
			 get_cb, (void *)gen);
	PMIX_INFO_DESTRUCT(&info);
	return rc == PMIX_SUCCESS ? 0 : -1;
}

/* CLOCK_MONOTONIC's time ms milliseconds from now (for the waits below). */
static struct timespec monotonic_in(int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* ---------------------------------------------------------------- server calls
 * PMIx_Commit and PMIx_Finalize wait for this node's PMIx server, and
 * Slurm's (mpi/pmix in slurmstepd) can stop answering for a minute: it
 * retries a send to a node whose step already ended (a rank that exited
 * early) on the thread that also serves this node's clients. A barrier's
 * deadline must hold anyway, so these calls run on one long-lived worker
 * thread of this process and the caller waits for them only
 * SERVER_WAIT_MS; one still running finishes by itself (the request is on
 * its way to the server). One thread, started at the first call, not one
 * per call: creating a thread cost a barrier more than its commit did.
 * The worker runs the calls in the order asked, so a finalize waits for a
 * commit the server has not answered; while either is unfinished no new
 * session opens (te_pmix_open). */

#define SERVER_WAIT_MS 500

/* Under cb_mu. A request is a number: the worker has answered every
 * request up to *_done; requests that queue behind a running commit are
 * answered by one later commit (it commits whatever was put before). */
static struct {
	int running; /* the thread exists in this process */
	pid_t pid;   /* ... whose pid this is (a fork has no thread) */
	unsigned long commit_asked, commit_done, fin_asked, fin_done;
	pmix_status_t commit_st, fin_st;
} worker;
static pthread_cond_t worker_cv = PTHREAD_COND_INITIALIZER; /* work */
static pthread_cond_t call_cv = PTHREAD_COND_INITIALIZER;   /* answers */

/* Only the process that started the worker has one: a child forked while
 * a call was unfinished inherits the counters, not the thread, and its
 * first call starts its own worker (worker_start_locked). */
static int worker_pending_locked(void)
{
	return worker.running && worker.pid == getpid() &&
	       (worker.commit_done != worker.commit_asked ||
		worker.fin_done != worker.fin_asked);
}

/* 0: none; else what the worker has not finished: 'c' a commit, 'f' a
 * finalize. */
static int worker_pending(void)
{
	int what = 0;

	pthread_mutex_lock(&cb_mu);
	if (worker_pending_locked())
		what = worker.commit_done != worker.commit_asked ? 'c' : 'f';
	pthread_mutex_unlock(&cb_mu);
	return what;
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cb_mu);
	for (;;) {
		unsigned long target;
		pmix_status_t st;

		while (worker.commit_done == worker.commit_asked &&
		       worker.fin_done == worker.fin_asked)
			pthread_cond_wait(&worker_cv, &cb_mu);
		if (worker.commit_done != worker.commit_asked) {
			target = worker.commit_asked;
			pthread_mutex_unlock(&cb_mu);
			st = PMIx_Commit();
			pthread_mutex_lock(&cb_mu);
			worker.commit_st = st;
			worker.commit_done = target;
		} else {
			target = worker.fin_asked;
			pthread_mutex_unlock(&cb_mu);
			st = PMIx_Finalize(NULL, 0);
			pthread_mutex_lock(&cb_mu);
			worker.fin_st = st;
			worker.fin_done = target;
		}
		pthread_cond_broadcast(&call_cv);
	}
	return NULL;
}

/* Under cb_mu: the worker, started once per process. 0, or -1. */
static int worker_start_locked(void)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int rc;

	if (worker.running && worker.pid == getpid())
		return 0;
	memset(&worker, 0, sizeof(worker)); /* none, or the parent's */
	/* the program's signals stay with the program's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_attr_init(&attr);
	if (rc == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &attr, worker_main, NULL);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	worker.running = 1;
	worker.pid = getpid();
	return 0;
}

/* The call, waited for up to ms: 1 (its status in *st), or 0 when it still
 * runs. Without a worker it runs here, unbounded, as before. */
static int server_call(int finalize, int ms, pmix_status_t *st)
{
	struct timespec ts = monotonic_in(ms);
	unsigned long mine, *done;
	int answered;

	pthread_mutex_lock(&cb_mu);
	if (worker_start_locked() < 0) {
		pthread_mutex_unlock(&cb_mu);
		*st = finalize ? PMIx_Finalize(NULL, 0) : PMIx_Commit();
		return 1;
	}
	if (finalize) {
		mine = ++worker.fin_asked;
		done = &worker.fin_done;
	} else {
		mine = ++worker.commit_asked;
		done = &worker.commit_done;
	}
	pthread_cond_signal(&worker_cv);
	while (*done < mine &&
	       pthread_cond_clockwait(&call_cv, &cb_mu, CLOCK_MONOTONIC, &ts) !=
		       ETIMEDOUT)
		;
	answered = *done >= mine;
	*st = finalize ? worker.fin_st : worker.commit_st;
	pthread_mutex_unlock(&cb_mu);
	return answered;
}

/* ---------------------------------------------------------------- session */

int te_pmix_open(struct te_pmix *p, char *err, size_t errlen)
{
	pmix_proc_t wild;
	pmix_value_t *val = NULL;
	pmix_status_t rc;
	int pending;

	memset(p, 0, sizeof(*p));
	/* A commit or finalize of the last session still waits for the
	 * server: a new session's PMIx_Init would run beside it. */
	pending = worker_pending();
	if (pending)
		return te_err(err, errlen,
			      "PMIx: this node's PMIx server has "
			      "not answered the last session's %s "
			      "(its server thread is busy, e.g. Slurm's "
			      "mpi/pmix retrying a node whose step ended)",
			      pending == 'c' ? "PMIx_Commit" : "PMIx_Finalize");
	rc = PMIx_Init(&p->me, NULL, 0);
	if (rc != PMIX_SUCCESS)
		return te_err(err, errlen, "PMIx_Init: %s",
			      PMIx_Error_string(rc));
	p->open = 1;
	PMIX_LOAD_PROCID(&wild, p->me.nspace, PMIX_RANK_WILDCARD);
	rc = PMIx_Get(&wild, PMIX_JOB_SIZE, NULL, 0, &val);
	if (rc != PMIX_SUCCESS || !val || val->type != PMIX_UINT32 ||
	    val->data.uint32 == 0 || p->me.rank >= val->data.uint32) {
		te_snprintf(err, errlen, "PMIx: no usable job size (%s)",
			    PMIx_Error_string(rc));
		if (val)
			PMIX_VALUE_RELEASE(val);
		te_pmix_close(p);
		return -1;
	}
	p->size = val->data.uint32;
	PMIX_VALUE_RELEASE(val);
	val = NULL;
	p->nlocal = -1;
	if (PMIx_Get(&wild, PMIX_LOCAL_PEERS, NULL, 0, &val) == PMIX_SUCCESS &&
	    val && val->type == PMIX_STRING && val->data.string)
		p->nlocal = te_rank_list_parse(val->data.string, p->size,
					       p->local_peers,
					       TE_LOCAL_PEERS_MAX);
	if (val)
		PMIX_VALUE_RELEASE(val);
	if (te_pmix_host_of(p, p->me.rank, p->host, sizeof(p->host)) < 0 &&
	    (gethostname(p->host, sizeof(p->host)) < 0 ||
	     (p->host[sizeof(p->host) - 1] = '\0', !te_host_valid(p->host))))
		te_strlcpy(p->host, "unknown", sizeof(p->host));
	return 0;
}

static void loop_close(void);

void te_pmix_close_start(struct te_pmix *p)
{
	pmix_status_t st;

	if (!p->open || p->closing)
		return;
	te_bsess_cb_detach();
	p->closing = 1;
	server_call(1, 0, &st); /* without a worker: here, as before */
}

/* The finalize te_pmix_close_start asked for, waited for up to ms. */
static void finalize_wait(int ms)
{
	struct timespec ts = monotonic_in(ms);

	pthread_mutex_lock(&cb_mu);
	while (worker_pending_locked() &&
	       pthread_cond_clockwait(&call_cv, &cb_mu, CLOCK_MONOTONIC, &ts) !=
		       ETIMEDOUT)
		;
	pthread_mutex_unlock(&cb_mu);
}

void te_pmix_close(struct te_pmix *p)
{
	if (!p->open)
		return;
	te_bsess_cb_detach();
	if (p->closing) {
		/* asked for already: waited for as one behind a commit */
		finalize_wait(SERVER_WAIT_MS);
	} else if (worker_pending()) {
		pmix_status_t st;

		/* the server is not answering: its finalize would wait with
		 * it, so it goes to the worker, behind the commit, and
		 * finishes on its own (te_pmix_open waits for both) */
		server_call(1, SERVER_WAIT_MS, &st);
	} else {
		PMIx_Finalize(NULL, 0);
	}
	loop_close();
	p->open = 0;
	p->closing = 0;
}

int te_pmix_host_of(struct te_pmix *p, uint32_t rank, char *host, size_t len)
{
	pmix_proc_t proc;
	pmix_value_t *val = NULL;
	pmix_status_t rc;
	int ok;

	PMIX_LOAD_PROCID(&proc, p->me.nspace, rank);
	rc = PMIx_Get(&proc, PMIX_HOSTNAME, NULL, 0, &val);
	ok = rc == PMIX_SUCCESS && val && val->type == PMIX_STRING &&
	     val->data.string && te_host_valid(val->data.string) &&
	     te_strlcpy(host, val->data.string, len) < len;
	if (val)
		PMIX_VALUE_RELEASE(val);
	if (!ok && len)
		host[0] = '\0';
	return ok ? 0 : -1;
}

int te_pmix_put(struct te_pmix *p, const char *key, const char *val, char *err,
		size_t errlen)
{
	pmix_value_t v;
	pmix_status_t rc;

	v.type = PMIX_STRING;
	v.data.string = (char *)val;
	rc = PMIx_Put(PMIX_GLOBAL, key, &v);
	if (rc != PMIX_SUCCESS)
		return te_err(err, errlen, "PMIx_Put(%s): %s", key,
			      PMIx_Error_string(rc));
	return 0;
}

int te_pmix_commit(struct te_pmix *p, char *err, size_t errlen)
{
	pmix_status_t rc;

	if (!server_call(0, SERVER_WAIT_MS, &rc)) {
		/* it goes on by itself; the caller's deadline stands */
		if (!p->commit_slow_since)
			p->commit_slow_since = te_now_ms() - SERVER_WAIT_MS;
		return 0;
	}
	if (rc != PMIX_SUCCESS)
		return te_err(err, errlen, "PMIx_Commit: %s",
			      PMIx_Error_string(rc));
	p->commit_slow_since = 0;
	return 0;
}

int64_t te_pmix_server_silent_ms(struct te_pmix *p)
{
	if (!p->commit_slow_since || worker_pending() != 'c')
		return 0;
	return te_now_ms() - p->commit_slow_since;
}

int te_pmix_get(struct te_pmix *p, uint32_t rank, const char *key,
		int immediate, char *out, size_t len)
{
	pmix_proc_t proc;
	pmix_value_t *val = NULL;
	pmix_info_t info;
	bool t = true;
	pmix_status_t rc;
	int ok;

	PMIX_LOAD_PROCID(&proc, p->me.nspace, rank);
	PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &t, PMIX_BOOL);
	rc = PMIx_Get(&proc, key, immediate ? &info : NULL, immediate ? 1 : 0,
		      &val);
	PMIX_INFO_DESTRUCT(&info);
	ok = rc == PMIX_SUCCESS && val && val->type == PMIX_STRING &&
	     val->data.string && te_strlcpy(out, val->data.string, len) < len;
	if (val)
		PMIX_VALUE_RELEASE(val);
	if (!ok && len)
		out[0] = '\0';
	return ok ? 0 : -1;
}

/* Waits on the wake pipe until cond() or the deadline. */
static int wait_pipe(int fd, int64_t deadline)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int64_t left = deadline - te_now_ms();
	char buf[64];

	if (left <= 0)
		return 0;
	if (poll(&pf, 1, left > 1000 ? 1000 : (int)left) > 0 &&
	    read(fd, buf, sizeof(buf)) < 0) {
		/* spurious: the loop checks again */
	}
	return 1;
}

int te_pmix_get_wait(struct te_pmix *p, uint32_t rank, const char *key,
		     int timeout_ms, char *out, size_t len, int *timed_out,
		     char *err, size_t errlen)
{
	int64_t deadline = te_now_ms() + timeout_ms;
	int wake[2], rc = -1;

	*timed_out = 0;
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0)
		return te_err(err, errlen, "pipe: %s", strerror(errno));
	te_bsess_cb_attach(wake[1]);
	if (te_bsess_start_get(p, rank, key, 0) < 0) {
		te_snprintf(err, errlen, "PMIx_Get_nb failed");
		goto out;
	}
	for (;;) {
		int done;
		pmix_status_t st;

		pthread_mutex_lock(&cb_mu);
		done = cb.get_done;
		st = cb.get_st;
		if (done && st == PMIX_SUCCESS &&
		    te_strlcpy(out, cb.get_val, len) >= len)
			st = PMIX_ERR_BAD_PARAM;
		pthread_mutex_unlock(&cb_mu);
		if (done) {
			if (st == PMIX_SUCCESS)
				rc = 0;
			else
				te_snprintf(err, errlen, "%s",
					    PMIx_Error_string(st));
			break;
		}
		if (!wait_pipe(wake[0], deadline)) {
			*timed_out = 1;
			te_snprintf(err, errlen, "no answer within %d s",
				    (timeout_ms + 999) / 1000);
			break;
		}
	}
out:
	te_bsess_cb_detach();
	close(wake[0]);
	close(wake[1]);
	return rc;
}

int te_local_quiesce(const struct te_pmix *p, const char *tmpdir, unsigned gen,
		     int timeout_ms)
{
	int64_t deadline = te_now_ms() + timeout_ms;
	char path[600];
	int i, fd, wait = 1;

	if (p->nlocal <= 1 || !te_private_dir_ok(tmpdir))
		return 0;
	if (gen > 0 &&
	    te_snprintf(path, sizeof(path), "%s/trainenv-closed.%u.%u", tmpdir,
			gen - 1, p->me.rank) == 0)
		unlink(path); /* the previous generation's mark */
	if (te_snprintf(path, sizeof(path), "%s/trainenv-closed.%u.%u", tmpdir,
			gen, p->me.rank) < 0)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	for (i = 0; i < p->nlocal;) {
		struct stat st;

		if (p->local_peers[i] == p->me.rank ||
		    (te_snprintf(path, sizeof(path), "%s/trainenv-closed.%u.%u",
				 tmpdir, gen, p->local_peers[i]) == 0 &&
		     lstat(path, &st) == 0)) {
			i++;
			continue;
		}
		if (te_now_ms() >= deadline)
			return -1;
		usleep((useconds_t)wait * 1000);
		if (wait < 16)
			wait *= 2;
	}
	return 0;
}

/* ---------------------------------------------------------------- loop fds
 * The epoll set and the wake pipe of the barriers of one PMIx session: made
 * once, not per barrier (the fast path of a held session is then little
 * more than the fence). Closed with the session. */

static int loop_ep = -1, loop_wake[2] = { -1, -1 };

static int loop_open(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0 };

	if (loop_ep >= 0)
		return 0;
	loop_ep = epoll_create1(EPOLL_CLOEXEC);
	if (loop_ep < 0)
		return -1;
	if (pipe2(loop_wake, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    epoll_ctl(loop_ep, EPOLL_CTL_ADD, loop_wake[0], &ev) < 0) {
		close(loop_ep);
		loop_ep = -1;
		if (loop_wake[0] >= 0) {
			close(loop_wake[0]);
			close(loop_wake[1]);
		}
		loop_wake[0] = loop_wake[1] = -1;
		return -1;
	}
	return 0;
}

static void loop_close(void)
{
	if (loop_ep < 0)
		return;
	close(loop_ep);
	close(loop_wake[0]);
	close(loop_wake[1]);
	loop_ep = loop_wake[0] = loop_wake[1] = -1;
}

/* ---------------------------------------------------------------- wait */

/* Sleeps until the fence's callback or ms milliseconds (the caller's
 * loop looks again either way). */
void te_bsess_fence_sleep(int ms)
{
	struct timespec ts;

	ts = monotonic_in(ms);
	pthread_mutex_lock(&cb_mu);
	if (!cb.fence_done) {
		cb.cv_waiting = 1;
		pthread_cond_clockwait(&cb_cv, &cb_mu, CLOCK_MONOTONIC, &ts);
		cb.cv_waiting = 0;
	}
	pthread_mutex_unlock(&cb_mu);
}

int te_bsess_get_take(pmix_status_t *st, char *text, size_t len)
{
	int done;

	pthread_mutex_lock(&cb_mu);
	done = cb.get_done;
	*st = cb.get_st;
	te_strlcpy(text, cb.get_val, len);
	pthread_mutex_unlock(&cb_mu);
	return done;
}

int te_bsess_loop_attach(int *epfd, int wake[2])
{
	char buf[64];

	if (loop_open() < 0)
		return -1;
	*epfd = loop_ep;
	wake[0] = loop_wake[0];
	wake[1] = loop_wake[1];
	pthread_mutex_lock(&cb_mu);
	if (cb.pipe_dirty) /* left from an abandoned operation */
		while (read(wake[0], buf, sizeof(buf)) > 0)
			;
	cb.pipe_dirty = 0;
	pthread_mutex_unlock(&cb_mu);
	return 0;
}

int te_bsess_fence_state(pmix_status_t *st)
{
	int done;

	pthread_mutex_lock(&cb_mu);
	done = cb.fence_done;
	*st = cb.fence_st;
	pthread_mutex_unlock(&cb_mu);
	return done;
}
