/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small OS helpers: the monotonic clock, random bytes and hex tokens, the
 * small-file reader, paths resolved inside a root (sysutil.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#ifdef __NR_openat2
#include <linux/openat2.h>
#endif

#include "util/strutil.h"
#include "util/sysutil.h"

int64_t te_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long te_env_long(const char *name, long dflt)
{
	const char *v = getenv(name);
	uint64_t n;

	return v && te_parse_u64(v, 0x7fffffff, &n) == 0 ? (long)n : dflt;
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

#define INROOT_LINKS 40 /* links followed at most, as the kernel's */
/* components opened at most in one walk (links' targets included): 40
 * links to 2,000-deep directory chains made one resolution cost 0.12 s
 * (openat2: 9 ms), for each rank and each look of the hang report; a
 * real path has tens. Past it: ELOOP, as too many links. */
#define INROOT_COMPONENTS 4096

/* One component of rest (a path the walk rewrites) into comp, taken off
 * rest with the slashes before it; 0 when rest is empty, -1 when the
 * component is too long. */
static int next_component(char *rest, char *comp)
{
	size_t skip = strspn(rest, "/"), k;

	memmove(rest, rest + skip, strlen(rest + skip) + 1);
	k = strcspn(rest, "/");
	if (k > NAME_MAX)
		return -1;
	memcpy(comp, rest, k);
	comp[k] = '\0';
	memmove(rest, rest + k, strlen(rest + k) + 1);
	return k > 0;
}

/* The walk of te_open_in_root (where openat2 is not): rest, of room cap,
 * is the path still to resolve; a link's target is put before it. */
static int walk_in_root(int rootfd, char *rest, size_t cap)
{
	char comp[NAME_MAX + 1], target[PATH_MAX];
	int dir = fcntl(rootfd, F_DUPFD_CLOEXEC, 3), links = 0, next = -1;
	int r, e = 0, opened = 0;

	while (dir >= 0 && (r = next_component(rest, comp)) != 0) {
		struct stat st;
		ssize_t n;

		if (r < 0 || !strcmp(comp, "..")) {
			e = r < 0 ? ENAMETOOLONG : EXDEV; /* never above root */
			break;
		}
		if (!strcmp(comp, "."))
			continue;
		if (++opened > INROOT_COMPONENTS) {
			e = ELOOP;
			break;
		}
		next = openat(dir, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &st) < 0) {
			e = errno;
			break;
		}
		if (!S_ISLNK(st.st_mode)) {
			close(dir);
			dir = next; /* a directory, or the end (checked by
				     * the next openat) */
			next = -1;
			continue;
		}
		n = readlinkat(next, "", target, sizeof(target) - 1);
		e = n < 0 ? errno : ELOOP;
		close(next);
		next = -1;
		if (n <= 0 || ++links > INROOT_LINKS ||
		    (size_t)n + strlen(rest) + 2 > cap)
			break;
		e = 0;
		memmove(rest + n + 1, rest, strlen(rest) + 1);
		memcpy(rest, target, (size_t)n);
		rest[n] = '/';
		if (target[0] == '/') { /* absolute: from the root, not ours */
			close(dir);
			dir = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
		}
	}
	if (next >= 0)
		close(next);
	if (e || dir < 0) {
		if (dir >= 0)
			close(dir);
		errno = e ? e : errno;
		return -1;
	}
	return dir;
}

int te_open_in_root(int rootfd, const char *path, unsigned flags)
{
	char rest[2 * PATH_MAX];

#ifdef __NR_openat2
	if (!(flags & TE_INROOT_WALK)) {
		struct open_how how = { .flags = O_PATH | O_CLOEXEC,
					.resolve = RESOLVE_IN_ROOT |
						   RESOLVE_NO_MAGICLINKS };
		long fd;
		int tries = 0;

		/* EAGAIN: a rename raced with ".." (the kernel asks again) */
		do
			fd = syscall(__NR_openat2, rootfd, path, &how,
				     sizeof(how));
		while (fd < 0 && errno == EAGAIN && ++tries < 8);
		if (fd >= 0 || errno != ENOSYS)
			return (int)fd;
	}
#endif
	if (strlen(path) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(rest, path, strlen(path) + 1);
	return walk_in_root(rootfd, rest, sizeof(rest));
}

/* The directory holding path's last component, resolved in rootfd (an
 * O_PATH fd); the component into base. */
static int parent_in_root(int rootfd, const char *path, unsigned flags,
			  char *base)
{
	char dir[PATH_MAX];
	const char *slash = path ? strrchr(path, '/') : NULL;
	size_t dl = slash ? (size_t)(slash - path) + 1 : 0;
	int fd;

	if (!path || !path[dl] || !strcmp(path + dl, ".") ||
	    !strcmp(path + dl, "..") || strlen(path + dl) > NAME_MAX) {
		errno = path && strlen(path + dl) > NAME_MAX ? ENAMETOOLONG
							     : EINVAL;
		return -1;
	}
	if (dl >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(dir, path, dl);
	dir[dl] = '\0';
	fd = te_open_in_root(rootfd, dl ? dir : ".", flags);
	if (fd >= 0)
		memcpy(base, path + dl, strlen(path + dl) + 1);
	return fd;
}

/* path's last component below its directory resolved in rootfd: opened
 * with oflags (st NULL) or lstat'ed into st. The fd or 0; -1 with errno. */
static int last_in_root(int rootfd, const char *path, unsigned flags,
			int oflags, struct stat *st)
{
	char base[NAME_MAX + 1];
	int dir = parent_in_root(rootfd, path, flags, base), rc, e;

	if (dir < 0)
		return -1;
	rc = st ? fstatat(dir, base, st, AT_SYMLINK_NOFOLLOW)
		: openat(dir, base, oflags | O_NOFOLLOW | O_CLOEXEC);
	e = errno;
	close(dir);
	errno = e;
	return rc;
}

int te_open_nofollow_in_root(int rootfd, const char *path, unsigned flags,
			     int oflags)
{
	return last_in_root(rootfd, path, flags, oflags, NULL);
}

int te_lstat_in_root(int rootfd, const char *path, unsigned flags,
		     struct stat *st)
{
	return last_in_root(rootfd, path, flags, 0, st);
}

/* The root pid's path is resolved in: its root (an absolute path) or its
 * working directory (a relative one). */
static int proc_root(int pid, const char *path)
{
	char p[48];

	if (!path || !path[0]) {
		errno = ENOENT;
		return -1;
	}
	if (pid <= 0)
		return open(path[0] == '/' ? "/" : ".",
			    O_PATH | O_DIRECTORY | O_CLOEXEC);
	te_snprintf(p, sizeof(p), "/proc/%d/%s", pid,
		    path[0] == '/' ? "root" : "cwd");
	return open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* last_in_root in pid's root (proc_root). */
static int last_in_proc(int pid, const char *path, int oflags, struct stat *st)
{
	int root = proc_root(pid, path), rc, e;

	if (root < 0)
		return -1;
	rc = last_in_root(root, path, 0, oflags, st);
	e = errno;
	close(root);
	errno = e;
	return rc;
}

int te_proc_open(int pid, const char *path, int oflags)
{
	return last_in_proc(pid, path, oflags, NULL);
}

int te_proc_lstat(int pid, const char *path, struct stat *st)
{
	return last_in_proc(pid, path, 0, st);
}

int te_proc_open_kind(int pid, const char *path, int oflags, mode_t kind,
		      uid_t owner, struct stat *st)
{
	char self[40];
	int pfd = last_in_proc(pid, path, O_PATH, NULL), fd, e;

	if (pfd < 0)
		return -1;
	if (fstat(pfd, st) < 0) {
		e = errno;
		close(pfd);
		errno = e;
		return -1;
	}
	if ((st->st_mode & S_IFMT) != kind || st->st_uid != owner) {
		close(pfd);
		if (S_ISLNK(st->st_mode)) { /* as an O_NOFOLLOW open says */
			errno = ELOOP;
			return -1;
		}
		return -2;
	}
	/* the same inode, opened for real: the magic link is followed */
	te_snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, oflags | O_CLOEXEC);
	e = errno;
	close(pfd);
	errno = e;
	return fd;
}
