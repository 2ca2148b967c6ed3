/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stand-in libnccl's collectives, driving a profiler plugin as NCCL
 * does (pmix/nccl_profiler_abi.h): built into nccl_standin.c's
 * libnccl.so.2 with -DTE_STANDIN_PROFILER (and -ldl), for the straggler
 * tests without a GPU. The first communicator loads NCCL_PROFILER_PLUGIN
 * (a path, or NAME for libnccl-profiler-NAME.so; unset or "none": no
 * plugin) and looks up ncclProfiler_vN from STANDIN_PROFILER_VERSION
 * (default 5: NCCL 2.28) down to v3; init once per communicator (its hash
 * from the unique id), finalize at ncclCommDestroy, and the plugin
 * unloaded after the last communicator's (loaded again by the next). Each collective: its
 * event (sequence number per function, as NCCL counts), stopped at once,
 * then STANDIN_CHANNELS (default 2) kernel channels one after the other,
 * each STANDIN_WAIT_US long (default 0) on the host's monotonic clock,
 * which it passes as the GPU's time from v4 on. With STANDIN_BARRIER_DIR
 * (a directory every rank can write, on every node: the test cluster's
 * nodes share the file system) each collective's first channel also
 * waits for every rank of the communicator to arrive, as a collective's
 * kernels wait for the last rank: a file per rank and collective, polled
 * every 100 us for at most STANDIN_BARRIER_S (default 30) seconds.
 * Single-threaded programs only. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "nccl_profiler_abi.h"
#include "nccl_standin.h"

enum {
	FN_ALL_REDUCE,
	FN_ALL_GATHER,
	FN_COUNT
};

struct ncclComm {
	void *ctx;
	uint64_t hash;
	int rank, nranks;
	uint64_t seq[FN_COUNT];
};

static int prof_loaded, prof_version, live_comms;
static void *prof;     /* the plugin's ncclProfiler_vN */
static void *prof_lib; /* unloaded after the last communicator, as NCCL
			  does (ncclProfilerPluginFinalize) */

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : dflt;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void prof_load(void)
{
	const char *v = getenv("NCCL_PROFILER_PLUGIN");
	char path[512], sym[32];
	void *lib;
	int ver;

	prof_loaded = 1;
	if (!v || !*v || !strcasecmp(v, "none"))
		return;
	if (strchr(v, '/'))
		snprintf(path, sizeof(path), "%s", v);
	else
		snprintf(path, sizeof(path), "libnccl-profiler-%s.so", v);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		printf("standin profiler: %s: %s\n", path, dlerror());
		return;
	}
	prof_lib = lib;
	for (ver = env_int("STANDIN_PROFILER_VERSION", 5); ver >= 3; ver--) {
		snprintf(sym, sizeof(sym), "ncclProfiler_v%d", ver);
		if ((prof = dlsym(lib, sym)))
			break;
	}
	if (!prof)
		return;
	prof_version = ver;
	printf("standin profiler: %s v%d\n", *(const char *const *)prof, ver);
	fflush(stdout);
}

ncclComm_t standin_prof_comm(int nranks, const ncclUniqueId *id, int rank)
{
	struct ncclComm *c = calloc(1, sizeof(*c));
	uint64_t h = 1469598103934665603ull; /* FNV-1a of the id */
	int mask = 0, r = -1;
	size_t i;

	if (!c)
		return NULL;
	for (i = 0; i < sizeof(id->internal); i++)
		h = (h ^ (unsigned char)id->internal[i]) * 1099511628211ull;
	c->hash = h;
	c->rank = rank;
	c->nranks = nranks;
	if (!prof_loaded)
		prof_load();
	live_comms++;
	if (prof_version == 5)
		r = ((struct te_nccl_profiler_v5 *)prof)
			    ->init(&c->ctx, h, &mask, "standin", 1, nranks,
				   rank, NULL);
	else if (prof_version == 4)
		r = ((struct te_nccl_profiler_v4 *)prof)
			    ->init(&c->ctx, &mask, "standin", h, 1, nranks,
				   rank, NULL);
	else if (prof_version == 3)
		r = ((struct te_nccl_profiler_v3 *)prof)->init(&c->ctx, &mask);
	if (r != 0 || !(mask & TE_NCCL_EV_KERNEL_CH))
		c->ctx = NULL; /* NCCL goes on without the plugin */
	return c;
}

