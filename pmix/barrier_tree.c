/* The launch barrier as a tree of the nodes' helpers (docs/pmix.md): where
 * this helper sits (PMIx's process map, the site's width), its own node's
 * ranks, its children's summaries, the summary it sends its parent, and
 * what it passes down (done, reject, the report, abort). The pure parts
 * are core/launch_tree*.c; the connections are the coordinator's and the
 * client's (barrier_coord.c, barrier_client.c).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "barrier_int.h"
#include "strutil.h"

#define NO_KID ((size_t)-1)

/* ---------------------------------------------------------------- map */

/* Fallback for a PMIx server without PMIX_ANL_MAP: each rank's host
 * (PMIX_HOSTNAME), hosts numbered in the order of their first rank. */
static int map_from_hosts(struct te_barrier *b, struct te_procmap *m)
{
	struct te_pmix *p = b->p;
	uint32_t n = p->size, r, nnodes = 0, *node_of = NULL;
	size_t cap = 64, i;
	char (*names)[TE_HOST_MAX] = NULL, host[TE_HOST_MAX];
	uint32_t *ids = NULL;	/* open addressing: host -> id + 1 */
	int rc = -1;

	while (cap < (size_t)n * 2)
		cap *= 2;
	node_of = calloc(n, sizeof(*node_of));
	names = calloc(n, sizeof(*names));
	ids = calloc(cap, sizeof(*ids));
	if (!node_of || !names || !ids)
		goto out;
	for (r = 0; r < n; r++) {
		uint64_t h = 1469598103934665603ULL;
		const char *s;

		if (te_pmix_host_of(p, r, host, sizeof(host)) < 0)
			goto out;
		for (s = host; *s; s++)
			h = (h ^ (unsigned char)*s) * 1099511628211ULL;
		for (i = (size_t)h & (cap - 1); ids[i];
		     i = (i + 1) & (cap - 1))
			if (!strcmp(names[ids[i] - 1], host))
				break;
		if (!ids[i]) {
			te_strlcpy(names[nnodes], host, TE_HOST_MAX);
			ids[i] = ++nnodes;
		}
		node_of[r] = ids[i] - 1;
	}
	rc = te_procmap_from_nodes(node_of, n, nnodes, m);
out:
	free(node_of);
	free(names);
	free(ids);
	return rc;
}

static int map_load(struct te_barrier *b, struct te_procmap *m)
{
	pmix_proc_t wild;
	pmix_value_t *val = NULL;
	pmix_info_t info;
	bool t = true;
	pmix_status_t st;
	int rc = -1;

	/* job data, here since PMIx_Init: never wait for it */
	PMIX_LOAD_PROCID(&wild, b->p->me.nspace, PMIX_RANK_WILDCARD);
	PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, &t, PMIX_BOOL);
	st = PMIx_Get(&wild, PMIX_ANL_MAP, &info, 1, &val);
	PMIX_INFO_DESTRUCT(&info);
	if (st == PMIX_SUCCESS &&
	    val && val->type == PMIX_STRING && val->data.string)
		rc = te_procmap_parse_anl(val->data.string, b->p->size, m);
	if (val)
		PMIX_VALUE_RELEASE(val);
	return rc == 0 ? 0 : map_from_hosts(b, m);
}

int tree_setup(struct te_barrier *b, unsigned k, int followers, char *err,
	       size_t errlen)
{
	struct te_pmix *p = b->p;
	uint32_t me = p->me.rank, r, lead;
	size_t i;

	if (map_load(b, &b->map) < 0)
		return te_err(err, errlen, "no map of the job's ranks to nodes "
			      "from PMIx");
	b->tree = 1;
	/* progress is for the deadline's report: a hundredth of the
	 * deadline old at most, within 0.5-3 s */
	b->sum_ms = (int)(b->timeout_s * 10.0);
	if (b->sum_ms < TREE_SUM_MS)
		b->sum_ms = TREE_SUM_MS;
	if (b->sum_ms > TREE_SUM_MAX_MS)
		b->sum_ms = TREE_SUM_MAX_MS;
	b->k = k < TE_TREE_WIDTH_MIN ? TE_LAUNCH_TREE_WIDTH_DEFAULT : k;
	b->my_node = te_procmap_node_of(&b->map, me);
	b->my_index = te_tree_index_of(&b->map, b->my_node);
	lead = b->map.node_lead[b->my_node];
	b->nown = b->map.node_nranks[b->my_node];
	b->own = calloc(b->nown, sizeof(*b->own));
	b->own_state = calloc(b->nown, 1);
	if (!b->own || !b->own_state)
		return te_err(err, errlen, "out of memory");
	i = 0;
	for (r = b->map.node_run[b->my_node]; r != UINT32_MAX;
	     r = b->map.run_next[r])
		for (uint32_t x = 0; x < b->map.run_len[r] && i < b->nown; x++)
			b->own[i++] = b->map.run_first[r] + x;
	if (me != lead) {
		/* one helper per task here (no private directory): this one
		 * reports its own rank to its node's helper */
		b->up_rank = lead;
		b->has_up = 1;
		b->nchildren = 0;
		return 0;
	}
	b->is_root = b->my_index == 0;
	b->has_up = !b->is_root;
	if (b->has_up)
		b->up_rank = b->map.node_lead[te_tree_node_at(
			&b->map, te_tree_parent(b->my_index, b->k))];
	b->first_child = te_tree_children(b->my_index, b->k, b->map.nnodes,
					  &b->nchildren);
	/* without followers' files, the node's other tasks connect */
	b->nkids = b->nchildren + (!followers && b->nown > 1 ? b->nown : 0);
	if (b->nkids) {
		b->kids = calloc(b->nkids, sizeof(*b->kids));
		if (!b->kids)
			return te_err(err, errlen, "out of memory");
		for (i = 0; i < b->nkids; i++)
			b->kids[i].conn = NO_KID;
	}
	b->sub_dirty = 1;
	return 0;
}

