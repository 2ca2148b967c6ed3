/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier's shared layer (pmix/barrier_int.h): what the roles have in
 * common on one barrier's state. The link up (the lines queued for the
 * parent or rank 0, their flush, a cut), the connections down (close,
 * send, accept, abort, broadcast, which child a slot speaks for), the
 * arrivals and failures of ranks (flat or the launch tree's own node),
 * and the report of who is missing. The roles (client, coord, followers,
 * tree) call this file and barrier_session.c, never one another. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "barrier_int.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"

/* ---------------------------------------------------------------- helpers */

int te_bstate_ep_add(struct te_barrier *b, int fd, uint32_t events,
		     uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };

	return epoll_ctl(b->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* why a rank failed, fit for the wire: printable ASCII, never empty */
void te_bstate_fail_text(char *dst, size_t size, const char *why)
{
	te_rdzv_clean_text(dst, size, why && *why ? why : "no reason given");
	if (strlen(dst) > TE_FAIL_TEXT_MAX)
		dst[TE_FAIL_TEXT_MAX] = '\0';
}

/* Takes the first whole line (newline included) out of a connection's
 * buffer buf[0..*len) into line. 0: no whole line yet; 1: taken; -1:
 * taken, but it holds a NUL byte (no protocol line does). */
int te_bstate_take_line(char *buf, size_t *len,
			char line[TE_COORD_LINE_MAX + 1])
{
	char *nl = memchr(buf, '\n', *len);
	size_t ll;

	if (!nl)
		return 0;
	ll = (size_t)(nl - buf) + 1;
	memcpy(line, buf, ll);
	line[ll] = '\0';
	memmove(buf, buf + ll, *len - ll);
	*len -= ll;
	buf[*len] = '\0';
	return memchr(line, '\0', ll - 1) ? -1 : 1;
}

/* A follower's failure file: its one line, cleaned. 0, or -1 when it is
 * not there or not this user's regular file. */
int te_bstate_read_failed_file(const char *path, char *why, size_t len)
{
	char buf[TE_FAILED_TEXT_MAX + 2];

	if (te_read_small(path, buf, sizeof(buf),
			  TE_READ_NOFOLLOW | TE_READ_MINE) < 0)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	te_bstate_fail_text(why, len, buf);
	return 0;
}

/* ---------------------------------------------------------------- the link up */

/* Queues a line for the coordinator (client side). */
static void queue_line(struct te_barrier *b, const struct te_coord_req *q)
{
	char line[TE_COORD_LINE_MAX];

	if (te_coord_req_format(line, sizeof(line), b->up_info.token, q) < 0 ||
	    b->outlen + strlen(line) > b->outcap)
		return;
	memcpy(b->out + b->outlen, line, strlen(line));
	b->outlen += strlen(line);
}

void te_bstate_queue_text(struct te_barrier *b, const char *text)
{
	size_t l = strlen(text);

	if (b->outlen + l <= b->outcap) {
		memcpy(b->out + b->outlen, text, l);
		b->outlen += l;
	}
}

void te_bstate_queue_arrived(struct te_barrier *b, uint32_t rank)
{
	struct te_coord_req q = { .kind = TE_CQ_ARRIVED, .rank = rank };

	te_strlcpy(q.host, b->p->host, sizeof(q.host));
	queue_line(b, &q);
}

void te_bstate_queue_failed(struct te_barrier *b, uint32_t rank,
			    const char *why)
{
	struct te_coord_req q = { .kind = TE_CQ_FAILED, .rank = rank };

	te_strlcpy(q.host, b->p->host, sizeof(q.host));
	te_bstate_fail_text(q.why, sizeof(q.why), why);
	queue_line(b, &q);
}

/* The connection could not be made (e), or was cut before rank 0 answered
 * (e, or 0: closed). A stranger may have pushed it out of the
 * coordinator's pool, or the coordinator may be out of descriptors: try
 * again, with the whole registration, until this rank's deadline. Only
 * refusals for GONE_GRACE_MS in a row mean that nobody listens any more
 * (rank 0 has left the barrier). A registered helper's connection is never
 * cut by rank 0 while it waits; where the network cut it, rank 0 counts
 * its ranks as gone and answers the new connection "abort". */
void te_bstate_up_cut(struct te_barrier *b, int e)
{
	int64_t now = te_now_ms();
	int refused = e == ECONNREFUSED;

	if (b->cfd >= 0) {
		close(b->cfd);
		b->cfd = -1;
	}
	if (b->cs == C_DONE || b->got_reject || b->got_abort || b->got_fail ||
	    b->got_state)
		return; /* answered: nothing more to hear */
	if (!refused)
		b->refusing = 0;
	else if (!b->refusing) {
		b->refusing = 1;
		b->refused_since = now;
	}
	if (te_coord_after_cut(refused, b->refused_since, now, GONE_GRACE_MS) ==
	    TE_CUT_GONE) {
		b->cs = C_GONE; /* the loop fails at once */
		b->gone_at = b->refused_since;
		return;
	}
	if (e)
		te_snprintf(b->unreach, sizeof(b->unreach),
			    "its coordinator "
			    "at %s port %u cannot be reached: %s",
			    b->up_info.addr, (unsigned)b->up_info.port,
			    strerror(e));
	else
		te_snprintf(b->unreach, sizeof(b->unreach),
			    "its coordinator "
			    "at %s port %u closed every connection before "
			    "answering",
			    b->up_info.addr, (unsigned)b->up_info.port);
	b->retry_ms = te_coord_retry_ms(b->retry_ms);
	b->next_retry = now + b->retry_ms;
	b->cs = C_RETRY;
}

void te_bstate_up_flush(struct te_barrier *b)
{
	while (b->outoff < b->outlen && b->cfd >= 0) {
		ssize_t n = send(b->cfd, b->out + b->outoff,
				 b->outlen - b->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n > 0) {
			b->outoff += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		te_bstate_up_cut(b, n < 0 ? errno : EPIPE);
		return;
	}
	if (b->cfd >= 0) {
		struct epoll_event ev = {
			.events = EPOLLIN |
				  (b->outoff < b->outlen ? EPOLLOUT : 0),
			.data.u64 = TAG_CLIENT
		};

		epoll_ctl(b->epfd, EPOLL_CTL_MOD, b->cfd, &ev);
	}
	if (b->outoff >= b->outlen)
		b->outoff = b->outlen = 0;
}

/* Not the root: a rank of the subtree failed before the barrier. The
 * first one goes up at once (and with every new connection); rank 0
 * answers abort, which comes back down. */
void te_bstate_tree_failed(struct te_barrier *b, uint32_t rank,
			   const char *host, const char *why)
{
	struct te_coord_req q = { .kind = TE_CQ_FAILED, .rank = rank };
	char line[TE_COORD_LINE_MAX];

	if (b->has_failure)
		return;
	b->has_failure = 1;
	b->f_rank = rank;
	te_strlcpy(b->f_host, host && te_host_valid(host) ? host : "?",
		   sizeof(b->f_host));
	te_bstate_fail_text(b->f_why, sizeof(b->f_why), why);
	if (b->cs != C_SENT && b->cs != C_CONNECTING)
		return; /* register_up sends it */
	q.rank = rank;
	te_strlcpy(q.host, b->f_host, sizeof(q.host));
	te_strlcpy(q.why, b->f_why, sizeof(q.why));
	if (te_coord_req_format(line, sizeof(line), b->up_info.token, &q) == 0)
		te_bstate_queue_text(b, line);
	if (b->cs == C_SENT)
		te_bstate_up_flush(b);
}

/* A child asked for the report: the root's, from above. */
void te_bstate_tree_ask_state(struct te_barrier *b, size_t i)
{
	struct te_coord_req q = { .kind = TE_CQ_STATUS, .rank = b->p->me.rank };
	char line[TE_COORD_LINE_MAX];

	b->cc.c[i].wants_state = 1;
	if (b->asked_state || b->cs != C_SENT ||
	    te_coord_req_format(line, sizeof(line), b->up_info.token, &q) < 0)
		return;
	b->asked_state = 1;
	te_bstate_queue_text(b, line);
	te_bstate_up_flush(b);
}

/* ---------------------------------------------------------------- connections down */

/* Per connection slot: which kid it speaks for, its summary so far. */
int te_bstate_tree_conns_init(struct te_barrier *b)
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

void te_bstate_tree_conn_closed(struct te_barrier *b, size_t i)
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
void te_bstate_tree_told(struct te_barrier *b, size_t i)
{
	size_t kid = b->conn_kid && i < b->cc.cap ? b->conn_kid[i] : NO_KID;

	if (kid == NO_KID || kid >= b->nchildren || b->kids[kid].told)
		return;
	b->kids[kid].told = 1;
	b->ntold++;
}

void te_bstate_conn_close(struct te_barrier *b, size_t i)
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
	lost = b->tree && c->registered && c->has_rank && !c->leaving &&
	       !b->finishing && !b->aborting;
	te_strlcpy(host, c->host, sizeof(host));
	if (b->tree) {
		uint32_t rank = c->rank;

		if (lost) {
			/* nobody there to tell */
			te_bstate_tree_told(b, i);
			te_bstate_tree_conn_closed(b, i);
			te_cc_release(&b->cc, i);
			te_bstate_rank_failed(b, rank, host[0] ? host : "?",
					      HELPER_GONE_WHY);
			return;
		}
		te_bstate_tree_conn_closed(b, i);
	}
	te_cc_release(&b->cc, i); /* also leaves the epoll set */
}

void te_bstate_conn_send(struct te_barrier *b, size_t i, const char *line)
{
	size_t len = strlen(line);

	/* Small lines into an idle socket: one send does it. A peer that
	 * cannot take them is not waiting for them. */
	if (send(b->cc.c[i].fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)len)
		te_bstate_conn_close(b, i);
}

/* Aborting: this node may end once each of its children has been told
 * (each child then stays for its own). */
void te_bstate_abort_hosts(struct te_barrier *b)
{
	b->nhosts = b->nchildren;
	b->hosts_known = 1;
}

/* Rank 0, aborting: answers one registered connection and closes it; its
 * helper writes the report for its node's tasks, so its node is told. */
void te_bstate_conn_abort(struct te_barrier *b, size_t i)
{
	char line[TE_COORD_LINE_MAX];

	if (te_coord_reply_format(line, sizeof(line), TE_CR_ABORT,
				  b->abort_text) < 0)
		return;
	te_bstate_tree_told(b, i);
	te_bstate_conn_send(b, i, line);
	if (b->cc.c[i].fd >= 0) {
		char junk[4096];

		/* what the peer sent and nobody will read: closing over it
		 * would reset the connection and could drop the answer */
		while (read(b->cc.c[i].fd, junk, sizeof(junk)) > 0)
			;
		te_bstate_conn_close(b, i);
	}
}

static void conn_new(void *ctx, size_t i)
{
	struct te_barrier *b = ctx;

	if (b->test_cut) { /* as if strangers pushed it out */
		b->test_cut--;
		b->test_cut_done++;
		te_bstate_conn_close(b, i);
	} else if (te_bstate_ep_add(b, b->cc.c[i].fd, EPOLLIN, TAG_CONN + i) <
		   0) {
		te_bstate_conn_close(b, i);
	}
}

/* A burst at most (coord_conns.h): what is left keeps the listener
 * readable for the next turn. */
void te_bstate_conns_accept(struct te_barrier *b)
{
	te_cc_accept_burst(&b->cc, b->lfd, b->epfd, te_now_ms(), conn_new, b);
}

void te_bstate_conns_broadcast(struct te_barrier *b, const char *line)
{
	size_t i;

	b->finishing = 1;
	for (i = 0; i < b->cc.cap; i++)
		if (b->cc.c[i].fd >= 0) {
			if (b->cc.c[i].registered)
				te_bstate_conn_send(b, i, line);
			te_bstate_conn_close(b, i);
		}
}

/* The report a child asked for (its own deadline) came from above. */
void te_bstate_tree_relay_state(struct te_barrier *b)
{
	char line[TE_COORD_LINE_MAX];

	b->asked_state = 0;
	if (b->lfd < 0 || te_coord_reply_format(line, sizeof(line), TE_CR_STATE,
						b->rank0_text) < 0)
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

/* ---------------------------------------------------------------- checkpoint probe
 * Rank 0's checkpoint probe goes down the launch tree over the children's
 * connections: a parent passes it on as soon as it has it, to every child
 * registered by then and to each later one as it registers. */

int te_bstate_probe_ready(const struct te_barrier *b)
{
	return !b->probe_check || b->probe_checked;
}

void te_bstate_probe_send(struct te_barrier *b, size_t i)
{
	char line[TE_COORD_LINE_MAX];
	struct te_coord_conn *c = &b->cc.c[i];

	if (!b->probe_have || c->fd < 0 || !c->registered || c->probe_sent ||
	    te_coord_reply_format(line, sizeof(line), TE_CR_PROBE, b->probe) <
		    0)
		return;
	c->probe_sent = 1;
	if (send(c->fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* it left: its close is seen by the loop */
	}
}

void te_bstate_probe_take(struct te_barrier *b, const char *text)
{
	if (!b->probe_check || b->probe_have)
		return;
	te_strlcpy(b->probe, text, sizeof(b->probe));
	b->probe_have = 1;
}

int te_bstate_probe_missing(struct te_barrier *b, const char *head, char *msg,
			    size_t len)
{
	char host[TE_HOST_MAX];

	if (!b->probe_check || b->probe_have || !b->has_up)
		return 0;
	/* the parent's host, cached where the session may be closed
	 * (close_early) */
	if (b->rank0_host[0])
		te_strlcpy(host, b->rank0_host, sizeof(host));
	else if (te_pmix_host_of(b->p, b->up_rank, host, sizeof(host)) < 0)
		te_strlcpy(host, "?", sizeof(host));
	/* the parent may be waiting itself: it, or a node between it and
	 * rank 0, has not arrived (or rank 0 has given up) */
	if (b->up_rank == 0)
		te_snprintf(msg, len,
			    "%s: rank 0 (node %s) did not pass on its "
			    "checkpoint probe (it did not arrive, or stopped "
			    "waiting)",
			    head, host);
	else
		te_snprintf(msg, len,
			    "%s: rank %u (node %s), this node's parent in the "
			    "launch tree, did not pass on rank 0's checkpoint "
			    "probe (it, or a node between it and rank 0, did "
			    "not arrive, or rank 0 stopped waiting)",
			    head, b->up_rank, host);
	return 1;
}

void te_bstate_probe_run(struct te_barrier *b, int64_t now)
{
	char result[TE_CKPT_TEXT_MAX + 1] = "-";

	if (!b->probe_have || b->probe_checked || now < b->probe_next)
		return;
	/* the children first: their looks need not wait for ours (up to
	 * 3 s on a network file system, tried from the loop) */
	for (size_t i = 0; b->lfd >= 0 && i < b->cc.cap; i++)
		te_bstate_probe_send(b, i);
	if (!b->probe_check(b->probe_arg, b->probe, result, sizeof(result))) {
		b->probe_next = now + PROBE_TRY_MS;
		return;
	}
	b->probe_checked = 1;
	te_strlcpy(b->node.ckpt, result, sizeof(b->node.ckpt));
	b->sub_dirty = 1;
}

/* ---------------------------------------------------------------- arrivals, failures */

size_t te_bstate_own_pos(struct te_barrier *b, uint32_t rank)
{
	for (size_t i = 0; i < b->nown; i++)
		if (b->own[i] == rank)
			return i;
	return NO_KID;
}

void te_bstate_tree_own_arrived(struct te_barrier *b, uint32_t rank)
{
	size_t i = te_bstate_own_pos(b, rank);

	if (i == NO_KID || b->own_state[i])
		return;
	b->own_state[i] = 1;
	if (++b->own_in == b->nown)
		b->own_done_ms = te_now_ms();
	b->sub_dirty = 1;
}

void te_bstate_mark_arrived(struct te_barrier *b, uint32_t rank,
			    const char *host)
{
	if (b->tree) {
		te_bstate_tree_own_arrived(b, rank);
		return;
	}
	if (rank < b->p->size && !b->arrived[rank]) {
		b->arrived[rank] = 1;
		b->narrived++;
	}
}

/* Rank 0: rank failed before the barrier. The first failure is the
 * report; every node registered so far is answered at once, the others
 * as soon as they register. */
void te_bstate_rank_failed(struct te_barrier *b, uint32_t rank,
			   const char *host, const char *why)
{
	size_t i;

	if (b->tree && !b->is_root) { /* up the tree, to rank 0 */
		te_bstate_tree_failed(b, rank, host, why);
		return;
	}
	if (b->aborting || !b->cc.c)
		return; /* the first failure is the one reported */
	b->aborting = 1;
	te_failed_report(rank, host, why, b->abort_text, sizeof(b->abort_text));
	te_bstate_abort_hosts(b);
	for (i = 0; i < b->cc.cap; i++)
		if (b->cc.c[i].fd >= 0 && b->cc.c[i].registered)
			te_bstate_conn_abort(b, i);
}

/* ---------------------------------------------------------------- report */

static int host_of(void *ctx, uint32_t rank, char *host, size_t len)
{
	return te_pmix_host_of(ctx, rank, host, len);
}

static void recompute(struct te_barrier *b)
{
	struct te_tree_sum *s = b->sub, absent;
	/* this node's facts are whole once its look at the checkpoint
	 * directory is done */
	int final = b->own_in == b->nown && te_bstate_probe_ready(b);
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
					b->own[j] == b->own[j - 1] + 1;
			     j++)
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

const struct te_tree_sum *te_bstate_tree_sum(struct te_barrier *b)
{
	if (b->sub_dirty)
		recompute(b);
	return b->sub;
}

void te_bstate_tree_report(struct te_barrier *b, char *out, size_t len)
{
	if (b->sub_dirty)
		recompute(b);
	te_tree_missing_text(b->sub, b->p->size, &b->map, host_of, b->p, out,
			     len);
}

void te_bstate_missing_report(struct te_barrier *b, char *out, size_t len)
{
	if (b->tree) {
		te_bstate_tree_report(b, out, len);
		return;
	}
	if (!b->arrived) { /* the coordinator never started */
		te_snprintf(out, len, "who arrived is unknown");
		return;
	}
	te_missing_summary(b->p->size, b->arrived, host_of, b->p, out, len);
}
