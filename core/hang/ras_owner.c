/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL RAS in the hang report: who holds the step's RAS address. RAS has
 * no authentication and the step's loopback address is predictable: a
 * process of another user that binds it first would answer the query with
 * what it likes (and NCCL's RAS, refused the port, only logs it). Linux's
 * /proc/net/tcp, which every user may read, gives each listening socket's
 * owner: the report asks only a listener of the job's user, and, once
 * connected, only if the socket that took the connection is the job's
 * user's (te_ras_conn_uid: a listener of another user's that came between
 * the look and the connect is never sent the request). */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hang/ras.h"

/* Where a connection to addr goes: IPv4 a (network order; "localhost"
 * is 127.0.0.1, then ::1, as te_ras_query dials) and/or ::1, and port. */
struct target {
	struct in_addr a;
	int v4, v6lo;
	unsigned port;
};

/* "A.B.C.D:PORT", "localhost:PORT" or "[::1]:PORT" into t; 0 or -1. */
static int split_addr(const char *addr, struct target *t)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon = strrchr(addr, ':');
	struct in6_addr a6;
	char *end;
	unsigned long p;
	size_t hl;

	memset(t, 0, sizeof(*t));
	if (!colon || (size_t)(colon - addr) >= sizeof(host))
		return -1;
	hl = (size_t)(colon - addr);
	memcpy(host, addr, hl);
	host[hl] = '\0';
	p = strtoul(colon + 1, &end, 10);
	if (*end || !colon[1] || p > 65535)
		return -1;
	t->port = (unsigned)p;
	if (!strcmp(host, "localhost")) {
		t->a.s_addr = htonl(INADDR_LOOPBACK);
		t->v4 = t->v6lo = 1;
		return 0;
	}
	if (hl > 2 && host[0] == '[' && host[hl - 1] == ']') {
		host[hl - 1] = '\0';
		t->v6lo = inet_pton(AF_INET6, host + 1, &a6) == 1 &&
			  !memcmp(&a6, &in6addr_loopback, sizeof(a6));
		return t->v6lo ? 0 : -1;
	}
	t->v4 = inet_pton(AF_INET, host, &t->a) == 1;
	return t->v4 ? 0 : -1;
}

/* An address of /proc/net/tcp (8 hex digits: one native word) or tcp6
 * (32: four) into w: how many words (1 or 4), 0 for any other length. */
static int hex_words(const char *hex, uint32_t w[4])
{
	size_t n = strlen(hex), i;
	char h[9];

	if (n != 8 && n != 32)
		return 0;
	for (i = 0; i < n / 8; i++) {
		memcpy(h, hex + 8 * i, 8);
		h[8] = '\0';
		w[i] = (uint32_t)strtoul(h, NULL, 16);
	}
	return (int)(n / 8);
}

/* How surely a listener on local (8 hex digits: /proc/net/tcp; 32:
 * tcp6, four native words) gets the connection: 6 its very address (or
 * ::ffff:A), 4 IPv4's any (0.0.0.0), 2 IPv6's any (::, which takes IPv4
 * too unless IPV6_V6ONLY), 1 ::1 when 127.0.0.1 is dialed first; 0 not. */
static int reach(const struct target *t, const char *local)
{
	uint32_t w[4];
	int k = hex_words(local, w);

	if (k == 1)
		return !t->v4			       ? 0
		       : w[0] == (uint32_t)t->a.s_addr ? 6
		       : w[0] == 0		       ? 4
						       : 0;
	if (k != 4)
		return 0;
	if (w[0] || w[1])
		return 0;
	if (!w[2] && !w[3])
		return 2; /* :: */
	if (t->v4 && w[2] == htonl(0xffff) && w[3] == (uint32_t)t->a.s_addr)
		return 6;
	if (t->v6lo && !w[2] && w[3] == htonl(1))
		return t->v4 ? 1 : 6;
	return 0;
}

