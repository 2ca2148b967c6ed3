/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Paths another process names, opened with their last component never
 * followed and never outside its root (core/util/sysutil.c:
 * te_open_nofollow_in_root, te_lstat_in_root, te_proc_open,
 * te_proc_lstat), against a directory tree standing for a container's
 * image: an absolute link (the image's /tmp -> /home/user), a relative
 * link that climbs out, ".." past the root, a link as the last component,
 * a magic link (/proc/self/root), a FIFO and a regular file; with openat2
 * and with the component walk used where the kernel has none. Whatever
 * the path, nothing of the node outside the root is reached: openat2
 * stops ".." at the root, the walk refuses it; both resolve an absolute
 * link in the root. Last, a child chrooted into the tree (in a user
 * namespace of its own) and its paths through /proc/PID/root, where the
 * string "/proc/PID/root" + path reaches the node's file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "userns_child.h"
#include "util/sysutil.h"

static char dir[256], root[300];

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, text, strlen(text)) < 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
	close(fd);
}

/* DIR + rest (what 'd': a directory, 'p': a FIFO) */
static void mk(const char *in, const char *rest, int what)
{
	char p[900];

	snprintf(p, sizeof(p), "%s%s", in, rest);
	if ((what == 'd' && mkdir(p, 0700) < 0 && errno != EEXIST) ||
	    (what == 'p' && mkfifo(p, 0600) < 0)) {
		printf("Bail out! cannot make %s\n", p);
		exit(1);
	}
}

static void link_to(const char *target, const char *at)
{
	char p[900];

	snprintf(p, sizeof(p), "%s/%s", root, at);
	if (symlink(target, p) < 0) {
		printf("Bail out! cannot link %s\n", p);
		exit(1);
	}
}

/* mkdir -p ROOT/DIR/out: where an absolute link to DIR/out lands inside
 * the root */
static void mk_inner(void)
{
	char p[900], *s;

	snprintf(p, sizeof(p), "%s%s/out", root, dir);
	for (s = p + strlen(root) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0700);
		*s = '/';
	}
	mkdir(p, 0700);
	strcat(p, "/f");
	put(p, "INROOT");
}

static void build_tree(void)
{
	char p[900];

	snprintf(dir, sizeof(dir), "%s/te-inroot.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		printf("Bail out! no temporary directory\n");
		exit(1);
	}
	snprintf(root, sizeof(root), "%s/root", dir);
	mk(dir, "/out", 'd'); /* the node, outside the root */
	snprintf(p, sizeof(p), "%s/out/f", dir);
	put(p, "OUT");
	mk(dir, "/out/fifo", 'p');
	mk(root, "", 'd');
	mk(root, "/d", 'd');
	snprintf(p, sizeof(p), "%s/d/f", root);
	put(p, "IN");
	mk(root, "/d/fifo", 'p');
	mk(root, "/out", 'd'); /* where ".." past the root stops */
	snprintf(p, sizeof(p), "%s/out/f", root);
	put(p, "CLAMPED");
	mk_inner();
	snprintf(p, sizeof(p), "%s/out", dir);
	link_to(p, "abs");	  /* absolute: the node's DIR/out */
	link_to("../out", "rel"); /* relative, one level above the root */
	link_to("../d", "d/up");  /* relative, staying inside */
	link_to("d/f", "flink");  /* a link as the last component */
	link_to("/proc/self/root", "magic");
}

