/* The barrier's client, on every rank but 0: finds rank 0's coordinator
 * (PMIx, or a file on rank 0's node), registers its node and ranks, tries
 * again when cut or refused, and reads rank 0's answer.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "barrier_int.h"
#include "rdzv_proto.h"
#include "strutil.h"

const char *rank0_host(struct te_barrier *b)
{
	if (!b->rank0_host[0] &&
	    te_pmix_host_of(b->p, b->up_rank, b->rank0_host,
			    sizeof(b->rank0_host)) < 0)
		te_strlcpy(b->rank0_host, "?", sizeof(b->rank0_host));
	return b->rank0_host;
}

static int read_coord_file(struct te_barrier *b, char *out, size_t len)
{
	char path[600];

	if (!b->tmpdir[0] ||
	    te_snprintf(path, sizeof(path), COORD_FILE_FMT, b->tmpdir, b->seq) < 0)
		return -1;
	return te_read_small(path, out, len, TE_READ_NOFOLLOW) > 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- followers */

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

void queue_arrived(struct te_barrier *b, uint32_t rank)
{
	struct te_coord_req q = { .kind = TE_CQ_ARRIVED, .rank = rank };

	te_strlcpy(q.host, b->p->host, sizeof(q.host));
	queue_line(b, &q);
}

void queue_failed(struct te_barrier *b, uint32_t rank, const char *why)
{
	struct te_coord_req q = { .kind = TE_CQ_FAILED, .rank = rank };

	te_strlcpy(q.host, b->p->host, sizeof(q.host));
	fail_text(q.why, sizeof(q.why), why);
	queue_line(b, &q);
}

/* ---------------------------------------------------------------- client */

/* The connection could not be made (e), or was cut before rank 0 answered
 * (e, or 0: closed). A stranger may have pushed it out of the
 * coordinator's pool, or the coordinator may be out of descriptors: try
 * again, with the whole registration, until this rank's deadline. Only
 * refusals for GONE_GRACE_MS in a row mean that nobody listens any more
 * (rank 0 has left the barrier). A registered helper's connection is never
 * cut by rank 0 while it waits; where the network cut it, rank 0 counts
 * its ranks as gone and answers the new connection "abort". */
static void client_cut(struct te_barrier *b, int e)
{
	int64_t now = te_now_ms();
	int refused = e == ECONNREFUSED;

	if (b->cfd >= 0) {
		close(b->cfd);
		b->cfd = -1;
	}
	if (b->cs == C_DONE || b->got_reject || b->got_abort || b->got_fail ||
	    b->got_state)
		return;		/* answered: nothing more to hear */
	if (!refused)
		b->refusing = 0;
	else if (!b->refusing) {
		b->refusing = 1;
		b->refused_since = now;
	}
	if (te_coord_after_cut(refused, b->refused_since, now,
			       GONE_GRACE_MS) == TE_CUT_GONE) {
		b->cs = C_GONE;		/* the loop fails at once */
		b->gone_at = b->refused_since;
		return;
	}
	if (e)
		te_snprintf(b->unreach, sizeof(b->unreach), "its coordinator "
			    "at %s port %u cannot be reached: %s", b->up_info.addr,
			    (unsigned)b->up_info.port, strerror(e));
	else
		te_snprintf(b->unreach, sizeof(b->unreach), "its coordinator "
			    "at %s port %u closed every connection before "
			    "answering", b->up_info.addr, (unsigned)b->up_info.port);
	b->retry_ms = te_coord_retry_ms(b->retry_ms);
	b->next_retry = now + b->retry_ms;
	b->cs = C_RETRY;
}

static void client_connect(struct te_barrier *b, const char *text)
{
	if (te_coord_info_parse(text, &b->up_info) < 0) {
		b->cs = C_UNREACH;
		te_snprintf(b->unreach, sizeof(b->unreach), "it published an "
			    "unreadable coordinator address");
		return;
	}
	client_dial(b);
}

/* Connects to the coordinator in b->up_info, with the whole registration
 * queued (a new connection starts from nothing). */
void client_dial(struct te_barrier *b)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char port[8];
	size_t i;

	/* what rank 0 must hear: this node's facts, then who is here */
	b->outlen = b->outoff = 0;
	b->clen = 0;
	if (b->tree) {
		tree_queue_registration(b);
		goto dial;
	}
	if (b->self_failed[0])
		queue_failed(b, b->p->me.rank, b->self_failed);
	else
		queue_arrived(b, b->p->me.rank);
	for (i = 0; i < b->nfollowers; i++) {
		char path[600], why[TE_FAIL_TEXT_MAX + 1];

		if (b->follower_here[i] == 2) {
			/* its failure file, or it ended while waiting */
			if (te_snprintf(path, sizeof(path), TE_FAILED_FMT,
					b->tmpdir, b->followers[i]) < 0 ||
			    read_failed_file(path, why, sizeof(why)) < 0)
				te_strlcpy(why, TASK_GONE_WHY, sizeof(why));
			queue_failed(b, b->followers[i], why);
		} else if (b->follower_here[i]) {
			queue_arrived(b, b->followers[i]);
		}
	}
