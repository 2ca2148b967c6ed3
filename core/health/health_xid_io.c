/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: reading the kernel's log for the NVIDIA driver's XIDs and
 * keeping the node's watermark under /run (health_xid.c decides; see
 * health.h). Run as root in the gpu check's child: every read is bounded,
 * the log is read without blocking, and the watermark is a root-owned
 * regular file, never followed through a link, replaced whole. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "health/health.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define BOOT_ID "/proc/sys/kernel/random/boot_id"

/* Owned by root or the caller, not writable by group or others. */
static int owner_ok(const struct stat *st)
{
	return (st->st_uid == 0 || st->st_uid == geteuid()) &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* dir, made 0755 when missing, a directory (not a link) owner_ok: 0,
 * or -1 with s->err. */
static int dir_ok(const char *dir, struct te_xid_scan *s)
{
	struct stat st;

	if (lstat(dir, &st) < 0 && errno == ENOENT && mkdir(dir, 0755) < 0 &&
	    errno != EEXIST)
		return te_err(s->err, sizeof(s->err),
			      "%.100s cannot be made: %s", dir,
			      strerror(errno));
	if (lstat(dir, &st) < 0)
		return te_err(s->err, sizeof(s->err), "%.100s: %s", dir,
			      strerror(errno));
	if (!S_ISDIR(st.st_mode) || !owner_ok(&st))
		return te_err(s->err, sizeof(s->err),
			      "%.100s is not a directory of root's that only "
			      "its owner may write: refused",
			      dir);
	return 0;
}

/* The mark DIR/health-xid.seq into buf: 1, 0 (none yet), or -1 with
 * err (a link, not a regular file, another's or writable by others). */
static int mark_read(const char *dir, char *buf, size_t size, size_t *len,
		     char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;
	ssize_t r;
	int fd;

	te_snprintf(path, sizeof(path), "%s/" TE_XID_MARK_FILE, dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 && errno == ELOOP)
		return te_err(
			err, errlen,
			"the watermark %.100s is a symbolic link: refused",
			path);
	if (fd < 0)
		return te_err(err, errlen, "the watermark %.100s: %s", path,
			      strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !owner_ok(&st)) {
		close(fd);
		return te_err(err, errlen,
			      "the watermark %.100s is not a regular file of "
			      "root's that only its owner may write: refused",
			      path);
	}
	r = te_read_fd(fd, buf, size, 0);
	close(fd);
	if (r < 0)
		return te_err(err, errlen, "the watermark %.100s: %s", path,
			      strerror(errno));
	*len = (size_t)r;
	return 1;
}

/* /dev/kmsg: one record per read, EAGAIN at the end, EPIPE when records
 * were overwritten under the reader (the gap in the sequence numbers
 * counts them). */
static void device_records(int fd, struct te_xid_scan *s, int64_t until)
{
	static char rec[TE_KMSG_RECORD_MAX + 1];

	for (;;) {
		ssize_t r;

		if (s->records + s->junk >= TE_XID_RECORDS_MAX ||
		    te_now_ms() >= until) {
			s->bounded = 1;
			return;
		}
		r = read(fd, rec, sizeof(rec) - 1);
		if (r > 0) {
			te_xid_scan_record(s, rec, (size_t)r);
			continue;
		}
		if (r < 0 && (errno == EINTR || errno == EPIPE))
			continue;
		if (r < 0 && errno != EAGAIN)
			te_err(s->err, sizeof(s->err), "reading the log: %s",
			       strerror(errno));
		return;
	}
}

/* The complete lines of buf[0..have) as records (continuation lines,
 * which start with a blank, skipped); the bytes used. */
static size_t file_lines(char *buf, size_t have, int eof, int *skip,
			 struct te_xid_scan *s)
{
	size_t start = 0;

	while (start < have) {
		char *nl = memchr(buf + start, '\n', have - start);
		size_t end = nl ? (size_t)(nl - buf) : have;

		if (!nl && !eof)
			break;
		if (*skip)
			*skip = 0; /* the tail of an over-long line */
		else if (end > start && buf[start] != ' ')
			te_xid_scan_record(s, buf + start, end - start);
		start = nl ? end + 1 : have;
	}
	return start;
}

/* A regular file of records in /dev/kmsg's format, one per line (the
 * tool's --kmsg; a test's stand-in). */
static void file_records(int fd, struct te_xid_scan *s, int64_t until)
{
	static char buf[TE_KMSG_RECORD_MAX * 2];
	size_t have = 0, used;
	int skip = 0;

	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - have);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			te_err(s->err, sizeof(s->err), "reading the log: %s",
			       strerror(errno));
			return;
		}
		have += (size_t)r;
		used = file_lines(buf, have, r == 0, &skip, s);
		memmove(buf, buf + used, have - used);
		have -= used;
		if (have == sizeof(buf)) { /* a line longer than a record */
			s->junk++;
			skip = 1;
			have = 0;
		}
		if (r == 0)
			return;
		if (s->records + s->junk >= TE_XID_RECORDS_MAX ||
		    te_now_ms() >= until) {
			s->bounded = 1;
			return;
		}
	}
}

