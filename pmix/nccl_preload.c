/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv-nccl.so: the job-wide barrier right before the first NCCL
 * communicator of a process, for programs that do not call
 * trainenv.barrier() themselves.
 *
 * The plugin puts this library in LD_PRELOAD when --train-barrier=
 * first-collective. It defines NCCL's communicator-creation entry points;
 * the first call in the process runs the job-wide barrier of libtrainenv,
 * then every call goes on to the real function (dlsym(RTLD_NEXT)). It has
 * no dependency of its own: libtrainenv (and PMIx with it) is loaded only
 * when NCCL is really used, and the barrier runs once per process, however
 * many communicators and threads follow. When the barrier fails (a rank
 * never came, the deadline passed) the call returns ncclSystemError after
 * one line on stderr saying why, and NCCL is not entered.
 *
 * It cannot work when NCCL is linked statically into the program (the
 * calls never go through the dynamic linker): call trainenv.barrier()
 * before the first collective then. */
#define _GNU_SOURCE
#include "config.h"
/* loads in images older than the build machine (its first line says how) */
#include "glibc_compat.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "launch/barrier_proxy.h"
#include "launch/version.h"
/* macros only (TE_WEEK_S, TE_BARRIER_BUILTIN_S, TE_BARRIER_TIMEOUT_ENV):
 * nothing of it links */
#include "settings/settings.h"

/* NCCL's types, as far as the calls need them (nccl.h is not required to
 * build trainenv). */
typedef int ncclResult_t;
typedef struct ncclComm *ncclComm_t;
typedef struct {
	char internal[128];
} ncclUniqueId;
typedef struct ncclConfig ncclConfig_t;
#define ncclSystemError 2

/* The entry points this library stands in for (nccl.h's prototypes). */
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
			      int rank);
ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
				    ncclUniqueId id, int rank,
				    ncclConfig_t *config);
ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist);
ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int myrank,
				      int nid, ncclUniqueId *ids,
				      ncclConfig_t *config);

#define EXPORT __attribute__((visibility("default")))

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int barrier_failed;

/* Seconds on a clock: CLOCK_REALTIME for the trace's times, which tests
 * compare across nodes; CLOCK_MONOTONIC for deadlines (nobody sets it). */
static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *rank_text(void)
{
	const char *r = getenv("RANK");

	if (!r)
		r = getenv("SLURM_PROCID");
	return r ? r : "?";
}

/* TRAINENV_NCCL_TRACE=FILE: one line per event, for tests and debugging:
 * "RANK EVENT TIME [WHAT]". */
static void trace(const char *event, const char *what)
{
	const char *path = getenv("TRAINENV_NCCL_TRACE");
	char line[256];
	int fd, n;

	if (!path || !*path)
		return;
	n = snprintf(line, sizeof(line), "%.16s %s %.6f%s%s\n", rank_text(),
		     event, clock_s(CLOCK_REALTIME), what ? " " : "",
		     what ? what : "");
	if (n <= 0 || (size_t)n >= sizeof(line))
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
		/* a trace that cannot be written is no reason to fail */
	}
	close(fd);
}

typedef int (*barrier_fn)(double, char *, size_t);

/* libtrainenv next to this library (the build tree, or a site's lib-dir
 * that holds both), else the installed one (LIBDIR; this library itself is
 * installed in LIBDIR/trainenv): the path comes from where this library
 * was loaded and from the build, never from anything the user sets. */
static barrier_fn load_barrier(char *err, size_t errlen)
{
	static const char installed[] = TE_LIBDIR "/libtrainenv.so.0";
	Dl_info info;
	char dir[4096], path[4200];
	void *h;
	barrier_fn fn;

	if (!dladdr((void *)load_barrier, &info) || !info.dli_fname ||
	    strlen(info.dli_fname) >= sizeof(dir)) {
		snprintf(err, errlen, "cannot tell where trainenv-nccl.so is");
		return NULL;
	}
	strcpy(dir, info.dli_fname);
	snprintf(path, sizeof(path), "%s/libtrainenv.so.0", dirname(dir));
	if (access(path, F_OK) < 0)
		snprintf(path, sizeof(path), "%s", installed);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "cannot load %s: %s", path, dlerror());
		return NULL;
	}
	fn = (barrier_fn)dlsym(h, "trainenv_barrier");
	if (!fn)
		snprintf(err, errlen, "%s has no trainenv_barrier", path);
	return fn;
}

/* In a container (TRAINENV_BARRIER_FD set by the plugin): the barrier
 * runs on the node, in this task's proxy, which answers one request on
 * the inherited socket (core/launch/barrier_proxy.h); neither libtrainenv nor
 * libpmix need be in the image. Waits for the answer as long as the
 * barrier's deadline and a minute more: the proxy keeps the deadline. 0,
 * or -1 with why in err.
 *
 * The deadline: outside a container the shim asks libtrainenv, which
 * reads the encoded settings (TRAINENV_SETTINGS). Here libtrainenv need
 * not be in the image, and the shim cannot link the decoder and the
 * settings table: it loads into users' programs built against glibc 2.17
 * (tests/unit/test_glibc_baseline.sh), and the table's code brings the
 * fortified stdio of the build machine's glibc. So it reads the one
 * number the plugin derives from the barrier's row and the site's policy
 * for it (TRAINENV_BARRIER_TIMEOUT, te_setting_barrier_s), bounded by the
 * row's maximum and built-in (TE_WEEK_S, TE_BARRIER_BUILTIN_S: macros,
 * nothing to link). The proxy, on the
 * node, keeps the real deadline. */
