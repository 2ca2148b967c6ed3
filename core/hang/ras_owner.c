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

/* "A.B.C.D:PORT" into a (network order) and port; 0 or -1. */
static int split_addr(const char *addr, struct in_addr *a, unsigned *port)
{
	char host[INET_ADDRSTRLEN];
	const char *colon = strrchr(addr, ':');
	char *end;
	unsigned long p;

	if (!colon || (size_t)(colon - addr) >= sizeof(host))
		return -1;
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	p = strtoul(colon + 1, &end, 10);
	if (inet_pton(AF_INET, host, a) != 1 || *end || !colon[1] || p > 65535)
		return -1;
	*port = (unsigned)p;
	return 0;
}

int te_ras_listener_uid(const char *tcp, size_t len, const char *addr,
			long *uid)
{
	struct in_addr a;
	unsigned port;
	size_t at = 0;

	if (split_addr(addr, &a, &port) < 0)
		return -1;
	while (at < len) {
		const char *nl = memchr(tcp + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (tcp + at)) : len - at;
		char line[256];
		unsigned laddr, lport, st;
		long u;

		if (n < sizeof(line)) {
			memcpy(line, tcp + at, n);
			line[n] = '\0';
			/* sl local rem st tx:rx tr:when retrnsmt uid */
			if (sscanf(line,
				   " %*u: %8X:%4X %*8X:%*4X %2X %*8X:%*8X "
				   "%*2X:%*8X %*8X %ld",
				   &laddr, &lport, &st, &u) == 4 &&
			    st == 0x0A && lport == port &&
			    (uint32_t)laddr == (uint32_t)a.s_addr && u >= 0) {
				*uid = u;
				return 1;
			}
		}
		at += n + 1;
	}
	return 0;
}