/* After tree_setup and the coordinator: this helper's own rank. */
void tree_self(struct te_barrier *b)
{
	if (!b->self_failed[0])
		tree_own_arrived(b, b->p->me.rank);
	else if (!b->is_root)
		tree_failed(b, b->p->me.rank, b->p->host, b->self_failed);
}

/* Per connection slot: which kid it speaks for, its summary so far. */
int tree_conns_init(struct te_barrier *b)
{
	size_t i;

	b->conn_kid = calloc(b->cc.cap, sizeof(*b->conn_kid));
	b->pend = calloc(b->cc.cap, sizeof(*b->pend));
	if (!b->conn_kid || !b->pend)
		return -1;
	for (i = 0; i < b->cc.cap; i++)
		b->conn_kid[i] = NO_KID;
	return 0;
}

void tree_free(struct te_barrier *b)
{
	size_t i;

	for (i = 0; b->pend && i < b->cc.cap; i++)
		free(b->pend[i]);
	free(b->pend);
	free(b->conn_kid);
	free(b->kids);
	free(b->own);
	free(b->own_state);
	te_procmap_free(&b->map);
}

/* ---------------------------------------------------------------- state */

static size_t own_pos(struct te_barrier *b, uint32_t rank)
{
	for (size_t i = 0; i < b->nown; i++)
		if (b->own[i] == rank)
			return i;
	return NO_KID;
}

void tree_own_arrived(struct te_barrier *b, uint32_t rank)
{
	size_t i = own_pos(b, rank);

	if (i == NO_KID || b->own_state[i])
		return;
	b->own_state[i] = 1;
	if (++b->own_in == b->nown)
		b->own_done_ms = te_now_ms();
	b->sub_dirty = 1;
}

static void recompute(struct te_barrier *b)
{
	struct te_tree_sum *s = &b->sub, absent;
	int final = b->own_in == b->nown;
	size_t i, j;

	te_tree_sum_init(s);
	s->arrived = (uint32_t)b->own_in;
	if (final) {
		te_tree_sum_add_node(s, b->p->me.rank, b->p->host,
				     b->own_done_ms, &b->node.ver,
				     b->node.ckpt);
	} else {
		/* the missing ranks of this node, in runs of consecutive ranks */
		for (i = 0; i < b->nown;) {
			if (b->own_state[i]) {
				i++;
				continue;
			}
			for (j = i + 1; j < b->nown && !b->own_state[j] &&
					b->own[j] == b->own[j - 1] + 1; j++)
				;
			te_tree_sum_add_miss(s, b->own[i], b->own[j - 1],
					     b->my_node);
			i = j;
		}
	}
	for (i = 0; i < b->nchildren; i++) {
		if (b->kids[i].has) {
			te_tree_sum_merge(s, &b->kids[i].sum);
			final = final && b->kids[i].sum.final;
			continue;
		}
		te_tree_sum_init(&absent);
		te_tree_sum_absent(&absent, &b->map, b->k, b->first_child + i);
		te_tree_sum_merge(s, &absent);
		final = 0;
	}
	s->final = final;
	b->sub_dirty = 0;
}

/* Counted as summaries come, so that a summary costs its parse, not a
 * merge of every child's: the subtree's ranks so far, and whether it is
 * complete. */
static uint32_t quick_arrived(const struct te_barrier *b)
{
	return (uint32_t)b->own_in + b->kids_arrived;
}

int tree_complete(struct te_barrier *b)
{
	return b->own_in == b->nown && b->kids_final == b->nchildren;
}

const struct te_tree_sum *tree_sum(struct te_barrier *b)
{
	if (b->sub_dirty)
		recompute(b);
	return &b->sub;
}

