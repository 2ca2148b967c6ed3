/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* NCCL RAS in the hang report: who holds the step's RAS address. RAS has
 * no authentication and the step's loopback address is predictable: a
 * process of another user that binds it first would answer the query with
 * what it likes (and NCCL's RAS, refused the port, only logs it). Linux's
 * /proc/net/tcp, which every user may read, gives each listening socket's
 * owner: the report asks only a listener of the job's user. */
#include "config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* How surely a listener on local (8 hex digits: /proc/net/tcp; 32:
 * tcp6, four native words) gets the connection: 6 its very address (or
 * ::ffff:A), 4 IPv4's any (0.0.0.0), 2 IPv6's any (::, which takes IPv4
 * too unless IPV6_V6ONLY), 1 ::1 when 127.0.0.1 is dialed first; 0 not. */
static int reach(const struct target *t, const char *local)
{
	size_t n = strlen(local), i;
	uint32_t w[4];
	char h[9];

	if (n == 8) {
		w[0] = (uint32_t)strtoul(local, NULL, 16);
		return !t->v4			       ? 0
		       : w[0] == (uint32_t)t->a.s_addr ? 6
		       : w[0] == 0		       ? 4
						       : 0;
	}
	if (n != 32)
		return 0;
	for (i = 0; i < 4; i++) {
		memcpy(h, local + 8 * i, 8);
		h[8] = '\0';
		w[i] = (uint32_t)strtoul(h, NULL, 16);
	}
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
