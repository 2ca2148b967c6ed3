/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job's directory DIR/UID/JOBID: the rule for DIR's path, the verdict
 * on the levels trainenv makes, and their safe opening (dumpdir.h). */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "report/dumpdir.h"
#include "util/strutil.h"
#include "util/sysutil.h"

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
		 int make, char *why, size_t len)
{
	struct stat pst, st;
	char v[160];
	int fd, e;

	if (make && mkdirat(pfd, name, 0700) < 0 && errno != EEXIST) {
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
		errno = e; /* ENOENT: a reader's "not there" */
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

/* ------------------------------------------------ DIR/UID taken by another */

#define ALT_HEX 12	    /* DIR/UID.<12 hex digits> */
#define ALT_SCAN_MAX 100000 /* entries of DIR looked at, at most */

/* 1 when name is uname + "." + ALT_HEX lower-case hex digits. */
static int alt_name(const char *name, const char *uname)
{
	size_t k = strlen(uname), i;

	if (strncmp(name, uname, k) || name[k] != '.' ||
	    strlen(name + k + 1) != ALT_HEX)
		return 0;
	for (i = k + 1; name[i]; i++)
		if (!((name[i] >= '0' && name[i] <= '9') ||
		      (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return 1;
}

/* The first (by name) DIR/UID.<hex> that is the user's own and passes
 * te_dump_dir_verdict, into best ("" when none). Only the user (or root)
 * can own a directory as uid: another user can make the names, never
 * such a directory. */
static void alt_find(int dfd, const char *uname, uid_t uid, char *best,
		     size_t len)
{
	struct stat pst, st;
	struct dirent *e;
	char v[160];
	int rfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = rfd >= 0 ? fdopendir(rfd) : NULL;
	long seen = 0;

	best[0] = '\0';
	if (!d || fstat(dfd, &pst) < 0) {
		if (d)
			closedir(d);
		else if (rfd >= 0)
			close(rfd);
		return;
	}
	while ((e = readdir(d)) && seen++ < ALT_SCAN_MAX) {
		if (!alt_name(e->d_name, uname) ||
		    (best[0] && strcmp(e->d_name, best) >= 0) ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    te_dump_dir_verdict(&pst, &st, uid, v, sizeof(v)) < 0)
			continue;
		te_strlcpy(best, e->d_name, len);
	}
	closedir(d);
}

/* DIR locked (flock) for making the first DIR/UID.<hex>, waiting
 * LOCK_MS at most: anyone who can read DIR can hold the lock, so after
 * that the making goes on without it. The descriptor to close (which
 * unlocks), or -1. */
#define LOCK_MS 1000
static int lock_dir(int dfd)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int64_t end = te_now_ms() + LOCK_MS;

	while (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0 &&
	       errno == EWOULDBLOCK && te_now_ms() < end)
		te_sleep_ms(10);
	return fd;
}

/* DIR/UID is another user's (a directory or a link they made first, in a
 * shared DIR): the user's level is then DIR/UID.<12 random hex digits>,
 * a name nobody else can have made as the user's: the first one that is
 * already the user's own (made by an earlier process of the job: the
 * nodes' tasks and srun find the same), else a new one, made under DIR's
 * lock (lock_dir), so that the nodes' first tasks, starting at once, make
 * one. Without the lock, two processes making one at once each take the
 * first after both are made (the other made in vain is removed). Its name
 * into alt, or -1 (why). */
static int alt_level(int dfd, const char *uname, uid_t uid, int make, char *alt,
		     size_t len, char *why, size_t wlen)
{
	char made[32], hex[ALT_HEX + 1];
	int tries, lfd, e = EEXIST;

	alt_find(dfd, uname, uid, alt, len);
	if (alt[0])
		return 0;
	if (!make) {
		te_snprintf(why, wlen, "no %s.* of the user's own", uname);
		errno = ENOENT;
		return -1;
	}
	lfd = lock_dir(dfd);
	alt_find(dfd, uname, uid, alt, len); /* made while we waited */
	for (tries = 0; !alt[0] && tries < 8 && e == EEXIST; tries++) {
		e = te_random_hex(hex, sizeof(hex), ALT_HEX) < 0 ? EIO : 0;
		te_snprintf(made, sizeof(made), "%s.%s", uname, hex);
		if (!e && mkdirat(dfd, made, 0700) < 0)
			e = errno;
	}
	if (!alt[0] && e) {
		if (lfd >= 0)
			close(lfd);
		return te_err(why, wlen, "cannot create %s.*: %s", uname,
			      strerror(e));
	}
	if (!alt[0]) {
		alt_find(dfd, uname, uid, alt, len);
		if (!alt[0])
			te_strlcpy(alt, made, len); /* DIR cannot be listed */
		else if (strcmp(alt, made))
			unlinkat(dfd, made, AT_REMOVEDIR);
	}
	if (lfd >= 0)
		close(lfd);
	return 0;
}

/* The user's level DIR/UID, opened (level), or DIR/UID.<hex> when DIR/UID
 * is another user's, with the one line naming who made it and what is
 * used instead in note. upath: DIR/UID, rewritten to the level used. */
static int user_level(int dfd, const char *uname, char *upath, size_t ulen,
		      uid_t uid, int make, char *note, size_t nlen, char *why,
		      size_t wlen)
{
	char alt[64], apath[TE_DUMP_DIR_PATH_MAX], *slash;
	struct stat st;
	int fd;

	if (fstatat(dfd, uname, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_uid == uid)
		return level(dfd, uname, upath, uid, make, why, wlen);
	/* another's: say whose, use the user's own other name */
	if (alt_level(dfd, uname, uid, make, alt, sizeof(alt), why, wlen) < 0) {
		if (!make) /* a reader: the level the writer would use */
			te_snprintf(why, wlen,
				    "%s belongs to uid %u, not to the job's "
				    "user (uid %u), and no %s.<hex> is the "
				    "user's own",
				    upath, (unsigned)st.st_uid, (unsigned)uid,
				    upath);
		return -2;
	}
	slash = strrchr(upath, '/');
	te_snprintf(apath, sizeof(apath), "%.*s/%s",
		    slash ? (int)(slash - upath) : 0, upath, alt);
	fd = level(dfd, alt, apath, uid, make, why, wlen);
	if (fd < 0)
		return fd;
	te_snprintf(note, nlen,
		    "%s belongs to uid %u, not to the job's user (uid %u): "
		    "someone else made it%s; using %s instead",
		    upath, (unsigned)st.st_uid, (unsigned)uid,
		    S_ISLNK(st.st_mode) ? " (a symbolic link)" : "", apath);
	te_strlcpy(upath, apath, ulen);
	return fd;
}

static int dir_open(const char *dir, const char *name, uid_t uid, int make,
		    char *path, size_t pathlen, char *why, size_t len)
{
	char rp[PATH_MAX], upath[TE_DUMP_DIR_PATH_MAX],
		jpath[TE_DUMP_DIR_PATH_MAX], uname[16],
		note[2 * TE_DUMP_DIR_PATH_MAX + 160] = "";
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
	ufd = user_level(dfd, uname, upath, sizeof(upath), uid, make, note,
			 sizeof(note), why, len);
	close(dfd);
	if (ufd < 0)
		return ufd;
	if (te_snprintf(jpath, sizeof(jpath), "%s/%s", upath, name) < 0) {
		close(ufd);
		return te_err(why, len, "%s: path too long", upath);
	}
	jfd = level(ufd, name, jpath, uid, make, why, len);
	close(ufd);
	if (jfd >= 0 && path && te_strlcpy(path, jpath, pathlen) >= pathlen) {
		close(jfd);
		path[0] = '\0';
		return te_err(why, len, "%s: path too long", jpath);
	}
	if (jfd >= 0 && len)
		te_strlcpy(why, note, len); /* "" but for another's DIR/UID */
	return jfd;
}

int te_dump_dir_open(const char *dir, const char *name, uid_t uid, char *path,
		     size_t pathlen, char *why, size_t len)
{
	return dir_open(dir, name, uid, 1, path, pathlen, why, len);
}

int te_dump_dir_find(const char *dir, const char *name, uid_t uid, char *path,
		     size_t pathlen, char *why, size_t len)
{
	return dir_open(dir, name, uid, 0, path, pathlen, why, len);
}