/* The text of path opened below dirfd, or "E<errno name>" */
static const char *text_of(int dirfd, const char *path, unsigned how)
{
	static char buf[64];
	int fd = te_open_nofollow_in_root(dirfd, path, how, O_RDONLY);
	ssize_t n;

	if (fd < 0) {
		snprintf(buf, sizeof(buf), "E%s",
			 errno == ELOOP	   ? "LOOP"
			 : errno == EXDEV  ? "XDEV"
			 : errno == ENOENT ? "NOENT"
			 : errno == EINVAL ? "INVAL"
					   : strerror(errno));
		return buf;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static int have_openat2(void)
{
#ifdef SYS_openat2
	struct {
		unsigned long long flags, mode, resolve;
	} h = { O_PATH | O_CLOEXEC, 0, 0 };
	long fd = syscall(SYS_openat2, AT_FDCWD, "/", &h, sizeof(h));

	if (fd >= 0)
		close((int)fd);
	return fd >= 0;
#else
	return 0;
#endif
}

/* The tree's paths one way: openat2 (o2 1) or the walk (o2 0). */
static void paths(int rfd, unsigned how, int o2, const char *m)
{
	struct stat st;
	int dfd, fd, rd;
	char b, p[900];

	is_str(text_of(rfd, "/d/f", how), "IN", "%s: a regular file", m);
	is_str(text_of(rfd, "/abs/f", how), "INROOT",
	       "%s: an absolute link is resolved in the root", m);
	is_str(text_of(rfd, "/rel/f", how), o2 ? "CLAMPED" : "EXDEV",
	       "%s: a relative link past the root %s", m,
	       o2 ? "stops at the root" : "refused");
	is_str(text_of(rfd, "/../out/f", how), o2 ? "CLAMPED" : "EXDEV",
	       "%s: \"..\" past the root %s", m,
	       o2 ? "stops at the root" : "refused");
	is_str(text_of(rfd, "/d/../../../out/f", how), o2 ? "CLAMPED" : "EXDEV",
	       "%s: \"..\" after a directory, past the root %s", m,
	       o2 ? "stops at the root" : "refused");
	is_str(text_of(rfd, "/d/up/f", how), o2 ? "IN" : "EXDEV",
	       "%s: a relative link with \"..\" inside the root %s", m,
	       o2 ? "followed" : "refused");
	is_str(text_of(rfd, "/flink", how), "ELOOP",
	       "%s: a link as the last component is not followed", m);
	ok(te_lstat_in_root(rfd, "/flink", how, &st) == 0 &&
		   S_ISLNK(st.st_mode),
	   "%s: lstat sees the link itself", m);
	is_str(text_of(rfd, "/abs/fifo", how), "ENOENT",
	       "%s: the node's FIFO behind an absolute link is never reached",
	       m);
	is_str(text_of(rfd, "/magic/etc/hostname", how), "ENOENT",
	       "%s: a link to /proc/self/root resolves in the root", m);
	is_str(text_of(rfd, "/", how), "EINVAL", "%s: no last component", m);
	is_str(text_of(rfd, "/d/..", how), "EINVAL", "%s: \"..\" as the last",
	       m);
	/* the FIFO: no reader, then one */
	fd = te_open_nofollow_in_root(rfd, "/d/fifo", how,
				      O_WRONLY | O_NONBLOCK);
	ok(fd < 0 && errno == ENXIO, "%s: a FIFO without a reader: ENXIO", m);
	snprintf(p, sizeof(p), "%s/d/fifo", root);
	rd = open(p, O_RDONLY | O_NONBLOCK);
	fd = te_open_nofollow_in_root(rfd, "/d/fifo", how,
				      O_WRONLY | O_NONBLOCK);
	ok(fd >= 0 && write(fd, "d", 1) == 1 && read(rd, &b, 1) == 1 &&
		   b == 'd' &&
		   te_lstat_in_root(rfd, "/d/fifo", how, &st) == 0 &&
		   S_ISFIFO(st.st_mode),
	   "%s: the root's FIFO gets its byte", m);
	if (fd >= 0)
		close(fd);
	close(rd);
	/* a directory as the root of relative paths: never above it */
	dfd = te_open_nofollow_in_root(rfd, "/d", how, O_PATH | O_DIRECTORY);
	ok(dfd >= 0, "%s: a directory opened", m);
	is_str(text_of(dfd, "f", how), "IN", "%s: relative: in the dir", m);
	is_str(text_of(dfd, "./f", how), "IN", "%s: relative with \".\"", m);
	is_str(text_of(dfd, "../out/f", how), o2 ? "ENOENT" : "EXDEV",
	       "%s: relative with \"..\": never above the dir", m);
	is_str(text_of(dfd, "up/f", how), o2 ? "ENOENT" : "EXDEV",
	       "%s: relative through a link with \"..\": %s", m,
	       o2 ? "stops at the dir (DIR/d/d/f: none)" : "refused");
	if (dfd >= 0)
		close(dfd);
}

/* A child chrooted into the tree: its absolute link and ".." as it sees
 * them through /proc/PID/root. */
static void chrooted(void)
{
	pid_t pid = te_test_userns_child(root, "/d");
	char p[900];
	struct stat st;
	int fd;

	if (pid < 0) {
		tap_skip("no user namespace to chroot a child in (unshare or "
			 "chroot refused here): the /proc/PID/root checks "
			 "need one");
		return;
	}
	fd = te_proc_open(pid, "/abs/f", O_RDONLY);
	ok(fd >= 0 && read(fd, p, 6) == 6 && !memcmp(p, "INROOT", 6),
	   "pid: its absolute link lands in its root, not the node's DIR/out");
	if (fd >= 0)
		close(fd);
	fd = te_proc_open(pid, "/../../../../out/f", O_RDONLY);
	ok(fd >= 0 && read(fd, p, 7) == 7 && !memcmp(p, "CLAMPED", 7),
	   "pid: \"..\" stops at its root");
	if (fd >= 0)
		close(fd);
	fd = te_proc_open(pid, "f", O_RDONLY);
	ok(fd >= 0 && read(fd, p, 2) == 2 && !memcmp(p, "IN", 2),
	   "pid: a relative path from its working directory");
	if (fd >= 0)
		close(fd);
	ok(te_proc_lstat(pid, "/d/fifo", &st) == 0 && S_ISFIFO(st.st_mode),
	   "pid: lstat of its FIFO");
	snprintf(p, sizeof(p), "/proc/%d/root/abs/f", (int)pid);
	fd = open(p, O_RDONLY);
	ok(fd >= 0 && read(fd, p, 3) == 3 && !memcmp(p, "OUT", 3),
	   "(why: the string /proc/PID/root/abs/f reaches the node's file)");
	if (fd >= 0)
		close(fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* te_proc_open_kind: a file of another kind is never opened. A FIFO whose
 * reader blocks in open(2) until a writer opens it shows it: wanted as a
 * regular file (a dump), or as another user's FIFO, the reader stays
 * blocked; wanted as a FIFO of its owner's (a pipe), it wakes. */
static int reader_woken(const char *fifo, int want_kind, uid_t owner)
{
	struct stat st;
	pid_t kid = fork();
	int fd, st_w = 0, woke = 0, i;

	if (kid == 0) {
		int r = open(fifo, O_RDONLY); /* blocks until a writer */

		_exit(r < 0 ? 2 : 0);
	}
	usleep(50 * 1000); /* the reader in its open */
	fd = te_proc_open_kind(0, fifo, O_WRONLY | O_NONBLOCK, want_kind, owner,
			       &st);
	for (i = 0; i < 20 && !woke; i++) {
		usleep(10 * 1000);
		woke = waitpid(kid, &st_w, WNOHANG) == kid;
	}
	if (!woke) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	if (fd >= 0)
		close(fd);
	return (fd == -2 ? 0x10 : fd >= 0 ? 0x20 : 0) | woke;
}

static void open_kind(void)
{
	char fifo[400], reg[400], link[400];
	struct stat st;
	int fd;

	snprintf(fifo, sizeof(fifo), "%s/kind.fifo", dir);
	snprintf(reg, sizeof(reg), "%s/kind.reg", dir);
	snprintf(link, sizeof(link), "%s/kind.link", dir);
	if (mkfifo(fifo, 0600) < 0 || symlink(reg, link) < 0) {
		printf("Bail out! cannot make %s or %s\n", fifo, link);
		exit(1);
	}
	put(reg, "dump");
	ok(reader_woken(fifo, S_IFREG, getuid()) == 0x10,
	   "open_kind: a FIFO where a regular file is wanted: -2, never "
	   "opened (its blocked reader not woken)");
	ok(reader_woken(fifo, S_IFIFO, getuid()) == 0x21,
	   "open_kind: the FIFO where one is wanted: opened (its reader woken)");
	ok(reader_woken(fifo, S_IFIFO, getuid() + 1) == 0x10,
	   "open_kind: the FIFO, another owner's: -2, never opened (its "
	   "reader not woken)");
	fd = te_proc_open_kind(0, reg, O_RDONLY, S_IFREG, getuid(), &st);
	ok(fd >= 0 && S_ISREG(st.st_mode), "open_kind: a regular file: opened");
	if (fd >= 0)
		close(fd);
	ok(te_proc_open_kind(0, link, O_RDONLY, S_IFREG, getuid(), &st) == -1 &&
		   errno == ELOOP,
	   "open_kind: a link to it: ELOOP, as an O_NOFOLLOW open says");
	ok(te_proc_open_kind(0, dir, O_RDONLY, S_IFREG, getuid(), &st) == -2 &&
		   S_ISDIR(st.st_mode),
	   "open_kind: a directory: -2, its kind in st");
	fd = te_proc_open_kind(getpid(), reg, O_RDONLY, S_IFREG, getuid(), &st);
	ok(fd >= 0, "open_kind: in this process's /proc root: opened");
	if (fd >= 0)
		close(fd);
}

/* The walk's budget: a path through two links, each to a 2,000-deep
 * directory chain, opens about 6,000 components: ELOOP past 4,096 (40
 * links to such chains cost 0.12 s a resolution). openat2 has no such
 * budget and resolves it (the kernel's walk is cheap). */
static void walk_budget(int o2)
{
	static char target[4100];
	char base[400];
	size_t n = 0;
	int i, d, next, rfd, fd;

	snprintf(base, sizeof(base), "%s/deep", dir);
	if (mkdir(base, 0700) < 0 || (d = open(base, O_PATH)) < 0) {
		printf("Bail out! cannot make %s\n", base);
		exit(1);
	}
	rfd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	n += (size_t)snprintf(target + n, sizeof(target) - n, "/");
	for (i = 0; i < 2000; i++) {
		if (mkdirat(d, "a", 0700) < 0 ||
		    (next = openat(d, "a", O_PATH | O_DIRECTORY)) < 0) {
			printf("Bail out! cannot make a chain in %s\n", base);
			exit(1);
		}
		close(d);
		d = next;
		n += (size_t)snprintf(target + n, sizeof(target) - n, "a/");
	}
	/* in the deepest: x -> /a/.../a/y, y -> /a/.../a/f, f a file */
	snprintf(target + n, sizeof(target) - n, "y");
	if (symlinkat(target, d, "x") < 0)
		exit(1);
	snprintf(target + n, sizeof(target) - n, "f");
	if (symlinkat(target, d, "y") < 0)
		exit(1);
	fd = openat(d, "f", O_WRONLY | O_CREAT, 0600);
	if (fd >= 0)
		close(fd);
	close(d);
	snprintf(target + n, sizeof(target) - n, "x");
	fd = te_open_in_root(rfd, target, TE_INROOT_WALK);
	ok(fd < 0 && errno == ELOOP,
	   "walk: about 6,000 components through 2 links: ELOOP (%s)",
	   fd < 0 ? strerror(errno) : "resolved");
	if (fd >= 0)
		close(fd);
	target[n - 1] = '\0'; /* the chain alone: 2,000 components */
	fd = te_open_in_root(rfd, target, TE_INROOT_WALK);
	ok(fd >= 0, "walk: the 2,000-deep chain alone resolves");
	if (fd >= 0)
		close(fd);
	if (o2) {
		snprintf(target + n - 1, sizeof(target) - n + 1, "/x");
		fd = te_open_in_root(rfd, target, 0);
		ok(fd >= 0, "openat2: the same path resolves (no budget)");
		if (fd >= 0)
			close(fd);
	} else {
		tap_skip("no openat2 on this kernel");
	}
	close(rfd);
}

int main(void)
{
	struct stat st;
	int rfd, o2 = have_openat2(), slash;

	build_tree();
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0) {
		printf("Bail out! cannot open %s\n", root);
		return 1;
	}
	if (!o2)
		printf("# this kernel has no openat2: both runs walk\n");
	paths(rfd, 0, o2, o2 ? "openat2" : "default (walk)");
	paths(rfd, TE_INROOT_WALK, 0, "walk");
	close(rfd);
	/* the real root: /proc/self/root is a magic link, never followed by
	 * openat2 (the walk takes its target as text, "/": in the root) */
	slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (o2) {
		ok(te_lstat_in_root(slash, "/proc/self/root/etc", 0, &st) < 0 &&
			   errno == ELOOP,
		   "a magic link on the path: ELOOP (%s)", strerror(errno));
		ok(te_proc_lstat(0, "/proc/self/root/etc", &st) < 0 &&
			   errno == ELOOP,
		   "pid 0: the same, in this process's root");
	} else {
		tap_skip("no openat2: the walk reads a magic link as text");
		tap_skip("no openat2: the walk reads a magic link as text");
	}
	close(slash);
	ok(te_proc_open(getpid(), "", O_RDONLY) < 0 && errno == ENOENT,
	   "an empty path: ENOENT");
	{
		char p[5000];

		memset(p, 'a', sizeof(p) - 1);
		p[0] = '/';
		p[sizeof(p) - 1] = '\0';
		ok(te_proc_open(0, p, O_RDONLY) < 0 && errno == ENAMETOOLONG,
		   "a path over 4 KiB: ENAMETOOLONG");
	}
	open_kind();
	walk_budget(o2);
	chrooted();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	return tap_done();
}
