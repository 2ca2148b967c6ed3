#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "coord_conns.h"
#include "netinfo.h"
#include "rdzv_proto.h"
#include "strutil.h"

#define COORD_KEY_FMT "te.coord.%u"
#define COORD_FILE_FMT "%s/trainenv-coord.%u"
#define STATUS_WAIT_MS 1000	/* a rank's own deadline: ask rank 0 */
/* rank 0 left: is our fence done anyway? Also how long a helper goes on
 * trying while every try is refused (nobody listens any more) */
#define GONE_GRACE_MS 3000
#define ALIVE_CHECK_MS 200	/* are the waiting followers still there? */
#define HELPER_GONE_WHY "its node's rendezvous helper went away before " \
	"every rank arrived"
#define TASK_GONE_WHY "its task ended while waiting at the barrier"

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
	int pipe_dirty;		/* something written since the last drain */
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

static void cb_attach(int wake_fd)
{
	pthread_mutex_lock(&cb_mu);
	cb.wake_fd = wake_fd;
	pthread_mutex_unlock(&cb_mu);
}

/* Forgets pending operations and the pipe: nothing is written to the fd
 * once this returns. */
static void cb_detach(void)
{
	pthread_mutex_lock(&cb_mu);
	cb.wake_fd = -1;
	cb.fence_gen = ++cb.next_gen;
	cb.get_gen = ++cb.next_gen;
	pthread_mutex_unlock(&cb_mu);
}

static int start_fence(int collect, char *err, size_t errlen)
{
	static pmix_info_t info;	/* packed by PMIx before return */
	bool c = true;
	uintptr_t gen;
	pmix_status_t rc;

	pthread_mutex_lock(&cb_mu);
	gen = cb.fence_gen = ++cb.next_gen;
	cb.fence_done = 0;
	pthread_mutex_unlock(&cb_mu);
	PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &c, PMIX_BOOL);
	/* no info at all for a fence without data: Slurm takes the mere
	 * presence of PMIX_COLLECT_DATA for "collect" */
	rc = PMIx_Fence_nb(NULL, 0, collect ? &info : NULL, collect ? 1 : 0,
			   fence_cb, (void *)gen);
	PMIX_INFO_DESTRUCT(&info);
	if (rc == PMIX_OPERATION_SUCCEEDED) {
		pthread_mutex_lock(&cb_mu);
		cb.fence_done = 1;
		cb.fence_st = PMIX_SUCCESS;
		pthread_mutex_unlock(&cb_mu);
		return 0;
	}
	if (rc != PMIX_SUCCESS) {
		te_snprintf(err, errlen, "PMIx_Fence_nb: %s",
			    PMIx_Error_string(rc));
		return -1;
	}
	return 0;
}

