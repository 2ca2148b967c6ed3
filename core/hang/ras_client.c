/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL RAS in the hang report: the one query (core/hang/ras.h,
 * te_ras_query; te_ras_query_checked lets the caller look at the
 * connection before anything is sent). A loopback TCP socket,
 * non-blocking, every wait bounded by one deadline, the reply bounded by
 * TE_RAS_REPLY_MAX. No name is ever
 * looked up (getaddrinfo may ask NSS or DNS, without a deadline):
 * "localhost" is 127.0.0.1 and ::1, anything else a number. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hang/ras.h"
#include "util/sysutil.h"

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)
				      ->sin_addr.s_addr) >>
			24) == 127;
	if (sa->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
			      &in6addr_loopback, 16) == 0;
	return 0;
}

/* Waits for events on fd until the deadline: 1 ready, 0 deadline, -1
 * error. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		int64_t left = deadline - te_now_ms();
		int n;

		if (left <= 0)
			return 0;
		n = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -1;
	}
}

/* Connected fd to sa, or -1 with *err (ECONNREFUSED: nothing listens;
 * ETIMEDOUT: the deadline). */
static int dial(const struct sockaddr_storage *sa, int64_t deadline, int *err)
{
	socklen_t len = sa->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						  : sizeof(struct sockaddr_in);
	int fd = socket(sa->ss_family,
			SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int soerr = 0, w;
	socklen_t sl = sizeof(soerr);
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);

	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)sa, len) < 0) {
		if (errno != EINPROGRESS) {
			*err = errno;
			close(fd);
			return -1;
		}
		w = wait_fd(fd, POLLOUT, deadline);
		if (w <= 0 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) ||
		    soerr) {
			*err = w == 0 ? ETIMEDOUT : soerr ? soerr : errno;
			close(fd);
			return -1;
		}
	}
	/* what we reached is on this host (never another machine's RAS) */
	if (getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 ||
	    !is_loopback((struct sockaddr *)&peer)) {
		*err = EADDRNOTAVAIL;
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *s, size_t len, int64_t deadline)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = send(fd, s + off, len - off, MSG_NOSIGNAL);

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (wait_fd(fd, POLLOUT, deadline) <= 0)
			return -1;
	}
	return 0;
}

/* Reads until EOF, the deadline or the cap: the outcome. */
static enum te_ras_outcome read_reply(int fd, char *buf, size_t cap,
				      size_t *len, int64_t deadline, int *err)
{
	*len = 0;
	for (;;) {
		ssize_t n;
		int w;

		if (*len > cap - 1)
			return TE_RAS_CAPPED;
		n = recv(fd, buf + *len, cap - *len, 0);
		if (n > 0) {
			*len += (size_t)n;
			continue;
		}
		if (n == 0)
			return TE_RAS_ANSWERED;
		if (errno != EAGAIN && errno != EINTR) {
			*err = errno;
			return TE_RAS_FAILED;
		}
		w = wait_fd(fd, POLLIN, deadline);
		if (w == 0)
			return *len ? TE_RAS_DEADLINE : TE_RAS_SILENT;
		if (w < 0) {
			*err = errno;
			return TE_RAS_FAILED;
		}
	}
}

static void ask(int fd, int timeout_ms, int64_t deadline,
		struct te_ras_status *st, char *buf, size_t cap)
{
	char req[96];
	size_t len = 0;
	int err = 0;

	/* RAS may take twice its TIMEOUT (its legs, then the extra) */
	te_ras_request(req, sizeof(req), timeout_ms / 2000);
	if (send_all(fd, req, strlen(req), deadline) < 0) {
		st->outcome = te_now_ms() >= deadline ? TE_RAS_SILENT
						      : TE_RAS_FAILED;
		st->err = errno;
		te_ras_parse(NULL, 0, st);
		return;
	}
	st->outcome = read_reply(fd, buf, cap, &len, deadline, &err);
	st->err = err;
	te_ras_parse(buf, len, st);
}

/* The addresses to try for host (numeric, or "localhost": 127.0.0.1,
 * then ::1), port into each: how many (0: none parsed). */
static int addrs_of(const char *host, uint16_t port,
		    struct sockaddr_storage *ss)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss[0];
	struct sockaddr_in6 *a6;
	int n = 0, local = !strcmp(host, "localhost");

	memset(ss, 0, 2 * sizeof(*ss));
	if (local || inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		if (local)
			a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		n++;
	}
	a6 = (struct sockaddr_in6 *)&ss[n];
	if (local || (!n && inet_pton(AF_INET6, host, &a6->sin6_addr) == 1)) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		if (local)
			a6->sin6_addr = in6addr_loopback;
		n++;
	}
	return n;
}

int te_ras_query(const char *addr, int timeout_ms, struct te_ras_status *st)
{
	return te_ras_query_checked(addr, timeout_ms, NULL, NULL, NULL, 0, st);
}

int te_ras_query_checked(const char *addr, int timeout_ms,
			 int (*peer_ok)(int fd, void *arg, char *why,
					size_t whylen),
			 void *arg, char *why, size_t whylen,
			 struct te_ras_status *st)
{
	struct sockaddr_storage ss[2];
	int64_t deadline = te_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	char host[64], *buf;
	uint16_t port;
	int err = ECONNREFUSED, fd = -1, tried = 0, i, n, split;

	memset(st, 0, sizeof(*st));
	if (why && whylen)
		why[0] = '\0';
	split = te_ras_addr_split(addr, host, sizeof(host), &port);
	if (split < 0) {
		st->outcome = TE_RAS_NOT_LOOPBACK;
		st->err = split == -2 ? EINVAL : 0;
		return 0;
	}
	n = addrs_of(host, port, ss);
	for (i = 0; i < n && fd < 0; i++) {
		if (!is_loopback((const struct sockaddr *)&ss[i]))
			continue;
		tried = 1;
		fd = dial(&ss[i], deadline, &err);
	}
	if (fd < 0) {
		st->outcome = !tried		    ? TE_RAS_NOT_LOOPBACK
			      : err == ECONNREFUSED ? TE_RAS_ABSENT
			      : err == ETIMEDOUT    ? TE_RAS_SILENT
						    : TE_RAS_FAILED;
		st->err = err;
		return 0;
	}
	if (peer_ok) {
		char fallback[8];

		/* nothing sent to a peer the caller has not seen */
		if (!peer_ok(fd, arg, why && whylen ? why : fallback,
			     why && whylen ? whylen : sizeof(fallback))) {
			close(fd);
			st->outcome = TE_RAS_FAILED;
			st->err = EPERM;
			return 1;
		}
	}
	buf = malloc(TE_RAS_REPLY_MAX + 1);
	if (!buf) {
		close(fd);
		st->outcome = TE_RAS_FAILED;
		st->err = ENOMEM;
		return -1;
	}
	ask(fd, timeout_ms, deadline, st, buf, TE_RAS_REPLY_MAX + 1);
	free(buf);
	close(fd);
	return 0;
}