int te_ras_listener_uid(const char *tcp, size_t len, const char *addr,
			long *uid)
{
	struct target t;
	size_t at = 0;
	int best = 0;

	if (split_addr(addr, &t) < 0)
		return -1;
	while (at < len) {
		const char *nl = memchr(tcp + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (tcp + at)) : len - at;
		char line[256], local[33];
		unsigned lport, st;
		long u;
		int r;

		if (n < sizeof(line)) {
			memcpy(line, tcp + at, n);
			line[n] = '\0';
			/* sl local rem st tx:rx tr:when retrnsmt uid */
			if (sscanf(line,
				   " %*u: %32[0-9A-Fa-f]:%4X %*[0-9A-Fa-f]:%*4X "
				   "%2X %*8X:%*8X %*2X:%*8X %*8X %ld",
				   local, &lport, &st, &u) == 4 &&
			    st == 0x0A && lport == t.port && u >= 0 &&
			    (r = reach(&t, local)) > best) {
				best = r;
				*uid = u;
			}
		}
		at += n + 1;
	}
	return best > 0;
}

/* An end of a connection as /proc/net/tcp{,6} names it: IPv4 (a4, network
 * order; ::ffff:A is A) or IPv6 (a6), and the port. */
struct end {
	int v4;
	uint32_t a4;
	unsigned char a6[16];
	unsigned port;
};

/* sa (AF_INET or AF_INET6) into e; 0 or -1. */
static int end_of(const struct sockaddr *sa, struct end *e)
{
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0,    0,
						  0, 0, 0, 0, 0xff, 0xff };

	memset(e, 0, sizeof(*e));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;

		e->v4 = 1;
		e->a4 = (uint32_t)s->sin_addr.s_addr;
		e->port = ntohs(s->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;

		memcpy(e->a6, &s->sin6_addr, 16);
		e->port = ntohs(s->sin6_port);
		if (!memcmp(e->a6, mapped, 12)) {
			e->v4 = 1;
			memcpy(&e->a4, e->a6 + 12, 4);
		}
		return 0;
	}
	return -1;
}

/* hex (8 digits: tcp, one native word; 32: tcp6, four) and port into e;
 * 0 or -1. */
static int end_of_hex(const char *hex, unsigned port, struct end *e)
{
	struct sockaddr_in6 s6;
	uint32_t w[4];
	int k = hex_words(hex, w);

	memset(e, 0, sizeof(*e));
	if (k == 1) {
		e->v4 = 1;
		e->a4 = w[0];
		e->port = port;
		return 0;
	}
	if (k != 4)
		return -1;
	memset(&s6, 0, sizeof(s6));
	s6.sin6_family = AF_INET6;
	s6.sin6_port = htons((uint16_t)port);
	memcpy(&s6.sin6_addr, w, 16); /* the words as the kernel keeps them */
	return end_of((const struct sockaddr *)&s6, e);
}

static int same_end(const struct end *a, const struct end *b)
{
	if (a->port != b->port || a->v4 != b->v4)
		return 0;
	return a->v4 ? a->a4 == b->a4 : !memcmp(a->a6, b->a6, 16);
}

int te_ras_conn_uid(const char *tcp, size_t len, const struct sockaddr *server,
		    const struct sockaddr *client, long *uid)
{
	struct end srv, cli;
	size_t at = 0;
	long found = -1;

	if (!tcp || !server || !client || !uid || end_of(server, &srv) < 0 ||
	    end_of(client, &cli) < 0)
		return -1;
	while (at < len) {
		const char *nl = memchr(tcp + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (tcp + at)) : len - at;
		char line[256], local[33], rem[33];
		unsigned lport, rport, st;
		struct end l, r;
		long u;

		at += n + 1;
		if (n >= sizeof(line))
			continue;
		memcpy(line, tcp + at - n - 1, n);
		line[n] = '\0';
		/* sl local rem st tx:rx tr:when retrnsmt uid; the server's
		 * side: ESTABLISHED, or SYN_RECV (the listener's request until
		 * our ACK reaches it: its uid is the listener's too) */
		if (sscanf(line,
			   " %*u: %32[0-9A-Fa-f]:%4X %32[0-9A-Fa-f]:%4X %2X "
			   "%*8X:%*8X %*2X:%*8X %*8X %ld",
			   local, &lport, rem, &rport, &st, &u) != 6 ||
		    (st != 0x01 && st != 0x03) || u < 0 ||
		    end_of_hex(local, lport, &l) < 0 ||
		    end_of_hex(rem, rport, &r) < 0 || !same_end(&l, &srv) ||
		    !same_end(&r, &cli))
			continue;
		if (found >= 0 && found != u)
			return 0; /* two answers (Linux never shows two) */
		found = u;
	}
	if (found < 0)
		return 0;
	*uid = found;
	return 1;
}
