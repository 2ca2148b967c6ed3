/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_nccl_profiler: libnccl-profiler-trainenv.so driven the way NCCL
 * drives a profiler plugin (pmix/nccl_profiler_abi.h): dlopen, dlsym from
 * ncclProfiler_v7 down, then for each version the plugin claims (v5, v4,
 * v3) init of two communicators, group, collective and kernel channel
 * events (start, the stop's state with the GPU's time, stop), finalize,
 * and the window's bookkeeping through trainenv_nccl_profiler_take; then
 * calls NCCL never makes (NULL and foreign handles, unknown types, garbage
 * descriptors, handles stopped twice or overwritten), which must be refused
 * and counted, never crash. TE_NPROF_SO names the built plugin. */
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nccl_profiler.h"
#include "nccl_profiler_abi.h"
#include "tap.h"

#define HASH_A 0xa1a1a1a1a1a1a1a1ull
#define HASH_B 0xb2b2ull
#define ROUNDS 10

static te_nprof_take_fn take;

/* One version's entry points, the descriptors written as that version's
 * NCCL writes them. */
struct drv {
	int version;
	const char *name;
	te_nccl_result_t (*init)(void **ctx, int *mask, uint64_t hash,
				 int nranks, int rank);
	void *(*start)(void *ctx, uint64_t type, void *parent, int rank,
		       uint64_t hash, uint64_t seq, const char *func,
		       uint64_t ptimer);
	void *sym; /* the version's struct */
};

static struct te_nccl_profiler_v3 *p3;
static struct te_nccl_profiler_v4 *p4;
static struct te_nccl_profiler_v5 *p5;
static struct te_nccl_profiler_v5 *cur; /* stop, record, finalize: alike */

static te_nccl_result_t init3(void **ctx, int *mask, uint64_t hash, int nranks,
			      int rank)
{
	return p3->init(ctx, mask);
}

static te_nccl_result_t init4(void **ctx, int *mask, uint64_t hash, int nranks,
			      int rank)
{
	return p4->init(ctx, mask, "c", hash, 1, nranks, rank, NULL);
}

static te_nccl_result_t init5(void **ctx, int *mask, uint64_t hash, int nranks,
			      int rank)
{
	return p5->init(ctx, hash, mask, "c", 1, nranks, rank, NULL);
}

static void *start3(void *ctx, uint64_t type, void *parent, int rank,
		    uint64_t hash, uint64_t seq, const char *func,
		    uint64_t ptimer)
{
	struct te_nccl_descr_v3 d;
	void *h = (void *)1;

	memset(&d, 0, sizeof(d));
	d.type = (uint8_t)type;
	d.parentObj = parent;
	d.rank = rank;
	if (type == TE_NCCL_EV_COLL) {
		d.coll.commHash = hash;
		d.coll.seqNumber = seq;
		d.coll.func = func;
	}
	p3->startEvent(ctx, &h, &d);
	return h;
}

static void *start4(void *ctx, uint64_t type, void *parent, int rank,
		    uint64_t hash, uint64_t seq, const char *func,
		    uint64_t ptimer)
{
	struct te_nccl_descr_v4 d;
	void *h = (void *)1;

	memset(&d, 0, sizeof(d));
	d.type = (uint8_t)type;
	d.parentObj = parent;
	d.rank = rank;
	if (type == TE_NCCL_EV_COLL) {
		d.coll.seqNumber = seq;
		d.coll.func = func;
	} else if (type == TE_NCCL_EV_KERNEL_CH) {
		d.kernelCh.pTimer = ptimer;
	}
	p4->startEvent(ctx, &h, &d);
	return h;
}

