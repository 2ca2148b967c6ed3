/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job's directory DIR/UID/JOBID: the rule for DIR's path, the verdict
 * on the levels trainenv makes, and their safe opening (dumpdir.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/dumpdir.h"
#include "util/strutil.h"

#define WRITABLE (S_IWGRP | S_IWOTH)

int te_dump_path_verdict(const struct stat *st, uid_t uid, char *why,
			 size_t len)
{
	unsigned mode = (unsigned)(st->st_mode & 07777);

	if (!S_ISDIR(st->st_mode))
		return te_err(why, len, "is not a directory");
	if (st->st_uid != 0 && st->st_uid != uid)
		return te_err(why, len,
			      "belongs to uid %u, neither root nor "
			      "the job's user (uid %u): its owner could swap "
			      "what is in it",
			      (unsigned)st->st_uid, (unsigned)uid);
	if (!(st->st_mode & WRITABLE))
		return 0;
	if (!(st->st_mode & S_ISVTX))
		return te_err(why, len,
			      "is writable by %s (mode %04o) "
			      "without the sticky bit: others could swap "
			      "what is in it",
			      st->st_mode & S_IWOTH ? "others" : "its group",
			      mode);
	if (st->st_uid != 0)
		return te_err(why, len,
			      "is writable by %s (mode %04o) and "
			      "sticky but not root's: only a sticky "
			      "directory of root's may be shared",
			      st->st_mode & S_IWOTH ? "others" : "its group",
			      mode);
	return 0;
}

int te_dump_dir_verdict(const struct stat *parent, const struct stat *dir,
			uid_t uid, char *why, size_t len)
{
	if (S_ISLNK(dir->st_mode))
		return te_err(why, len, "is a symbolic link");
	if (!S_ISDIR(dir->st_mode))
		return te_err(why, len, "is not a directory");
	if (dir->st_uid != uid)
		return te_err(why, len,
			      "belongs to uid %u, not to the job's "
			      "user (uid %u): someone else made it",
			      (unsigned)dir->st_uid, (unsigned)uid);
	if (dir->st_mode & WRITABLE)
		return te_err(why, len,
			      "is writable by group or others (mode "
			      "%04o)",
			      (unsigned)(dir->st_mode & 07777));
	if ((parent->st_mode & WRITABLE) && !(parent->st_mode & S_ISVTX)) {
		return te_err(why, len,
			      "is in a directory others may write "
			      "to without the sticky bit (mode %04o): they "
			      "could replace it",
			      (unsigned)(parent->st_mode & 07777));
	}
	return 0;
}

/* One level trainenv makes: pfd/name (path for messages), made 0700 if
 * missing, opened without following a link, checked. Its descriptor, or
 * -1 (not safe) / -2 (cannot make or open) with why. */
static int level(int pfd, const char *name, const char *path, uid_t uid,
		 char *why, size_t len)
{
	struct stat pst, st;
	char v[160];
	int fd, e;

	if (mkdirat(pfd, name, 0700) < 0 && errno != EEXIST) {
		te_snprintf(why, len, "cannot create %s: %s", path,
			    strerror(errno));
		return -2;
	}
	fd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		/* what is there, for the message only */
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    fstat(pfd, &pst) == 0 &&
		    te_dump_dir_verdict(&pst, &st, uid, v, sizeof(v)) < 0) {
			te_snprintf(why, len, "%s %s", path, v);
			return -1;
		}
		te_snprintf(why, len, "cannot open %s: %s", path, strerror(e));
		return -2;
	}
	if (fstat(pfd, &pst) < 0 || fstat(fd, &st) < 0) {
		te_snprintf(why, len, "%s: %s", path, strerror(errno));
		close(fd);
		return -2;
	}
	if (te_dump_dir_verdict(&pst, &st, uid, v, sizeof(v)) < 0) {
		te_snprintf(why, len, "%s %s", path, v);
		close(fd);
		return -1;
	}
	return fd;
}

/* The resolved DIR rp walked from / down, each directory opened relative
 * to the one above without following a link and held to the rule. DIR's
 * descriptor, or -1 with why. */
static int walk(const char *rp, const char *dir, uid_t uid, char *why,
		size_t len)
{
	char prefix[PATH_MAX], v[200];
	const char *p = rp;
	struct stat st;
	int fd, nfd;
	size_t k;

	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return te_err(why, len, "cannot open /: %s", strerror(errno));
	te_strlcpy(prefix, "/", sizeof(prefix));
	for (;;) {
		if (fstat(fd, &st) < 0 ||
		    te_dump_path_verdict(&st, uid, v, sizeof(v)) < 0) {
			if (strcmp(prefix, dir))
				te_snprintf(why, len,
					    "%s (in the path of %s) %s", prefix,
					    dir, v);
			else
				te_snprintf(why, len, "%s %s", prefix, v);
			close(fd);
			return -1;
		}
		while (*p == '/')
			p++;
		if (!*p)
			return fd;
		k = strcspn(p, "/");
		if (strlen(prefix) + k + 2 > sizeof(prefix)) {
			close(fd);
			return te_err(why, len, "%s: path too long", dir);
		}
		if (strcmp(prefix, "/"))
			te_appendf(prefix, sizeof(prefix), "/");
		te_appendf(prefix, sizeof(prefix), "%.*s", (int)k, p);
		nfd = openat(fd, prefix + strlen(prefix) - k,
			     O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			/* a link now where realpath saw a directory: moved
			 * while looked at */
			te_snprintf(why, len, "cannot open %s: %s", prefix,
				    strerror(errno));
			close(fd);
			return -1;
		}
		close(fd);
		fd = nfd;
		p += k;
	}
}

int te_dump_dir_open(const char *dir, const char *name, uid_t uid, char *path,
		     size_t pathlen, char *why, size_t len)
{
	char rp[PATH_MAX], upath[TE_DUMP_DIR_PATH_MAX],
		jpath[TE_DUMP_DIR_PATH_MAX], uname[16];
	int dfd, ufd, jfd;

	if (path && pathlen)
		path[0] = '\0';
	if (!name[0] || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return te_err(why, len, "%s: bad name '%s'", dir, name);
	if (!realpath(dir, rp))
		return te_err(why, len, "cannot open %s: %s", dir,
			      strerror(errno));
	dfd = walk(rp, dir, uid, why, len);
	if (dfd < 0)
		return -1;
	te_snprintf(uname, sizeof(uname), "%u", (unsigned)uid);
	te_snprintf(upath, sizeof(upath), "%s/%s", strcmp(rp, "/") ? rp : "",
		    uname);
	ufd = level(dfd, uname, upath, uid, why, len);
	close(dfd);
	if (ufd < 0)
		return ufd;
	if (te_snprintf(jpath, sizeof(jpath), "%s/%s", upath, name) < 0) {
		close(ufd);
		return te_err(why, len, "%s: path too long", upath);
	}
	jfd = level(ufd, name, jpath, uid, why, len);
	close(ufd);
	if (jfd >= 0 && path && te_strlcpy(path, jpath, pathlen) >= pathlen) {
		close(jfd);
		path[0] = '\0';
		return te_err(why, len, "%s: path too long", jpath);
	}
	return jfd;
}
