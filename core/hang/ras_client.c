/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL RAS in the hang report: the one query (core/hang/ras.h,
 * te_ras_query). A loopback TCP socket, non-blocking, every wait bounded
 * by one deadline, the reply bounded by TE_RAS_REPLY_MAX. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "hang/ras.h"
#include "util/strutil.h"
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

/* Connected fd to a, or -1 with *err (ECONNREFUSED: nothing listens;
 * ETIMEDOUT: the deadline). */
static int dial(const struct addrinfo *a, int64_t deadline, int *err)
{
	int fd = socket(a->ai_family,
			a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int soerr = 0, w;
	socklen_t sl = sizeof(soerr);
	struct sockaddr_storage peer;
	socklen_t pl = sizeof(peer);

	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
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

int te_ras_query(const char *addr, int timeout_ms, struct te_ras_status *st)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL, *a;
	int64_t deadline = te_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	char host[64], sport[8], *buf;
	uint16_t port;
	int err = ECONNREFUSED, fd = -1, tried = 0;

	memset(st, 0, sizeof(*st));
	if (te_ras_addr_split(addr, host, sizeof(host), &port) < 0) {
		st->outcome = TE_RAS_NOT_LOOPBACK;
		return 0;
	}
	if (strcmp(host, "localhost"))
		hints.ai_flags |= AI_NUMERICHOST;
	te_snprintf(sport, sizeof(sport), "%u", port);
	if (getaddrinfo(host, sport, &hints, &ai) != 0) {
		st->outcome = TE_RAS_FAILED;
		st->err = EADDRNOTAVAIL;
		return 0;
	}
	for (a = ai; a && fd < 0; a = a->ai_next) {
		if (!is_loopback(a->ai_addr))
			continue;
		tried = 1;
		fd = dial(a, deadline, &err);
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		st->outcome = !tried		    ? TE_RAS_NOT_LOOPBACK
			      : err == ECONNREFUSED ? TE_RAS_ABSENT
			      : err == ETIMEDOUT    ? TE_RAS_SILENT
						    : TE_RAS_FAILED;
		st->err = err;
		return 0;
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
