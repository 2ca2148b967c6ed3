/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the shared helpers, one job each: the error path
 * (te_err), the text cleaner, the constant-time token compare
 * (core/util/strutil.c), the monotonic clock, random tokens and the small-file
 * reader (core/util/sysutil.c). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/strutil.h"
#include "util/sysutil.h"
#include "tap.h"

static int fails_with(char *err, size_t len, int code)
{
	return te_err(err, len, "bad value '%s' for %s (code %d)", "x",
		      "--train-y", code);
}

static void test_err(void)
{
	char err[64], tiny[8];

	is_int(fails_with(err, sizeof(err), 3), -1, "te_err returns -1");
	is_str(err, "bad value 'x' for --train-y (code 3)",
	       "and writes the message");
	is_int(fails_with(tiny, sizeof(tiny), 3), -1,
	       "a message too long for the buffer: still -1");
	is_str(tiny, "bad val", "cut and terminated");
	is_int(te_err(NULL, 0, "nothing"), -1, "no buffer at all: still -1");
}

static void test_clean(void)
{
	char out[16];

	te_clean_text(out, sizeof(out), "ok\tbell\a\x1b[31m", 100);
	is_str(out, "ok?bell??[31m", "control bytes become '?'");
	te_clean_text(out, sizeof(out), "h\xc3\xa9llo", 100);
	is_str(out, "h??llo", "bytes past ASCII become '?'");
	te_clean_text(out, sizeof(out), "abcdefghijklmnopqrstuvwxyz", 100);
	is_str(out, "abcdefghijklmno", "cut to the buffer, terminated");
	te_clean_text(out, sizeof(out), "abcdef", 3);
	is_str(out, "abc", "cut to max");
	te_clean_text(out, sizeof(out), NULL, 100);
	is_str(out, "", "NULL reads as empty");
	out[0] = 'x';
	te_clean_text(out, 0, "abc", 100);
	is_int(out[0], 'x', "a zero-size buffer is not written");
}

static void test_token(void)
{
	const char *a = "0123456789abcdef0123456789abcdef";

	ok(te_token_equal(a, "0123456789abcdef0123456789abcdef", 32),
	   "equal tokens");
	ok(!te_token_equal(a, "0123456789abcdef0123456789abcdeF", 32),
	   "the last byte differs");
	ok(!te_token_equal(a, "1123456789abcdef0123456789abcdef", 32),
	   "the first byte differs");
	ok(!te_token_equal(a, "0123456789abcdef0123456789abcde", 32),
	   "one byte short");
	ok(!te_token_equal(a, "0123456789abcdef0123456789abcdef0", 32),
	   "one byte long");
	ok(!te_token_equal("", "", 32), "empty tokens are not equal tokens");
	ok(!te_token_equal(NULL, a, 32), "NULL is no token");
}

static void test_clock(void)
{
	int64_t t0 = te_now_ms(), t1;
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	t1 = te_now_ms();
	ok(t1 - t0 >= 19 && t1 - t0 < 5000,
	   "te_now_ms advances with time (%lld ms over a 20 ms sleep)",
	   (long long)(t1 - t0));
	ok(t0 > 0, "and counts from boot, not 0");
}

static int all_hex(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return 0;
	return 1;
}

static void test_random(void)
{
	char a[33], b[33], small[32];

	is_int(te_random_hex(a, sizeof(a), 32), 0, "32 random hex digits");
	is_int((int)strlen(a), 32, "exactly 32");
	ok(all_hex(a), "lower-case hex only (%s)", a);
	te_random_hex(b, sizeof(b), 32);
	ok(strcmp(a, b) != 0, "two tokens differ");
	is_int(te_random_hex(small, sizeof(small), 32), -1,
	       "no room for the terminator: refused");
	is_str(small, "", "and the buffer is empty");
	is_int(te_random_hex(a, sizeof(a), 7), -1, "an odd count is refused");
	is_int(te_random_hex(a, sizeof(a), 0), -1, "so is 0");
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fwrite(text, 1, len, f);
		fclose(f);
	}
}

