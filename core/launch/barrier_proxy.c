/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The barrier proxy's messages (barrier_proxy.h). Plain libc only: this
 * file is also built into trainenv-nccl.so, which loads in old images. */
#include "config.h"

#include "launch/barrier_proxy.h"
#include "settings/settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* the barrier row's bound: a macro, since the shim links no table */
#define WEEK_S ((double)TE_WEEK_S)

/* fstat(2) by its system call: glibc 2.33 made fstat an exported symbol
 * of that version, which older images' glibc lacks (the shim must load
 * with 2.17); on x86_64 and aarch64 the kernel's struct stat is glibc's. */
static int raw_fstat(int fd, struct stat *st)
{
#ifdef SYS_fstat
	return (int)syscall(SYS_fstat, fd, st);
#else
	return fstat(fd, st); /* architectures born after glibc 2.33 */
#endif
}

#define REQUEST_WORD "trainenv-barrier "

int te_bproxy_fd(const char *val)
{
	unsigned long long ino = 0;
	struct stat st;
	long fd = 0;
	const char *p = val;
	int k;

	if (!val)
		return -1;
	for (k = 0; *p >= '0' && *p <= '9' && k < 6; p++, k++)
		fd = fd * 10 + (*p - '0');
	if (!k || k > 5 || *p++ != ':' || fd < 3 || fd > 65535)
		return -1;
	for (k = 0; *p >= '0' && *p <= '9'; p++, k++) {
		if (ino > (~0ULL - 9) / 10)
			return -1;
		ino = ino * 10 + (unsigned long long)(*p - '0');
	}
	if (!k || *p || !ino)
		return -1;
	if (raw_fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    (unsigned long long)st.st_ino != ino)
		return -1;
	return (int)fd;
}

void te_bproxy_fd_value(int fd, char *buf, size_t len)
{
	struct stat st;

	if (!len)
		return;
	buf[0] = '\0';
	if (fd >= 0 && raw_fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode))
		snprintf(buf, len, "%d:%llu", fd,
			 (unsigned long long)st.st_ino);
}

int te_bproxy_request(char *buf, size_t len, int protocol, double timeout_s,
		      int once)
{
	int n;

	if (!(timeout_s >= 0 && timeout_s <= WEEK_S))
		timeout_s = 0;
	n = snprintf(buf, len, REQUEST_WORD "%d %.3f %s\n", protocol, timeout_s,
		     once ? "once" : "each");
	return n > 0 && (size_t)n < len ? n : -1;
}

/* A copy of buf[0..n) without its one final newline, or -1: empty, too
 * long, a NUL or another newline inside. */
static int one_line(const char *buf, size_t n, char *line, size_t len)
{
	if (!n || buf[n - 1] != '\n' || n > len || n > TE_BPROXY_MSG_MAX)
		return -1;
	if (memchr(buf, '\0', n - 1) || memchr(buf, '\n', n - 1))
		return -1;
	memcpy(line, buf, n - 1);
	line[n - 1] = '\0';
	return 0;
}

/* Digits at *p as a number (at most 9 of them), *p moved past them; -1
 * when there is none. Written out, not strtol/strtod: glibc 2.38 and
 * later bind those to new symbols the old images' glibc lacks. */
static long digits(const char **p, int *count)
{
	long v = 0;
	int k = 0;

	while (**p >= '0' && **p <= '9' && k < 9) {
		v = v * 10 + (**p - '0');
		(*p)++;
		k++;
	}
	*count = k;
	return k ? v : -1;
}

int te_bproxy_parse_request(const char *buf, size_t n, int *protocol,
			    double *timeout_s, int *once)
{
	char line[64];
	const char *p;
	long proto, whole, frac = 0;
	int k, kf = 0;
	double t, scale;

	if (one_line(buf, n, line, sizeof(line)) < 0 ||
	    strncmp(line, REQUEST_WORD, sizeof(REQUEST_WORD) - 1))
		return -1;
	p = line + sizeof(REQUEST_WORD) - 1;
	proto = digits(&p, &k);
	if (proto < 0 || k > 6 || *p++ != ' ')
		return -1;
	whole = digits(&p, &k);
	if (whole < 0)
		return -1;
	if (*p == '.') {
		p++;
		frac = digits(&p, &kf);
		if (frac < 0)
			return -1;
	}
	if (!strcmp(p, " once"))
		*once = 1;
	else if (!strcmp(p, " each"))
		*once = 0;
	else
		return -1;
	scale = 1;
	while (kf-- > 0)
		scale *= 10;
	t = (double)whole + (double)frac / scale;
	*protocol = (int)proto;
	*timeout_s = t <= WEEK_S ? t : 0;
	return 0;
}

int te_bproxy_answer(char *buf, size_t len, const char *err)
{
	size_t k, at;

	if (!err) {
		if (len < 4)
			return -1;
		memcpy(buf, "ok\n", 4);
		return 3;
	}
	if (len > TE_BPROXY_MSG_MAX + 1)
		len = TE_BPROXY_MSG_MAX + 1;
	if (len < sizeof("error \n"))
		return -1;
	memcpy(buf, "error ", 6);
	at = 6;
	for (k = 0; err[k] && at + 2 < len; k++) {
		unsigned char c = (unsigned char)err[k];

		buf[at++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
	}
	buf[at++] = '\n';
	buf[at] = '\0';
	return (int)at;
}

int te_bproxy_parse_answer(const char *buf, size_t n, char *err, size_t errlen)
{
	char line[TE_BPROXY_MSG_MAX + 1];
	size_t k;

	if (errlen)
		err[0] = '\0';
	if (one_line(buf, n, line, sizeof(line)) < 0) {
		if (errlen)
			snprintf(err, errlen,
				 "an unreadable answer from the "
				 "barrier proxy (%zu bytes)",
				 n);
		return -1;
	}
	if (!strcmp(line, "ok"))
		return 0;
	if (strncmp(line, "error ", 6) || !line[6]) {
		if (errlen)
			snprintf(err, errlen,
				 "an unreadable answer from the "
				 "barrier proxy");
		return -1;
	}
	if (errlen) {
		snprintf(err, errlen, "%s", line + 6);
		for (k = 0; err[k]; k++)
			if ((unsigned char)err[k] < 0x20 || err[k] == 0x7f)
				err[k] = ' ';
	}
	return 1;
}

int te_bproxy_ask(int fd, const char *msg, size_t n)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = n };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl,
			     .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t sent;
	int sv[2], e;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	memset(ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	if (!c) { /* never: ctl has room for one */
		close(sv[0]);
		close(sv[1]);
		errno = EINVAL;
		return -1;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &sv[1], sizeof(int));
	do
		sent = sendmsg(fd, &mh, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	e = errno;
	close(sv[1]); /* the proxy holds it now (or nobody) */
	if (sent != (ssize_t)n) {
		close(sv[0]);
		errno = sent < 0 ? e : EIO;
		return -1;
	}
	return sv[0];
}

ssize_t te_bproxy_recv_request(int fd, char *buf, size_t len, int *reply)
{
	char ctl[CMSG_SPACE(4 * sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl,
			     .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c;
	ssize_t n;

	*reply = -1;
	n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		const unsigned char *d = CMSG_DATA(c);
		size_t k, nfd;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd; k++) {
			int rfd;

			memcpy(&rfd, d + k * sizeof(int), sizeof(int));
			if (*reply < 0)
				*reply = rfd; /* the asker's channel */
			else
				close(rfd); /* more than one: not ours to keep */
		}
	}
	return n;
}