static void *start5(void *ctx, uint64_t type, void *parent, int rank,
		    uint64_t hash, uint64_t seq, const char *func,
		    uint64_t ptimer)
{
	struct te_nccl_descr_v5 d;
	void *h = (void *)1;

	memset(&d, 0, sizeof(d));
	d.type = type;
	d.parentObj = parent;
	d.rank = rank;
	if (type == TE_NCCL_EV_COLL) {
		d.coll.seqNumber = seq;
		d.coll.func = func;
	} else if (type == TE_NCCL_EV_KERNEL_CH) {
		d.kernelCh.pTimer = ptimer;
	}
	p5->startEvent(ctx, &h, &d);
	return h;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* One kernel channel of the collective coll that waited wait_ns: v4 and
 * v5 with the GPU's times, v3 with the host's (it sleeps). */
static void channel(const struct drv *d, void *ctx, void *coll, uint64_t t0,
		    uint64_t wait_ns)
{
	void *k = d->start(ctx, TE_NCCL_EV_KERNEL_CH, coll, 0, 0, 0, NULL,
			   d->version >= 4 ? t0 : 0);
	union te_nccl_state_args a = { .kernelCh = { t0 + wait_ns } };

	if (d->version < 4)
		sleep_us((long)(wait_ns / 1000));
	else
		cur->recordEventState(k, TE_NCCL_STATE_KERNEL_CH_STOP, &a);
	cur->stopEvent(k);
}

static const struct te_nprof_comm *find(const struct te_nprof_comm *c, size_t n,
					uint64_t hash)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i].st.comm_hash == hash)
			return &c[i];
	return NULL;
}

/* Within the histogram's quarter octave (13%) for the GPU's times; the
 * host's sleeps take at least their time (less 13% for the median's
 * bucket) and not 20 ms more. */
static int near(const struct drv *d, uint64_t got, uint64_t want)
{
	if (d->version >= 4)
		return got * 100 >= want * 87 && got * 100 <= want * 113;
	return got * 100 >= want * 87 && got < want + 20000000;
}

/* Collectives of two communicators, each ROUNDS times, A's on two channels
 * (its wait is the longer one's), B's on one. */
static void rounds(const struct drv *d, void *ca, void *cb)
{
	int all = 1, i;

	for (i = 0; i < ROUNDS; i++) {
		uint64_t t0 = 1000000ull * (uint64_t)i;
		void *g =
			d->start(ca, TE_NCCL_EV_GROUP, NULL, 3, 0, 0, NULL, 0);
		void *a = d->start(ca, TE_NCCL_EV_COLL, g, 3, HASH_A,
				   (uint64_t)i, "AllReduce", 0);
		void *b = d->start(cb, TE_NCCL_EV_COLL, g, 1, HASH_B,
				   (uint64_t)i, "AllGather", 0);

		all = all && a && b && !g;
		/* NCCL stops a collective once its kernel is launched,
		 * before its channels start */
		cur->stopEvent(a);
		cur->stopEvent(b);
		channel(d, ca, a, t0, 2000000);
		channel(d, ca, a, t0 + 10, 3000000);
		channel(d, cb, b, t0 + 20, 1000000);
	}
	ok(all, "v%d: collectives get a handle, a group none", d->version);
}

/* all_gather #k and reduce_scatter #k are two collectives (NCCL counts
 * each function apart). */
static void same_seq(const struct drv *d, void *ca)
{
	struct te_nprof_comm out[TE_STRAG_COMMS];
	const struct te_nprof_comm *a;
	size_t n;
	int i;

	for (i = 0; i < 4; i++) {
		void *c = d->start(ca, TE_NCCL_EV_COLL, NULL, 3, HASH_A,
				   (uint64_t)(i / 2),
				   i % 2 ? "ReduceScatter" : "AllGather", 0);

		cur->stopEvent(c);
		channel(d, ca, c, 100, 100000);
	}
	n = take(out, TE_STRAG_COMMS, NULL);
	a = find(out, n, HASH_A);
	ok(n == 1 && a && a->st.count == 4,
	   "v%d: all_gather #0, reduce_scatter #0, #1, #1: 4 collectives "
	   "(%zu comms, %llu)",
	   d->version, n, a ? (unsigned long long)a->st.count : 0ull);
}