static int proxy_barrier(int fd, char *err, size_t errlen)
{
	const char *t = getenv(TE_BARRIER_TIMEOUT_ENV);
	char msg[TE_BPROXY_MSG_MAX + 1];
	long wait_s = 0;
	/* the answer on this request's own channel; the shared socket only
	 * for the proxy's end (POLLHUP) */
	struct pollfd p[2] = { { .fd = -1, .events = POLLIN },
			       { .fd = fd, .events = 0 } };
	double end;
	ssize_t n;
	int k = te_bproxy_request(msg, sizeof(msg), TE_PROTOCOL_VERSION, 0, 1);

	/* by hand, not atol: see core/launch/barrier_proxy.c */
	while (t && *t >= '0' && *t <= '9' && wait_s < (long)TE_WEEK_S)
		wait_s = wait_s * 10 + (*t++ - '0');
	if (wait_s <= 0 || wait_s > (long)TE_WEEK_S)
		wait_s = TE_BARRIER_BUILTIN_S;
	wait_s += 60;
	if (k < 0 || (p[0].fd = te_bproxy_ask(fd, msg, (size_t)k)) < 0) {
		if (errno == EPIPE || errno == ECONNRESET)
			snprintf(err, errlen,
				 "the barrier proxy is not running "
				 "(trainenv-container on this node ended; its "
				 "line, if any, is in this task's output)");
		else
			snprintf(err, errlen,
				 "cannot ask the barrier proxy "
				 "(descriptor %d): %s",
				 fd, strerror(errno));
		return -1;
	}
	end = clock_s(CLOCK_MONOTONIC) + (double)wait_s;
	for (;;) {
		double left = end - clock_s(CLOCK_MONOTONIC);
		int r;

		if (left <= 0) {
			snprintf(err, errlen,
				 "the barrier proxy did not "
				 "answer in %ld s",
				 wait_s);
			close(p[0].fd);
			return -1;
		}
		r = poll(p, 2, left > 60 ? 60000 : (int)(left * 1000) + 1);
		if (r < 0 && errno != EINTR) {
			snprintf(err, errlen, "the barrier proxy: %s",
				 strerror(errno));
			close(p[0].fd);
			return -1;
		}
		if (r > 0 && (p[0].revents || p[1].revents))
			break;
	}
	n = p[0].revents ? recv(p[0].fd, msg, sizeof(msg) - 1, 0) : 0;
	close(p[0].fd);
	if (n <= 0) {
		snprintf(err, errlen,
			 "the barrier proxy went away before it "
			 "answered (its node's trainenv-container ended)");
		return -1;
	}
	return te_bproxy_parse_answer(msg, (size_t)n, err, errlen) == 0 ? 0
									: -1;
}

static void run_barrier(void)
{
	char err[1400] = "";
	barrier_fn fn = NULL;
	int fd = te_bproxy_fd(getenv(TE_BPROXY_FD_ENV)), failed;

	trace("barrier-start", NULL);
	if (fd >= 0)
		failed = proxy_barrier(fd, err, sizeof(err)) < 0;
	else
		failed = !(fn = load_barrier(err, sizeof(err))) ||
			 fn(0, err, sizeof(err)) < 0;
	if (failed) {
		barrier_failed = 1;
		fprintf(stderr,
			"trainenv: rank %s: the barrier before the "
			"first NCCL communicator failed, NCCL not entered: %s\n",
			rank_text(), err);
		fflush(stderr);
		trace("barrier-failed", NULL);
		return;
	}
	trace("barrier-done", NULL);
}

static void *real(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		fprintf(stderr,
			"trainenv: %s: not found in any library loaded "
			"after trainenv-nccl.so (is NCCL loaded?)\n",
			name);
	return f;
}

/* The barrier, then the real function; NULL when the call must fail. */
static void *enter(const char *name)
{
	void *f;

	pthread_once(&once, run_barrier);
	if (barrier_failed)
		return NULL;
	f = real(name);
	if (f)
		trace("nccl-enter", name);
	return f;
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks,
				     ncclUniqueId id, int rank)
{
	ncclResult_t (*f)(ncclComm_t *, int, ncclUniqueId, int) =
		(ncclResult_t(*)(ncclComm_t *, int, ncclUniqueId, int))enter(
			"ncclCommInitRank");

	return f ? f(comm, nranks, id, rank) : ncclSystemError;
}

EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks,
					   ncclUniqueId id, int rank,
					   ncclConfig_t *config)
{
	ncclResult_t (*f)(ncclComm_t *, int, ncclUniqueId, int,
			  ncclConfig_t *) =
		(ncclResult_t(*)(ncclComm_t *, int, ncclUniqueId, int,
				 ncclConfig_t *))enter("ncclCommInitRankConfig");

	return f ? f(comm, nranks, id, rank, config) : ncclSystemError;
}

EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev,
				    const int *devlist)
{
	ncclResult_t (*f)(ncclComm_t *, int, const int *) = (ncclResult_t(*)(
		ncclComm_t *, int, const int *))enter("ncclCommInitAll");

	return f ? f(comm, ndev, devlist) : ncclSystemError;
}

EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks,
					     int myrank, int nid,
					     ncclUniqueId *ids,
					     ncclConfig_t *config)
{
	ncclResult_t (*f)(ncclComm_t *, int, int, int, ncclUniqueId *,
			  ncclConfig_t *) =
		(ncclResult_t(*)(
			ncclComm_t *, int, int, int, ncclUniqueId *,
			ncclConfig_t *))enter("ncclCommInitRankScalable");

	return f ? f(comm, nranks, myrank, nid, ids, config) : ncclSystemError;
}
