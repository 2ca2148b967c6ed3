/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Stragglers: srun's detector, which names the node whose ranks wait least
 * within a communicator for k windows in a row, and its verdict's line
 * (straggler.h, part 3). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "straggler/straggler.h"

#define NAME_SLOTS (2 * TE_STRAG_MAX_NODES) /* open addressing, a power of 2 */

/* One node in one communicator. */
struct node_state {
	double sum_ns;	 /* this window: its ranks' waits (no overflow) */
	uint64_t count;	 /* and collectives */
	uint32_t window; /* the node's own number of that line */
	uint32_t rank_lo, rank_hi;
	unsigned nranks, op;
	unsigned streak; /* windows late in a row */
	uint8_t has;	 /* a line in this window */
	uint8_t named;	 /* named, not recovered since */
};

struct comm_state {
	uint64_t hash;
	unsigned reporting;	  /* nodes with a line in this window */
	struct node_state *nodes; /* TE_STRAG_MAX_NODES, by node index */
};

struct te_strag_detector {
	struct te_strag_cfg cfg;
	uint64_t dropped;
	unsigned nnodes, ncomms;
	char names[TE_STRAG_MAX_NODES][TE_STRAG_NODE_MAX];
	int16_t slot[NAME_SLOTS]; /* node index + 1, 0 free */
	struct comm_state comms[TE_STRAG_MAX_COMMS];
	double waits[TE_STRAG_MAX_NODES], sorted[TE_STRAG_MAX_NODES];
	unsigned who[TE_STRAG_MAX_NODES];
};

struct te_strag_detector *te_strag_detect_new(const struct te_strag_cfg *cfg)
{
	struct te_strag_detector *d;

	if (!cfg || !(cfg->threshold > 0 && cfg->threshold < 1) || !cfg->k)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (d)
		d->cfg = *cfg;
	return d;
}

void te_strag_detect_free(struct te_strag_detector *d)
{
	unsigned i;

	if (!d)
		return;
	for (i = 0; i < d->ncomms; i++)
		free(d->comms[i].nodes);
	free(d);
}

uint64_t te_strag_detect_dropped(const struct te_strag_detector *d)
{
	return d->dropped;
}

