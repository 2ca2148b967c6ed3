/* The barrier's coordinator, on rank 0: listens, takes the helpers'
 * registrations and their ranks' arrivals or failures, answers done,
 * reject, abort or the report of who is missing. Strangers: coord_conns.c.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
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
#include "rdzv_proto.h"
#include "strutil.h"

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
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ?
			      want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		b->nofile_raised = 1;
}

void mark_arrived(struct te_barrier *b, uint32_t rank, const char *host)
{
	if (b->tree) {
		tree_own_arrived(b, rank);
		return;
	}
	if (rank < b->p->size && !b->arrived[rank]) {
		b->arrived[rank] = 1;
		b->narrived++;
	}
}

int coord_start(struct te_barrier *b, const char *addr, char *err,
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
		return te_err(err, errlen, "out of memory for %u ranks", p->size);
	/* and the strangers' pool */
	if (te_cc_init(&b->cc, slots, TE_COORD_POOL_MAX) < 0 ||
	    (b->tree && tree_conns_init(b) < 0))
		return te_err(err, errlen, "out of memory for %zu connections",
			      slots);
	if (!b->self_failed[0])
		mark_arrived(b, p->me.rank, p->host);
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
	b->info.port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port :
				  ((struct sockaddr_in *)&ss)->sin_port);
	if (te_random_hex(b->info.token, sizeof(b->info.token),
			  TE_TOKEN_LEN) < 0 ||
	    te_coord_info_format(text, sizeof(text), &b->info) < 0) {
		return te_err(err, errlen, "cannot make the coordinator token");
	}
	if (te_pmix_put(p, b->key, text, err, errlen) < 0)
		return -1;
	if (b->is_root)
		write_coord_file(b, text);
	if (b->self_failed[0])
		coord_rank_failed(b, p->me.rank, p->host, b->self_failed);
	return 0;
}

/* ---------------------------------------------------------------- coordinator */

static int host_cb(void *ctx, uint32_t rank, char *host, size_t len)
{
	return te_pmix_host_of(ctx, rank, host, len);
}

static void conn_close(struct te_barrier *b, size_t i)
{
	struct te_coord_conn *c = &b->cc.c[i];
	char host[TE_HOST_MAX];
	int lost;

	if (c->fd < 0)
		return;
	/* Launch barrier: a node's helper keeps its connection until rank 0
	 * answers, or until its own deadline (it asks for the report
	 * first). One that goes away before is dead (killed, or its task
	 * was), and the ranks it stood for will never start: the step
	 * fails now, as for a rank that failed before the barrier, instead
	 * of releasing the others into a job without them. */
	lost = b->tree && c->registered && c->has_rank &&
	       !c->leaving && !b->finishing && !b->aborting;
	te_strlcpy(host, c->host, sizeof(host));
	if (b->tree) {
		uint32_t rank = c->rank;

		if (lost) {
			tree_told(b, i);	/* nobody there to tell */
			tree_conn_closed(b, i);
			te_cc_release(&b->cc, i);
			coord_rank_failed(b, rank, host[0] ? host : "?",
					  HELPER_GONE_WHY);
			return;
		}
		tree_conn_closed(b, i);
	}
	te_cc_release(&b->cc, i);	/* also leaves the epoll set */
}

static void conn_send(struct te_barrier *b, size_t i, const char *line)
{
	size_t len = strlen(line);

	/* Small lines into an idle socket: one send does it. A peer that
	 * cannot take them is not waiting for them. */
	if (send(b->cc.c[i].fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)len)
		conn_close(b, i);
}

void coord_summary(struct te_barrier *b, char *out, size_t len)
{
	if (b->tree) {
		tree_report(b, out, len);
		return;
	}
	if (!b->arrived) {	/* the coordinator never started */
		te_snprintf(out, len, "who arrived is unknown");
		return;
	}
	te_missing_summary(b->p->size, b->arrived, host_cb, b->p, out, len);
}

/* Aborting: this node may end once each of its children has been told
 * (each child then stays for its own). */
void coord_hosts(struct te_barrier *b)
{
	b->nhosts = b->nchildren;
	b->hosts_known = 1;
}

/* Rank 0, aborting: answers one registered connection and closes it; its
 * helper writes the report for its node's tasks, so its node is told. */
void coord_abort_conn(struct te_barrier *b, size_t i)
{
	char line[TE_COORD_LINE_MAX];

	if (te_coord_reply_format(line, sizeof(line), TE_CR_ABORT,
				  b->abort_text) < 0)
		return;
	tree_told(b, i);
	conn_send(b, i, line);
	if (b->cc.c[i].fd >= 0) {
		char junk[4096];

		/* what the peer sent and nobody will read: closing over it
		 * would reset the connection and could drop the answer */
		while (read(b->cc.c[i].fd, junk, sizeof(junk)) > 0)
			;
		conn_close(b, i);
	}
}

/* Rank 0: rank failed before the barrier. The first failure is the
 * report; every node registered so far is answered at once, the others
 * as soon as they register. */
