/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launch barrier as a tree of the nodes' helpers (docs/pmix.md): where
 * this helper sits (PMIx's process map, the site's width), its own node's
 * ranks, the summary it sends its parent, and what it passes down (done,
 * reject, the report). The pure parts are core/launch/launch_tree*.c; the
 * subtree's merged summary, its arrivals and failures and the connections
 * are the shared layer's (barrier_state.c); the children's summaries come
 * in through the coordinator (barrier_coord.c). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "barrier_int.h"
#include "settings/settings.h"
#include "util/strutil.h"

/* ---------------------------------------------------------------- map */

/* Fallback for a PMIx server without PMIX_ANL_MAP: each rank's host
 * (PMIX_HOSTNAME), hosts numbered in the order of their first rank. */
static int map_from_hosts(struct te_barrier *b, struct te_procmap *m)
{
	struct te_pmix *p = b->p;
	uint32_t n = p->size, r, nnodes = 0, *node_of = NULL;
	size_t cap = 64, i;
	char(*names)[TE_HOST_MAX] = NULL, host[TE_HOST_MAX];
	uint32_t *ids = NULL; /* open addressing: host -> id + 1 */
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
		for (i = (size_t)h & (cap - 1); ids[i]; i = (i + 1) & (cap - 1))
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
	if (st == PMIX_SUCCESS && val && val->type == PMIX_STRING &&
	    val->data.string)
		rc = te_procmap_parse_anl(val->data.string, b->p->size, m);
	if (val)
		PMIX_VALUE_RELEASE(val);
	return rc == 0 ? 0 : map_from_hosts(b, m);
}

int te_btree_setup(struct te_barrier *b, unsigned k, int followers, char *err,
		   size_t errlen)
{
	struct te_pmix *p = b->p;
	uint32_t me = p->me.rank, r, lead;
	size_t i;

	if (map_load(b, &b->map) < 0)
		return te_err(err, errlen,
			      "no map of the job's ranks to nodes "
			      "from PMIx");
	b->tree = 1;
	/* progress is for the deadline's report: a hundredth of the
	 * deadline old at most, within 0.5-3 s */
	b->sum_ms = (int)(b->timeout_s * 10.0);
	if (b->sum_ms < TREE_SUM_MS)
		b->sum_ms = TREE_SUM_MS;
	if (b->sum_ms > TREE_SUM_MAX_MS)
		b->sum_ms = TREE_SUM_MAX_MS;
	/* the width and its bounds are the launch-tree-width row's */
	b->k = k < te_settings[TE_S_LAUNCH_TREE_WIDTH].lo
		       ? (unsigned)te_setting_builtin_num(
				 TE_S_LAUNCH_TREE_WIDTH)
		       : k;
	b->my_node = te_procmap_node_of(&b->map, me);
	b->my_index = te_tree_index_of(&b->map, b->my_node);
	lead = b->map.node_lead[b->my_node];
	b->nown = b->map.node_nranks[b->my_node];
	b->own = calloc(b->nown, sizeof(*b->own));
	b->own_state = calloc(b->nown, 1);
	b->sub = calloc(1, sizeof(*b->sub));
	if (!b->own || !b->own_state || !b->sub)
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

/* After te_btree_setup and the coordinator: this helper's own rank. */
void te_btree_self(struct te_barrier *b)
{
	if (!b->self_failed[0])
		te_bstate_tree_own_arrived(b, b->p->me.rank);
	else if (!b->is_root)
		te_bstate_tree_failed(b, b->p->me.rank, b->p->host,
				      b->self_failed);
}

void te_btree_free(struct te_barrier *b)
{
	size_t i;

	for (i = 0; b->pend && i < b->cc.cap; i++)
		free(b->pend[i]);
	free(b->pend);
	free(b->conn_kid);
	free(b->kids);
	free(b->own);
	free(b->own_state);
	free(b->sub);
	te_procmap_free(&b->map);
}

/* ---------------------------------------------------------------- state */

/* Counted as summaries come, so that a summary costs its parse, not a
 * merge of every child's: the subtree's ranks so far, and whether it is
 * complete. */
static uint32_t quick_arrived(const struct te_barrier *b)
{
	return (uint32_t)b->own_in + b->kids_arrived;
}

int te_btree_complete(struct te_barrier *b)
{
	return b->own_in == b->nown && b->kids_final == b->nchildren &&
	       te_bstate_probe_ready(b);
}

/* ---------------------------------------------------------------- upward */

static void queue_sum(struct te_barrier *b, int64_t now)
{
	char buf[(TE_TREE_VGROUPS_MAX + TE_TREE_CGROUPS_MAX +
		  TE_TREE_STOR_LINES + 2) *
		 TE_COORD_LINE_MAX];
	struct te_tree_sum one;
	const struct te_tree_sum *s = te_bstate_tree_sum(b);

	if (b->nchildren == 0 && b->my_node < b->map.nnodes &&
	    b->p->me.rank != b->map.node_lead[b->my_node]) {
		/* a task's own helper: its one rank, no node facts */
		te_tree_sum_init(&one);
		one.arrived = b->self_failed[0] ? 0 : 1;
		one.final = !b->self_failed[0];
		s = &one;
	}
	if (te_tree_sum_format(buf, sizeof(buf), b->up_info.token,
			       b->p->me.rank, s, now) == 0) {
		te_bstate_queue_text(b, buf);
		b->sent_final = s->final;
		b->sent_arrived = s->arrived;
	}
}

/* Everything the parent must hear on a new connection: the summary first
 * (it says whose connection this is), then the subtree's first failure. */
void te_btree_queue_registration(struct te_barrier *b)
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
			te_bstate_queue_text(b, line);
	}
}

/* A progress summary at most every sum_ms, the final one at once,
 * never over lines not yet sent. Returns when to look again. */
int64_t te_btree_tick(struct te_barrier *b, int64_t now)
{
	int final = te_btree_complete(b);
	uint32_t arrived = quick_arrived(b);

	if (!b->has_up || b->cs != C_SENT || b->sent_final ||
	    b->outoff < b->outlen)
		return INT64_MAX;
	if (final || (arrived != b->sent_arrived && now >= b->next_sum)) {
		queue_sum(b, now);
		b->next_sum = now + b->sum_ms;
		te_bstate_up_flush(b);
		return INT64_MAX;
	}
	return arrived != b->sent_arrived ? b->next_sum : INT64_MAX;
}

/* ---------------------------------------------------------------- children */

/* Passes one answer from above (or the root's) to every child, and
 * closes their connections: done, reject, fail. */
void te_btree_relay(struct te_barrier *b, enum te_coord_reply_kind k,
		    const char *text)
{
	char line[TE_COORD_LINE_MAX];

	if (b->lfd < 0 ||
	    te_coord_reply_format(line, sizeof(line), k, text) < 0)
		return;
	te_bstate_conns_accept(b);
	te_bstate_conns_broadcast(b, line);
}