static void scenario(const struct drv *d)
{
	struct te_nprof_comm out[TE_STRAG_COMMS];
	const struct te_nprof_comm *a, *b;
	struct te_nprof_counts c0, c;
	void *ca = NULL, *cb = NULL;
	int mask = 0, mask2 = 0;
	size_t n;

	cur = d->sym;
	take(out, TE_STRAG_COMMS, &c0);
	ok(d->init(&ca, &mask, HASH_A, 8, 3) == TE_NCCL_SUCCESS && ca,
	   "v%d: init of communicator A gives a context", d->version);
	is_int(mask, TE_NCCL_EV_COLL | TE_NCCL_EV_KERNEL_CH,
	       "v%d: it asks for collectives and kernel channels only",
	       d->version);
	ok(d->init(&cb, &mask2, HASH_B, 2, 1) == TE_NCCL_SUCCESS && cb &&
		   cb != ca,
	   "v%d: communicator B gets its own", d->version);
	rounds(d, ca, cb);
	n = take(out, TE_STRAG_COMMS, &c);
	a = find(out, n, HASH_A);
	b = find(out, n, HASH_B);
	ok(n == 2 && a && b, "v%d: both communicators in the window (%zu)",
	   d->version, n);
	if (!a || !b)
		return;
	ok(a->st.count == ROUNDS && b->st.count == ROUNDS,
	   "v%d: %d collectives each, a collective's channels one (%llu, "
	   "%llu)",
	   d->version, ROUNDS, (unsigned long long)a->st.count,
	   (unsigned long long)b->st.count);
	ok(near(d, a->st.mean_ns, 3000000) && near(d, a->st.median_ns, 3000000),
	   "v%d: A waited its longer channel, 3 ms (mean %llu, median %llu)",
	   d->version, (unsigned long long)a->st.mean_ns,
	   (unsigned long long)a->st.median_ns);
	ok(near(d, b->st.mean_ns, 1000000) && near(d, b->st.median_ns, 1000000),
	   "v%d: B waited 1 ms (mean %llu, median %llu)", d->version,
	   (unsigned long long)b->st.mean_ns,
	   (unsigned long long)b->st.median_ns);
	ok(a->st.op == TE_STRAG_OP_ALL_REDUCE &&
		   b->st.op == TE_STRAG_OP_ALL_GATHER,
	   "v%d: the ops are NCCL's functions", d->version);
	ok(a->rank == 3 && b->rank == 1, "v%d: this process's ranks (%d, %d)",
	   d->version, a->rank, b->rank);
	ok(d->version == 3 ? a->nranks == 0 && b->nranks == 0
			   : a->nranks == 8 && b->nranks == 2,
	   "v%d: the communicators' sizes as init said (%d, %d)", d->version,
	   a->nranks, b->nranks);
	ok(c.channels - c0.channels == 3 * ROUNDS && c.refused == c0.refused &&
		   c.untimed == c0.untimed && c.contexts == 2,
	   "v%d: %d channels counted, nothing refused, 2 contexts open",
	   d->version, 3 * ROUNDS);
	ok(take(out, TE_STRAG_COMMS, NULL) == 0,
	   "v%d: the next window starts empty", d->version);
	same_seq(d, ca);
	ok(cur->finalize(ca) == TE_NCCL_SUCCESS &&
		   cur->finalize(cb) == TE_NCCL_SUCCESS,
	   "v%d: finalize", d->version);
	take(NULL, 0, &c);
	is_int(c.contexts, 0, "v%d: no context left open", d->version);
}

/* A handle shaped as the plugin's (a ring position and a tag) that it
 * never gave. */
static void *forged(uint64_t pos, unsigned tag)
{
	return (void *)(uintptr_t)((pos << 2) | tag);
}

/* Starts that must give no handle: foreign contexts, NULL arguments,
 * unknown types, garbage. */
