/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Small OS helpers shared by every side, one per job: the monotonic clock
 * every deadline is measured on, a number from the environment, random
 * bytes and hex tokens, and the one reader of small files. */
#ifndef TE_SYSUTIL_H
#define TE_SYSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Milliseconds on CLOCK_MONOTONIC (deadlines never follow the wall clock). */
int64_t te_now_ms(void);

/* The environment variable name as a number 0..INT32_MAX (decimal), dflt
 * when it is unset or not such a number. */
long te_env_long(const char *name, long dflt);

/* Sleeps ms milliseconds, through signals (EINTR); nothing for ms <= 0. */
void te_sleep_ms(int64_t ms);

/* n (1..256) bytes from the kernel's generator (getrandom); 0 or -1. */
int te_random_bytes(void *buf, size_t n);

/* ndigits (even, > 0) random lower-case hex digits from the kernel's
 * generator (getrandom), terminated, into buf of size > ndigits. 0, or -1
 * (buf too small, ndigits odd or 0, no randomness): then buf is "". */
int te_random_hex(char *buf, size_t size, size_t ndigits);

/* Reads fd from its offset to its end into buf, at most size - 1 bytes,
 * NUL-terminated (EINTR retried). Returns the bytes read (the text may hold
 * NUL bytes, as /proc/self/cmdline does), or -1 with errno set; with
 * TE_READ_WHOLE a file longer than size - 1 bytes is -1 with EFBIG, else
 * the rest is not read. */
#define TE_READ_WHOLE 1u    /* the whole file or nothing */
#define TE_READ_NOFOLLOW 2u /* path's last part must not be a link */
#define TE_READ_MINE 4u	    /* owned by this process's effective uid */
ssize_t te_read_fd(int fd, char *buf, size_t size, unsigned flags);

/* Opens path and reads it as te_read_fd does. Never waits on a FIFO or a
 * device: path must be a regular file (EINVAL otherwise). -1 with errno:
 * ELOOP (a link, TE_READ_NOFOLLOW), EPERM (another uid's, TE_READ_MINE),
 * EFBIG (TE_READ_WHOLE), or open's and read's own. */
ssize_t te_read_small(const char *path, char *buf, size_t size, unsigned flags);

/* path (absolute or relative: both from root) resolved inside the
 * directory rootfd as if it were "/" (a container's root, opened through
 * /proc/PID/root): every component, and every link on the way, absolute
 * targets from rootfd and ".." never above it, so that nothing outside it
 * is reached. openat2(2) with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
 * where the kernel has none (ENOSYS, before 5.6), or with TE_INROOT_WALK,
 * a walk one component at a time with O_NOFOLLOW, links read with
 * readlinkat and taken as text (".." refused there: EXDEV; past 40 links,
 * or 4,096 components opened in all, ELOOP). Returns an
 * O_PATH descriptor (close-on-exec) of what path names (fstat it, then
 * open /proc/self/fd/N to read it), or -1 with errno. */
#define TE_INROOT_WALK 1u
int te_open_in_root(int rootfd, const char *path, unsigned flags);

/* The same for a path whose last component must not be followed (a
 * pipe, a dump another process names): the directory that holds it
 * resolved with te_open_in_root, the last component (not "." nor "..")
 * opened below it with oflags | O_NOFOLLOW | O_CLOEXEC (a link: ELOOP),
 * or lstat'ed (a link: the link itself). The fd, or 0; -1 with errno
 * (EXDEV: a ".." of the walk; EINVAL: no last component). */
int te_open_nofollow_in_root(int rootfd, const char *path, unsigned flags,
			     int oflags);
int te_lstat_in_root(int rootfd, const char *path, unsigned flags,
		     struct stat *st);

/* path as process pid sees it (its environment named it): an absolute one
 * in /proc/PID/root (its container's root, or the node's), a relative one
 * in /proc/PID/cwd (as a root, too: ".." never above it); pid 0: this
 * process's "/" and ".". Never "/proc/PID/root" + path looked up as a
 * string, which an absolute link in the image, or enough "..", lead to
 * the node's files. As te_open_nofollow_in_root and te_lstat_in_root; -1
 * with errno also as opening /proc/PID/root (ENOENT: it ended; EACCES). */
int te_proc_open(int pid, const char *path, int oflags);
int te_proc_lstat(int pid, const char *path, struct stat *st);

/* te_proc_open for a file that must be of kind (S_IFREG, S_IFIFO) and
 * owner's: the last component is first opened O_PATH (which runs no
 * driver's open and wakes no FIFO's reader), its kind and owner checked on
 * that very inode, then reopened through /proc/self/fd with oflags (never
 * O_NOFOLLOW there: the magic link must be followed). The fd; -1 with
 * errno as te_proc_open (a link: ELOOP); -2 when it is of another kind or
 * another owner's (*st says which: the path changed since the caller's
 * lstat, or a device or another user's file was put there), nothing
 * opened. */
int te_proc_open_kind(int pid, const char *path, int oflags, mode_t kind,
		      uid_t owner, struct stat *st);

#endif