static int host_of(void *ctx, uint32_t rank, char *host, size_t len)
{
	return te_pmix_host_of(ctx, rank, host, len);
}

void tree_report(struct te_barrier *b, char *out, size_t len)
{
	if (b->sub_dirty)
		recompute(b);
	te_tree_missing_text(&b->sub, b->p->size, &b->map, host_of, b->p, out,
			     len);
}

/* ---------------------------------------------------------------- upward */

static void queue_text(struct te_barrier *b, const char *text)
{
	size_t l = strlen(text);

	if (b->outlen + l <= b->outcap) {
		memcpy(b->out + b->outlen, text, l);
		b->outlen += l;
	}
}

static void queue_sum(struct te_barrier *b, int64_t now)
{
	char buf[(TE_TREE_VGROUPS_MAX + TE_TREE_CGROUPS_MAX + 2) *
		 TE_COORD_LINE_MAX];
	struct te_tree_sum one;
	const struct te_tree_sum *s = &b->sub;

	if (b->sub_dirty)
		recompute(b);
	if (b->nchildren == 0 && b->my_node < b->map.nnodes &&
	    b->p->me.rank != b->map.node_lead[b->my_node]) {
		/* a task's own helper: its one rank, no node facts */
		te_tree_sum_init(&one);
		one.arrived = b->self_failed[0] ? 0 : 1;
		one.final = !b->self_failed[0];
		s = &one;
	}
	if (te_tree_sum_format(buf, sizeof(buf), b->up_info.token, b->p->me.rank,
			       s, now) == 0) {
		queue_text(b, buf);
		b->sent_final = s->final;
		b->sent_arrived = s->arrived;
	}
}

/* Everything the parent must hear on a new connection: the summary first
 * (it says whose connection this is), then the subtree's first failure. */
void tree_queue_registration(struct te_barrier *b)
{
	struct te_coord_req q = { .kind = TE_CQ_FAILED };
	char line[TE_COORD_LINE_MAX];

	queue_sum(b, te_now_ms());
	b->next_sum = te_now_ms() + b->sum_ms;
	if (b->has_failure) {
		q.rank = b->f_rank;
		te_strlcpy(q.host, b->f_host, sizeof(q.host));
		te_strlcpy(q.why, b->f_why, sizeof(q.why));
		if (te_coord_req_format(line, sizeof(line), b->up_info.token,
					&q) == 0)
			queue_text(b, line);
	}
}

/* A progress summary at most every sum_ms, the final one at once,
 * never over lines not yet sent. Returns when to look again. */
int64_t tree_tick(struct te_barrier *b, int64_t now)
{
	int final = tree_complete(b);
	uint32_t arrived = quick_arrived(b);

	if (!b->has_up || b->cs != C_SENT || b->sent_final ||
	    b->outoff < b->outlen)
		return INT64_MAX;
	if (final || (arrived != b->sent_arrived && now >= b->next_sum)) {
		queue_sum(b, now);
		b->next_sum = now + b->sum_ms;
		client_flush(b);
		return INT64_MAX;
	}
	return arrived != b->sent_arrived ? b->next_sum : INT64_MAX;
}

/* Not the root: a rank of the subtree failed before the barrier. The
 * first one goes up at once (and with every new connection); rank 0
 * answers abort, which comes back down. */
void tree_failed(struct te_barrier *b, uint32_t rank, const char *host,
		 const char *why)
{
	struct te_coord_req q = { .kind = TE_CQ_FAILED, .rank = rank };
	char line[TE_COORD_LINE_MAX];

	if (b->has_failure)
		return;
	b->has_failure = 1;
	b->f_rank = rank;
	te_strlcpy(b->f_host, host && te_host_valid(host) ? host : "?",
		   sizeof(b->f_host));
	fail_text(b->f_why, sizeof(b->f_why), why);
	if (b->cs != C_SENT && b->cs != C_CONNECTING)
		return;		/* client_dial sends it */
	q.rank = rank;
	te_strlcpy(q.host, b->f_host, sizeof(q.host));
	te_strlcpy(q.why, b->f_why, sizeof(q.why));
	if (te_coord_req_format(line, sizeof(line), b->up_info.token, &q) == 0)
		queue_text(b, line);
	if (b->cs == C_SENT)
		client_flush(b);
}

/* ---------------------------------------------------------------- children */

void tree_conn_closed(struct te_barrier *b, size_t i)
{
	size_t kid;

	if (!b->conn_kid || i >= b->cc.cap)
		return;
	kid = b->conn_kid[i];
	if (kid != NO_KID && b->kids[kid].conn == i)
		b->kids[kid].conn = NO_KID;
	b->conn_kid[i] = NO_KID;
	free(b->pend[i]);
	b->pend[i] = NULL;
}

/* Connection i has been answered (abort), or its helper is gone: its
 * subtree needs nothing more from this node. */