static void bad_starts(void *ctx)
{
	static const uint64_t types[] = { 0,
					  3,
					  1u << 20,
					  TE_NCCL_EV_GROUP,
					  TE_NCCL_EV_P2P,
					  TE_NCCL_EV_PROXY_OP,
					  TE_NCCL_EV_GROUP_API,
					  TE_NCCL_EV_COLL_API,
					  TE_NCCL_EV_KERNEL_LAUNCH,
					  ~0ull };
	struct te_nccl_descr_v5 d5;
	struct te_nccl_descr_v3 d3;
	void *h, *none = NULL;
	size_t i;
	int all = 1;

	memset(&d5, 0, sizeof(d5));
	d5.type = TE_NCCL_EV_COLL;
	h = (void *)1;
	p5->startEvent(NULL, &h, &d5);
	all = all && !h;
	h = (void *)1;
	p5->startEvent((char *)ctx + 1, &h, &d5);
	all = all && !h;
	h = (void *)1;
	p5->startEvent((void *)0x1234, &h, &d5);
	all = all && !h;
	ok(all, "no handle for a context not the plugin's");
	ok(p5->startEvent(ctx, NULL, &d5) == TE_NCCL_SUCCESS,
	   "no handle pointer: nothing written");
	h = (void *)1;
	p5->startEvent(ctx, &h, NULL);
	ok(!h, "no descriptor: no handle");
	for (i = 0, all = 1; i < sizeof(types) / sizeof(types[0]); i++) {
		d5.type = types[i];
		h = (void *)1;
		p5->startEvent(ctx, &h, &d5);
		all = all && !h;
	}
	ok(all, "no handle for groups, API events and unknown types");
	memset(&d5, 0xa5, sizeof(d5));
	memset(&d3, 0xa5, sizeof(d3));
	h = (void *)1;
	p5->startEvent(ctx, &h, &d5);
	none = h;
	h = (void *)1;
	p3->startEvent(ctx, &h, &d3);
	ok(!none && !h, "a descriptor of garbage bytes: no handle");
	memset(&d5, 0, sizeof(d5));
	d5.type = TE_NCCL_EV_KERNEL_CH;
	for (i = 0, all = 1; i < 4; i++) {
		void *parents[] = { NULL, (void *)0xdeadbeef, forged(123456, 1),
				    forged(1, 2) };

		d5.parentObj = parents[i];
		h = (void *)1;
		p5->startEvent(ctx, &h, &d5);
		all = all && !h;
	}
	ok(all, "a kernel channel whose parent is no collective of the "
		"plugin's (NULL, garbage, forged, a channel): no handle");
}

/* Stops and states on handles NCCL never had. */
static void bad_handles(void *ctx)
{
	union te_nccl_state_args a = { .kernelCh = { 1004 } };
	void *c, *k;

	p5->stopEvent(NULL);
	p5->stopEvent((void *)0xdeadbeef);
	p5->stopEvent(forged(999999, 1));
	p5->stopEvent(forged(999999, 2));
	p5->recordEventState(NULL, TE_NCCL_STATE_KERNEL_CH_STOP, &a);
	p5->recordEventState(forged(77, 2), TE_NCCL_STATE_KERNEL_CH_STOP, &a);
	p5->recordEventState(forged(77, 2), 12345, NULL);
	c = start5(ctx, TE_NCCL_EV_COLL, NULL, 0, 0, UINT64_MAX, NULL, 0);
	ok(c != NULL, "a collective without a function name and the last "
		      "sequence number is followed");
	k = start5(ctx, TE_NCCL_EV_KERNEL_CH, c, 0, 0, 0, NULL, 1000);
	p5->recordEventState(k, TE_NCCL_STATE_KERNEL_CH_STOP, NULL);
	p5->recordEventState(k, 3, NULL);
	p5->recordEventState(k, TE_NCCL_STATE_KERNEL_CH_STOP, &a);
	p5->stopEvent(k);
	p5->stopEvent(k);
	p5->stopEvent(c);
	p5->finalize(NULL);
	p5->finalize((void *)0x10);
	p5->finalize((char *)ctx + 1);
}

/* More channels in flight than the ring: the overwritten ones are refused
 * at their stop, the others counted. */
static void overflow(void *ctx)
{
	enum {
		N = 5000
	};
	static void *k[N];
	struct te_nprof_counts c0, c;
	void *coll =
		start5(ctx, TE_NCCL_EV_COLL, NULL, 0, 0, 7, "AllReduce", 0);
	union te_nccl_state_args a;
	int i;

	take(NULL, 0, &c0);
	for (i = 0; i < N; i++)
		k[i] = start5(ctx, TE_NCCL_EV_KERNEL_CH, coll, 0, 0, 0, NULL,
			      (uint64_t)i + 1);
	a.kernelCh.pTimer = 100000;
	p5->recordEventState(k[0], TE_NCCL_STATE_KERNEL_CH_STOP, &a);
	p5->stopEvent(k[0]);
	p5->recordEventState(k[N - 1], TE_NCCL_STATE_KERNEL_CH_STOP, &a);
	p5->stopEvent(k[N - 1]);
	take(NULL, 0, &c);
	ok(k[0] && k[N - 1] && c.refused - c0.refused == 2 &&
		   c.channels - c0.channels == 1,
	   "%d channels in flight: the first, overwritten, refused; the last "
	   "counted",
	   N);
}

/* More communicators than the table: each init succeeds (the mask is
 * NCCL's for all), the ones over it are not followed. */
