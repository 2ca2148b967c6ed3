/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scale simulation's connection counter, preloaded into every
 * simulated node's helper (LD_PRELOAD, bench_scale.c): counts the
 * connections the process holds at once (accepted, or connected by it,
 * until closed) and at exit writes "PEAK ACCEPTED CONNECTED" to the file
 * named by TE_SIM_CONNWATCH. Exact where sampling /proc would miss a peak
 * that lasts microseconds (the star's last registration is answered at
 * once). It only counts: every call goes on to libc unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FD_LIMIT (1 << 20)

static atomic_uchar is_conn[FD_LIMIT];
static atomic_int live, peak, accepted, connected;

static void mark(int fd, atomic_int *kind)
{
	int now;

	if (fd < 0 || fd >= FD_LIMIT || atomic_exchange(&is_conn[fd], 1))
		return;
	atomic_fetch_add(kind, 1);
	now = atomic_fetch_add(&live, 1) + 1;
	for (int p = atomic_load(&peak);
	     now > p && !atomic_compare_exchange_weak(&peak, &p, now);)
		;
}

static void unmark(int fd)
{
	if (fd >= 0 && fd < FD_LIMIT && atomic_exchange(&is_conn[fd], 0))
		atomic_fetch_sub(&live, 1);
}

#define NEXT(name)                            \
	static __typeof__(name) *next_##name; \
	if (!next_##name)                     \
	next_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	int c;

	NEXT(accept);
	c = next_accept(fd, addr, len);
	mark(c, &accepted);
	return c;
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int c;

	NEXT(accept4);
	c = next_accept4(fd, addr, len, flags);
	mark(c, &accepted);
	return c;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	int rc, e;

	NEXT(connect);
	rc = next_connect(fd, addr, len);
	e = errno;
	if ((rc == 0 || e == EINPROGRESS) && addr &&
	    (addr->sa_family == AF_INET || addr->sa_family == AF_INET6))
		mark(fd, &connected);
	errno = e;
	return rc;
}

int close(int fd)
{
	NEXT(close);
	unmark(fd);
	return next_close(fd);
}

__attribute__((destructor)) static void report(void)
{
	const char *path = getenv("TE_SIM_CONNWATCH");
	char line[64];
	int fd, n;

	if (!path)
		return;
	n = snprintf(line, sizeof(line), "%d %d %d\n", atomic_load(&peak),
		     atomic_load(&accepted), atomic_load(&connected));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, line, (size_t)n) < 0) {
		/* the driver then says the count is missing */
	}
	{
		NEXT(close);
		next_close(fd);
	}
}