/* The node's index, a new one if there is room; -1 when full. */
static int node_index(struct te_strag_detector *d, const char *name)
{
	uint32_t h = 2166136261u;
	const char *p;
	unsigned at;

	for (p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (at = h & (NAME_SLOTS - 1);; at = (at + 1) & (NAME_SLOTS - 1)) {
		int i = d->slot[at] - 1;

		if (i < 0)
			break;
		if (!strcmp(d->names[i], name))
			return i;
	}
	if (d->nnodes >= TE_STRAG_MAX_NODES)
		return -1;
	memcpy(d->names[d->nnodes], name, TE_STRAG_NODE_MAX);
	d->slot[at] = (int16_t)(d->nnodes + 1);
	return (int)d->nnodes++;
}

/* 1 when no node of c is in a row: the slot may go to another
 * communicator (one of a single node's ranks comes every window and names
 * nobody: it must not hold a slot for good). */
static int comm_idle(const struct te_strag_detector *d,
		     const struct comm_state *c)
{
	unsigned i;

	for (i = 0; i < d->nnodes; i++)
		if (c->nodes[i].streak || c->nodes[i].named)
			return 0;
	return 1;
}

static struct comm_state *comm_of(struct te_strag_detector *d, uint64_t hash)
{
	struct comm_state *c;
	unsigned i;

	for (i = 0; i < d->ncomms; i++)
		if (d->comms[i].hash == hash)
			return &d->comms[i];
	if (d->ncomms >= TE_STRAG_MAX_COMMS) {
		/* full: a communicator only one node reports in this window
		 * (a node's own ranks: tensor parallel) and in no row gives
		 * its slot, so that such ones never crowd out the others */
		for (i = 0; i < d->ncomms; i++) {
			c = &d->comms[i];
			if (c->reporting <= 1 && comm_idle(d, c)) {
				d->dropped += c->reporting;
				memset(c->nodes, 0,
				       TE_STRAG_MAX_NODES * sizeof(*c->nodes));
				c->hash = hash;
				c->reporting = 0;
				return c;
			}
		}
		return NULL;
	}
	c = &d->comms[d->ncomms];
	c->nodes = calloc(TE_STRAG_MAX_NODES, sizeof(*c->nodes));
	if (!c->nodes)
		return NULL;
	c->hash = hash;
	c->reporting = 0;
	d->ncomms++;
	return c;
}

int te_strag_detect_add(struct te_strag_detector *d,
			const struct te_strag_summary *s)
{
	struct comm_state *c;
	struct node_state *n;
	unsigned i;
	int idx;

	if (!s->nranks || s->nranks > TE_STRAG_NODE_RANKS ||
	    !te_strag_node_ok(s->node, strnlen(s->node, TE_STRAG_NODE_MAX)))
		return -1;
	c = comm_of(d, s->comm_hash);
	idx = c ? node_index(d, s->node) : -1;
	if (idx < 0) {
		d->dropped++;
		return -1;
	}
	n = &c->nodes[idx];
	if (n->has && s->window < n->window)
		return 0; /* an older window of the node, late */
	if (n->has && s->window == n->window) {
		/* another process of the node, the same window: its ranks
		 * join the node's (each rank sends its window once) */
		if (n->nranks + s->nranks > TE_STRAG_RANK_MAX)
			return 0;
		n->nranks += s->nranks;
		if (s->ranks[0].rank < n->rank_lo)
			n->rank_lo = s->ranks[0].rank;
		if (s->ranks[s->nranks - 1].rank > n->rank_hi)
			n->rank_hi = s->ranks[s->nranks - 1].rank;
	} else {
		if (!n->has)
			c->reporting++;
		n->has = 1;
		n->window = s->window;
		n->op = s->op;
		n->nranks = s->nranks;
		n->rank_lo = s->ranks[0].rank;
		n->rank_hi = s->ranks[s->nranks - 1].rank;
		n->sum_ns = 0;
		n->count = 0;
	}
	for (i = 0; i < s->nranks; i++) {
		n->sum_ns += (double)s->ranks[i].mean_ns * s->ranks[i].count;
		n->count += s->ranks[i].count;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of sorted[0..n) without one value equal to v (n >= 2). */
static double median_without(const double *sorted, unsigned n, double v)
{
	unsigned lo = 0, hi = n - 1, m = n - 1, p, j1, j2;

	while (lo < hi) { /* the first index holding v */
		unsigned mid = lo + (hi - lo) / 2;

		if (sorted[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	p = lo;
	j1 = (m - 1) / 2;
	j2 = m / 2;
	j1 += j1 >= p;
	j2 += j2 >= p;
	return (sorted[j1] + sorted[j2]) / 2;
}

static void verdict_of(const struct te_strag_detector *d,
		       const struct comm_state *c, unsigned idx, unsigned n,
		       double others, struct te_strag_verdict *v)
{
	const struct node_state *s = &c->nodes[idx];

	memset(v, 0, sizeof(*v));
	memcpy(v->node, d->names[idx], TE_STRAG_NODE_MAX);
	v->comm_hash = c->hash;
	v->op = s->op;
	v->rank_lo = s->rank_lo;
	v->rank_hi = s->rank_hi;
	v->nranks = s->nranks;
	v->windows = s->streak;
	v->window_s = d->cfg.window_s;
	v->other_nodes = n - 1;
	v->wait_ns = (uint64_t)(s->sum_ns / (double)s->count);
	v->others_ns = (uint64_t)others;
}

/* One communicator's window: the nodes named now into out[*nout..max). */
static void close_comm(struct te_strag_detector *d, struct comm_state *c,
		       struct te_strag_verdict *out, size_t max, size_t *nout)
{
	unsigned i, n = 0;

	for (i = 0; i < d->nnodes; i++) {
		struct node_state *s = &c->nodes[i];

		if (s->has && s->count) {
			d->who[n] = i;
			d->waits[n] = s->sum_ns / (double)s->count;
			d->sorted[n] = d->waits[n];
			n++;
		} else
			s->streak = 0; /* no line: the row is broken */
		s->has = 0;
	}
	c->reporting = 0;
	if (n < 2) {
		for (i = 0; i < n; i++)
			c->nodes[d->who[i]].streak = 0;
		return;
	}
	qsort(d->sorted, n, sizeof(double), cmp_double);
	for (i = 0; i < n; i++) {
		struct node_state *s = &c->nodes[d->who[i]];
		double others = median_without(d->sorted, n, d->waits[i]);
		int late = d->waits[i] < (1 - d->cfg.threshold) * others &&
			   others - d->waits[i] >= (double)d->cfg.min_gap_ns;

		if (!late) {
			s->streak = 0;
			s->named = 0;
			continue;
		}
		s->streak++;
		if (s->streak >= d->cfg.k && !s->named) {
			s->named = 1;
			if (*nout < max)
				verdict_of(d, c, d->who[i], n, others,
					   &out[(*nout)++]);
		}
	}
}

size_t te_strag_detect_close(struct te_strag_detector *d,
			     struct te_strag_verdict *out, size_t max)
{
	size_t nout = 0;
	unsigned i;

	for (i = 0; i < d->ncomms; i++)
		close_comm(d, &d->comms[i], out, max, &nout);
	for (i = 0; i < d->ncomms;) {
		if (!comm_idle(d, &d->comms[i])) {
			i++;
			continue;
		}
		free(d->comms[i].nodes);
		d->comms[i] = d->comms[--d->ncomms];
	}
	return nout;
}

/* "0.21 ms": a wait in the unit that reads best. */
static void duration(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000000)
		snprintf(buf, len, "%.0f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
}

int te_strag_verdict_line(const struct te_strag_verdict *v, char *buf,
			  size_t len)
{
	char ranks[48], wait[32], others[32], span[32];
	unsigned long span_s = (unsigned long)v->windows * v->window_s;
	int n;

	if (v->nranks == 1)
		snprintf(ranks, sizeof(ranks), "rank %u", v->rank_lo);
	else if (v->rank_hi - v->rank_lo + 1 == v->nranks)
		snprintf(ranks, sizeof(ranks), "ranks %u-%u", v->rank_lo,
			 v->rank_hi);
	else
		snprintf(ranks, sizeof(ranks), "%u ranks of %u-%u", v->nranks,
			 v->rank_lo, v->rank_hi);
	duration(v->wait_ns, wait, sizeof(wait));
	duration(v->others_ns, others, sizeof(others));
	if (span_s && span_s % 60 == 0)
		snprintf(span, sizeof(span), " (%lu minute%s)", span_s / 60,
			 span_s == 60 ? "" : "s");
	else if (span_s)
		snprintf(span, sizeof(span), " (%lu s)", span_s);
	else
		span[0] = '\0';
	n = snprintf(buf, len,
		     "straggler: %s (%s) waited least in %s of communicator "
		     "%016llx: %s a call, the other %u node%s median %s, for "
		     "%u window%s in a row%s",
		     v->node, ranks, te_strag_op_name(v->op),
		     (unsigned long long)v->comm_hash, wait, v->other_nodes,
		     v->other_nodes == 1 ? "'s" : "s'", others, v->windows,
		     v->windows == 1 ? "" : "s", span);
	if (n < 0)
		return -1;
	return (size_t)n < len ? n : (int)(len ? len - 1 : 0);
}