dial:
	te_snprintf(port, sizeof(port), "%u", (unsigned)b->up_info.port);
	if (getaddrinfo(b->up_info.addr, port, &hints, &ai) != 0) {
		client_cut(b, EINVAL);
		return;
	}
	b->cfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
			0);
	if (b->cfd < 0) {
		int e = errno;

		freeaddrinfo(ai);
		client_cut(b, e);
		return;
	}
	if (connect(b->cfd, ai->ai_addr, ai->ai_addrlen) < 0 &&
	    errno != EINPROGRESS) {
		int e = errno;

		freeaddrinfo(ai);
		client_cut(b, e);
		return;
	}
	freeaddrinfo(ai);
	if (ep_add(b, b->cfd, EPOLLOUT | EPOLLIN, TAG_CLIENT) < 0) {
		client_cut(b, errno);
		return;
	}
	b->cs = C_CONNECTING;
}

void client_lookup(struct te_barrier *b, int64_t now)
{
	char text[512];

	if (now < b->next_lookup)
		return;
	if (!b->rank0_host[0])	/* rank 0's peers read a file */
		b->rank0_local = !strcmp(rank0_host(b), b->p->host);
	if (b->rank0_local && b->tmpdir[0]) {
		if (read_coord_file(b, text, sizeof(text)) == 0) {
			client_connect(b, text);
			return;
		}
	} else if (!b->get_pending) {
		/* Later barriers must see rank 0's new data, not what this
		 * node cached from an earlier one. */
		if (start_get(b->p, b->up_rank, b->key, b->seq > 0) == 0)
			b->get_pending = 1;
		return;
	} else {
		return;	/* wait for the answer */
	}
	b->backoff = b->backoff ? b->backoff * 2 : 5;
	if (b->backoff > 500)
		b->backoff = 500;
	b->next_lookup = now + b->backoff;
}

void client_get_done(struct te_barrier *b, int64_t now)
{
	int done;
	pmix_status_t st;
	char text[512];

	done = get_take(&st, text, sizeof(text));
	if (!done)
		return;
	b->get_pending = 0;
	if (st == PMIX_SUCCESS) {
		client_connect(b, text);
		return;
	}
	b->backoff = b->backoff ? b->backoff * 2 : 20;
	if (b->backoff > 500)
		b->backoff = 500;
	b->next_lookup = now + b->backoff;
}

void client_flush(struct te_barrier *b)
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
		client_cut(b, n < 0 ? errno : EPIPE);
		return;
	}
	if (b->cfd >= 0) {
		struct epoll_event ev = {
			.events = EPOLLIN | (b->outoff < b->outlen ? EPOLLOUT : 0),
			.data.u64 = TAG_CLIENT
		};

		epoll_ctl(b->epfd, EPOLL_CTL_MOD, b->cfd, &ev);
	}
	if (b->outoff >= b->outlen)
		b->outoff = b->outlen = 0;
}

void client_io(struct te_barrier *b, uint32_t events)
{
	if (b->cs == C_CONNECTING && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		int e = 0;
		socklen_t el = sizeof(e);

		if (getsockopt(b->cfd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			e = errno;
		if (e) {
			client_cut(b, e);
			return;
		}
		b->cs = C_SENT;
		b->refusing = 0;
	}
	if (b->cs == C_SENT || b->cs == C_DONE)
		client_flush(b);
	if (b->cfd >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		ssize_t n = read(b->cfd, b->cbuf + b->clen,
				 TE_COORD_LINE_MAX - b->clen);
		char line[TE_COORD_LINE_MAX + 1];
		int got;

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			client_cut(b, n == 0 ? 0 : errno);
			return;
		}
		if (n < 0)
			return;
		b->clen += (size_t)n;
		b->cbuf[b->clen] = '\0';
		while ((got = take_line(b->cbuf, &b->clen, line))) {
			struct te_coord_reply r;

			if (got < 0 || te_coord_reply_parse(line, &r) < 0)
				continue;	/* not from our coordinator */
			if (r.kind == TE_CR_DONE) {
				b->cs = C_DONE;
				te_strlcpy(b->done_text, r.text,
					   sizeof(b->done_text));
				continue;
			}
			te_strlcpy(b->rank0_text, r.text, sizeof(b->rank0_text));
			if (r.kind == TE_CR_STATE && b->tree) {
				tree_relay_state(b);	/* for the children */
				if (!b->leaving_asked)
					continue;	/* not ours */
			}
			if (r.kind == TE_CR_FAIL)
				b->got_fail = 1;
			else if (r.kind == TE_CR_REJECT)
				b->got_reject = 1;
			else if (r.kind == TE_CR_ABORT)
				b->got_abort = 1;
			else
				b->got_state = 1;
		}
		if (b->clen >= TE_COORD_LINE_MAX)
			b->clen = 0;	/* garbage: drop it */
	}
}

/* At this rank's own deadline: ask rank 0 for the current report. */
void client_ask_status(struct te_barrier *b)
{
	struct te_coord_req q = { .kind = TE_CQ_STATUS, .rank = b->p->me.rank };
	char line[TE_COORD_LINE_MAX];
	int64_t until = te_now_ms() + STATUS_WAIT_MS;

	b->leaving_asked = 1;
	if (b->cfd < 0 || b->cs != C_SENT ||
	    te_coord_req_format(line, sizeof(line), b->up_info.token, &q) < 0 ||
	    send(b->cfd, line, strlen(line), MSG_NOSIGNAL) != (ssize_t)strlen(line))
		return;
	while (!b->got_state && !b->got_fail && b->cfd >= 0) {
		struct pollfd pf = { .fd = b->cfd, .events = POLLIN };
		int64_t left = until - te_now_ms();

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		client_io(b, EPOLLIN);
	}
}
