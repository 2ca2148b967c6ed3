/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small OS helpers: the monotonic clock, random bytes and hex tokens, the
 * small-file reader (sysutil.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/sysutil.h"

int64_t te_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void te_sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000),
			       (long)(ms % 1000) * 1000000L };

	while (ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int te_random_bytes(void *buf, size_t n)
{
	/* at most 256 bytes: getrandom never returns fewer */
	if (!buf || !n || n > 256 || getrandom(buf, n, 0) != (ssize_t)n)
		return -1;
	return 0;
}

int te_random_hex(char *buf, size_t size, size_t ndigits)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[64];
	size_t i;

	if (!buf || !size)
		return -1;
	buf[0] = '\0';
	if (!ndigits || ndigits % 2 || ndigits / 2 > sizeof(rnd) ||
	    size <= ndigits || te_random_bytes(rnd, ndigits / 2) < 0)
		return -1;
	for (i = 0; i < ndigits / 2; i++) {
		buf[2 * i] = hex[rnd[i] >> 4];
		buf[2 * i + 1] = hex[rnd[i] & 0xf];
	}
	buf[ndigits] = '\0';
	return 0;
}

ssize_t te_read_fd(int fd, char *buf, size_t size, unsigned flags)
{
	size_t got = 0;
	ssize_t n;
	char more;

	if (!buf || !size) {
		errno = EINVAL;
		return -1;
	}
	buf[0] = '\0';
	while (got < size - 1) {
		n = read(fd, buf + got, size - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			buf[0] = '\0';
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if ((flags & TE_READ_WHOLE) && got == size - 1) {
		while ((n = read(fd, &more, 1)) < 0 && errno == EINTR)
			;
		if (n != 0) {
			buf[0] = '\0';
			errno = n < 0 ? errno : EFBIG;
			return -1;
		}
	}
	return (ssize_t)got;
}

ssize_t te_read_small(const char *path, char *buf, size_t size, unsigned flags)
{
	struct stat st;
	ssize_t got;
	int fd, e;

	if (buf && size)
		buf[0] = '\0';
	if (!path || !buf || !size) {
		errno = EINVAL;
		return -1;
	}
	/* O_NONBLOCK: opening a FIFO nobody writes would wait forever */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
				((flags & TE_READ_NOFOLLOW) ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0) {
		got = -1;
	} else if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		got = -1;
	} else if ((flags & TE_READ_MINE) && st.st_uid != geteuid()) {
		errno = EPERM;
		got = -1;
	} else {
		got = te_read_fd(fd, buf, size, flags);
	}
	e = errno;
	close(fd);
	errno = e;
	return got;
}
