/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libFuzzer target: the readers of /proc/net/tcp{,6} in the hang report's
 * NCCL RAS query (core/hang/ras_owner.c): who listens on the step's RAS
 * address (te_ras_listener_uid) and whose socket took the connection
 * (te_ras_conn_uid). The first byte picks the address and the
 * connection's ends (IPv4, ::ffff:A, ::1); the rest is the text. Beyond
 * "no crash": the answer is -1, 0 or 1, a uid is set only with 1 and is
 * never negative, and a text cut shorter is never read past its end (the
 * reader is given the bytes in a buffer of their own size). Seeds
 * (tests/fuzz/corpus/ras_owner/) are lines as Linux writes them. */
// FUZZ-SOURCES: core/hang/ras_owner.c|
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "hang/ras.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void end4(struct sockaddr_storage *ss, uint32_t a, unsigned port)
{
	struct sockaddr_in *s = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	s->sin_family = AF_INET;
	s->sin_addr.s_addr = htonl(a);
	s->sin_port = htons((uint16_t)port);
}

static void end6(struct sockaddr_storage *ss, uint32_t a, unsigned port)
{
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	s->sin6_family = AF_INET6;
	s->sin6_port = htons((uint16_t)port);
	if (a) { /* ::ffff:A */
		s->sin6_addr.s6_addr[10] = s->sin6_addr.s6_addr[11] = 0xff;
		a = htonl(a);
		memcpy(&s->sin6_addr.s6_addr[12], &a, 4);
	} else {
		s->sin6_addr = in6addr_loopback;
	}
}

static void check(int rc, long uid)
{
	if (rc < -1 || rc > 1 || (rc == 1 && uid < 0) || (rc != 1 && uid != -7))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const addrs[] = { "127.0.0.2:28100",
					     "localhost:28100", "[::1]:28100",
					     "127.0.0.1:28100" };
	struct sockaddr_storage srv, cli;
	char *tcp;
	long uid = -7;
	int rc;

	if (size < 1)
		return 0;
	tcp = malloc(size - 1 ? size - 1 : 1);
	if (!tcp)
		return 0;
	memcpy(tcp, data + 1, size - 1);
	rc = te_ras_listener_uid(tcp, size - 1, addrs[data[0] & 3], &uid);
	check(rc, uid);
	switch ((data[0] >> 2) & 3) {
	case 0:
		end4(&srv, 0x7f000002, 28100);
		end4(&cli, 0x7f000001, 40000);
		break;
	case 1:
		end6(&srv, 0x7f000002, 28100);
		end6(&cli, 0x7f000001, 40000);
		break;
	case 2:
		end6(&srv, 0, 28100);
		end6(&cli, 0, 40000);
		break;
	default:
		end4(&srv, 0x7f000002, 28100);
		end6(&cli, 0x7f000001, 40000);
	}
	uid = -7;
	rc = te_ras_conn_uid(tcp, size - 1, (struct sockaddr *)&srv,
			     (struct sockaddr *)&cli, &uid);
	if (rc < 0) /* both ends are IPv4 or IPv6 */
		abort();
	check(rc, uid);
	free(tcp);
	return 0;
}