void tree_told(struct te_barrier *b, size_t i)
{
	size_t kid = b->conn_kid && i < b->cc.cap ? b->conn_kid[i] : NO_KID;

	if (kid == NO_KID || kid >= b->nchildren || b->kids[kid].told)
		return;
	b->kids[kid].told = 1;
	b->ntold++;
}

/* A summary completed on connection i by rank: whose is it? */
static int take_sum(struct te_barrier *b, size_t i, uint32_t rank)
{
	struct te_coord_conn *c = &b->cc.c[i];
	uint32_t node = te_procmap_node_of(&b->map, rank);
	size_t kid, t;

	if (node == b->my_node) {
		size_t pos = own_pos(b, rank);

		if (rank == b->p->me.rank || pos == NO_KID ||
		    b->nkids == b->nchildren)
			return -1;
		kid = b->nchildren + pos;
		if (b->pend[i]->final)
			tree_own_arrived(b, rank);
	} else {
		t = te_tree_index_of(&b->map, node);
		if (!t || te_tree_parent(t, b->k) != b->my_index ||
		    rank != b->map.node_lead[node] || t < b->first_child ||
		    t >= b->first_child + b->nchildren)
			return -1;
		kid = t - b->first_child;
		if (b->kids[kid].has) {
			b->kids_arrived -= b->kids[kid].sum.arrived;
			b->kids_final -= b->kids[kid].sum.final ? 1 : 0;
		}
		b->kids[kid].sum = *b->pend[i];
		b->kids[kid].has = 1;
		b->kids_arrived += b->kids[kid].sum.arrived;
		b->kids_final += b->kids[kid].sum.final ? 1 : 0;
	}
	if (b->kids[kid].conn != NO_KID && b->kids[kid].conn != i &&
	    b->kids[kid].conn < b->cc.cap)
		b->cc.c[b->kids[kid].conn].leaving = 1;	/* replaced */
	b->kids[kid].conn = i;
	b->conn_kid[i] = kid;
	if (!c->has_rank) {
		c->rank = rank;
		c->has_rank = 1;
		te_pmix_host_of(b->p, rank, c->host, sizeof(c->host));
	}
	te_tree_sum_init(b->pend[i]);
	b->sub_dirty = 1;
	return 0;
}

/* One summary line from connection i: 1 when it completed a summary, 0
 * when more is to come, -1 to close it. */
int tree_line(struct te_barrier *b, size_t i, const char *line)
{
	uint32_t rank;
	int kind;

	if (!b->pend[i]) {
		if (!(b->pend[i] = malloc(sizeof(*b->pend[i]))))
			return -1;
		te_tree_sum_init(b->pend[i]);
	}
	kind = te_tree_line_parse(line, b->info.token, b->p->size,
				  b->map.nnodes, te_now_ms(), b->pend[i],
				  &rank);
	if (kind < 0)
		return -1;
	if (kind != TE_TL_SUM)
		return 0;
	/* registered once whole: it then says whose connection this is */
	if (take_sum(b, i, rank) < 0)
		return -1;
	te_cc_registered(&b->cc, i);
	return 1;
}

/* Passes one answer from above (or the root's) to every child, and
 * closes their connections: done, reject, fail. */
void tree_relay(struct te_barrier *b, enum te_coord_reply_kind k,
		const char *text)
{
	char line[TE_COORD_LINE_MAX];

	if (b->lfd < 0 || te_coord_reply_format(line, sizeof(line), k,
						text) < 0)
		return;
	coord_accept(b);
	coord_broadcast(b, line);
}

/* The report a child asked for (its own deadline) came from above. */
void tree_relay_state(struct te_barrier *b)
{
	char line[TE_COORD_LINE_MAX];

	b->asked_state = 0;
	if (b->lfd < 0 || te_coord_reply_format(line, sizeof(line),
						TE_CR_STATE, b->rank0_text) < 0)
		return;
	for (size_t i = 0; i < b->cc.cap; i++)
		if (b->cc.c[i].fd >= 0 && b->cc.c[i].wants_state) {
			b->cc.c[i].wants_state = 0;
			if (send(b->cc.c[i].fd, line, strlen(line),
				 MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				/* it left: its close is seen by the loop */
			}
		}
}

/* A child asked for the report: the root's, from above. */
void tree_ask_state(struct te_barrier *b, size_t i)
{
	struct te_coord_req q = { .kind = TE_CQ_STATUS, .rank = b->p->me.rank };
	char line[TE_COORD_LINE_MAX];

	b->cc.c[i].wants_state = 1;
	if (b->asked_state || b->cs != C_SENT ||
	    te_coord_req_format(line, sizeof(line), b->up_info.token, &q) < 0)
		return;
	b->asked_state = 1;
	queue_text(b, line);
	client_flush(b);
}