/* mkdir -p path (mode 755); 0 or -1. */
static int mkdir_p(const char *path)
{
	char p[512];
	size_t i;

	snprintf(p, sizeof(p), "%s", path);
	for (i = 1; p[i]; i++) {
		if (p[i] != '/')
			continue;
		p[i] = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -1;
		p[i] = '/';
	}
	return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

static void test_read_small(void)
{
	char dir[] = "/tmp/te-test-read-XXXXXX", path[128], link[128];
	char fifo[128], buf[8], big[64];
	int fd;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	snprintf(link, sizeof(link), "%s/l", dir);
	snprintf(fifo, sizeof(fifo), "%s/p", dir);
	write_file(path, "abc\0def", 7);
	is_int((int)te_read_small(path, big, sizeof(big), 0), 7,
	       "a file with a NUL byte: all 7 bytes read");
	ok(memcmp(big, "abc\0def", 8) == 0, "and terminated after them");
	write_file(path, "0123456789", 10);
	is_int((int)te_read_small(path, buf, sizeof(buf), 0), 7,
	       "longer than the buffer: the first 7 bytes");
	is_str(buf, "0123456", "cut and terminated");
	errno = 0;
	is_int((int)te_read_small(path, buf, sizeof(buf), TE_READ_WHOLE), -1,
	       "TE_READ_WHOLE: longer than the buffer is refused");
	is_int(errno, EFBIG, "with EFBIG");
	is_str(buf, "", "and the buffer is empty");
	write_file(path, "0123456", 7);
	is_int((int)te_read_small(path, buf, sizeof(buf), TE_READ_WHOLE), 7,
	       "TE_READ_WHOLE: exactly as long as the room is read");
	write_file(path, "", 0);
	is_int((int)te_read_small(path, buf, sizeof(buf), 0), 0,
	       "an empty file: 0 bytes");
	write_file(path, "x", 1);
	if (symlink(path, link) == 0) {
		is_int((int)te_read_small(link, buf, sizeof(buf), 0), 1,
		       "a link is followed without TE_READ_NOFOLLOW");
		errno = 0;
		is_int((int)te_read_small(link, buf, sizeof(buf),
					  TE_READ_NOFOLLOW),
		       -1, "and refused with it");
		is_int(errno, ELOOP, "with ELOOP");
	} else {
		ok(0, "symlink: %s", strerror(errno));
	}
	if (mkfifo(fifo, 0600) == 0) {
		errno = 0;
		is_int((int)te_read_small(fifo, buf, sizeof(buf), 0), -1,
		       "a FIFO nobody writes: refused at once, no wait");
		is_int(errno, EINVAL, "with EINVAL (not a regular file)");
	} else {
		ok(0, "mkfifo: %s", strerror(errno));
	}
	is_int((int)te_read_small(dir, buf, sizeof(buf), 0), -1,
	       "a directory is refused");
	errno = 0;
	is_int((int)te_read_small("/nonexistent/te", buf, sizeof(buf), 0), -1,
	       "a missing file: -1");
	is_int(errno, ENOENT, "with ENOENT");
	is_int((int)te_read_small(path, buf, sizeof(buf), TE_READ_MINE), 1,
	       "TE_READ_MINE: this process's own file is read");
	if (geteuid() == 0 && chown(path, 65534, 65534) == 0) {
		errno = 0;
		is_int((int)te_read_small(path, buf, sizeof(buf), TE_READ_MINE),
		       -1, "TE_READ_MINE: another uid's file is refused");
		is_int(errno, EPERM, "with EPERM");
	} else {
		tap_skip("another uid's file: needs root to chown");
	}
	is_int((int)te_read_small(NULL, buf, sizeof(buf), 0), -1,
	       "no path: -1");
	is_int((int)te_read_small(path, buf, 0, 0), -1, "no room: -1");
	fd = open("/proc/self/cmdline", O_RDONLY);
	ok(fd >= 0 && te_read_fd(fd, big, sizeof(big), 0) > 0,
	   "te_read_fd reads /proc/self/cmdline (its size says 0)");
	if (fd >= 0)
		close(fd);
	unlink(path);
	unlink(link);
	unlink(fifo);
	rmdir(dir);
}

/* te_replace_file in a shared sticky directory (an enroot hook's
 * ENROOT_ENVIRON a site put there): what another user made at the old
 * fixed temporary name PATH.trainenv, a link or a file of theirs, is
 * neither followed nor in the way, and nothing is left beside PATH. */
static void test_replace_file(void)
{
	char dir[] = "/tmp/te-test-replace-XXXXXX", path[128], tmp[160];
	char victim[128], buf[64];
	int fd;

	if (!mkdtemp(dir) || chmod(dir, 01777) < 0) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/environ", dir);
	snprintf(tmp, sizeof(tmp), "%s.trainenv", path);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	write_file(path, "OLD=1\n", 6);
	write_file(victim, "mine\n", 5);
	if (symlink(victim, tmp) < 0) {
		ok(0, "symlink: %s", strerror(errno));
		return;
	}
	if (geteuid() == 0 && lchown(tmp, 4242, 4242) < 0)
		ok(0, "lchown: %s", strerror(errno)); /* another user's link */
	is_int(te_replace_file(path, tmp, "NEW=1\n"), 0,
	       "te_replace_file: another user's link at PATH.trainenv does "
	       "not block it");
	is_int((int)te_read_small(path, buf, sizeof(buf), 0), 6,
	       "... PATH has the new text");
	is_str(buf, "NEW=1\n", "... all of it");
	te_read_small(victim, buf, sizeof(buf), 0);
	is_str(buf, "mine\n", "... and the link's target is untouched");
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd >= 0) {
		close(fd);
		if (geteuid() == 0 && chown(tmp, 4242, 4242) < 0)
			ok(0, "chown: %s",
			   strerror(errno)); /* another user's */
	}
	is_int(te_replace_file(path, tmp, "NEWER=1\n"), 0,
	       "a file at PATH.trainenv (another user's) does not block it");
	te_read_small(path, buf, sizeof(buf), 0);
	is_str(buf, "NEWER=1\n", "... PATH has the new text");
	is_int((int)te_read_small(tmp, buf, sizeof(buf), 0), 0,
	       "... and the other file is left as it was (empty)");
	unlink(tmp);
	unlink(victim);
	unlink(path);
	is_int(rmdir(dir), 0, "nothing else is left in the directory");
}