static void log_read(const char *kmsg, struct te_xid_scan *s)
{
	int64_t until = te_now_ms() + TE_XID_READ_MS;
	struct stat st;
	int fd = open(kmsg, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		te_err(s->err, sizeof(s->err), "%.100s cannot be read: %s",
		       kmsg, strerror(errno));
		return;
	}
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode))
		device_records(fd, s, until);
	else if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		file_records(fd, s, until);
	else
		te_err(s->err, sizeof(s->err),
		       "%.100s is neither the kernel's log device nor a "
		       "regular file",
		       kmsg);
	close(fd);
}

void te_xid_read(const char *kmsg, const char *dir, struct te_xid_scan *s)
{
	char boot[64], mark[TE_XID_MARK_MAX], err[sizeof(s->err)] = "";
	size_t len = 0, l;
	int have = 0;

	if (te_read_small(BOOT_ID, boot, sizeof(boot), 0) < 0)
		te_strlcpy(boot, "unknown", sizeof(boot));
	l = strcspn(boot, "\n");
	boot[l < TE_XID_BOOT_MAX ? l : TE_XID_BOOT_MAX - 1] = '\0';
	if (!kmsg || !kmsg[0])
		kmsg = TE_XID_KMSG;
	if (!dir || !dir[0])
		dir = TE_XID_STATE_DIR;
	te_xid_scan_init(s, boot, NULL, 0);
	if (dir_ok(dir, s) < 0)
		return;
	have = mark_read(dir, mark, sizeof(mark), &len, err, sizeof(err));
	te_xid_scan_init(s, boot, have > 0 ? mark : NULL, len);
	if (have < 0) {
		te_strlcpy(s->err, err, sizeof(s->err));
		return;
	}
	log_read(kmsg, s);
}

int te_xid_commit(const char *dir, const struct te_xid_scan *s, char *err,
		  size_t errlen)
{
	char tmp[PATH_MAX], path[PATH_MAX], text[TE_XID_MARK_MAX];
	int fd, e, rc;

	if (!dir || !dir[0])
		dir = TE_XID_STATE_DIR;
	if (te_snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir,
			TE_XID_MARK_FILE) < 0 ||
	    te_snprintf(path, sizeof(path), "%s/" TE_XID_MARK_FILE, dir) < 0)
		return te_err(err, errlen, "the watermark's path is too long");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return te_err(err, errlen,
			      "the watermark cannot be written in "
			      "%.100s: %s",
			      dir, strerror(errno));
	te_xid_mark_text(s, text, sizeof(text));
	rc = fchmod(fd, 0644) < 0 || te_write_all(fd, text, strlen(text)) < 0 ||
	     fsync(fd) < 0;
	e = errno;
	if (close(fd) < 0 && !rc) {
		rc = 1;
		e = errno;
	}
	if (!rc && rename(tmp, path) < 0) {
		rc = 1;
		e = errno;
	}
	if (rc) {
		unlink(tmp);
		return te_err(err, errlen, "the watermark %.100s: %s", path,
			      strerror(e));
	}
	return 0;
}
