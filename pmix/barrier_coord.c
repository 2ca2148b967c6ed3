/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier's coordinator, on rank 0 (and, in the launch tree, on every
 * helper with children): listens, reads the helpers' registrations, their
 * ranks' arrivals or failures and the children's summaries, and answers
 * done or reject when every rank is here, or the report of who is missing.
 * The connections themselves, abort and the report: barrier_state.c;
 * strangers: coord_conns.c. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "barrier_int.h"
#include "netinfo.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"

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

/* Every connection this coordinator expects, and the strangers' pool,
 * may knock at once; the kernel cuts the backlog to net.core.somaxconn,
 * which the launch tree keeps from mattering (k children per node). */
static int coord_backlog(size_t slots)
{
	return slots > 4096 ? 4096 : (int)slots;
}

static void raise_nofile(struct te_barrier *b, rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= want)
		return;
	b->old_nofile = rl;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want
			      ? want
			      : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		b->nofile_raised = 1;
}

int te_bcoord_start(struct te_barrier *b, const char *addr, char *err,
		    size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl;
	struct te_pmix *p = b->p;
	char text[256];
	int one = 1, v6 = strchr(addr, ':') != NULL;

	/* the launch tree: a slot per child (and, without the node's files,
	 * per task of the node); a later barrier: one per rank at most */
	size_t slots = b->tree ? b->nkids + 4 : (size_t)p->size + 16;

	if (!b->tree && !(b->arrived = calloc(p->size, 1)))
		return te_err(err, errlen, "out of memory for %u ranks",
			      p->size);
	/* and the strangers' pool */
	if (te_cc_init(&b->cc, slots, TE_COORD_POOL_MAX) < 0 ||
	    (b->tree && te_bstate_tree_conns_init(b) < 0))
		return te_err(err, errlen, "out of memory for %zu connections",
			      slots);
	if (!b->self_failed[0])
		te_bstate_mark_arrived(b, p->me.rank, p->host);
	/* one descriptor per connection */
	raise_nofile(b, (rlim_t)b->cc.cap + 64);

	b->lfd = socket(v6 ? AF_INET6 : AF_INET,
			SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (b->lfd < 0)
		return te_err(err, errlen, "coordinator socket: %s",
			      strerror(errno));
	setsockopt(b->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (v6) {
		((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
		sl = sizeof(struct sockaddr_in6);
	} else {
		((struct sockaddr_in *)&ss)->sin_family = AF_INET;
		sl = sizeof(struct sockaddr_in);
	}
	if (bind(b->lfd, (struct sockaddr *)&ss, sl) < 0 ||
	    listen(b->lfd, coord_backlog(b->cc.cap)) < 0 ||
	    getsockname(b->lfd, (struct sockaddr *)&ss, &sl) < 0) {
		return te_err(err, errlen, "coordinator listen: %s",
			      strerror(errno));
	}
	te_strlcpy(b->info.addr, addr, sizeof(b->info.addr));
	b->info.port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
				: ((struct sockaddr_in *)&ss)->sin_port);
	if (te_random_hex(b->info.token, sizeof(b->info.token), TE_TOKEN_LEN) <
		    0 ||
	    te_coord_info_format(text, sizeof(text), &b->info) < 0) {
		return te_err(err, errlen, "cannot make the coordinator token");
	}
	if (te_pmix_put(p, b->key, text, err, errlen) < 0)
		return -1;
	if (b->is_root)
		write_coord_file(b, text);
	if (b->self_failed[0])
		te_bstate_rank_failed(b, p->me.rank, p->host, b->self_failed);
	return 0;
}

/* ---------------------------------------------------------------- reading */

/* A summary completed on connection i by rank: whose is it? */
static int take_sum(struct te_barrier *b, size_t i, uint32_t rank)
{
	struct te_coord_conn *c = &b->cc.c[i];
	uint32_t node = te_procmap_node_of(&b->map, rank);
	size_t kid, t;

	if (node == b->my_node) {
		size_t pos = te_bstate_own_pos(b, rank);

		if (rank == b->p->me.rank || pos == NO_KID ||
		    b->nkids == b->nchildren)
			return -1;
		kid = b->nchildren + pos;
		if (b->pend[i]->final)
			te_bstate_tree_own_arrived(b, rank);
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
		b->cc.c[b->kids[kid].conn].leaving = 1; /* replaced */
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
static int tree_line(struct te_barrier *b, size_t i, const char *line)
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
	te_bstate_probe_send(b, i); /* a child registered after it came */
	return 1;
}

void te_bcoord_read(struct te_barrier *b, size_t i)
{
	struct te_coord_conn *c = &b->cc.c[i];
	char line[TE_COORD_LINE_MAX + 1];
	ssize_t n;
	int got;

	n = read(c->fd, c->buf + c->len, TE_COORD_LINE_MAX - c->len);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		te_bstate_conn_close(b, i);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (!c->registered && !te_coord_prefix_ok(c->buf, c->len)) {
		/* a stranger's garbage: at once */
		te_bstate_conn_close(b, i);
		return;
	}
	while ((got = te_bstate_take_line(c->buf, &c->len, line))) {
		struct te_coord_req q;

		if (got < 0) {
			te_bstate_conn_close(b, i);
			return;
		}
		if (b->tree && te_coord_req_parse(line, b->info.token,
						  b->p->size, &q) < 0) {
			/* a child's summary */
			int whole = tree_line(b, i, line);

			if (whole < 0) {
				te_bstate_conn_close(b, i);
				return;
			}
			if (whole && b->aborting) {
				te_bstate_conn_abort(b, i);
				return;
			}
			continue;
		}
		if ((!b->tree && te_coord_req_parse(line, b->info.token,
						    b->p->size, &q) < 0) ||
		    (b->tree &&
		     (q.kind == TE_CQ_ARRIVED || q.kind == TE_CQ_NODE))) {
			te_bstate_conn_close(b, i);
			return;
		}
		te_cc_registered(&b->cc, i);
		if (q.kind == TE_CQ_ARRIVED) {
			te_bstate_mark_arrived(b, q.rank, q.host);
		} else if (q.kind == TE_CQ_FAILED) {
			te_bstate_rank_failed(b, q.rank, q.host, q.why);
		} else if (b->tree && !b->is_root) {
			c->leaving = 1; /* its deadline: rank 0's report */
			te_bstate_tree_ask_state(b, i);
		} else {
			char text[TE_COORD_TEXT_MAX + 1],
				out[TE_COORD_LINE_MAX];

			c->leaving = 1;
			te_bstate_missing_report(b, text, sizeof(text));
			if (te_coord_reply_format(out, sizeof(out), TE_CR_STATE,
						  text) == 0)
				te_bstate_conn_send(b, i, out);
			if (c->fd < 0)
				return;
		}
		if (c->fd < 0)
			return;	   /* answered (abort) and closed */
		if (b->aborting) { /* answered at its first line */
			te_bstate_conn_abort(b, i);
			return;
		}
	}
	if (c->len >= TE_COORD_LINE_MAX)
		te_bstate_conn_close(b, i); /* a line too long */
}

/* Rank 0, coordinated: every rank is here; the launch checks decide. */
void te_bcoord_complete(struct te_barrier *b, struct te_barrier_result *r)
{
	char text[TE_COORD_TEXT_MAX + 1] = "", line[TE_COORD_LINE_MAX];
	int v = 0;

	if (b->checks)
		v = te_tree_verdict(b->checks, te_bstate_tree_sum(b), text,
				    sizeof(text));
	if (v == 2) {
		r->rejected = 1;
		te_strlcpy(r->msg, text, sizeof(r->msg));
		te_coord_reply_format(line, sizeof(line), TE_CR_REJECT, text);
	} else {
		r->ok = 1;
		if (v == 1)
			te_strlcpy(r->warn, text, sizeof(r->warn));
		te_tree_skew(te_bstate_tree_sum(b), b->p->size, &r->launch);
		r->has_launch = 1;
		te_strlcpy(r->done_text, b->done_text, sizeof(r->done_text));
		te_coord_reply_format(line, sizeof(line), TE_CR_DONE,
				      b->done_text);
	}
	te_bstate_conns_accept(b);
	te_bstate_conns_broadcast(b, line);
}
