/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stragglers: each rank's waits inside collectives per communicator and
 * window, with a histogram for the median (straggler.h, part 1). */
#include "config.h"

#include <string.h>

#include "straggler/straggler.h"

static const char *const op_names[TE_STRAG_OPS] = {
	[TE_STRAG_OP_ALL_REDUCE] = "all_reduce",
	[TE_STRAG_OP_ALL_GATHER] = "all_gather",
	[TE_STRAG_OP_REDUCE_SCATTER] = "reduce_scatter",
	[TE_STRAG_OP_BROADCAST] = "broadcast",
	[TE_STRAG_OP_REDUCE] = "reduce",
	[TE_STRAG_OP_ALL_TO_ALL] = "all_to_all",
	[TE_STRAG_OP_SEND_RECV] = "send_recv",
	[TE_STRAG_OP_OTHER] = "other",
};

const char *te_strag_op_name(unsigned op)
{
	return op < TE_STRAG_OPS ? op_names[op] : op_names[TE_STRAG_OP_OTHER];
}

int te_strag_op_of(const char *name, size_t len)
{
	int i;

	for (i = 0; i < TE_STRAG_OPS; i++)
		if (strlen(op_names[i]) == len &&
		    !memcmp(op_names[i], name, len))
			return i;
	return -1;
}

/* Quarter octaves: below 4 ns one bucket per ns, then 4 per power of 2,
 * the two bits under the top one choosing among them. */
unsigned te_strag_bucket(uint64_t ns)
{
	unsigned e, b;

	if (ns < 4)
		return (unsigned)ns;
	e = 63u - (unsigned)__builtin_clzll(ns);
	b = 4u * (e - 1u) + (unsigned)((ns >> (e - 2u)) & 3u);
	return b < TE_STRAG_BUCKETS ? b : TE_STRAG_BUCKETS - 1;
}

/* The middle of bucket b. */
static uint64_t bucket_mid(unsigned b)
{
	unsigned e = b / 4u + 1u, sub = b % 4u;
	uint64_t lo, hi;

	if (b < 4)
		return b;
	lo = (uint64_t)(4u + sub) << (e - 2u);
	hi = (uint64_t)(5u + sub) << (e - 2u);
	return lo + (hi - lo) / 2;
}

uint64_t te_strag_hist_median(const uint32_t *hist, uint64_t count)
{
	uint64_t seen = 0, mid = (count + 1) / 2;
	unsigned b;

	if (!count)
		return 0;
	for (b = 0; b < TE_STRAG_BUCKETS; b++) {
		seen += hist[b];
		if (seen >= mid)
			return bucket_mid(b);
	}
	return bucket_mid(TE_STRAG_BUCKETS - 1);
}

void te_strag_rank_init(struct te_strag_rank *r, uint32_t rank)
{
	memset(r, 0, sizeof(*r));
	r->rank = rank;
}

static void window_reset(struct te_strag_comm *c)
{
	c->count = 0;
	c->sum_ns = 0;
	memset(c->op_count, 0, sizeof(c->op_count));
	memset(c->hist, 0, sizeof(c->hist));
}

/* Counts the collective being gathered. */
static void commit(struct te_strag_comm *c)
{
	c->count++;
	c->sum_ns += c->seq_wait;
	c->hist[te_strag_bucket(c->seq_wait)]++;
	c->op_count[c->seq_op]++;
	c->pending = 0;
}

/* The slot of comm_hash: the last one hit, one in use, a free one, or the
 * one whose last event is oldest (evicted). */
static struct te_strag_comm *slot_of(struct te_strag_rank *r, uint64_t hash)
{
	struct te_strag_comm *c = &r->comm[r->last_hit], *victim = NULL;
	unsigned i;

	if (c->in_use && c->comm_hash == hash)
		return c;
	for (i = 0; i < TE_STRAG_COMMS; i++) {
		c = &r->comm[i];
		if (c->in_use && c->comm_hash == hash) {
			r->last_hit = i;
			return c;
		}
		if (!victim ||
		    (victim->in_use &&
		     (!c->in_use || c->last_used < victim->last_used)))
			victim = c;
	}
	if (victim->in_use && (victim->count || victim->pending))
		r->evicted++;
	memset(victim, 0, sizeof(*victim));
	victim->in_use = 1;
	victim->comm_hash = hash;
	r->last_hit = (unsigned)(victim - r->comm);
	return victim;
}

void te_strag_rank_event(struct te_strag_rank *r, uint64_t comm_hash,
			 uint64_t seq, unsigned op, uint64_t wait_ns)
{
	struct te_strag_comm *c = slot_of(r, comm_hash);

	c->last_used = ++r->events;
	if (seq == c->seq && (c->pending || c->closed)) {
		/* another channel of the same collective: the longest counts;
		 * one already counted at the window's end stays as counted */
		if (c->pending && wait_ns > c->seq_wait)
			c->seq_wait = wait_ns;
		return;
	}
	if (c->pending)
		commit(c);
	c->seq = seq;
	c->seq_wait = wait_ns;
	c->seq_op = (uint8_t)(op < TE_STRAG_OPS ? op : TE_STRAG_OP_OTHER);
	c->pending = 1;
	c->closed = 0;
}

static unsigned most_op(const struct te_strag_comm *c)
{
	unsigned i, best = 0;

	for (i = 1; i < TE_STRAG_OPS; i++)
		if (c->op_count[i] > c->op_count[best])
			best = i;
	return best;
}

size_t te_strag_rank_take(struct te_strag_rank *r, struct te_strag_stat *out,
			  size_t max)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < TE_STRAG_COMMS; i++) {
		struct te_strag_comm *c = &r->comm[i];

		if (!c->in_use)
			continue;
		if (c->pending) {
			commit(c);
			c->closed = 1;
		}
		if (c->count && n < max) {
			out[n].comm_hash = c->comm_hash;
			out[n].count = c->count;
			out[n].mean_ns = c->sum_ns / c->count;
			out[n].median_ns =
				te_strag_hist_median(c->hist, c->count);
			out[n].op = most_op(c);
			n++;
		}
		window_reset(c);
	}
	return n;
}