/* te_open_in_root over a container-like tree whose /usr/share/gdb is an
 * absolute link (to /tmp/... of the node, where another user could plant a
 * gdb script): resolved inside the root, never on the node. mode: 0
 * (openat2) or TE_INROOT_WALK; host: the node's file's inode. */
static void open_in_root_mode(const char *t, int rootfd, unsigned mode,
			      ino_t host)
{
	const char *m = mode ? "walk" : "openat2";
	char path[512];
	struct stat in, got;
	int fd;

	errno = 0;
	fd = te_open_in_root(rootfd, "/usr/share/gdb/auto-load/py-gdb.py",
			     mode);
	ok(fd < 0 && errno == ENOENT,
	   "%s: an absolute link above the file (/usr/share/gdb -> %s/node) "
	   "is the root's: the node's file is not reached (errno %d)",
	   m, t, errno);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/root%s/node/auto-load", t, t);
	if (mkdir_p(path) < 0) {
		ok(0, "mkdir %s: %s", path, strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/root%s/node/auto-load/py-gdb.py", t,
		 t);
	write_file(path, "inside\n", 7);
	stat(path, &in);
	fd = te_open_in_root(rootfd, "usr/share/gdb/auto-load/py-gdb.py", mode);
	ok(fd >= 0 && fstat(fd, &got) == 0 && got.st_ino == in.st_ino &&
		   got.st_dev == in.st_dev,
	   "%s: with the same path inside the root, that file is opened", m);
	if (fd >= 0)
		close(fd);
	unlink(path);
	fd = te_open_in_root(rootfd, "/usr/bin/python3.11-gdb.py", mode);
	ok(fd >= 0 && fstat(fd, &got) == 0 && S_ISREG(got.st_mode),
	   "%s: a relative link beside it (Debian's python3.11-gdb.py) is "
	   "followed",
	   m);
	if (fd >= 0)
		close(fd);
	errno = 0;
	fd = te_open_in_root(rootfd, "/usr/bin/up", mode);
	ok(fd < 0 || (fstat(fd, &got) == 0 && got.st_ino != host),
	   "%s: a link of '..'s past the root does not leave it (errno %d)", m,
	   errno);
	if (fd >= 0)
		close(fd);
}

static void test_open_in_root(void)
{
	char t[] = "/tmp/te-test-inroot-XXXXXX", path[512], link[512];
	struct stat host, seen;
	int rootfd;

	if (!mkdtemp(t)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/node/auto-load", t);
	mkdir_p(path);
	snprintf(path, sizeof(path), "%s/node/auto-load/py-gdb.py", t);
	write_file(path, "planted\n", 8); /* the node's, another user's */
	stat(path, &host);
	snprintf(path, sizeof(path), "%s/root/usr/share", t);
	mkdir_p(path);
	snprintf(path, sizeof(path), "%s/root/usr/bin", t);
	mkdir_p(path);
	snprintf(path, sizeof(path), "%s/root/usr/share/gdb", t);
	snprintf(link, sizeof(link), "%s/node", t);
	if (symlink(link, path) < 0) {
		ok(0, "symlink: %s", strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/root/usr/bin/python3.11m-gdb.py", t);
	write_file(path, "debian\n", 7);
	snprintf(path, sizeof(path), "%s/root/usr/bin/python3.11-gdb.py", t);
	if (symlink("python3.11m-gdb.py", path) < 0)
		ok(0, "symlink: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/root/usr/bin/up", t);
	if (symlink("../../../../../../../../node/auto-load/py-gdb.py", path))
		ok(0, "symlink: %s", strerror(errno));
	/* what the old lookup did (a path under the root, resolved by the
	 * node's kernel from the node's /) reaches the node's file */
	snprintf(path, sizeof(path),
		 "%s/root/usr/share/gdb/auto-load/py-gdb.py", t);
	ok(stat(path, &seen) == 0 && seen.st_ino == host.st_ino,
	   "control: ROOT/usr/share/gdb/... looked up as a path reaches the "
	   "node's %s/node/auto-load/py-gdb.py",
	   t);
	snprintf(path, sizeof(path), "%s/root", t);
	rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		ok(0, "open %s: %s", path, strerror(errno));
		return;
	}
	open_in_root_mode(t, rootfd, 0, host.st_ino);
	open_in_root_mode(t, rootfd, TE_INROOT_WALK, host.st_ino);
	close(rootfd);
	snprintf(path, sizeof(path), "rm -rf '%s'", t);
	ok(system(path) == 0, "the tree is removed");
}

static void test_value_slot(void)
{
	char *s[TE_VALUE_SLOTS + 1];
	int i, j, distinct = 1;

	for (i = 0; i <= TE_VALUE_SLOTS; i++)
		s[i] = te_value_slot();
	for (i = 0; i < TE_VALUE_SLOTS; i++)
		for (j = i + 1; j < TE_VALUE_SLOTS; j++)
			distinct &= s[i] != s[j];
	ok(distinct, "%d value slots in a row are %d distinct buffers",
	   TE_VALUE_SLOTS, TE_VALUE_SLOTS);
	ok(s[TE_VALUE_SLOTS] == s[0], "the next call reuses the first");
	s[0][TE_VALUE_SLOT_SIZE - 1] = 'a';
	s[2][0] = 'b';
	memset(s[1], 'v', TE_VALUE_SLOT_SIZE);
	ok(s[0][TE_VALUE_SLOT_SIZE - 1] == 'a' && s[2][0] == 'b',
	   "a slot holds TE_VALUE_SLOT_SIZE bytes without touching the others");
}

static void test_lists(void)
{
	char item[4];
	const char *p = "n1,n22,n333,,n5";

	ok(te_list_has("n1,n22,n3", "n22"), "a comma list has its item");
	ok(!te_list_has("n1,n22,n3", "n2"), "  not a prefix of one");
	ok(!te_list_has("", "n1") && !te_list_has(NULL, "n1"), "  empty, NULL");
	p = te_list_next(p, item, sizeof(item));
	is_str(item, "n1", "te_list_next: the first item");
	p = te_list_next(p, item, sizeof(item));
	is_str(item, "n22", "  the second");
	p = te_list_next(p, item, sizeof(item));
	is_str(item, "", "  one too long for the buffer: \"\"");
	p = te_list_next(p, item, sizeof(item));
	is_str(item, "", "  an empty item");
	p = te_list_next(p, item, sizeof(item));
	is_str(item, "n5", "  the last");
	ok(te_list_next(p, item, sizeof(item)) == NULL, "  then the end");
}

/* The entries te_nul_entries gives, joined as "a|b|" into got. */
static char got[128];
static void got_entry(void *ctx, const char *entry, size_t len)
{
	(void)ctx;
	(void)te_appendf(got, sizeof(got), "%.*s|", (int)len, entry);
}

static void test_nul_entries(void)
{
	static const char block[] = "A=1\0LONGER=xy\0\0B=22\0C=3";
	struct te_nul_entries st;
	char cur[8];
	size_t piece, i, bad = 0;

	/* in every piece size: the same entries, the long one skipped */
	for (piece = 1; piece <= sizeof(block); piece++) {
		memset(&st, 0, sizeof(st));
		got[0] = '\0';
		for (i = 0; i < sizeof(block) - 1; i += piece)
			te_nul_entries_feed(&st, cur, sizeof(cur), block + i,
					    sizeof(block) - 1 - i < piece
						    ? sizeof(block) - 1 - i
						    : piece,
					    got_entry, NULL);
		te_nul_entries_end(&st, cur, got_entry, NULL);
		if (strcmp(got, "A=1||B=22|C=3|") || st.len || st.too_long)
			bad++;
	}
	ok(bad == 0,
	   "te_nul_entries: entries in every piece size, one over "
	   "the bound skipped, the last without its NUL (%s)",
	   got);
	memset(&st, 0, sizeof(st));
	got[0] = '\0';
	te_nul_entries_feed(&st, cur, sizeof(cur),
			    "12345678\0"
			    "123456789",
			    18, got_entry, NULL);
	te_nul_entries_end(&st, cur, got_entry, NULL);
	is_str(got, "12345678|",
	       "  an entry of exactly the bound is given, one over it not "
	       "(not at the end either)");
}

int main(void)
{
	test_lists();
	test_nul_entries();
	test_err();
	test_clean();
	test_token();
	test_clock();
	test_random();
	test_read_small();
	test_value_slot();
	test_replace_file();
	test_open_in_root();
	return tap_done();
}