static int start_get(struct te_pmix *p, uint32_t rank, const char *key,
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

/* ---------------------------------------------------------------- session */

int te_pmix_open(struct te_pmix *p, char *err, size_t errlen)
{
	pmix_proc_t wild;
	pmix_value_t *val = NULL;
	pmix_status_t rc;

	memset(p, 0, sizeof(*p));
	rc = PMIx_Init(&p->me, NULL, 0);
	if (rc != PMIX_SUCCESS) {
		te_snprintf(err, errlen, "PMIx_Init: %s", PMIx_Error_string(rc));
		return -1;
	}
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

void te_pmix_close(struct te_pmix *p)
{
	if (!p->open)
		return;
	cb_detach();
	PMIx_Finalize(NULL, 0);
	loop_close();
	p->open = 0;
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

int te_pmix_put(struct te_pmix *p, const char *key, const char *val,
		char *err, size_t errlen)
{
	pmix_value_t v;
	pmix_status_t rc;

	v.type = PMIX_STRING;
	v.data.string = (char *)val;
	rc = PMIx_Put(PMIX_GLOBAL, key, &v);
	if (rc != PMIX_SUCCESS) {
		te_snprintf(err, errlen, "PMIx_Put(%s): %s", key,
			    PMIx_Error_string(rc));
		return -1;
	}
	return 0;
}

int te_pmix_commit(struct te_pmix *p, char *err, size_t errlen)
{
	pmix_status_t rc = PMIx_Commit();

	if (rc != PMIX_SUCCESS) {
		te_snprintf(err, errlen, "PMIx_Commit: %s",
			    PMIx_Error_string(rc));
		return -1;
	}
	return 0;
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
	int64_t left = deadline - now_ms();
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
	int64_t deadline = now_ms() + timeout_ms;
	int wake[2], rc = -1;

	*timed_out = 0;
	if (pipe2(wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		te_snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	cb_attach(wake[1]);
	if (start_get(p, rank, key, 0) < 0) {
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
	cb_detach();
	close(wake[0]);
	close(wake[1]);
	return rc;
}

int te_local_quiesce(const struct te_pmix *p, const char *tmpdir,
		     unsigned gen, int timeout_ms)
{
	int64_t deadline = now_ms() + timeout_ms;
	char path[600];
	int i, fd, wait = 1;

	if (p->nlocal <= 1 || !te_private_dir_ok(tmpdir))
		return 0;
	if (gen > 0 && te_snprintf(path, sizeof(path),
				   "%s/trainenv-closed.%u.%u", tmpdir, gen - 1,
				   p->me.rank) == 0)
		unlink(path);	/* the previous generation's mark */
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
		if (now_ms() >= deadline)
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

/* ---------------------------------------------------------------- barrier */

enum cstate {
	C_IDLE,		/* not registered (yet) */
	C_LOOKUP,	/* looking for rank 0's coordinator */
	C_CONNECTING,
	C_SENT,		/* registered, waiting */
	C_DONE,		/* rank 0 passed the barrier */
	C_GONE,		/* rank 0's coordinator went away */
	C_UNREACH,	/* found but cannot connect */
	C_RETRY,	/* refused or cut before an answer: tries again */
};

struct te_barrier {
	struct te_pmix *p;
	double timeout_s;
	int coordinated;
	unsigned seq;
	char tmpdir[512];
	char key[32];
	int64_t start, deadline;
	int lazy_ms;
	int epfd, wake[2];
	int fence_started;
	int collect;		/* the fence carries data (see prepare) */
	int dirty;		/* something put: commit before the fence */
	char coord_addr[64];	/* rank 0: where a lazy coordinator listens */
	int coord_due;		/* rank 0: start the coordinator when slow */
	/* the local ranks this process stands for (their arrival files) */
	uint32_t *followers;
	unsigned char *follower_here;	/* 1 arrived, 2 failed */
	size_t nfollowers, nfollowers_here;
	int64_t next_follower_check;
	int follower_wait;
	int64_t next_alive_check;
	int finishing;		/* rank 0 answers everyone: closes are ours */
	struct te_coord_req node;	/* this node's facts (coordinated) */
	char self_failed[TE_FAIL_TEXT_MAX + 1];	/* this rank failed: why */
	/* rank 0, a rank failed before the barrier: every node is answered
	 * "abort" with the report, and the wait ends once every node has
	 * been told (or at the deadline) */
	int aborting;
	char abort_text[TE_COORD_TEXT_MAX + 1];
	char (*hosts)[TE_HOST_MAX];	/* the job's nodes, once aborting */
	unsigned char *host_told;
	size_t nhosts, ntold;
	int hosts_known;
	int (*verdict)(void *, const struct te_coord_req *, size_t, char *,
		       size_t);
	void *verdict_ctx;
	/* rank 0 */
	int lfd;
	struct te_coord_info info;
	char coord_file[600];
	unsigned char *arrived;
	uint32_t narrived;
	struct te_coord_req *nodes;	/* node facts received */
	size_t nnodes, nodes_cap;
	struct te_coord_conns cc;	/* the helpers and the strangers */
	unsigned test_cut, test_cut_done;	/* test hook: to cut, cut */
	struct rlimit old_nofile;
	int nofile_raised;
	/* other ranks */
	enum cstate cs;
	char rank0_host[TE_HOST_MAX];
	int rank0_local;
	int64_t next_lookup;
	int backoff;
	int get_pending;
	int cfd;
	char cbuf[TE_COORD_LINE_MAX + 1];
	size_t clen;
	char *out;		/* lines queued for the coordinator */
	size_t outlen, outoff, outcap;
	int64_t gone_at;
	int refusing;		/* every try since refused_since refused */
	int64_t refused_since, next_retry;
	int retry_ms;
	char unreach[200];
	char rank0_text[TE_COORD_TEXT_MAX + 1];	/* "fail"/"reject"/"state" */
	int got_fail, got_state, got_reject, got_abort;
};

#define TAG_WAKE 0
#define TAG_LISTEN 1
#define TAG_CLIENT 2
#define TAG_CONN 3	/* + slot index */

int te_barrier_lazy_ms(double timeout_s)
{
	double ms = timeout_s * 100.0;	/* a tenth of the timeout */

	if (ms < 100)
		ms = 100;
	if (ms > 2000)
		ms = 2000;
	return (int)ms;
}

static int ep_add(struct te_barrier *b, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(b->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static const char *rank0_host(struct te_barrier *b)
{
	if (!b->rank0_host[0] &&
	    te_pmix_host_of(b->p, 0, b->rank0_host, sizeof(b->rank0_host)) < 0)
		te_strlcpy(b->rank0_host, "?", sizeof(b->rank0_host));
	return b->rank0_host;
}

/* Writes the coordinator's address for rank 0's node's peers: a private
 * file written whole, then renamed into place. */
static void write_coord_file(struct te_barrier *b, const char *text)
{
	char tmp[640];

	if (!b->tmpdir[0] ||
	    te_snprintf(b->coord_file, sizeof(b->coord_file), COORD_FILE_FMT,
			b->tmpdir, b->seq) < 0 ||
	    te_snprintf(tmp, sizeof(tmp), "%s.tmp%ld", b->coord_file,
			(long)getpid()) < 0 ||
	    te_replace_file(b->coord_file, tmp, text) < 0)
		b->coord_file[0] = '\0';
}

static int read_coord_file(struct te_barrier *b, char *out, size_t len)
{
	char path[600];
	ssize_t n;
	int fd;

	if (!b->tmpdir[0] ||
	    te_snprintf(path, sizeof(path), COORD_FILE_FMT, b->tmpdir, b->seq) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	n = read(fd, out, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

static void raise_nofile(struct te_barrier *b, rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	b->old_nofile = rl;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ?
			      want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		b->nofile_raised = 1;
}

static void mark_arrived(struct te_barrier *b, uint32_t rank)
{
	if (rank < b->p->size && !b->arrived[rank]) {
		b->arrived[rank] = 1;
		b->narrived++;
	}
}

static void add_node(struct te_barrier *b, const struct te_coord_req *q)
{
	size_t i;

	for (i = 0; i < b->nnodes; i++)
		if (b->nodes[i].rank == q->rank) {
			b->nodes[i] = *q;	/* a repeat: the latest wins */
			return;
		}
	if (b->nnodes == b->nodes_cap) {
		size_t cap = b->nodes_cap ? b->nodes_cap * 2 : 16;
		struct te_coord_req *n;

		if (cap > b->p->size)
			cap = b->p->size;
		if (cap <= b->nnodes ||
		    !(n = realloc(b->nodes, cap * sizeof(*n))))
			return;
		b->nodes = n;
		b->nodes_cap = cap;
	}
	b->nodes[b->nnodes++] = *q;
}

/* why a rank failed, fit for the wire: printable ASCII, never empty */
static void fail_text(char *dst, size_t size, const char *why)
{
	te_rdzv_clean_text(dst, size, why && *why ? why : "no reason given");
	if (strlen(dst) > TE_FAIL_TEXT_MAX)
		dst[TE_FAIL_TEXT_MAX] = '\0';
}

static void coord_rank_failed(struct te_barrier *b, uint32_t rank,
			      const char *host, const char *why);

static int coord_start(struct te_barrier *b, const char *addr, char *err,
		       size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	struct te_pmix *p = b->p;
	char text[256];
	int one = 1, v6 = strchr(addr, ':') != NULL;

	b->arrived = calloc(p->size, 1);
	/* one slot per waiting rank at most, and the strangers' pool */
	if (!b->arrived ||
	    te_cc_init(&b->cc, (size_t)p->size + 16, TE_COORD_POOL_MAX) < 0) {
		te_snprintf(err, errlen, "out of memory for %u ranks", p->size);
		return -1;
	}
	if (!b->self_failed[0])
		mark_arrived(b, 0);
	if (b->coordinated)
		add_node(b, &b->node);
	/* one descriptor per connection */
	raise_nofile(b, (rlim_t)b->cc.cap + 64);

	b->lfd = socket(v6 ? AF_INET6 : AF_INET,
			SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (b->lfd < 0) {
		te_snprintf(err, errlen, "coordinator socket: %s",
			    strerror(errno));
		return -1;
	}
	setsockopt(b->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		sl = sizeof(struct sockaddr_in6);
	} else {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		sl = sizeof(struct sockaddr_in);
	}
	if (bind(b->lfd, (struct sockaddr *)&ss, sl) < 0 ||
	    listen(b->lfd, 4096) < 0 ||
	    getsockname(b->lfd, (struct sockaddr *)&ss, &sl) < 0) {
		te_snprintf(err, errlen, "coordinator listen: %s",
			    strerror(errno));
		return -1;
	}
	te_strlcpy(b->info.addr, addr, sizeof(b->info.addr));
	b->info.port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
				  ((struct sockaddr_in *)&ss)->sin_port);
	if (te_random_token(b->info.token, sizeof(b->info.token)) < 0 ||
	    te_coord_info_format(text, sizeof(text), &b->info) < 0) {
		te_snprintf(err, errlen, "cannot make the coordinator token");
		return -1;
	}
	if (te_pmix_put(p, b->key, text, err, errlen) < 0)
		return -1;
	write_coord_file(b, text);
	if (b->self_failed[0])
		coord_rank_failed(b, 0, p->host, b->self_failed);
	return 0;
}

static int fence_ring = -1;

struct te_barrier *te_barrier_prepare(struct te_pmix *p,
				      const struct te_barrier_opts *o,
				      char *err, size_t errlen)
{
	struct te_barrier *b = calloc(1, sizeof(*b));
	const char *s;
	size_t i;

	if (!b) {
		te_snprintf(err, errlen, "out of memory");
		return NULL;
	}
	b->p = p;
	b->lfd = b->cfd = b->epfd = -1;
	b->wake[0] = b->wake[1] = -1;
	b->timeout_s = o->timeout_s;
	b->coordinated = o->coordinated;
	b->seq = o->seq;
	b->start = now_ms();
	b->deadline = b->start + (int64_t)(o->timeout_s * 1000.0);
	/* launch: register at once (the coordinator decides); later
	 * barriers: only when the fence is slow */
	b->lazy_ms = o->coordinated ? 0 : te_barrier_lazy_ms(o->timeout_s);
	b->verdict = o->verdict;
	b->verdict_ctx = o->verdict_ctx;
	b->test_cut = o->test_cut;
	if (o->coordinated) {
		b->node = o->node;
		b->node.kind = TE_CQ_NODE;
		b->node.rank = p->me.rank;
		te_strlcpy(b->node.host, p->host, sizeof(b->node.host));
		if (o->failed)
			fail_text(b->self_failed, sizeof(b->self_failed),
				  o->failed);
	}
	te_snprintf(b->key, sizeof(b->key), COORD_KEY_FMT, o->seq);
	if (o->tmpdir && (o->tmpdir_ok || te_private_dir_ok(o->tmpdir)))
		te_strlcpy(b->tmpdir, o->tmpdir, sizeof(b->tmpdir));
	if (o->nfollowers && b->tmpdir[0]) {
		b->followers = calloc(o->nfollowers, sizeof(*b->followers));
		b->follower_here = calloc(o->nfollowers, 1);
		if (!b->followers || !b->follower_here) {
			te_snprintf(err, errlen, "out of memory");
			te_barrier_free(b);
			return NULL;
		}
		for (i = 0; i < o->nfollowers; i++)
			if (o->followers[i] < p->size &&
			    o->followers[i] != p->me.rank)
				b->followers[b->nfollowers++] = o->followers[i];
	}
	b->outcap = (b->nfollowers + 4) * TE_COORD_LINE_MAX;
	b->out = malloc(b->outcap);
	if (!b->out) {
		te_snprintf(err, errlen, "out of memory");
		te_barrier_free(b);
		return NULL;
	}
	/* On Slurm 22.05 (verified with OpenPMIx 4.2.2) a fence without data
	 * takes Slurm's tree algorithm unless the ring one is forced
	 * (SLURM_PMIX_FENCE=ring, which the plugin sets for the step), and
	 * the tree fence returned on every node whose own ranks had all
	 * arrived, without waiting for the other nodes. With the ring forced
	 * a fence without data is a job-wide barrier (and 4x faster than one
	 * with data); otherwise every rank puts a value and the fence
	 * collects it, which Slurm runs as a ring. */
	if (fence_ring < 0) {	/* the step's setting: looked at once */
		s = getenv("SLURM_PMIX_FENCE");
		fence_ring = s && !strcmp(s, "ring");
	}
	b->collect = !fence_ring;
	if (!o->coordinated && b->collect) {
		char key[32];

		te_snprintf(key, sizeof(key), "te.here.%u", o->seq);
		if (te_pmix_put(p, key, "1", err, errlen) < 0) {
			te_barrier_free(b);
			return NULL;
		}
		b->dirty = 1;
	}
	if (p->me.rank == 0) {
		if (!o->addr || !o->addr[0] ||
		    te_strlcpy(b->coord_addr, o->addr, sizeof(b->coord_addr)) >=
			    sizeof(b->coord_addr)) {
			te_snprintf(err, errlen, "rank 0 has no address for "
				    "the barrier coordinator");
			te_barrier_free(b);
			return NULL;
		}
		/* The launch needs it at once; a later barrier only when its
		 * fence is slow (the fast path stays a bare fence). */
		if (o->coordinated) {
			if (coord_start(b, b->coord_addr, err, errlen) < 0) {
				te_barrier_free(b);
				return NULL;
			}
			b->dirty = 1;
		} else {
			b->coord_due = 1;
		}
	}
	return b;
}

void te_barrier_free(struct te_barrier *b)
{
	if (!b)
		return;
	cb_detach();
	te_cc_free(&b->cc);
	if (b->lfd >= 0)
		close(b->lfd);
	if (b->cfd >= 0)
		close(b->cfd);
	/* epfd and wake are the session's (loop_ep, loop_wake) */
	if (b->coord_file[0])
		unlink(b->coord_file);
	if (b->nofile_raised)
		setrlimit(RLIMIT_NOFILE, &b->old_nofile);
	free(b->arrived);
	free(b->nodes);
	free(b->followers);
	free(b->follower_here);
	free(b->hosts);
	free(b->host_told);
	free(b->out);
	free(b);
}

/* ---------------------------------------------------------------- followers */

/* Queues a line for the coordinator (client side). */
static void queue_line(struct te_barrier *b, const struct te_coord_req *q)
{
	char line[TE_COORD_LINE_MAX];

	if (te_coord_req_format(line, sizeof(line), b->info.token, q) < 0 ||
	    b->outlen + strlen(line) > b->outcap)
		return;
	memcpy(b->out + b->outlen, line, strlen(line));
	b->outlen += strlen(line);
}

static void queue_arrived(struct te_barrier *b, uint32_t rank)
{
	struct te_coord_req q = { .kind = TE_CQ_ARRIVED, .rank = rank };

	te_strlcpy(q.host, b->p->host, sizeof(q.host));
	queue_line(b, &q);
}

static void queue_failed(struct te_barrier *b, uint32_t rank, const char *why)
{
	struct te_coord_req q = { .kind = TE_CQ_FAILED, .rank = rank };

	te_strlcpy(q.host, b->p->host, sizeof(q.host));
	fail_text(q.why, sizeof(q.why), why);
	queue_line(b, &q);
}

/* A follower's failure file: its one line, cleaned. 0, or -1 when it is
 * not there or not this user's regular file. */
static int read_failed_file(const char *path, char *why, size_t len)
{
	char buf[TE_FAILED_TEXT_MAX + 2];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fail_text(why, len, buf);
	return 0;
}

static void client_flush(struct te_barrier *b);

/* The local ranks this process stands for say they are here with a file
 * (the plugin writes it in task_init), or that they failed before the
 * barrier with another file. */
static void check_followers(struct te_barrier *b, int64_t now)
{
	size_t i;
	int news = 0;

	if (b->nfollowers_here == b->nfollowers || now < b->next_follower_check)
		return;
	for (i = 0; i < b->nfollowers; i++) {
		char path[600];
		struct stat st;

		char why[TE_FAIL_TEXT_MAX + 1];

		if (b->follower_here[i])
			continue;
		if (b->coordinated &&
		    te_snprintf(path, sizeof(path), TE_FAILED_FMT, b->tmpdir,
				b->followers[i]) == 0 &&
		    read_failed_file(path, why, sizeof(why)) == 0) {
			b->follower_here[i] = 2;
			b->nfollowers_here++;
			news = 1;
			if (b->p->me.rank == 0)
				coord_rank_failed(b, b->followers[i], b->p->host,
						  why);
			else if (b->cs == C_SENT || b->cs == C_CONNECTING)
				queue_failed(b, b->followers[i], why);
			continue;
		}
		if (te_snprintf(path, sizeof(path), TE_ARRIVED_FMT, b->tmpdir,
				b->followers[i]) < 0 ||
		    lstat(path, &st) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		b->follower_here[i] = 1;
		b->nfollowers_here++;
		news = 1;
		if (b->p->me.rank == 0)
			mark_arrived(b, b->followers[i]);
		else if (b->cs == C_SENT || b->cs == C_CONNECTING)
			queue_arrived(b, b->followers[i]);
	}
	if (news && b->cs == C_SENT)
		client_flush(b);
	b->follower_wait = news ? 1 : (b->follower_wait ? b->follower_wait * 2 : 1);
	if (b->follower_wait > 4)
		b->follower_wait = 4;
	b->next_follower_check = now + b->follower_wait;
}

/* A follower holds a lock on its arrival file for as long as it waits
 * (spank/rdzv_client.c): a file nobody holds locked is a task that ended. */
static int follower_alive(struct te_barrier *b, uint32_t rank)
{
	char path[600];
	int fd, alive;

	if (te_snprintf(path, sizeof(path), TE_ARRIVED_FMT, b->tmpdir,
			rank) < 0)
		return 1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return errno != ENOENT;
	alive = flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
	close(fd);	/* drops the lock if we got it */
	return alive;
}

/* Launch barrier: a follower that arrived and then ended (killed while
 * waiting) failed before the barrier like any other: rank 0 is told, and
 * the step fails now instead of releasing the others without it. */
static void check_alive(struct te_barrier *b, int64_t now)
{
	size_t i;
	int news = 0;

	if (!b->coordinated || !b->nfollowers || now < b->next_alive_check)
		return;
	b->next_alive_check = now + ALIVE_CHECK_MS;
	for (i = 0; i < b->nfollowers; i++) {
		if (b->follower_here[i] != 1 ||
		    follower_alive(b, b->followers[i]))
			continue;
		b->follower_here[i] = 2;
		news = 1;
		if (b->p->me.rank == 0)
			coord_rank_failed(b, b->followers[i], b->p->host,
					  TASK_GONE_WHY);
		else if (b->cs == C_SENT || b->cs == C_CONNECTING)
			queue_failed(b, b->followers[i], TASK_GONE_WHY);
	}
	if (news && b->cs == C_SENT)
		client_flush(b);
}

/* ---------------------------------------------------------------- coordinator */

static int host_cb(void *ctx, uint32_t rank, char *host, size_t len)
{
	return te_pmix_host_of(ctx, rank, host, len);
}

static void host_told(struct te_barrier *b, const char *host);

static void conn_close(struct te_barrier *b, size_t i)
{
	struct te_coord_conn *c = &b->cc.c[i];
	char host[TE_HOST_MAX];
	int lost;

	if (c->fd < 0)
		return;
	/* Launch barrier: a node's helper keeps its connection until rank 0
	 * answers, or until its own deadline (it asks for the report
	 * first). One that goes away before is dead (killed, or its task
	 * was), and the ranks it stood for will never start: the step
	 * fails now, as for a rank that failed before the barrier, instead
	 * of releasing the others into a job without them. */
	lost = b->coordinated && c->registered && c->has_rank &&
	       !c->leaving && !b->finishing && !b->aborting;
	te_strlcpy(host, c->host, sizeof(host));
	te_cc_release(&b->cc, i);	/* also leaves the epoll set */
	if (lost) {
		coord_rank_failed(b, c->rank, host, HELPER_GONE_WHY);
		/* nobody there to tell: its tasks fail with their helper */
		if (b->hosts_known && host[0])
			host_told(b, host);
	}
}

static void conn_send(struct te_barrier *b, size_t i, const char *line)
{
	size_t len = strlen(line);

	/* Small lines into an idle socket: one send does it. A peer that
	 * cannot take them is not waiting for them. */
	if (send(b->cc.c[i].fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)len)
		conn_close(b, i);
}

static void coord_summary(struct te_barrier *b, char *out, size_t len)
{
	if (!b->arrived) {	/* the coordinator never started */
		te_snprintf(out, len, "who arrived is unknown");
		return;
	}
	te_missing_summary(b->p->size, b->arrived, host_cb, b->p, out, len);
}

/* Rank 0, aborting: the job's nodes, to know when all have been told. */
static void coord_hosts(struct te_barrier *b)
{
	struct te_pmix *p = b->p;
	char host[TE_HOST_MAX];
	uint32_t r;
	size_t i;

	b->hosts = calloc(p->size, sizeof(*b->hosts));
	b->host_told = calloc(p->size, 1);
	if (!b->hosts || !b->host_told)
		return;		/* only the deadline ends the wait */
	for (r = 0; r < p->size; r++) {
		if (te_pmix_host_of(p, r, host, sizeof(host)) < 0)
			return;
		for (i = 0; i < b->nhosts; i++)
			if (!strcmp(b->hosts[i], host))
				break;
		if (i == b->nhosts)
			te_strlcpy(b->hosts[b->nhosts++], host, TE_HOST_MAX);
	}
	b->hosts_known = 1;
}

static void host_told(struct te_barrier *b, const char *host)
{
	size_t i;

	for (i = 0; i < b->nhosts; i++)
		if (!strcmp(b->hosts[i], host)) {
			if (!b->host_told[i]) {
				b->host_told[i] = 1;
				b->ntold++;
			}
			return;
		}
}

/* Rank 0, aborting: answers one registered connection and closes it; its
 * helper writes the report for its node's tasks, so its node is told. */
static void coord_abort_conn(struct te_barrier *b, size_t i)
{
	char line[TE_COORD_LINE_MAX];

	if (te_coord_reply_format(line, sizeof(line), TE_CR_ABORT,
				  b->abort_text) < 0)
		return;
	if (b->cc.c[i].host[0])
		host_told(b, b->cc.c[i].host);
	conn_send(b, i, line);
	if (b->cc.c[i].fd >= 0) {
		char junk[4096];

		/* what the peer sent and nobody will read: closing over it
		 * would reset the connection and could drop the answer */
		while (read(b->cc.c[i].fd, junk, sizeof(junk)) > 0)
			;
		conn_close(b, i);
	}
}

/* Rank 0: rank failed before the barrier. The first failure is the
 * report; every node registered so far is answered at once, the others
 * as soon as they register. */
static void coord_rank_failed(struct te_barrier *b, uint32_t rank,
			      const char *host, const char *why)
{
	size_t i;

	if (b->aborting || !b->cc.c)
		return;		/* the first failure is the one reported */
	b->aborting = 1;
	te_failed_report(rank, host, why, b->abort_text,
			 sizeof(b->abort_text));
	coord_hosts(b);
	if (b->hosts_known)
		host_told(b, b->p->host);	/* this node: rank 0's helper */
	for (i = 0; i < b->cc.cap; i++)
		if (b->cc.c[i].fd >= 0 && b->cc.c[i].registered)
			coord_abort_conn(b, i);
}

static void coord_new_conn(void *ctx, size_t i)
{
	struct te_barrier *b = ctx;

	if (b->test_cut) {	/* as if strangers pushed it out */
		b->test_cut--;
		b->test_cut_done++;
		conn_close(b, i);
	} else if (ep_add(b, b->cc.c[i].fd, EPOLLIN, TAG_CONN + i) < 0) {
		conn_close(b, i);
	}
}

/* A burst at most (coord_conns.h): what is left keeps the listener
 * readable for the next turn. */
static void coord_accept(struct te_barrier *b)
{
	te_cc_accept_burst(&b->cc, b->lfd, b->epfd, now_ms(), coord_new_conn, b);
}

/* Takes the first whole line (newline included) out of a connection's
 * buffer buf[0..*len) into line. 0: no whole line yet; 1: taken; -1:
 * taken, but it holds a NUL byte (no protocol line does). */
static int take_line(char *buf, size_t *len, char line[TE_COORD_LINE_MAX + 1])
{
	char *nl = memchr(buf, '\n', *len);
	size_t ll;

	if (!nl)
		return 0;
	ll = (size_t)(nl - buf) + 1;
	memcpy(line, buf, ll);
	line[ll] = '\0';
	memmove(buf, buf + ll, *len - ll);
	*len -= ll;
	buf[*len] = '\0';
	return memchr(line, '\0', ll - 1) ? -1 : 1;
}

static void coord_read(struct te_barrier *b, size_t i)
{
	struct te_coord_conn *c = &b->cc.c[i];
	char line[TE_COORD_LINE_MAX + 1];
	ssize_t n;
	int got;

	n = read(c->fd, c->buf + c->len, TE_COORD_LINE_MAX - c->len);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		conn_close(b, i);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (!c->registered && !te_coord_prefix_ok(c->buf, c->len)) {
		conn_close(b, i);	/* a stranger's garbage: at once */
		return;
	}
	while ((got = take_line(c->buf, &c->len, line))) {
		struct te_coord_req q;

		if (got < 0 ||
		    te_coord_req_parse(line, b->info.token, b->p->size, &q) < 0) {
			conn_close(b, i);
			return;
		}
		te_cc_registered(&b->cc, i);
		if (q.kind != TE_CQ_STATUS && !c->host[0])
			te_strlcpy(c->host, q.host, sizeof(c->host));
		if (q.kind != TE_CQ_STATUS && !c->has_rank) {
			c->rank = q.rank;
			c->has_rank = 1;
		}
		if (q.kind == TE_CQ_ARRIVED) {
			mark_arrived(b, q.rank);
		} else if (q.kind == TE_CQ_NODE) {
			add_node(b, &q);
		} else if (q.kind == TE_CQ_FAILED) {
			coord_rank_failed(b, q.rank, q.host, q.why);
		} else {
			char text[TE_COORD_TEXT_MAX + 1], out[TE_COORD_LINE_MAX];

			c->leaving = 1;
			coord_summary(b, text, sizeof(text));
			if (te_coord_reply_format(out, sizeof(out), TE_CR_STATE,
						  text) == 0)
				conn_send(b, i, out);
			if (c->fd < 0)
				return;
		}
		if (c->fd < 0)
			return;		/* answered (abort) and closed */
		if (b->aborting) {	/* answered at its first line */
			coord_abort_conn(b, i);
			return;
		}
	}
	if (c->len >= TE_COORD_LINE_MAX)
		conn_close(b, i);	/* a line too long */
}

static void coord_broadcast(struct te_barrier *b, const char *line)
{
	size_t i;

	b->finishing = 1;
	for (i = 0; i < b->cc.cap; i++)
		if (b->cc.c[i].fd >= 0) {
			if (b->cc.c[i].registered)
				conn_send(b, i, line);
			conn_close(b, i);
		}
}

/* ---------------------------------------------------------------- client */

/* The connection could not be made (e), or was cut before rank 0 answered
 * (e, or 0: closed). A stranger may have pushed it out of the
 * coordinator's pool, or the coordinator may be out of descriptors: try
 * again, with the whole registration, until this rank's deadline. Only
 * refusals for GONE_GRACE_MS in a row mean that nobody listens any more
 * (rank 0 has left the barrier). A registered helper's connection is never
 * cut by rank 0 while it waits; where the network cut it, rank 0 counts
 * its ranks as gone and answers the new connection "abort". */
static void client_cut(struct te_barrier *b, int e)
{
	int64_t now = now_ms();
	int refused = e == ECONNREFUSED;

	if (b->cfd >= 0) {
		close(b->cfd);
		b->cfd = -1;
	}
	if (b->cs == C_DONE || b->got_reject || b->got_abort || b->got_fail ||
	    b->got_state)
		return;		/* answered: nothing more to hear */
	if (!refused)
		b->refusing = 0;
	else if (!b->refusing) {
		b->refusing = 1;
		b->refused_since = now;
	}
	if (te_coord_after_cut(refused, b->refused_since, now,
			       GONE_GRACE_MS) == TE_CUT_GONE) {
		b->cs = C_GONE;		/* the loop fails at once */
		b->gone_at = b->refused_since;
		return;
	}
	if (e)
		te_snprintf(b->unreach, sizeof(b->unreach), "its coordinator "
			    "at %s port %u cannot be reached: %s", b->info.addr,
			    (unsigned)b->info.port, strerror(e));
	else
		te_snprintf(b->unreach, sizeof(b->unreach), "its coordinator "
			    "at %s port %u closed every connection before "
			    "answering", b->info.addr, (unsigned)b->info.port);
	b->retry_ms = te_coord_retry_ms(b->retry_ms);
	b->next_retry = now + b->retry_ms;
	b->cs = C_RETRY;
}

static void client_dial(struct te_barrier *b);

static void client_connect(struct te_barrier *b, const char *text)
{
	if (te_coord_info_parse(text, &b->info) < 0) {
		b->cs = C_UNREACH;
		te_snprintf(b->unreach, sizeof(b->unreach), "it published an "
			    "unreadable coordinator address");
		return;
	}
	client_dial(b);
}

/* Connects to the coordinator in b->info, with the whole registration
 * queued (a new connection starts from nothing). */
static void client_dial(struct te_barrier *b)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char port[8];
	size_t i;

	/* what rank 0 must hear: this node's facts, then who is here */
	b->outlen = b->outoff = 0;
	b->clen = 0;
	if (b->coordinated)
		queue_line(b, &b->node);
	if (b->self_failed[0])
		queue_failed(b, b->p->me.rank, b->self_failed);
	else
		queue_arrived(b, b->p->me.rank);
	for (i = 0; i < b->nfollowers; i++) {
		char path[600], why[TE_FAIL_TEXT_MAX + 1];

		if (b->follower_here[i] == 2) {
			/* its failure file, or it ended while waiting */
			if (te_snprintf(path, sizeof(path), TE_FAILED_FMT,
					b->tmpdir, b->followers[i]) < 0 ||
			    read_failed_file(path, why, sizeof(why)) < 0)
				te_strlcpy(why, TASK_GONE_WHY, sizeof(why));
			queue_failed(b, b->followers[i], why);
		} else if (b->follower_here[i]) {
			queue_arrived(b, b->followers[i]);
		}
	}
	te_snprintf(port, sizeof(port), "%u", (unsigned)b->info.port);
	if (getaddrinfo(b->info.addr, port, &hints, &ai) != 0) {
		client_cut(b, EINVAL);
		return;
	}
	b->cfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0);
	if (b->cfd < 0) {
		int e = errno;

		freeaddrinfo(ai);
		client_cut(b, e);
		return;
	}
	if (connect(b->cfd, ai->ai_addr, ai->ai_addrlen) < 0 &&
	    errno != EINPROGRESS) {
		int e = errno;

		freeaddrinfo(ai);
		client_cut(b, e);
		return;
	}
	freeaddrinfo(ai);
	if (ep_add(b, b->cfd, EPOLLOUT | EPOLLIN, TAG_CLIENT) < 0) {
		client_cut(b, errno);
		return;
	}
	b->cs = C_CONNECTING;
}

static void client_lookup(struct te_barrier *b, int64_t now)
{
	char text[512];

	if (now < b->next_lookup)
		return;
	if (!b->rank0_host[0])	/* rank 0's peers read a file */
		b->rank0_local = !strcmp(rank0_host(b), b->p->host);
	if (b->rank0_local && b->tmpdir[0]) {
		if (read_coord_file(b, text, sizeof(text)) == 0) {
			client_connect(b, text);
			return;
		}
	} else if (!b->get_pending) {
		/* Later barriers must see rank 0's new data, not what this
		 * node cached from an earlier one. */
		if (start_get(b->p, 0, b->key, b->seq > 0) == 0)
			b->get_pending = 1;
		return;
	} else {
		return;	/* wait for the answer */
	}
	b->backoff = b->backoff ? b->backoff * 2 : 5;
	if (b->backoff > 500)
		b->backoff = 500;
	b->next_lookup = now + b->backoff;
}

static void client_get_done(struct te_barrier *b, int64_t now)
{
	int done;
	pmix_status_t st;
	char text[512];

	pthread_mutex_lock(&cb_mu);
	done = cb.get_done;
	st = cb.get_st;
	te_strlcpy(text, cb.get_val, sizeof(text));
	pthread_mutex_unlock(&cb_mu);
	if (!done)
		return;
	b->get_pending = 0;
	if (st == PMIX_SUCCESS) {
		client_connect(b, text);
		return;
	}
	b->backoff = b->backoff ? b->backoff * 2 : 20;
	if (b->backoff > 500)
		b->backoff = 500;
	b->next_lookup = now + b->backoff;
}

static void client_flush(struct te_barrier *b)
{
	while (b->outoff < b->outlen && b->cfd >= 0) {
		ssize_t n = send(b->cfd, b->out + b->outoff,
				 b->outlen - b->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			b->outoff += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		client_cut(b, n < 0 ? errno : EPIPE);
		return;
	}
	if (b->cfd >= 0) {
		struct epoll_event ev = {
			.events = EPOLLIN | (b->outoff < b->outlen ? EPOLLOUT : 0),
			.data.u64 = TAG_CLIENT
		};

		epoll_ctl(b->epfd, EPOLL_CTL_MOD, b->cfd, &ev);
	}
	if (b->outoff >= b->outlen)
		b->outoff = b->outlen = 0;
}

static void client_io(struct te_barrier *b, uint32_t events)
{
	if (b->cs == C_CONNECTING && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		int e = 0;
		socklen_t el = sizeof(e);

		if (getsockopt(b->cfd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			e = errno;
		if (e) {
			client_cut(b, e);
			return;
		}
		b->cs = C_SENT;
		b->refusing = 0;
	}
	if (b->cs == C_SENT || b->cs == C_DONE)
		client_flush(b);
	if (b->cfd >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		ssize_t n = read(b->cfd, b->cbuf + b->clen,
				 TE_COORD_LINE_MAX - b->clen);
		char line[TE_COORD_LINE_MAX + 1];
		int got;

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			client_cut(b, n == 0 ? 0 : errno);
			return;
		}
		if (n < 0)
			return;
		b->clen += (size_t)n;
		b->cbuf[b->clen] = '\0';
		while ((got = take_line(b->cbuf, &b->clen, line))) {
			struct te_coord_reply r;

			if (got < 0 || te_coord_reply_parse(line, &r) < 0)
				continue;	/* not from our coordinator */
			if (r.kind == TE_CR_DONE) {
				b->cs = C_DONE;
				continue;
			}
			te_strlcpy(b->rank0_text, r.text, sizeof(b->rank0_text));
			if (r.kind == TE_CR_FAIL)
				b->got_fail = 1;
			else if (r.kind == TE_CR_REJECT)
				b->got_reject = 1;
			else if (r.kind == TE_CR_ABORT)
				b->got_abort = 1;
			else
				b->got_state = 1;
		}
		if (b->clen >= TE_COORD_LINE_MAX)
			b->clen = 0;	/* garbage: drop it */
	}
}

/* At this rank's own deadline: ask rank 0 for the current report. */
static void client_ask_status(struct te_barrier *b)
{
	struct te_coord_req q = { .kind = TE_CQ_STATUS, .rank = b->p->me.rank };
	char line[TE_COORD_LINE_MAX];
	int64_t until = now_ms() + STATUS_WAIT_MS;

	if (b->cfd < 0 || b->cs != C_SENT ||
	    te_coord_req_format(line, sizeof(line), b->info.token, &q) < 0 ||
	    send(b->cfd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line))
		return;
	while (!b->got_state && !b->got_fail && b->cfd >= 0) {
		struct pollfd pf = { .fd = b->cfd, .events = POLLIN };
		int64_t left = until - now_ms();

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		client_io(b, EPOLLIN);
	}
}

/* ---------------------------------------------------------------- wait */

/* Sleeps until the fence's callback or ms milliseconds (the caller's
 * loop looks again either way). */
static void fence_sleep(int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&cb_mu);
	if (!cb.fence_done) {
		cb.cv_waiting = 1;
		pthread_cond_clockwait(&cb_cv, &cb_mu, CLOCK_MONOTONIC, &ts);
		cb.cv_waiting = 0;
	}
	pthread_mutex_unlock(&cb_mu);
}

static int fence_state(pmix_status_t *st)
{
	int done;

	pthread_mutex_lock(&cb_mu);
	done = cb.fence_done;
	*st = cb.fence_st;
	pthread_mutex_unlock(&cb_mu);
	return done;
}

static void timeout_msg(struct te_barrier *b, char *msg, size_t len)
{
	char head[64];

	te_snprintf(head, sizeof(head), "barrier timed out after %g s",
		    b->timeout_s);
	if (b->p->me.rank == 0) {
		char text[TE_COORD_TEXT_MAX + 1];

		coord_summary(b, text, sizeof(text));
		te_snprintf(msg, len, "%s: %s", head, text);
		return;
	}
	if (b->got_fail || b->got_state) {
		te_snprintf(msg, len, "%s: %s", head, b->rank0_text);
		return;
	}
	switch (b->cs) {
	case C_IDLE:
	case C_LOOKUP:
		te_snprintf(msg, len, "%s: rank 0 (node %s) did not arrive",
			    head, rank0_host(b));
		return;
	case C_RETRY:
		if (b->refusing)	/* nobody listens any more */
			goto gone;
		/* fall through */
	case C_UNREACH:
		te_snprintf(msg, len, "%s: rank 0 (node %s) arrived, but %s",
			    head, rank0_host(b), b->unreach);
		return;
	case C_GONE:
gone:
		te_snprintf(msg, len, "%s: rank 0 (node %s) stopped waiting "
			    "(its deadline passed or it failed) before every "
			    "rank arrived", head, rank0_host(b));
		return;
	default:
		te_snprintf(msg, len, "%s: rank 0 (node %s) did not say who "
			    "is missing", head, rank0_host(b));
	}
}

static int by_rank(const void *x, const void *y)
{
	const struct te_coord_req *a = x, *b = y;

	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

/* Rank 0, coordinated: every rank is here; the launch checks decide. */
static void coord_complete(struct te_barrier *b, struct te_barrier_result *r)
{
	char text[TE_COORD_TEXT_MAX + 1] = "", line[TE_COORD_LINE_MAX];
	int v = 0;

	/* reports name the nodes in rank order, whoever came first */
	if (b->nnodes > 1)
		qsort(b->nodes, b->nnodes, sizeof(*b->nodes), by_rank);
	if (b->verdict)
		v = b->verdict(b->verdict_ctx, b->nodes, b->nnodes, text,
			       sizeof(text));
	if (v == 2) {
		r->rejected = 1;
		te_strlcpy(r->msg, text, sizeof(r->msg));
		te_coord_reply_format(line, sizeof(line), TE_CR_REJECT, text);
	} else {
		r->ok = 1;
		if (v == 1)
			te_strlcpy(r->warn, text, sizeof(r->warn));
		te_coord_reply_format(line, sizeof(line), TE_CR_DONE, "");
	}
	coord_accept(b);
	coord_broadcast(b, line);
}

int te_barrier_wait(struct te_barrier *b, struct te_barrier_result *r)
{
	struct te_pmix *p = b->p;
	char err[TE_MSG_MAX], line[TE_COORD_LINE_MAX];
	int finished = 0;

	memset(r, 0, sizeof(*r));
	if (loop_open() == 0) {
		char buf[64];

		b->epfd = loop_ep;
		b->wake[0] = loop_wake[0];
		b->wake[1] = loop_wake[1];
		pthread_mutex_lock(&cb_mu);
		if (cb.pipe_dirty)	/* left from an abandoned operation */
			while (read(b->wake[0], buf, sizeof(buf)) > 0)
				;
		cb.pipe_dirty = 0;
		pthread_mutex_unlock(&cb_mu);
	}
	if (b->epfd < 0 ||
	    (b->lfd >= 0 && ep_add(b, b->lfd, EPOLLIN, TAG_LISTEN) < 0)) {
		te_snprintf(r->msg, sizeof(r->msg), "barrier: %s",
			    strerror(errno));
		te_barrier_free(b);
		return -1;
	}
	cb_attach(b->wake[1]);
	if (b->dirty && te_pmix_commit(p, err, sizeof(err)) < 0) {
		te_snprintf(r->msg, sizeof(r->msg), "barrier: %s", err);
		te_barrier_free(b);
		return -1;
	}
	while (!finished) {
		struct epoll_event ev[64];
		int64_t now = now_ms(), wait = 1000;
		pmix_status_t st;
		int n, i;

		if (b->nfollowers)
			check_followers(b, now);
		check_alive(b, now);
		/* the PMIx fence (later barriers), once this process and the
		 * ranks it stands for are all here */
		if (!b->coordinated && !b->fence_started &&
		    b->nfollowers_here == b->nfollowers) {
			if (start_fence(b->collect, err, sizeof(err)) < 0) {
				te_snprintf(r->msg, sizeof(r->msg),
					    "barrier: %s", err);
				break;
			}
			b->fence_started = 1;
		}
		if (b->fence_started && fence_state(&st)) {
			if (st == PMIX_SUCCESS)
				r->ok = 1;
			else
				te_snprintf(r->msg, sizeof(r->msg), "barrier: "
					    "the fence failed: %s",
					    PMIx_Error_string(st));
			break;
		}
		if (b->aborting) {
			/* every node told, or the deadline: the step fails */
			if ((b->hosts_known && b->ntold >= b->nhosts) ||
			    now >= b->deadline) {
				size_t c;

				coord_accept(b);
				for (c = 0; c < b->cc.cap; c++)
					if (b->cc.c[c].fd >= 0 &&
					    b->cc.c[c].registered)
						coord_abort_conn(b, c);
				r->aborted = 1;
				te_strlcpy(r->msg, b->abort_text,
					   sizeof(r->msg));
				finished = 1;
				break;
			}
		} else if (b->coordinated && p->me.rank == 0 &&
			   b->narrived == p->size) {
			coord_complete(b, r);
			finished = 1;
			break;
		}
		if (b->coordinated && b->cs == C_DONE) {
			r->ok = 1;
			break;
		}
		if (b->got_abort) {
			r->aborted = 1;
			te_strlcpy(r->msg, b->rank0_text, sizeof(r->msg));
			break;
		}
		if (b->got_reject) {
			r->rejected = 1;
			te_strlcpy(r->msg, b->rank0_text, sizeof(r->msg));
			break;
		}
		if (b->got_fail) {
			timeout_msg(b, r->msg, sizeof(r->msg));
			break;
		}
		if (now >= b->deadline) {
			if (p->me.rank != 0)
				client_ask_status(b);
			timeout_msg(b, r->msg, sizeof(r->msg));
			break;
		}
		if (b->cs == C_GONE && now - b->gone_at >= GONE_GRACE_MS) {
			te_snprintf(r->msg, sizeof(r->msg), "barrier failed "
				    "after %.1f s: rank 0 (node %s) stopped "
				    "waiting (its deadline passed or it failed) "
				    "before every rank arrived",
				    (double)(now - b->start) / 1000.0,
				    rank0_host(b));
			break;
		}
		if (b->coord_due && now - b->start >= b->lazy_ms / 2) {
			/* rank 0: the fence is slow; others will look for us */
			b->coord_due = 0;
			if (coord_start(b, b->coord_addr, err, sizeof(err)) < 0 ||
			    te_pmix_commit(p, err, sizeof(err)) < 0 ||
			    ep_add(b, b->lfd, EPOLLIN, TAG_LISTEN) < 0) {
				te_snprintf(r->msg, sizeof(r->msg),
					    "barrier: %s", err);
				break;
			}
		}
		if (b->coord_due)
			wait = b->start + b->lazy_ms / 2 - now;
		if (p->me.rank != 0) {
			if (b->cs == C_IDLE && now - b->start >= b->lazy_ms)
				b->cs = C_LOOKUP;
			if (b->cs == C_LOOKUP) {
				if (b->get_pending)
					client_get_done(b, now);
				if (b->cs == C_LOOKUP)
					client_lookup(b, now);
			}
			if (b->cs == C_RETRY && now >= b->next_retry)
				client_dial(b);
			if (b->cs == C_IDLE)
				wait = b->start + b->lazy_ms - now;
			else if (b->cs == C_LOOKUP && !b->get_pending)
				wait = b->next_lookup - now;
			else if (b->cs == C_RETRY)
				wait = b->next_retry - now;
		} else if (b->lfd >= 0) {
			/* strangers' deadlines, the listener's pause */
			int64_t due = te_cc_tick(&b->cc, b->lfd, b->epfd,
						 TAG_LISTEN, now);

			if (wait > due - now)
				wait = due - now;
		}
		if (b->nfollowers_here < b->nfollowers &&
		    wait > b->next_follower_check - now)
			wait = b->next_follower_check - now;
		if (b->coordinated && b->nfollowers &&
		    wait > b->next_alive_check - now)
			wait = b->next_alive_check - now;
		if (wait > b->deadline - now)
			wait = b->deadline - now;
		if (b->cs == C_GONE && wait > b->gone_at + GONE_GRACE_MS - now)
			wait = b->gone_at + GONE_GRACE_MS - now;
		if (wait < 1)
			wait = 1;
		if (wait > 1000)
			wait = 1000;
		/* nothing but the fence to wait for (a later barrier before
		 * it is slow): no descriptor to watch */
		if (b->fence_started && !b->coordinated && b->lfd < 0 &&
		    b->cfd < 0 && !b->nfollowers && !b->aborting &&
		    !b->get_pending) {
			fence_sleep((int)wait);
			continue;
		}
		n = epoll_wait(b->epfd, ev, 64, (int)wait);
		for (i = 0; i < n; i++) {
			uint64_t tag = ev[i].data.u64;

			if (tag == TAG_WAKE) {
				char buf[64];

				/* one read: what is left wakes the next
				 * epoll_wait (level-triggered) */
				if (read(b->wake[0], buf, sizeof(buf)) < 0) {
					/* EAGAIN: a wake already drained */
				}
			} else if (tag == TAG_LISTEN) {
				coord_accept(b);
			} else if (tag == TAG_CLIENT) {
				if (b->cfd >= 0)
					client_io(b, ev[i].events);
			} else if (tag - TAG_CONN < b->cc.cap &&
				   b->cc.c[tag - TAG_CONN].fd >= 0) {
				coord_read(b, (size_t)(tag - TAG_CONN));
			}
		}
	}
	if (p->me.rank == 0 && b->lfd >= 0 && !finished) {
		char text[TE_COORD_TEXT_MAX + 1];

		if (r->ok)
			te_coord_reply_format(line, sizeof(line), TE_CR_DONE, "");
		else {
			coord_summary(b, text, sizeof(text));
			te_coord_reply_format(line, sizeof(line), TE_CR_FAIL,
					      text);
		}
		/* take the last registrations before answering */
		coord_accept(b);
		coord_broadcast(b, line);
	}
	r->reporter = p->me.rank == 0;
	r->test_cut = b->test_cut_done;
	te_barrier_free(b);
	return r->ok ? 0 : -1;
}