void coord_rank_failed(struct te_barrier *b, uint32_t rank,
		       const char *host, const char *why)
{
	size_t i;

	if (b->tree && !b->is_root) {	/* up the tree, to rank 0 */
		tree_failed(b, rank, host, why);
		return;
	}
	if (b->aborting || !b->cc.c)
		return;		/* the first failure is the one reported */
	b->aborting = 1;
	te_failed_report(rank, host, why, b->abort_text,
			 sizeof(b->abort_text));
	coord_hosts(b);
	for (i = 0; i < b->cc.cap; i++)
		if (b->cc.c[i].fd >= 0 && b->cc.c[i].registered)
			coord_abort_conn(b, i);
}

static void coord_new_conn(void *ctx, size_t i)
{
	struct te_barrier *b = ctx;

	if (b->test_cut) {	/* as if strangers pushed it out */
		b->test_cut--;
		b->test_cut_done++;
		conn_close(b, i);
	} else if (ep_add(b, b->cc.c[i].fd, EPOLLIN, TAG_CONN + i) < 0) {
		conn_close(b, i);
	}
}

/* A burst at most (coord_conns.h): what is left keeps the listener
 * readable for the next turn. */
void coord_accept(struct te_barrier *b)
{
	te_cc_accept_burst(&b->cc, b->lfd, b->epfd, te_now_ms(), coord_new_conn, b);
}

void coord_read(struct te_barrier *b, size_t i)
{
	struct te_coord_conn *c = &b->cc.c[i];
	char line[TE_COORD_LINE_MAX + 1];
	ssize_t n;
	int got;

	n = read(c->fd, c->buf + c->len, TE_COORD_LINE_MAX - c->len);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		conn_close(b, i);
		return;
	}
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	if (!c->registered && !te_coord_prefix_ok(c->buf, c->len)) {
		conn_close(b, i);	/* a stranger's garbage: at once */
		return;
	}
	while ((got = take_line(c->buf, &c->len, line))) {
		struct te_coord_req q;

		if (got < 0) {
			conn_close(b, i);
			return;
		}
		if (b->tree && te_coord_req_parse(line, b->info.token,
						  b->p->size, &q) < 0) {
			/* a child's summary */
			int whole = tree_line(b, i, line);

			if (whole < 0) {
				conn_close(b, i);
				return;
			}
			if (whole && b->aborting) {
				coord_abort_conn(b, i);
				return;
			}
			continue;
		}
		if ((!b->tree &&
		     te_coord_req_parse(line, b->info.token, b->p->size, &q) < 0) ||
		    (b->tree && (q.kind == TE_CQ_ARRIVED ||
				 q.kind == TE_CQ_NODE))) {
			conn_close(b, i);
			return;
		}
		te_cc_registered(&b->cc, i);
		if (q.kind == TE_CQ_ARRIVED) {
			mark_arrived(b, q.rank, q.host);
		} else if (q.kind == TE_CQ_FAILED) {
			coord_rank_failed(b, q.rank, q.host, q.why);
		} else if (b->tree && !b->is_root) {
			c->leaving = 1;	/* its deadline: rank 0's report */
			tree_ask_state(b, i);
		} else {
			char text[TE_COORD_TEXT_MAX + 1], out[TE_COORD_LINE_MAX];

			c->leaving = 1;
			coord_summary(b, text, sizeof(text));
			if (te_coord_reply_format(out, sizeof(out), TE_CR_STATE,
						  text) == 0)
				conn_send(b, i, out);
			if (c->fd < 0)
				return;
		}
		if (c->fd < 0)
			return;		/* answered (abort) and closed */
		if (b->aborting) {	/* answered at its first line */
			coord_abort_conn(b, i);
			return;
		}
	}
	if (c->len >= TE_COORD_LINE_MAX)
		conn_close(b, i);	/* a line too long */
}

void coord_broadcast(struct te_barrier *b, const char *line)
{
	size_t i;

	b->finishing = 1;
	for (i = 0; i < b->cc.cap; i++)
		if (b->cc.c[i].fd >= 0) {
			if (b->cc.c[i].registered)
				conn_send(b, i, line);
			conn_close(b, i);
		}
}

/* Rank 0, coordinated: every rank is here; the launch checks decide. */
void coord_complete(struct te_barrier *b, struct te_barrier_result *r)
{
	char text[TE_COORD_TEXT_MAX + 1] = "", line[TE_COORD_LINE_MAX];
	int v = 0;

	if (b->checks)
		v = te_tree_verdict(b->checks, tree_sum(b), text, sizeof(text));
	if (v == 2) {
		r->rejected = 1;
		te_strlcpy(r->msg, text, sizeof(r->msg));
		te_coord_reply_format(line, sizeof(line), TE_CR_REJECT, text);
	} else {
		r->ok = 1;
		if (v == 1)
			te_strlcpy(r->warn, text, sizeof(r->warn));
		te_tree_skew(tree_sum(b), b->p->size, &r->launch);
		r->has_launch = 1;
		te_strlcpy(r->done_text, b->done_text, sizeof(r->done_text));
		te_coord_reply_format(line, sizeof(line), TE_CR_DONE,
				      b->done_text);
	}
	coord_accept(b);
	coord_broadcast(b, line);
}