/* startEvent of the version loaded, the descriptor as it lays it out. */
static void *start(ncclComm_t c, uint64_t type, void *parent, uint64_t seq,
		   const char *func, uint64_t ptimer)
{
	struct te_nccl_descr_v3 d3 = { 0 };
	struct te_nccl_descr_v4 d4 = { 0 };
	struct te_nccl_descr_v5 d5 = { 0 };
	void *h = NULL;

	if (prof_version == 3) {
		d3.type = (uint8_t)type;
		d3.parentObj = parent;
		d3.rank = c->rank;
		if (type == TE_NCCL_EV_COLL) {
			d3.coll.commHash = c->hash;
			d3.coll.seqNumber = seq;
			d3.coll.func = func;
		}
		((struct te_nccl_profiler_v3 *)prof)
			->startEvent(c->ctx, &h, &d3);
	} else if (prof_version == 4) {
		d4.type = (uint8_t)type;
		d4.parentObj = parent;
		d4.rank = c->rank;
		d4.coll.seqNumber = seq; /* the union: overwritten below */
		d4.coll.func = func;
		if (type == TE_NCCL_EV_KERNEL_CH)
			d4.kernelCh.pTimer = ptimer;
		((struct te_nccl_profiler_v4 *)prof)
			->startEvent(c->ctx, &h, &d4);
	} else {
		d5.type = type;
		d5.parentObj = parent;
		d5.rank = c->rank;
		d5.coll.seqNumber = seq;
		d5.coll.func = func;
		if (type == TE_NCCL_EV_KERNEL_CH)
			d5.kernelCh.pTimer = ptimer;
		((struct te_nccl_profiler_v5 *)prof)
			->startEvent(c->ctx, &h, &d5);
	}
	return h;
}

/* The cross-process wait of collective seq of function fn: every rank's
 * file there. Removes this rank's file of two collectives before (every
 * rank has left it, since every rank reached the one before). */
static void barrier(ncclComm_t c, unsigned fn, uint64_t seq)
{
	const char *dir = getenv("STANDIN_BARRIER_DIR");
	char path[512];
	uint64_t deadline =
		now_ns() +
		(uint64_t)env_int("STANDIN_BARRIER_S", 30) * 1000000000u;
	struct timespec tick = { 0, 100000 };
	struct stat st;
	int r, fd;

	if (!dir || !*dir)
		return;
	snprintf(path, sizeof(path), "%s/%016llx.%u.%llu.%d", dir,
		 (unsigned long long)c->hash, fn, (unsigned long long)seq,
		 c->rank);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	for (r = 0; r < c->nranks && now_ns() < deadline;) {
		snprintf(path, sizeof(path), "%s/%016llx.%u.%llu.%d", dir,
			 (unsigned long long)c->hash, fn,
			 (unsigned long long)seq, r);
		if (stat(path, &st) == 0)
			r++;
		else
			nanosleep(&tick, NULL);
	}
	if (seq >= 2) {
		snprintf(path, sizeof(path), "%s/%016llx.%u.%llu.%d", dir,
			 (unsigned long long)c->hash, fn,
			 (unsigned long long)(seq - 2), c->rank);
		unlink(path);
	}
}

static ncclResult_t collective(ncclComm_t c, unsigned fn, const char *func)
{
	/* stopEvent and recordEventState sit alike in every version */
	struct te_nccl_profiler_v5 *p = prof;
	int ch, chans = env_int("STANDIN_CHANNELS", 2);
	long wait_us = env_int("STANDIN_WAIT_US", 0);
	uint64_t seq;
	void *coll;

	if (!c)
		return ncclSystemError;
	if (!c->ctx)
		return ncclSuccess;
	seq = c->seq[fn]++;
	coll = start(c, TE_NCCL_EV_COLL, NULL, seq, func, 0);
	if (coll)
		p->stopEvent(coll); /* launched: NCCL stops it here */
	for (ch = 0; ch < chans; ch++) {
		uint64_t t0 = now_ns();
		void *k = start(c, TE_NCCL_EV_KERNEL_CH, coll, 0, NULL, t0);
		struct timespec ts = { wait_us / 1000000,
				       (wait_us % 1000000) * 1000 };
		union te_nccl_state_args a;

		nanosleep(&ts, NULL);
		if (ch == 0)
			barrier(c, fn, seq);
		if (!k)
			continue;
		if (prof_version >= 4) {
			a.kernelCh.pTimer = now_ns();
			p->recordEventState(k, TE_NCCL_STATE_KERNEL_CH_STOP,
					    &a);
		}
		p->stopEvent(k);
	}
	return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
			   int datatype, int op, ncclComm_t comm, void *stream)
{
	return collective(comm, FN_ALL_REDUCE, "AllReduce");
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t count,
			   int datatype, ncclComm_t comm, void *stream)
{
	return collective(comm, FN_ALL_GATHER, "AllGather");
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (!comm)
		return ncclSuccess;
	if (comm->ctx)
		((struct te_nccl_profiler_v5 *)prof)->finalize(comm->ctx);
	free(comm);
	if (--live_comms == 0 && prof_lib) {
		dlclose(prof_lib);
		prof_lib = prof = NULL;
		prof_loaded = prof_version = 0;
	}
	return ncclSuccess;
}