static void many_comms(void)
{
	enum {
		N = 70
	};
	void *ctx[N], *h;
	struct te_nprof_counts c;
	struct te_nccl_descr_v5 d;
	int mask, i, all = 1, followed = 0;

	for (i = 0; i < N; i++) {
		all = all && p5->init(&ctx[i], 0x1000 + (uint64_t)i, &mask, "c",
				      1, 2, 0, NULL) == TE_NCCL_SUCCESS;
		followed += ctx[i] != NULL;
	}
	memset(&d, 0, sizeof(d));
	d.type = TE_NCCL_EV_COLL;
	h = (void *)1;
	p5->startEvent(ctx[N - 1], &h, &d);
	take(NULL, 0, &c);
	ok(all && followed == 64 && c.no_ctx == N - 64 && !ctx[N - 1] && !h,
	   "%d communicators: 64 followed, %d not (%d, %llu)", N, N - 64,
	   followed, (unsigned long long)c.no_ctx);
	for (i = 0; i < N; i++)
		if (ctx[i])
			p5->finalize(ctx[i]);
	take(NULL, 0, &c);
	is_int(c.contexts, 0, "all finalized");
}

static void bad_inputs(void)
{
	struct te_nprof_comm out[TE_STRAG_COMMS];
	struct te_nprof_counts c0, c;
	void *ctx = NULL;
	int mask = 0;
	size_t n;

	cur = p5;
	take(NULL, 0, &c0);
	ok(p5->init(NULL, 1, &mask, "c", 1, 4, 0, NULL) != TE_NCCL_SUCCESS &&
		   p5->init(&ctx, 1, NULL, "c", 1, 4, 0, NULL) !=
			   TE_NCCL_SUCCESS &&
		   p3->init(NULL, NULL) != TE_NCCL_SUCCESS,
	   "init without its pointers fails (NCCL goes on without)");
	ok(p5->init(&ctx, 0xcc, &mask, "c", 1, 4, 0, NULL) == 0 && ctx,
	   "a communicator for the bad calls");
	bad_starts(ctx);
	bad_handles(ctx);
	n = take(out, TE_STRAG_COMMS, &c);
	ok(n == 1 && out[0].st.comm_hash == 0xcc && out[0].st.count == 1 &&
		   out[0].st.mean_ns == 4,
	   "of it all, the one real channel is counted (%zu, %llu)", n,
	   n ? (unsigned long long)out[0].st.count : 0ull);
	/* 8 starts (3 contexts, a descriptor, 4 parents), 4 stops, 2
	 * states, a second stop, 3 finalizes; unknown types and states are
	 * not NCCL's mistakes: not counted */
	is_int(c.refused - c0.refused, 18, "the rest was refused and counted");
	overflow(ctx);
	p5->finalize(ctx);
	many_comms();
	ok(take(out, 1, NULL) <= 1, "take writes at most max");
}

/* NCCL's threads: the user's enqueues collectives, a proxy thread per
 * communicator runs their kernel channels, two communicators at once. */
enum {
	THR_COLLS = 3000
};
struct thr {
	void *ctx;
	void *handle[THR_COLLS];
	int published, consumed; /* atomic */
	int bad;
};

/* Waits until *x >= want, 10 s at most; 0 or -1. */
static int wait_for(int *x, int want)
{
	time_t end = time(NULL) + 10;

	while (__atomic_load_n(x, __ATOMIC_ACQUIRE) < want)
		if (time(NULL) > end)
			return -1;
		else
			sched_yield();
	return 0;
}

static void *user_thread(void *arg)
{
	struct thr *t = arg;
	int i;

	for (i = 0; i < THR_COLLS; i++) {
		/* NCCL keeps a bounded number of collectives in flight (far
		 * below the plugin's ring): 256 here */
		if (wait_for(&t->consumed, i - 256) < 0) {
			__atomic_fetch_add(&t->bad, 1, __ATOMIC_RELAXED);
			break;
		}
		t->handle[i] = start5(t->ctx, TE_NCCL_EV_COLL, NULL, 0, 0,
				      (uint64_t)i, "AllReduce", 0);
		__atomic_store_n(&t->published, i + 1, __ATOMIC_RELEASE);
		p5->stopEvent(t->handle[i]);
	}
	return NULL;
}

