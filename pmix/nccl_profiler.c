/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libnccl-profiler-trainenv.so: trainenv's NCCL profiler plugin (issue 36
 * item 1, stragglers without code). NCCL loads it by NCCL_PROFILER_PLUGIN
 * into the user's program and calls it (nccl_profiler_abi.h says how, per
 * interface version: v5, v4, v3). It asks for collective and kernel
 * channel events only, and hands each kernel channel's wait (from the
 * channel's start to its end, on this process's clocks only: the GPU's
 * globaltimer from v4 on, the host's monotonic clock in v3) to the rank's
 * bookkeeping of core/straggler/ (te_strag_rank_event), keyed by the
 * communicator's hash and the collective's sequence number.
 *
 * Cost and bounds: no allocation after load, no lock on the collective's
 * path and one uncontended mutex per kernel channel's stop
 * (tests/bench/bench_nccl_profiler). Handles are tokens, not pointers: a
 * ring position with a tag, checked against the slot's generation, so that
 * a handle that is stale (stopped twice, overwritten after the ring went
 * round) or not the plugin's at all is refused and counted, never
 * followed. A kernel channel copies its collective's key at its start, so
 * a collective's slot may be reused once NCCL stopped it. Each
 * communicator has its own rings (a busy one never overwrites a slow
 * one's): TE_NPROF_COLLS collectives enqueued ahead of their kernels, and
 * TE_NPROF_KCHS kernel channels running (a communicator's kernels run in
 * order on its stream: one or two collectives' channels at a time). A
 * pointer in a descriptor (the function's name) is NCCL's and is read as
 * given; NULL is allowed.
 *
 * The step-aside (a plugin of the user's own in NCCL_PROFILER_PLUGIN) is
 * slurmstepd's, which sets NCCL_PROFILER_PLUGIN only where the job has
 * none (spank/stepd_straggler.c); the sender to srun is
 * nccl_profiler_send.c. */
#include "config.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "nccl_profiler.h"
#include "nccl_profiler_abi.h"
#include "straggler/straggler.h"

#define TE_NPROF_CTXS 64 /* powers of 2 */
#define TE_NPROF_COLLS 1024
#define TE_NPROF_KCHS 1024

_Static_assert(
	sizeof(void *) != 8 ||
		(offsetof(struct te_nccl_descr_v3, coll.commHash) == 32 &&
		 offsetof(struct te_nccl_descr_v3, coll.func) == 48 &&
		 offsetof(struct te_nccl_descr_v4, coll.seqNumber) == 24 &&
		 offsetof(struct te_nccl_descr_v4, kernelCh.pTimer) == 32 &&
		 offsetof(struct te_nccl_descr_v5, kernelCh.pTimer) == 32),
	"NCCL's descriptor layout on LP64");

/* One communicator (NCCL's context). */
struct nprof_ctx {
	int in_use;
	int32_t rank, nranks;
	uint64_t comm_hash; /* 0 until known (v3: its first collective) */
};

/* A collective in flight: what its kernel channels need. */
struct nprof_coll {
	uint64_t gen; /* its token's position; 0 while written */
	uint64_t comm_hash, key;
	uint32_t op;
};

/* A kernel channel in flight. */
struct nprof_kch {
	uint64_t gen;
	uint64_t comm_hash, key;
	uint64_t start, stop; /* ns: the GPU's (gpu) or the host's */
	uint32_t op, gpu;
};

/* The event's fields, whatever the version. */
struct nprof_ev {
	uint64_t type;
	void *parent;
	int rank;
	uint64_t comm_hash, seq, ptimer;
	const char *func;
};

/* A handle: the ring position, the communicator's slot, a tag. */
enum {
	TAG_COLL = 1,
	TAG_KCH = 2,
	TAG_BITS = 2,
	CTX_BITS = 6
};
_Static_assert(TE_NPROF_CTXS == 1 << CTX_BITS, "a slot in CTX_BITS");

/* A communicator's rings: its collectives and kernel channels in flight
 * (its own, so that a busy communicator never overwrites a slow one's). */
struct nprof_rings {
	uint64_t coll_next, kch_next; /* atomic */
	struct nprof_coll coll[TE_NPROF_COLLS];
	struct nprof_kch kch[TE_NPROF_KCHS];
};

static pthread_mutex_t nprof_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nprof_ctx nprof_ctx[TE_NPROF_CTXS]; /* under the lock */
static struct te_strag_rank nprof_rank;		  /* under the lock */
static struct te_nprof_counts nprof_counts;	  /* under the lock */
static uint64_t nprof_refused, nprof_untimed;	  /* atomic */
/* in the BSS: pages are touched only by the communicators in use */
static struct nprof_rings nprof_rings[TE_NPROF_CTXS];

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static void refuse(void)
{
	__atomic_fetch_add(&nprof_refused, 1, __ATOMIC_RELAXED);
}

static uint64_t host_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* NCCL's function names (ncclFuncToString) as core/straggler/'s ops. */
static unsigned op_of(const char *func)
{
	static const struct {
		const char *name;
		unsigned op;
	} ops[] = {
		{ "AllReduce", TE_STRAG_OP_ALL_REDUCE },
		{ "AllGather", TE_STRAG_OP_ALL_GATHER },
		{ "ReduceScatter", TE_STRAG_OP_REDUCE_SCATTER },
		{ "Broadcast", TE_STRAG_OP_BROADCAST },
		{ "Reduce", TE_STRAG_OP_REDUCE },
		{ "AllToAll", TE_STRAG_OP_ALL_TO_ALL },
		{ "AlltoAll", TE_STRAG_OP_ALL_TO_ALL },
		{ "SendRecv", TE_STRAG_OP_SEND_RECV },
		{ "Send", TE_STRAG_OP_SEND_RECV },
		{ "Recv", TE_STRAG_OP_SEND_RECV },
	};
	size_t i;

	if (!func)
		return TE_STRAG_OP_OTHER;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(func, ops[i].name))
			return ops[i].op;
	return TE_STRAG_OP_OTHER;
}

static struct nprof_ctx *ctx_of(void *context)
{
	uintptr_t p = (uintptr_t)context, base = (uintptr_t)nprof_ctx;

	if (p < base || p >= base + sizeof(nprof_ctx) ||
	    (p - base) % sizeof(nprof_ctx[0]))
		return NULL;
	return context;
}

static uint64_t token(uint64_t pos, unsigned ctx, unsigned tag)
{
	return (pos << (TAG_BITS + CTX_BITS)) | ((uint64_t)ctx << TAG_BITS) |
	       tag;
}

/* The handle's token if it has that tag (0 if not), and its rings. */
static uint64_t token_of(void *handle, unsigned tag, struct nprof_rings **r)
{
	uint64_t t = (uintptr_t)handle;

	if ((t & ((1u << TAG_BITS) - 1)) != tag ||
	    !(t >> (TAG_BITS + CTX_BITS)))
		return 0;
	*r = &nprof_rings[(t >> TAG_BITS) & (TE_NPROF_CTXS - 1)];
	return t;
}

static uint64_t ring_pos(uint64_t token)
{
	return token >> (TAG_BITS + CTX_BITS);
}

/* ---- init and finalize ---- */

static te_nccl_result_t ctx_open(void **context, int *mask, uint64_t hash,
				 int nranks, int rank)
{
	unsigned i;

	if (!context || !mask)
		return TE_NCCL_INVALID_ARGUMENT;
	*mask = TE_NPROF_MASK;
	*context = NULL;
	pthread_mutex_lock(&nprof_lock);
	/* a slot never used first: a finalized one keeps its rank for the
	 * window's take */
	for (i = 0; i < TE_NPROF_CTXS; i++)
		if (!nprof_ctx[i].in_use && !nprof_ctx[i].comm_hash)
			break;
	if (i == TE_NPROF_CTXS)
		for (i = 0; i < TE_NPROF_CTXS; i++)
			if (!nprof_ctx[i].in_use)
				break;
	if (i < TE_NPROF_CTXS) {
		nprof_ctx[i].in_use = 1;
		nprof_ctx[i].comm_hash = hash;
		nprof_ctx[i].nranks = nranks > 0 ? nranks : 0;
		nprof_ctx[i].rank = rank >= 0 ? rank : -1;
		*context = &nprof_ctx[i];
	} else {
		nprof_counts.no_ctx++;
	}
	pthread_mutex_unlock(&nprof_lock);
	te_nprof_sender_start(trainenv_nccl_profiler_take);
	/* a communicator over the table goes on without the plugin's data:
	 * the mask is NCCL's for every communicator */
	return TE_NCCL_SUCCESS;
}

static te_nccl_result_t init_v3(void **context, int *mask)
{
	return ctx_open(context, mask, 0, 0, -1);
}

static te_nccl_result_t init_v4(void **context, int *mask, const char *name,
				uint64_t hash, int nnodes, int nranks, int rank,
				te_nccl_logger_t logfn)
{
	return ctx_open(context, mask, hash, nranks, rank);
}

static te_nccl_result_t init_v5(void **context, uint64_t id, int *mask,
				const char *name, int nnodes, int nranks,
				int rank, te_nccl_logger_t logfn)
{
	return ctx_open(context, mask, id, nranks, rank);
}

/* The communicator is gone; its window's data stays until it is taken,
 * and its slot keeps its hash and rank for that. */
static te_nccl_result_t finalize(void *context)
{
	struct nprof_ctx *c = ctx_of(context);

	if (!c) {
		refuse();
		return TE_NCCL_SUCCESS;
	}
	pthread_mutex_lock(&nprof_lock);
	c->in_use = 0;
	pthread_mutex_unlock(&nprof_lock);
	return TE_NCCL_SUCCESS;
}

/* ---- events ---- */

static void *coll_start(struct nprof_ctx *c, const struct nprof_ev *e)
{
	uint64_t hash = e->comm_hash ? e->comm_hash : LOAD(c->comm_hash);
	unsigned ci = (unsigned)(c - nprof_ctx), op = op_of(e->func);
	struct nprof_rings *r = &nprof_rings[ci];
	uint64_t pos = __atomic_add_fetch(&r->coll_next, 1, __ATOMIC_RELAXED);
	uint64_t tok = token(pos, ci, TAG_COLL);
	struct nprof_coll *s = &r->coll[pos & (TE_NPROF_COLLS - 1)];

	if (!LOAD(c->comm_hash) && hash)
		STORE(c->comm_hash, hash); /* v3: known from here on */
	if (e->rank >= 0 && LOAD(c->rank) < 0)
		STORE(c->rank, e->rank);
	STORE(s->gen, 0);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	STORE(s->comm_hash, hash);
	/* NCCL counts each collective function apart: the op is part of
	 * the key, so that all_gather #5 after reduce_scatter #5 is another
	 * collective for te_strag_rank_event */
	STORE(s->key, e->seq * TE_STRAG_OPS + op);
	STORE(s->op, op);
	__atomic_store_n(&s->gen, tok, __ATOMIC_RELEASE);
	return (void *)(uintptr_t)tok;
}

/* The collective's slot of a handle, NULL when stale or not one. */
static struct nprof_coll *coll_of(void *handle, struct nprof_rings **r,
				  uint64_t *tok)
{
	struct nprof_coll *s;

	*tok = token_of(handle, TAG_COLL, r);
	if (!*tok)
		return NULL;
	s = &(*r)->coll[ring_pos(*tok) & (TE_NPROF_COLLS - 1)];
	return __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) == *tok ? s : NULL;
}

/* Copies the collective's fields into k; its rings, or NULL when the
 * parent is stale or not a collective's handle. */
static struct nprof_rings *coll_copy(void *parent, struct nprof_kch *k)
{
	struct nprof_rings *r = NULL;
	uint64_t pos;
	struct nprof_coll *s = coll_of(parent, &r, &pos);

	if (!s)
		return NULL;
	k->comm_hash = LOAD(s->comm_hash);
	k->key = LOAD(s->key);
	k->op = LOAD(s->op);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return LOAD(s->gen) == pos ? r : NULL; /* not rewritten meanwhile */
}

static void *kch_start(const struct nprof_ev *e)
{
	struct nprof_kch k;
	struct nprof_rings *r = coll_copy(e->parent, &k);
	uint64_t pos, tok;
	struct nprof_kch *s;

	if (!r || !k.comm_hash) {
		refuse();
		return NULL;
	}
	pos = __atomic_add_fetch(&r->kch_next, 1, __ATOMIC_RELAXED);
	tok = token(pos, (unsigned)(r - nprof_rings), TAG_KCH);
	s = &r->kch[pos & (TE_NPROF_KCHS - 1)];
	STORE(s->gen, 0);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	STORE(s->comm_hash, k.comm_hash);
	STORE(s->key, k.key);
	STORE(s->op, k.op);
	STORE(s->gpu, e->ptimer ? 1u : 0u);
	STORE(s->start, e->ptimer ? e->ptimer : host_ns());
	STORE(s->stop, 0);
	__atomic_store_n(&s->gen, tok, __ATOMIC_RELEASE);
	return (void *)(uintptr_t)tok;
}

static struct nprof_kch *kch_of(void *handle, uint64_t *tok)
{
	struct nprof_rings *r = NULL;
	struct nprof_kch *s;

	*tok = token_of(handle, TAG_KCH, &r);
	if (!*tok)
		return NULL;
	s = &r->kch[ring_pos(*tok) & (TE_NPROF_KCHS - 1)];
	return __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) == *tok ? s : NULL;
}

/* The channel's end: its wait goes to the bookkeeping. */
static void kch_stop(void *handle)
{
	uint64_t pos, start, stop, hash, key, wait;
	struct nprof_kch *s = kch_of(handle, &pos);
	unsigned op;
	int gpu;

	if (!s ||
	    !__atomic_compare_exchange_n(&s->gen, &pos, 0, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED)) {
		refuse(); /* stopped twice, or overwritten */
		return;
	}
	/* the slot is ours: gen 0 keeps others off until reused */
	start = LOAD(s->start);
	stop = LOAD(s->stop);
	hash = LOAD(s->comm_hash);
	key = LOAD(s->key);
	op = LOAD(s->op);
	gpu = (int)LOAD(s->gpu);
	if (!gpu)
		stop = host_ns();
	if (!stop || stop < start) {
		__atomic_fetch_add(&nprof_untimed, 1, __ATOMIC_RELAXED);
		return;
	}
	wait = stop - start;
	pthread_mutex_lock(&nprof_lock);
	te_strag_rank_event(&nprof_rank, hash, key, op, wait);
	nprof_counts.channels++;
	pthread_mutex_unlock(&nprof_lock);
}

static te_nccl_result_t start_event(void *context, void **handle,
				    const struct nprof_ev *e)
{
	struct nprof_ctx *c = ctx_of(context);

	if (!handle)
		return TE_NCCL_SUCCESS;
	*handle = NULL;
	if (!c) {
		refuse();
		return TE_NCCL_SUCCESS;
	}
	if (e->type == TE_NCCL_EV_COLL)
		*handle = coll_start(c, e);
	else if (e->type == TE_NCCL_EV_KERNEL_CH)
		*handle = kch_start(e);
	/* group, API and the other events: no handle, nothing to follow */
	return TE_NCCL_SUCCESS;
}

static te_nccl_result_t stop_event(void *handle)
{
	struct nprof_rings *r;
	uint64_t tok;

	if (token_of(handle, TAG_KCH, &r))
		kch_stop(handle);
	else if (!coll_of(handle, &r, &tok))
		refuse();
	/* a collective's slot stays for its kernel channels (they copy
	 * it), until the ring comes round */
	return TE_NCCL_SUCCESS;
}

static te_nccl_result_t record_state(void *handle, int state,
				     union te_nccl_state_args *args)
{
	struct nprof_rings *r;
	struct nprof_kch *s;
	uint64_t pos;

	if (state != TE_NCCL_STATE_KERNEL_CH_STOP ||
	    !token_of(handle, TAG_KCH, &r))
		return TE_NCCL_SUCCESS; /* states the plugin does not follow */
	s = kch_of(handle, &pos);
	if (!s || !args) {
		refuse();
		return TE_NCCL_SUCCESS;
	}
	if (LOAD(s->gpu))
		STORE(s->stop, args->kernelCh.pTimer);
	return TE_NCCL_SUCCESS;
}

/* ---- the versions' entry points ---- */

static te_nccl_result_t start_v3(void *context, void **handle,
				 struct te_nccl_descr_v3 *d)
{
	struct nprof_ev e = { 0 };

	if (!d) {
		refuse();
		return handle ? (*handle = NULL, TE_NCCL_SUCCESS)
			      : TE_NCCL_SUCCESS;
	}
	e.type = d->type;
	e.parent = d->parentObj;
	e.rank = d->rank;
	if (e.type == TE_NCCL_EV_COLL) {
		e.comm_hash = d->coll.commHash;
		e.seq = d->coll.seqNumber;
		e.func = d->coll.func;
	}
	return start_event(context, handle, &e);
}

static te_nccl_result_t start_v4(void *context, void **handle,
				 struct te_nccl_descr_v4 *d)
{
	struct nprof_ev e = { 0 };

	if (!d) {
		refuse();
		return handle ? (*handle = NULL, TE_NCCL_SUCCESS)
			      : TE_NCCL_SUCCESS;
	}
	e.type = d->type;
	e.parent = d->parentObj;
	e.rank = d->rank;
	if (e.type == TE_NCCL_EV_COLL) {
		e.seq = d->coll.seqNumber;
		e.func = d->coll.func;
	} else if (e.type == TE_NCCL_EV_KERNEL_CH) {
		e.ptimer = d->kernelCh.pTimer;
	}
	return start_event(context, handle, &e);
}

static te_nccl_result_t start_v5(void *context, void **handle,
				 struct te_nccl_descr_v5 *d)
{
	struct nprof_ev e = { 0 };

	if (!d) {
		refuse();
		return handle ? (*handle = NULL, TE_NCCL_SUCCESS)
			      : TE_NCCL_SUCCESS;
	}
	e.type = d->type;
	e.parent = d->parentObj;
	e.rank = d->rank;
	if (e.type == TE_NCCL_EV_COLL) {
		e.seq = d->coll.seqNumber;
		e.func = d->coll.func;
	} else if (e.type == TE_NCCL_EV_KERNEL_CH) {
		e.ptimer = d->kernelCh.pTimer;
	}
	return start_event(context, handle, &e);
}

/* What NCCL looks up (pmix/nccl-profiler.map exports these and the take
 * below only). */
struct te_nccl_profiler_v5 ncclProfiler_v5 = {
	.name = TE_NPROF_NAME,
	.init = init_v5,
	.startEvent = start_v5,
	.stopEvent = stop_event,
	.recordEventState = record_state,
	.finalize = finalize,
};
struct te_nccl_profiler_v4 ncclProfiler_v4 = {
	.name = TE_NPROF_NAME,
	.init = init_v4,
	.startEvent = start_v4,
	.stopEvent = stop_event,
	.recordEventState = record_state,
	.finalize = finalize,
};
struct te_nccl_profiler_v3 ncclProfiler_v3 = {
	.name = TE_NPROF_NAME,
	.init = init_v3,
	.startEvent = start_v3,
	.stopEvent = stop_event,
	.recordEventState = record_state,
	.finalize = finalize,
};

/* The communicator of that hash, an open one first (a finalized slot
 * may hold the same hash from before), under the lock. */
static const struct nprof_ctx *ctx_by_hash(uint64_t hash)
{
	const struct nprof_ctx *closed = NULL;
	unsigned i;

	for (i = 0; i < TE_NPROF_CTXS; i++) {
		if (LOAD(nprof_ctx[i].comm_hash) != hash)
			continue;
		if (nprof_ctx[i].in_use)
			return &nprof_ctx[i];
		if (!closed)
			closed = &nprof_ctx[i];
	}
	return closed;
}

size_t trainenv_nccl_profiler_take(struct te_nprof_comm *out, size_t max,
				   struct te_nprof_counts *counts)
{
	struct te_strag_stat st[TE_STRAG_COMMS];
	size_t n, i;
	unsigned c;

	pthread_mutex_lock(&nprof_lock);
	n = te_strag_rank_take(&nprof_rank, st, TE_STRAG_COMMS);
	if (!out)
		max = 0;
	for (i = 0; i < n && i < max; i++) {
		const struct nprof_ctx *x = ctx_by_hash(st[i].comm_hash);

		out[i].st = st[i];
		out[i].rank = x ? LOAD(x->rank) : -1;
		out[i].nranks = x ? x->nranks : 0;
	}
	if (counts) {
		*counts = nprof_counts;
		counts->refused = LOAD(nprof_refused);
		counts->untimed = LOAD(nprof_untimed);
		counts->evicted = nprof_rank.evicted;
		counts->contexts = 0;
		for (c = 0; c < TE_NPROF_CTXS; c++)
			counts->contexts += nprof_ctx[c].in_use ? 1u : 0u;
	}
	pthread_mutex_unlock(&nprof_lock);
	return i;
}
