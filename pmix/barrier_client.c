/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier's client, on every rank but 0: finds rank 0's coordinator
 * (PMIx, or a file on rank 0's node) or its parent's in the launch tree,
 * connects with the registration queued (barrier.c's register_up), and
 * reads the answer. The queue, its flush and a cut (try again):
 * barrier_state.c. */
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
#include "launch/rdzv_proto.h"
#include "util/strutil.h"

const char *te_bclient_rank0_host(struct te_barrier *b)
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

	if (!b->tmpdir[0] || te_snprintf(path, sizeof(path), COORD_FILE_FMT,
					 b->tmpdir, b->seq) < 0)
		return -1;
	return te_read_small(path, out, len, TE_READ_NOFOLLOW) > 0 ? 0 : -1;
}

/* ---------------------------------------------------------------- client */

/* The coordinator's address as published: 0, or -1 (unreachable). */
static int client_connect(struct te_barrier *b, const char *text)
{
	if (te_coord_info_parse(text, &b->up_info) < 0) {
		b->cs = C_UNREACH;
		te_snprintf(b->unreach, sizeof(b->unreach),
			    "it published an "
			    "unreadable coordinator address");
		return -1;
	}
	return 0;
}

/* Without the launch tree, what rank 0 must hear on a new connection:
 * this rank, then the ranks it stands for (arrived or failed). */
void te_bclient_queue_ranks(struct te_barrier *b)
{
	size_t i;

	if (b->self_failed[0])
		te_bstate_queue_failed(b, b->p->me.rank, b->self_failed);
	else
		te_bstate_queue_arrived(b, b->p->me.rank);
	for (i = 0; i < b->nfollowers; i++) {
		char path[600], why[TE_FAIL_TEXT_MAX + 1];

		if (b->follower_here[i] == 2) {
			/* its failure file, or it ended while waiting */
			if (te_snprintf(path, sizeof(path), TE_FAILED_FMT,
					b->tmpdir, b->followers[i]) < 0 ||
			    te_bstate_read_failed_file(path, why, sizeof(why)) <
				    0)
				te_strlcpy(why, TASK_GONE_WHY, sizeof(why));
			te_bstate_queue_failed(b, b->followers[i], why);
		} else if (b->follower_here[i]) {
			te_bstate_queue_arrived(b, b->followers[i]);
		}
	}
}

/* Connects to the coordinator in b->up_info (the registration queued). */
void te_bclient_dial(struct te_barrier *b)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char port[8];

	te_snprintf(port, sizeof(port), "%u", (unsigned)b->up_info.port);
	if (getaddrinfo(b->up_info.addr, port, &hints, &ai) != 0) {
		te_bstate_up_cut(b, EINVAL);
		return;
	}
	b->cfd = socket(ai->ai_family,
			SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (b->cfd < 0) {
		int e = errno;

		freeaddrinfo(ai);
		te_bstate_up_cut(b, e);
		return;
	}
	if (connect(b->cfd, ai->ai_addr, ai->ai_addrlen) < 0 &&
	    errno != EINPROGRESS) {
		int e = errno;

		freeaddrinfo(ai);
		te_bstate_up_cut(b, e);
		return;
	}
	freeaddrinfo(ai);
	if (te_bstate_ep_add(b, b->cfd, EPOLLOUT | EPOLLIN, TAG_CLIENT) < 0) {
		te_bstate_up_cut(b, errno);
		return;
	}
	b->cs = C_CONNECTING;
}

int te_bclient_lookup(struct te_barrier *b, int64_t now)
{
	char text[512];

	if (b->get_pending && now - b->get_asked >= GET_AGAIN_MS) {
		/* a node's server can lose a request (Slurm's mpi/pmix on a
		 * connection reset): ask again; the old answer is ignored */
		b->get_pending = 0;
		b->next_lookup = now;
	}
	if (now < b->next_lookup)
		return 0;
	if (!b->rank0_host[0]) /* rank 0's peers read a file */
		b->rank0_local = !strcmp(te_bclient_rank0_host(b), b->p->host);
	if (b->rank0_local && b->tmpdir[0]) {
		if (read_coord_file(b, text, sizeof(text)) == 0)
			return client_connect(b, text) == 0;
	} else if (!b->get_pending) {
		/* Later barriers must see rank 0's new data, not what this
		 * node cached from an earlier one. */
		if (te_bsess_start_get(b->p, b->up_rank, b->key, b->seq > 0) ==
		    0) {
			if (!b->get_since) /* the first of a series */
				b->get_since = now;
			b->get_pending = 1;
			b->get_asked = now;
		}
		return 0;
	} else {
		return 0; /* wait for the answer */
	}
	b->backoff = b->backoff ? b->backoff * 2 : 5;
	if (b->backoff > 500)
		b->backoff = 500;
	b->next_lookup = now + b->backoff;
	return 0;
}

int te_bclient_get_done(struct te_barrier *b, int64_t now)
{
	int done;
	pmix_status_t st;
	char text[512];

	done = te_bsess_get_take(&st, text, sizeof(text));
	if (!done)
		return 0;
	b->get_pending = 0;
	b->get_since = 0;
	if (st == PMIX_SUCCESS)
		return client_connect(b, text) == 0;
	b->backoff = b->backoff ? b->backoff * 2 : 20;
	if (b->backoff > 500)
		b->backoff = 500;
	b->next_lookup = now + b->backoff;
	return 0;
}

void te_bclient_io(struct te_barrier *b, uint32_t events)
{
	if (b->cs == C_CONNECTING &&
	    (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
		int e = 0;
		socklen_t el = sizeof(e);

		if (getsockopt(b->cfd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
			e = errno;
		if (e) {
			te_bstate_up_cut(b, e);
			return;
		}
		b->cs = C_SENT;
		b->refusing = 0;
	}
	if (b->cs == C_SENT || b->cs == C_DONE)
		te_bstate_up_flush(b);
	if (b->cfd >= 0 && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
		ssize_t n = read(b->cfd, b->cbuf + b->clen,
				 TE_COORD_LINE_MAX - b->clen);
		char line[TE_COORD_LINE_MAX + 1];
		int got;

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			te_bstate_up_cut(b, n == 0 ? 0 : errno);
			return;
		}
		if (n < 0)
			return;
		b->clen += (size_t)n;
		b->cbuf[b->clen] = '\0';
		while ((got = te_bstate_take_line(b->cbuf, &b->clen, line))) {
			struct te_coord_reply r;

			if (got < 0 || te_coord_reply_parse(line, &r) < 0)
				continue; /* not from our coordinator */
			if (r.kind == TE_CR_PROBE) { /* checked by the loop */
				te_bstate_probe_take(b, r.text);
				continue;
			}
			if (r.kind == TE_CR_DONE) {
				b->cs = C_DONE;
				te_strlcpy(b->done_text, r.text,
					   sizeof(b->done_text));
				continue;
			}
			te_strlcpy(b->rank0_text, r.text,
				   sizeof(b->rank0_text));
			if (r.kind == TE_CR_STATE && b->tree) {
				/* for the children */
				te_bstate_tree_relay_state(b);
				if (!b->leaving_asked)
					continue; /* not ours */
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
			b->clen = 0; /* garbage: drop it */
	}
}

/* At this rank's own deadline: ask rank 0 for the current report. */
void te_bclient_ask_status(struct te_barrier *b)
{
	struct te_coord_req q = { .kind = TE_CQ_STATUS, .rank = b->p->me.rank };
	char line[TE_COORD_LINE_MAX];
	int64_t until = te_now_ms() + STATUS_WAIT_MS;

	b->leaving_asked = 1;
	if (b->cfd < 0 || b->cs != C_SENT ||
	    te_coord_req_format(line, sizeof(line), b->up_info.token, &q) < 0 ||
	    send(b->cfd, line, strlen(line), MSG_NOSIGNAL) !=
		    (ssize_t)strlen(line))
		return;
	while (!b->got_state && !b->got_fail && b->cfd >= 0) {
		struct pollfd pf = { .fd = b->cfd, .events = POLLIN };
		int64_t left = until - te_now_ms();

		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		te_bclient_io(b, EPOLLIN);
	}
}
