/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One line to a TCP listener within a deadline (core/report/sendline.h). */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "report/sendline.h"
#include "util/strutil.h"
#include "util/sysutil.h"

int te_send_line(const char *host, uint16_t port, const char *line, int ms)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL, *a;
	int64_t deadline = te_now_ms() + ms;
	char sport[8];
	int rc = -1;

	te_snprintf(sport, sizeof(sport), "%u", port);
	if (getaddrinfo(host, sport, &hints, &ai) != 0)
		return -1;
	for (a = ai; a && rc < 0 && te_now_ms() < deadline; a = a->ai_next) {
		int fd = socket(a->ai_family,
				a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
				0);
		struct pollfd p = { .events = POLLOUT };
		size_t off = 0, len = strlen(line);

		if (fd < 0)
			continue;
		p.fd = fd;
		if (connect(fd, a->ai_addr, a->ai_addrlen) < 0 &&
		    errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		while (off < len) {
			int64_t left = deadline - te_now_ms();
			ssize_t n;

			if (left <= 0 || poll(&p, 1, (int)left) <= 0)
				break;
			n = send(fd, line + off, len - off, MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				break;
			if (n > 0)
				off += (size_t)n;
		}
		if (off == len)
			rc = 0;
		close(fd);
	}
	freeaddrinfo(ai);
	return rc;
}

int te_failrep_tell_srun(struct te_failrep *r, int ms)
{
	const char *host = getenv("SLURM_SRUN_COMM_HOST");
	char token[TE_FAILREP_TOKEN_LEN + 1], line[TE_FAILREP_LINE_MAX];
	struct timespec ts;
	uint16_t port;

	if (!host || te_failrep_env_parse(getenv(TE_FAILREP_ENV), &port, token,
					  sizeof(token)) < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts);
	r->sec = ts.tv_sec;
	r->usec = (uint32_t)(ts.tv_nsec / 1000);
	if (te_failrep_format(line, sizeof(line), token, r) < 0)
		return -1;
	return te_send_line(host, port, line, ms);
}
