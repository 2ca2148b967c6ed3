/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier coordinator's connection table (rank 0, pmix/barrier.c):
 * slots for the job's helpers, and apart from them a bounded pool for the
 * connections that have not shown the token yet (rdzv_core.h,
 * "strangers"): a short deadline, the oldest dropped when the pool is
 * full. Accepting never spins: out of descriptors, a stranger is dropped
 * to make room, or the listener is left alone for TE_LISTEN_PAUSE_MS.
 * Every operation is O(1) but the release of all slots. No PMIx here:
 * unit-tested with real sockets (tests/unit/pmix/test_coord_conns.c). */
#ifndef TE_COORD_CONNS_H
#define TE_COORD_CONNS_H

#include <stddef.h>
#include <stdint.h>

#include "launch/rdzv_core.h"

#define TE_NO_CONN ((size_t)-1)
/* Accepts per wake of the listener: fewer than the pool holds, so that a
 * flood cannot push out a helper whose first line is already on its way
 * before the next wake reads it. */
#define TE_ACCEPT_BURST 16
#define TE_LISTEN_PAUSE_MS 100

struct te_coord_conn {
	int fd; /* -1: free slot */
	size_t len;
	int64_t since;		/* accepted (monotonic ms) */
	int registered;		/* it sent a line with the token */
	char host[TE_HOST_MAX]; /* the node it spoke for ("" not yet) */
	uint32_t rank;		/* the rank of its first line */
	int has_rank;
	int leaving;	     /* asked for the report: its deadline passed */
	int wants_state;     /* launch tree: waits for the report from above */
	int probe_sent;	     /* launch tree: told rank 0's checkpoint probe */
	size_t older, newer; /* the pool's queue, while not registered */
	char buf[TE_COORD_LINE_MAX + 1];
};

struct te_coord_conns {
	struct te_coord_conn *c;
	size_t cap; /* helpers' slots + the pool */
	size_t *free_slots, nfree;
	size_t pool_max, npool;
	size_t oldest, newest; /* the pool, in the order accepted */
	int64_t paused_until;  /* listener left alone until then; 0: not */
	unsigned long evicted, expired, refused; /* for tests */
};

/* helpers slots plus a pool of pool_max. 0, or -1 (out of memory). */
int te_cc_init(struct te_coord_conns *t, size_t helpers, size_t pool_max);
/* Closes every connection and frees the table. */
void te_cc_free(struct te_coord_conns *t);

enum te_cc_accept {
	TE_CC_NEW,   /* *slot holds a new connection (in the pool) */
	TE_CC_AGAIN, /* nothing taken, call again (within the burst) */
	TE_CC_NONE,  /* nothing waiting */
	TE_CC_PAUSE, /* out of descriptors: take the listener out of
			   the poll set until te_cc_resume_due() */
};
/* One accept on the non-blocking listener lfd. */
enum te_cc_accept te_cc_accept(struct te_coord_conns *t, int lfd, int64_t now,
			       size_t *slot);
/* What to do after accept failed with e (exposed for the unit test). */
enum te_cc_accept te_cc_accept_error(int e);
/* 1 (once) when a paused listener is due back in the poll set. */
int te_cc_resume_due(struct te_coord_conns *t, int64_t now);

/* What the coordinator's loop calls (pmix/barrier.c), in this order:
 * when lfd is readable, te_cc_accept_burst: at most TE_ACCEPT_BURST
 * accepts, on_new(ctx, slot) for each new connection (it adds the slot's
 * fd to its poll set, or releases the slot); out of descriptors with no
 * stranger to drop, lfd leaves epfd. Then, every turn, te_cc_tick: the
 * pool's deadlines, a paused lfd back into epfd (EPOLLIN, listen_tag);
 * returns the next time something is due (te_cc_next_due). */
void te_cc_accept_burst(struct te_coord_conns *t, int lfd, int epfd,
			int64_t now, void (*on_new)(void *ctx, size_t slot),
			void *ctx);
int64_t te_cc_tick(struct te_coord_conns *t, int lfd, int epfd,
		   uint64_t listen_tag, int64_t now);

/* Slot i sent a line with the token: it leaves the pool for good. */
void te_cc_registered(struct te_coord_conns *t, size_t i);
/* Closes slot i and frees it (the caller has done its own accounting). */
void te_cc_release(struct te_coord_conns *t, size_t i);
/* Closes the pool's connections past their deadline; returns how many. */
size_t te_cc_reap(struct te_coord_conns *t, int64_t now);
/* The next time something is due: the pool's oldest deadline, or the
 * listener's return; INT64_MAX when nothing is. */
int64_t te_cc_next_due(const struct te_coord_conns *t);

#endif
