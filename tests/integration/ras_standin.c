/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A stand-in for NCCL's RAS client socket (core/hang/ras.h says what the
 * real one does): listens on HOST:PORT (PORT 0: one the kernel picks),
 * prints "port N" once listening, and answers every connection in turn as
 * RAS 2.30 does (SERVER PROTOCOL 2, OK to TIMEOUT and SET FORMAT, the text
 * report to [VERBOSE] STATUS, then closes), with the report MODE says:
 *   ok        every rank answered (2 communicators)
 *   missing   rank 4 of 8 missing, its process silent, 2 timeouts
 *   old       rank 4 missing as NCCL 2.24 says it ("The missing rank: 4";
 *             SET FORMAT unknown)
 *   dead      a process considered dead, two ranks missing
 *   error     ranks that reported errors
 *   mismatch  a rank behind the others in AllReduce
 *   garbage   no handshake: bytes of all kinds (NULs, long lines), close
 *   silent    reads, never writes (until the client closes)
 *   drip      the "missing" report one byte every DRIP_MS (default 20)
 *   big       a reply over 256 KiB
 * Usage: ras_standin HOST PORT MODE [DRIP_MS]. Runs until killed. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ras_replies.h"

static const char *mode;
static long drip_ms = 20;

static int put(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

static int puts_fd(int fd, const char *s)
{
	return put(fd, s, strlen(s));
}

static void drip(int fd, const char *s)
{
	struct timespec ts = { drip_ms / 1000, (drip_ms % 1000) * 1000000L };

	for (; *s; s++) {
		if (put(fd, s, 1) < 0)
			return;
		nanosleep(&ts, NULL);
	}
}

static void report(int fd)
{
	const char *body = strcmp(mode, "missing") == 0 ? TE_RAS_REPLY_MISSING
			   : strcmp(mode, "drip") == 0	? TE_RAS_REPLY_MISSING
			   : strcmp(mode, "old") == 0	? TE_RAS_REPLY_OLD
			   : strcmp(mode, "dead") == 0	? TE_RAS_REPLY_DEAD
			   : strcmp(mode, "error") == 0 ? TE_RAS_REPLY_ERROR
			   : strcmp(mode, "mismatch") == 0
				   ? TE_RAS_REPLY_MISMATCH
				   : TE_RAS_REPLY_OK;
	static char all[8192];

	snprintf(all, sizeof(all), "%s%s", TE_RAS_REPLY_HEAD, body);
	if (strcmp(mode, "drip") == 0) {
		drip(fd, all);
		return;
	}
	if (strcmp(mode, "big") == 0) {
		static char junk[1024];
		int i;

		memset(junk, 'x', sizeof(junk) - 1);
		junk[sizeof(junk) - 2] = '\n';
		for (i = 0; i < 300; i++)
			if (puts_fd(fd, junk) < 0)
				return;
	}
	(void)puts_fd(fd, all);
}

static void garbage(int fd)
{
	static const char g[] =
		"#0-0 (zz) INCOMPLETE\n  Rank 99999999999 -- GPU";
	char b[4096];
	size_t i;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (char)(i * 7 + (i >> 3));
	memcpy(b + 100, g, sizeof(g) - 1);
	(void)put(fd, b, sizeof(b));
}

/* One connection: commands until STATUS, as RAS reads them. */
static void serve(int fd)
{
	char buf[4096], *nl;
	size_t have = 0;

	if (strcmp(mode, "garbage") == 0) { /* after the request: no RST */
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n > 0)
			garbage(fd);
		return;
	}
	for (;;) {
		ssize_t n = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
		char *cmd = buf;

		if (n <= 0)
			return;
		have += (size_t)n;
		buf[have] = 0;
		while ((nl = strchr(cmd, '\n'))) {
			*nl = 0;
			if (strcmp(mode, "silent") == 0)
				;
			else if (strncasecmp(cmd, "client protocol ", 16) == 0)
				puts_fd(fd, "SERVER PROTOCOL 2\n");
			else if (strncasecmp(cmd, "timeout ", 8) == 0)
				puts_fd(fd, "OK\n");
			else if (strncasecmp(cmd, "set format ", 11) == 0 &&
				 strcmp(mode, "old"))
				puts_fd(fd, "OK\n");
			else if (strcasecmp(cmd, "status") == 0 ||
				 strcasecmp(cmd, "verbose status") == 0) {
				report(fd);
				return;
			} else {
				dprintf(fd, "ERROR: Unknown command %s\n", cmd);
			}
			cmd = nl + 1;
		}
		have -= (size_t)(cmd - buf);
		memmove(buf, cmd, have);
		if (have == sizeof(buf) - 1)
			return;
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, one = 1;

	if (argc < 4) {
		fprintf(stderr, "usage: %s HOST PORT MODE [DRIP_MS]\n",
			argv[0]);
		return 2;
	}
	mode = argv[3];
	if (argc > 4)
		drip_ms = atol(argv[4]);
	signal(SIGPIPE, SIG_IGN);
	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, argv[1],
		      &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons(atoi(argv[2]));
		sl = sizeof(struct sockaddr_in);
	} else if (inet_pton(AF_INET6, argv[1],
			     &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(atoi(argv[2]));
		sl = sizeof(struct sockaddr_in6);
	} else {
		fprintf(stderr, "ras_standin: %s: not a numeric address\n",
			argv[1]);
		return 2;
	}
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	/* as RAS does: SO_REUSEADDR and SO_REUSEPORT */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sl) < 0 ||
	    listen(fd, 16) < 0) {
		fprintf(stderr, "ras_standin: %s:%s: %s\n", argv[1], argv[2],
			strerror(errno));
		return 1;
	}
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	printf("port %u\n",
	       ntohs(ss.ss_family == AF_INET
			     ? ((struct sockaddr_in *)&ss)->sin_port
			     : ((struct sockaddr_in6 *)&ss)->sin6_port));
	fflush(stdout);
	for (;;) {
		int c = accept(fd, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		serve(c);
		if (strcmp(mode, "silent") == 0) { /* until the client closes */
			char b[256];
			while (recv(c, b, sizeof(b), 0) > 0)
				;
		}
		close(c);
	}
}
