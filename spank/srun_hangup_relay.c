/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hang-up shield's relays (srun_hangup_relay.h): srun's stdout and
 * stderr through pipes the shield holds, written on without ever blocking,
 * and the terminal read for srun's stdin (srun_hangup.c says why). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srun_hangup_relay.h"

/* A destination that could not be reopened non-blocking is written only
 * after poll says it has room, at most this much at a time (a pipe with
 * room takes PIPE_BUF bytes without blocking). */
#define GUARDED_CHUNK PIPE_BUF

int te_hup_needs_relay(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return 0;
	return (S_ISCHR(st.st_mode) && isatty(fd)) || S_ISFIFO(st.st_mode) ||
	       S_ISSOCK(st.st_mode);
}

/* A non-blocking descriptor of our own for fd: O_NONBLOCK on fd itself
 * would change the terminal or pipe for the shell and everything else that
 * shares it. Sockets take MSG_DONTWAIT per call instead. */
void te_hup_relay_open(struct te_hup_relay *r, int in, int out, char *mem)
{
	char path[64];
	struct stat st;

	r->input = 0;
	r->hold = 0;
	r->in = in;
	r->out = out;
	r->wfd = -1;
	r->sock = fstat(out, &st) == 0 && S_ISSOCK(st.st_mode);
	r->dead = 0;
	r->full = 0;
	te_relaybuf_init(&r->buf, mem, RELAY_CAP);
	if (r->sock || !te_hup_needs_relay(out))
		return; /* a file: written as it is, at its offset */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", out);
	r->wfd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (r->wfd < 0 && (errno == ENXIO || errno == EIO))
		r->dead = 1; /* no reader left, or the terminal hung up */
}

/* Writes what it can without blocking. */
void te_hup_relay_flush(struct te_hup_relay *r, int may_write)
{
	size_t n;
	const char *data = te_relaybuf_data(&r->buf, &n);
	int guarded = !r->sock && r->wfd < 0;

	while (n > 0 && !r->dead && !r->hold) {
		ssize_t w;

		if (guarded) {
			if (!may_write)
				return;
			may_write = 0; /* one chunk per poll */
			if (n > GUARDED_CHUNK)
				n = GUARDED_CHUNK;
		}
		if (r->sock)
			w = send(r->out, data, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			w = write(guarded ? r->out : r->wfd, data, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			r->full = 1;
			return;
		}
		if (w <= 0) {
			/* EIO: the terminal hung up; EPIPE: the reader is
			 * gone. Either way srun must not notice. */
			r->dead = 1;
			break;
		}
		r->full = 0;
		te_relaybuf_taken(&r->buf, (size_t)w);
		data = te_relaybuf_data(&r->buf, &n);
	}
	if (r->dead)
		te_relaybuf_taken(&r->buf, r->buf.len);
}

/* Reads from srun while there is room. */
void te_hup_relay_fill(struct te_hup_relay *r)
{
	static char drop[4096];
	size_t room;
	char *p = te_relaybuf_space(&r->buf, &room);
	ssize_t n;

	if (room == 0 && !r->hold)
		return;
	if (room == 0) { /* held and full: the rest is dropped */
		p = drop;
		room = sizeof(drop);
	}
	n = read(r->in, p, room);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		/* EOF; EIO: srun's pipe... or, for the terminal, the job
		 * is in the background, where srun's own read fails too
		 * and srun ends its stdin. */
		close(r->in);
		r->in = -1;
		return;
	}
	if (r->dead || p == drop)
		return; /* read and dropped: srun must not block */
	te_relaybuf_added(&r->buf, (size_t)n);
}

/* srun's stdin: once the terminal is done with (EOF, background) and what
 * was read has gone to srun, srun gets its EOF; once srun no longer reads
 * (EPIPE) or is gone, the terminal is left to the shell. */
void te_hup_input_settle(struct te_hup_relay *r, int srun_gone)
{
	if (!r->input)
		return;
	if (r->in >= 0 && (r->dead || srun_gone)) {
		close(r->in);
		r->in = -1;
	}
	if (r->in < 0 && r->wfd >= 0 &&
	    (r->buf.len == 0 || r->dead || srun_gone)) {
		close(r->wfd);
		r->wfd = -1;
		r->dead = 1;
		te_relaybuf_taken(&r->buf, r->buf.len);
	}
}

/* The terminal, read for srun into the pipe to its stdin. */
void te_hup_input_open(struct te_hup_relay *r, int tty, int to_srun, char *mem)
{
	/* the pipe is ours alone: O_NONBLOCK on it is harmless */
	fcntl(to_srun, F_SETFL, O_NONBLOCK);
	memset(r, 0, sizeof(*r));
	r->input = 1;
	r->in = tty;
	r->out = to_srun;
	r->wfd = to_srun;
	te_relaybuf_init(&r->buf, mem, RELAY_CAP);
}