static void *proxy_thread(void *arg)
{
	struct thr *t = arg;
	union te_nccl_state_args a;
	int i, c;

	for (i = 0; i < THR_COLLS; i++) {
		if (wait_for(&t->published, i + 1) < 0) {
			__atomic_fetch_add(&t->bad, 1, __ATOMIC_RELAXED);
			break;
		}
		for (c = 0; c < 2; c++) {
			void *k = start5(t->ctx, TE_NCCL_EV_KERNEL_CH,
					 t->handle[i], 0, 0, 0, NULL, 1000);

			if (!k)
				__atomic_fetch_add(&t->bad, 1,
						   __ATOMIC_RELAXED);
			a.kernelCh.pTimer = 1000 + 2000 + (uint64_t)c;
			p5->recordEventState(k, TE_NCCL_STATE_KERNEL_CH_STOP,
					     &a);
			p5->stopEvent(k);
		}
		__atomic_store_n(&t->consumed, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void threads(void)
{
	static struct thr t[2];
	struct te_nprof_comm out[TE_STRAG_COMMS];
	struct te_nprof_counts c0, c;
	pthread_t th[4];
	int mask, i, run = 1;
	size_t n;

	take(NULL, 0, &c0);
	for (i = 0; i < 2; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		p5->init(&t[i].ctx, 0x7700 + (uint64_t)i, &mask, "t", 1, 2, 0,
			 NULL);
	}
	for (i = 0; i < 4 && run; i++)
		run = !pthread_create(&th[i], NULL,
				      i % 2 ? proxy_thread : user_thread,
				      &t[i / 2]);
	if (!run) {
		tap_skip("no threads here");
		return;
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	n = take(out, TE_STRAG_COMMS, &c);
	ok(n == 2 && out[0].st.count == THR_COLLS &&
		   out[1].st.count == THR_COLLS && out[0].st.mean_ns == 2001 &&
		   !t[0].bad && !t[1].bad &&
		   c.channels - c0.channels == 4 * THR_COLLS &&
		   c.refused == c0.refused,
	   "2 communicators, a user and a proxy thread each: %d collectives "
	   "each, every channel counted (%zu comms, %d and %d refused)",
	   THR_COLLS, n, t[0].bad, t[1].bad);
	p5->finalize(t[0].ctx);
	p5->finalize(t[1].ctx);
}

int main(void)
{
	void *lib = dlopen(TE_NPROF_SO, RTLD_NOW | RTLD_LOCAL);
	struct drv drv[3] = {
		{ 5, "ncclProfiler_v5", init5, start5, NULL },
		{ 4, "ncclProfiler_v4", init4, start4, NULL },
		{ 3, "ncclProfiler_v3", init3, start3, NULL },
	};
	int i;

	if (!lib) {
		printf("not ok 1 - dlopen %s: %s\n1..1\n", TE_NPROF_SO,
		       dlerror());
		return 1;
	}
	ok(!dlsym(lib, "ncclProfiler_v7") && !dlsym(lib, "ncclProfiler_v6"),
	   "v7 and v6 not claimed (their NCCL loads v5)");
	p5 = dlsym(lib, "ncclProfiler_v5");
	p4 = dlsym(lib, "ncclProfiler_v4");
	p3 = dlsym(lib, "ncclProfiler_v3");
	take = (te_nprof_take_fn)dlsym(lib, TE_NPROF_TAKE_SYMBOL);
	ok(p5 && p4 && p3 && take, "ncclProfiler_v5, _v4, _v3 and %s found",
	   TE_NPROF_TAKE_SYMBOL);
	ok(!dlsym(lib, "ncclProfiler_v2") && !dlsym(lib, "ncclProfiler_v1"),
	   "v2 and v1 not claimed (no kernel channel events)");
	ok(!dlsym(lib, "te_strag_rank_event"),
	   "core/straggler/ is not exported into the user's program");
	if (!p5 || !p4 || !p3 || !take)
		return tap_done();
	drv[0].sym = p5;
	drv[1].sym = p4;
	drv[2].sym = p3;
	for (i = 0; i < 3; i++)
		is_str(((struct te_nccl_profiler_v5 *)drv[i].sym)->name,
		       TE_NPROF_NAME, "%s's name", drv[i].name);
	for (i = 0; i < 3; i++)
		scenario(&drv[i]);
	bad_inputs();
	threads();
	dlclose(lib);
	return tap_done();
}
