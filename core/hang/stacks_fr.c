/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* PyTorch's flight recorder dumps asked for and read on one node, for the
 * hang report (core/hang/stacks_nccl.h, te_fr_collect): one byte into each
 * rank's pipe, then every rank's dump awaited at once within one
 * deadline, each read bounded (and all of them together) and only from a
 * regular file of the user's, none begun past the deadline. Runs as the
 * job's user, on files the job's processes made: a path may be a link,
 * another kind of file, another user's, or grow for ever; and it is the
 * rank's, resolved in the rank's root (te_proc_open: a container's
 * absolute link or ".." never reaches the node's files). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hang/flightrec.h"
#include "hang/stacks_nccl.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define POLL_MS 50
#define STABLE_MS 300 /* a dump unchanged this long is whole */

enum {
	ASK_WAIT = 1,
	ASK_GROWING,
	ASK_DONE
};

/* One collection's bounds, shared by its ranks. */
struct run {
	uid_t uid;
	int64_t deadline;
	int64_t (*clock)(void);
	size_t bytes_left; /* of all the dumps read */
	size_t total_max;
};

/* Why a path of the rank's was not used: errno in words, a path that
 * leaves the rank's root said so. */
static const char *path_err(int err)
{
	return err == EXDEV ? "its path leads out of the rank's root"
			    : strerror(err);
}

/* The file's identity and size (lstat in the rank's root: a link is not
 * followed); 0, or -1 when it is not there. */
static int look(int pid, const char *path, uint64_t *ino, int64_t *size,
		int64_t *mtime_ns)
{
	struct stat st;

	if (te_proc_lstat(pid, path, &st) < 0)
		return -1;
	*ino = (uint64_t)st.st_ino;
	*size = (int64_t)st.st_size;
	*mtime_ns =
		(int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

static int refuse_kind(const struct stat *st, uid_t uid, mode_t want,
		       const char *what, char *why, size_t whylen)
{
	if ((st->st_mode & S_IFMT) != want)
		return te_err(why, whylen, "its %s is not a %s: not used", what,
			      want == S_IFIFO ? "FIFO" : "regular file");
	if (st->st_uid != uid)
		return te_err(why, whylen,
			      "its %s is uid %u's, not the job's: not used",
			      what, (unsigned)st->st_uid);
	return 0;
}

/* One byte into the rank's pipe: 0, or -1 with why. Only a FIFO of the
 * user's is opened (lstat before; the kind and owner on the inode itself
 * before the open, te_proc_open_kind, and again after: the path may change
 * between), never waited on (no reader: ENXIO). */
static int ring(int pid, const char *pipe, uid_t uid, char *why, size_t whylen)
{
	struct stat st;
	int fd, rc;

	if (te_proc_lstat(pid, pipe, &st) < 0)
		return errno == ENOENT
			       ? te_err(why, whylen,
					"no flight recorder pipe (PyTorch "
					"makes it with its first NCCL "
					"process group)")
			       : te_err(why, whylen, "its pipe: %s",
					path_err(errno));
	if (refuse_kind(&st, uid, S_IFIFO, "pipe", why, whylen) < 0)
		return -1;
	fd = te_proc_open_kind(pid, pipe, O_WRONLY | O_NONBLOCK | O_NOCTTY,
			       S_IFIFO, uid, &st);
	if (fd == -2) /* changed since the lstat: nothing opened */
		return refuse_kind(&st, uid, S_IFIFO, "pipe", why, whylen);
	if (fd < 0)
		return te_err(why, whylen, "its pipe: %s",
			      errno == ENXIO ? "no reader (PyTorch's monitor "
					       "thread is not running)"
					     : path_err(errno));
	rc = fstat(fd, &st) < 0
		     ? te_err(why, whylen, "its pipe: %s", strerror(errno))
		     : refuse_kind(&st, uid, S_IFIFO, "pipe", why, whylen);
	/* a full pipe holds a byte already: the monitor thread reads it */
	if (rc == 0 && write(fd, "d", 1) < 0 && errno != EAGAIN)
		rc = te_err(why, whylen, "its pipe: %s", strerror(errno));
	close(fd);
	return rc;
}

/* The dump read into a->out (extracted, refused or missing), unless the
 * deadline has come meanwhile (the reads before took it) or the node's
 * dumps read so far leave too little of run->total_max. */
static void read_dump(struct te_fr_ask *a, struct run *run)
{
	char why[160];
	struct stat st;
	char *buf = NULL;
	ssize_t n = -1;
	int fd = -1;

	if (run->clock() >= run->deadline) {
		te_snprintf(why, sizeof(why),
			    "its dump came as the node's time ran out: not "
			    "read");
	} else if ((fd = te_proc_open_kind(a->pid, a->dump,
					   O_RDONLY | O_NONBLOCK | O_NOCTTY,
					   S_IFREG, run->uid, &st)) == -2) {
		/* not a regular file of the user's (a device, or another
		 * user's file, put there: never opened) */
		refuse_kind(&st, run->uid, S_IFREG, "dump", why, sizeof(why));
	} else if (fd < 0) {
		te_snprintf(why, sizeof(why), "its dump: %s", path_err(errno));
	} else if (fstat(fd, &st) < 0) {
		te_snprintf(why, sizeof(why), "its dump: %s", strerror(errno));
	} else if (refuse_kind(&st, run->uid, S_IFREG, "dump", why,
			       sizeof(why)) < 0) {
		/* why says it */
	} else if (st.st_size > (off_t)TE_HN_DUMP_MAX) {
		te_snprintf(why, sizeof(why),
			    "its dump is over %u MiB: not read",
			    TE_HN_DUMP_MAX >> 20);
	} else if ((size_t)st.st_size > run->bytes_left) {
		te_snprintf(why, sizeof(why),
			    "not read: the node's dumps are over %zu %s",
			    run->total_max >= 1u << 20 ? run->total_max >> 20
						       : run->total_max,
			    run->total_max >= 1u << 20 ? "MiB" : "bytes");
	} else if (!(buf = malloc((size_t)st.st_size + 2))) {
		te_snprintf(why, sizeof(why), "no memory for its dump");
	} else if ((n = te_read_fd(fd, buf, (size_t)st.st_size + 2,
				   TE_READ_WHOLE)) < 0) {
		te_snprintf(why, sizeof(why), "its dump: %s",
			    errno == EFBIG ? "it grew while read"
					   : strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	if (n >= 0) {
		run->bytes_left -= (size_t)n < run->bytes_left
					   ? (size_t)n
					   : run->bytes_left;
		te_fr_extract((const unsigned char *)buf, (size_t)n, NULL,
			      a->rank, a->out);
	} else {
		te_fr_missing(a->out, a->rank, why);
	}
	free(buf);
	a->state = ASK_DONE;
}

/* One look at a dump awaited: changed since the byte was written, then
 * unchanged for STABLE_MS (and not empty): read. 1 when done. */
static int check(struct te_fr_ask *a, struct run *run, int64_t now)
{
	uint64_t ino;
	int64_t size, mt;

	if (look(a->pid, a->dump, &ino, &size, &mt) < 0)
		return 0;
	if (a->state == ASK_WAIT) {
		if (ino == a->ino && size == a->size && mt == a->mtime_ns)
			return 0; /* the dump from before, if any */
		a->state = ASK_GROWING;
	} else if (ino == a->ino && size == a->size && mt == a->mtime_ns) {
		if (size > 0 && now - a->stable_ms >= STABLE_MS) {
			read_dump(a, run);
			return 1;
		}
		return 0;
	}
	a->ino = ino;
	a->size = size;
	a->mtime_ns = mt;
	a->stable_ms = now;
	return 0;
}

void te_fr_collect_opts(struct te_fr_ask *ask, size_t n, uid_t uid,
			const struct te_fr_opts *o)
{
	int timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 0;
	struct run run = { .uid = uid,
			   .clock = o->clock ? o->clock : te_now_ms,
			   .total_max = o->total_max ? o->total_max
						     : TE_HN_NODE_DUMPS_MAX };
	size_t i, left = 0;
	char why[160];

	run.deadline = run.clock() + timeout_ms;
	run.bytes_left = run.total_max;
	for (i = 0; i < n; i++) {
		struct te_fr_ask *a = &ask[i];

		if (look(a->pid, a->dump, &a->ino, &a->size, &a->mtime_ns) <
		    0) {
			a->ino = 0;
			a->size = -1;
			a->mtime_ns = -1;
		}
		if (ring(a->pid, a->pipe, uid, why, sizeof(why)) < 0) {
			te_fr_missing(a->out, a->rank, why);
			a->state = ASK_DONE;
			continue;
		}
		a->state = ASK_WAIT;
		left++;
	}
	if (o->between)
		o->between(o->arg);
	while (left) {
		int64_t now = run.clock();

		for (i = 0; i < n; i++)
			if (ask[i].state != ASK_DONE &&
			    check(&ask[i], &run, now))
				left--;
		now = run.clock();
		if (!left || now >= run.deadline)
			break;
		poll(NULL, 0,
		     run.deadline - now < POLL_MS ? (int)(run.deadline - now)
						  : POLL_MS);
	}
	te_snprintf(why, sizeof(why), "no dump within %d s",
		    (timeout_ms + 999) / 1000);
	for (i = 0; i < n; i++)
		if (ask[i].state != ASK_DONE) {
			te_fr_missing(ask[i].out, ask[i].rank, why);
			ask[i].state = ASK_DONE;
		}
}

void te_fr_collect(struct te_fr_ask *ask, size_t n, uid_t uid, int timeout_ms,
		   void (*between)(void *), void *arg)
{
	struct te_fr_opts o = { .timeout_ms = timeout_ms,
				.between = between,
				.arg = arg };

	te_fr_collect_opts(ask, n, uid, &o);
}
