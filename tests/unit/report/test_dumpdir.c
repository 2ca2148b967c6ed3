/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The job's directory DIR/UID/JOBID (--train-nccl-dump-dir, record-dir):
 * the rule for DIR's path and the verdict on the levels trainenv makes,
 * on stat structs and on real directories this test makes (modes, owners
 * chowned to nobody when run as root, links, sticky bits). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report/dumpdir.h"
#include "tap.h"

static struct stat entry(mode_t mode, uid_t uid)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = mode;
	st.st_uid = uid;
	return st;
}

static void test_levels(void)
{
	struct stat tmp =
		entry(S_IFDIR | 01777, 0); /* a shared /tmp-like DIR */
	struct stat own = entry(S_IFDIR | 0755, 1000); /* the user's own DIR */
	struct stat d;
	char why[256];

	d = entry(S_IFDIR | 0700, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), 0,
	       "the user's own 0700 directory in a sticky shared DIR is used");
	is_int(te_dump_dir_verdict(&own, &d, 1000, why, sizeof(why)), 0,
	       "... and in the user's own DIR");
	d = entry(S_IFDIR | 0755, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), 0,
	       "a 0755 directory of the user's own is used (readable is the "
	       "user's choice)");
	d = entry(S_IFDIR | 0700, 0);
	is_int(te_dump_dir_verdict(&tmp, &d, 0, why, sizeof(why)), 0,
	       "root's job: root's own directory is used");

	d = entry(S_IFDIR | 0700, 65534);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "a directory another user made first is refused");
	is_str(why,
	       "belongs to uid 65534, not to the job's user (uid 1000): "
	       "someone else made it",
	       "... saying whose it is");
	d = entry(S_IFDIR | 0700, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 0, why, sizeof(why)), -1,
	       "root's job does not take a user's directory either");
	d = entry(S_IFDIR | 0777, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "the user's own but world-writable: refused");
	is_str(why, "is writable by group or others (mode 0777)",
	       "... naming the mode");
	d = entry(S_IFDIR | 0770, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "group-writable: refused");
	d = entry(S_IFLNK | 0777, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "a symbolic link (even the user's own) is refused");
	is_str(why, "is a symbolic link", "... saying so");
	d = entry(S_IFREG | 0600, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "a regular file is refused");
	is_str(why, "is not a directory", "... saying so");
	d = entry(S_IFIFO | 0600, 1000);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "a FIFO is refused");

	d = entry(S_IFDIR | 0700, 1000);
	tmp = entry(S_IFDIR | 0777, 0);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "in a world-writable DIR without the sticky bit: refused "
	       "(others could rename it away and put theirs there)");
	like(why, "without the sticky bit (mode 0777)", "... saying why");
	tmp = entry(S_IFDIR | 02775, 0);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), -1,
	       "in a group-writable DIR without the sticky bit: refused");
	tmp = entry(S_IFDIR | 03775, 0);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, sizeof(why)), 0,
	       "in a group-writable sticky DIR: used");

	d = entry(S_IFDIR | 0700, 65534);
	is_int(te_dump_dir_verdict(&tmp, &d, 1000, why, 8), -1,
	       "a short message buffer: still refused");
	is_int((long long)strlen(why), 7,
	       "... and the reason is cut, terminated");
}

/* ---------------------------------------------------------------- DIR's path */

static struct stat dir_st(mode_t mode, uid_t uid)
{
	return entry(S_IFDIR | mode, uid);
}

static void test_path_rule(void)
{
	struct stat st;
	char why[256];

	st = dir_st(0755, 0);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), 0,
	       "path rule: root's 0755 directory passes");
	st = dir_st(0700, 1000);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), 0,
	       "path rule: the job user's own directory passes");
	st = dir_st(01777, 0);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), 0,
	       "path rule: root's sticky 1777 (/tmp) passes");
	st = dir_st(01770, 0);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), 0,
	       "path rule: root's sticky group-writable 1770 passes");
	st = dir_st(01777, 65534);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), -1,
	       "path rule: another user's 1777 directory is refused (its "
	       "owner may rename what others put there)");
	is_str(why,
	       "belongs to uid 65534, neither root nor the job's user "
	       "(uid 1000): its owner could swap what is in it",
	       "... saying whose it is");
	st = dir_st(0755, 65534);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), -1,
	       "path rule: another user's 0755 directory is refused");
	st = dir_st(0777, 0);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), -1,
	       "path rule: root's 0777 without the sticky bit is refused");
	is_str(why,
	       "is writable by others (mode 0777) without the sticky "
	       "bit: others could swap what is in it",
	       "... saying so");
	st = dir_st(02775, 0);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), -1,
	       "path rule: root's group-writable 2775 is refused");
	like(why, "writable by its group (mode 2775)", "... naming the group");
	st = dir_st(01777, 1000);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), -1,
	       "path rule: the user's own 1777 is refused (sticky, not root's)");
	like(why, "sticky but not root's", "... saying so");
	st = dir_st(0700, 0);
	is_int(te_dump_path_verdict(&st, 0, why, sizeof(why)), 0,
	       "path rule: root's job in root's directory passes");
	st = entry(S_IFREG | 0644, 0);
	is_int(te_dump_path_verdict(&st, 1000, why, sizeof(why)), -1,
	       "path rule: a file is refused");
	is_str(why, "is not a directory", "... saying so");
}

/* ---------------------------------------------------------------- real */

static char base[64];
static uid_t me, nb_uid = 65534;
static gid_t nb_gid = 65534;

/* base/rel; three buffers in turn. */
static const char *P(const char *rel)
{
	static char b[3][512];
	static int k;

	k = (k + 1) % 3;
	snprintf(b[k], sizeof(b[k]), "%s/%s", base, rel);
	return b[k];
}

/* base/rel, a directory of mode mode (umask aside) owned by owner. */
static int mkd(const char *rel, mode_t mode, uid_t owner)
{
	if (mkdir(P(rel), 0700) < 0 || chmod(P(rel), mode) < 0)
		return -1;
	if (owner != me &&
	    chown(P(rel), owner, owner == nb_uid ? nb_gid : (gid_t)-1) < 0)
		return -1;
	return 0;
}

/* te_dump_dir_open(base/rel, "42", uid): 0 (descriptor closed), -1 or -2. */
static int try_open(const char *rel, uid_t uid, char *path, char *why)
{
	int fd = te_dump_dir_open(P(rel), "42", uid, path, 512, why, 512);

	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : fd;
}

/* te_dump_dir_find(base/rel, "42", uid): 0 (descriptor closed), -1 or -2. */
static int try_find(const char *rel, uid_t uid, char *path, char *why)
{
	int fd = te_dump_dir_find(P(rel), "42", uid, path, 512, why, 512);

	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : fd;
}

/* try_open, by a child that runs as nobody. */
static int try_open_as_nobody(const char *rel, char *path, char *why)
{
	int fds[2], st, rc = -9;
	pid_t pid;

	path[0] = why[0] = '\0';
	if (pipe(fds) < 0)
		return -9;
	pid = fork();
	if (pid == 0) {
		char buf[1040];

		close(fds[0]);
		if (setgid(nb_gid) < 0 || setuid(nb_uid) < 0)
			_exit(9);
		rc = try_open(rel, nb_uid, buf, buf + 520);
		if (write(fds[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			_exit(9);
		_exit(rc < 0 ? -rc : 0);
	}
	close(fds[1]);
	if (pid > 0) {
		char buf[1040];

		if (read(fds[0], buf, sizeof(buf)) == (ssize_t)sizeof(buf)) {
			memcpy(path, buf, 512);
			memcpy(why, buf + 520, 512);
		}
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		    WEXITSTATUS(st) <= 2)
			rc = -WEXITSTATUS(st);
	}
	close(fds[0]);
	return rc;
}

static int is_dir_of(const char *path, uid_t uid, mode_t mode)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	       st.st_uid == uid && (st.st_mode & 07777) == mode;
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void test_real_any(void)
{
	char path[512], why[512], want[600];

	/* the job user's own directory */
	mkd("own", 0755, me);
	is_int(try_open("own", me, path, why), 0,
	       "real: the user's own DIR: DIR/UID/JOBID is made and opened");
	snprintf(want, sizeof(want), "%s/%u/42", P("own"), (unsigned)me);
	is_str(path, want, "... its path is DIR/UID/JOBID");
	snprintf(want, sizeof(want), "%s/%u", P("own"), (unsigned)me);
	ok(is_dir_of(path, me, 0700) && is_dir_of(want, me, 0700),
	   "... both levels the user's own, mode 700");
	is_int(try_open("own", me, path, why), 0,
	       "... and again: an existing DIR/UID/JOBID of the user's is used");

	/* a world-writable DIR without the sticky bit */
	mkd("open", 0777, me);
	is_int(try_open("open", me, path, why), -1,
	       "real: DIR 0777 without the sticky bit is refused");
	snprintf(want, sizeof(want),
		 "%s is writable by others (mode 0777) "
		 "without the sticky bit",
		 P("open"));
	like(why, want, "... naming DIR and why");
	snprintf(want, sizeof(want), "open/%u", (unsigned)me);
	ok(!exists(P(want)), "... nothing is made in it");

	/* a bad directory above DIR */
	mkd("anc", 0777, me);
	mkd("anc/sub", 0755, me);
	is_int(try_open("anc/sub", me, path, why), -1,
	       "real: a directory above DIR writable by others: refused");
	snprintf(want, sizeof(want),
		 "%s (in the path of %s) is writable by "
		 "others (mode 0777)",
		 P("anc"), P("anc/sub"));
	like(why, want, "... naming that component, in the path of DIR");
	snprintf(want, sizeof(want), "anc/sub/%u", (unsigned)me);
	ok(!exists(P(want)), "... nothing is made in DIR");

	/* links */
	if (symlink(P("own"), P("link")) == 0) {
		is_int(try_open("link", me, path, why), 0,
		       "real: DIR a link to a good directory is followed once");
		snprintf(want, sizeof(want), "%s/%u/42", P("own"),
			 (unsigned)me);
		is_str(path, want,
		       "... and its path is the resolved one (what "
		       "was checked), not the link's");
	}
	if (symlink(P("open"), P("badlink")) == 0) {
		is_int(try_open("badlink", me, path, why), -1,
		       "real: DIR a link to a 0777 directory: refused");
		like(why, P("open"), "... naming the directory it resolves to");
	}
	mkd("ljob", 0755, me);
	snprintf(want, sizeof(want), "ljob/%u", (unsigned)me);
	mkd(want, 0700, me);
	mkd("ljob-target", 0700, me);
	snprintf(want, sizeof(want), "%s/%u/42", P("ljob"), (unsigned)me);
	if (symlink(P("ljob-target"), want) == 0) {
		is_int(try_open("ljob", me, path, why), -1,
		       "real: DIR/UID/JOBID a link (even to the user's own "
		       "directory): refused");
		like(why, "/42 is a symbolic link", "... saying so");
	}
	mkd("luid", 0755, me);
	snprintf(want, sizeof(want), "%s/%u", P("luid"), (unsigned)me);
	if (symlink(P("ljob-target"), want) == 0) {
		is_int(try_open("luid", me, path, why), -1,
		       "real: DIR/UID a link: refused");
		like(why, "is a symbolic link", "... saying so");
	}

	/* the user's own DIR/UID, writable by others */
	mkd("wuid", 0755, me);
	snprintf(want, sizeof(want), "wuid/%u", (unsigned)me);
	mkd(want, 0777, me);
	is_int(try_open("wuid", me, path, why), -1,
	       "real: DIR/UID writable by others: refused");
	like(why, "is writable by group or others (mode 0777)",
	     "... saying so");

	is_int(try_open("nonexistent", me, path, why), -1,
	       "real: a DIR that does not exist: refused");
	like(why, "cannot open", "... saying it cannot be opened");
	close(open(P("file"), O_CREAT | O_WRONLY, 0600));
	is_int(try_open("file", me, path, why), -1,
	       "real: DIR a file: refused");
	is_int(te_dump_dir_open(P("own"), "..", me, path, sizeof(path), why,
				sizeof(why)),
	       -1, "real: a job name that is not one plain component: refused");
}

/* Another user's directories: needs root (chown) and a nobody. */
static void test_real_others(void)
{
	char path[512], why[512], want[600];

	/* the attack: DIR owned by another user, mode 1777 */
	mkd("nb1777", 01777, nb_uid);
	is_int(try_open("nb1777", me, path, why), -1,
	       "real: DIR of another user, mode 1777: refused");
	snprintf(want, sizeof(want),
		 "%s belongs to uid %u, neither root nor "
		 "the job's user (uid %u)",
		 P("nb1777"), (unsigned)nb_uid, (unsigned)me);
	like(why, want, "... naming DIR and whose it is");
	snprintf(want, sizeof(want), "nb1777/%u", (unsigned)me);
	ok(!exists(P(want)), "... and nothing of the job is made there");

	mkd("nbanc", 0755, nb_uid);
	mkd("nbanc/sub", 0755, me);
	is_int(try_open("nbanc/sub", me, path, why), -1,
	       "real: a directory above DIR owned by another user: refused");
	like(why, "(in the path of", "... naming that component");

	/* a shared DIR (root's, sticky): others pre-create what they can */
	mkd("shared", 01777, me);
	mkd("shared/42", 0777, nb_uid); /* DIR/JOBID */
	ok(symlink(P("nb1777"), P("shared/43")) == 0 &&
		   lchown(P("shared/43"), nb_uid, nb_gid) == 0,
	   "real: the attack is set: another user's DIR/42 and DIR/43 (a "
	   "link to their directory) in root's sticky DIR");
	is_int(try_open("shared", me, path, why), 0,
	       "real: root's sticky DIR where another user made DIR/JOBID "
	       "first: the job's directory is DIR/UID/JOBID, still made");
	snprintf(want, sizeof(want), "%s/%u/42", P("shared"), (unsigned)me);
	is_str(path, want, "... not the other user's DIR/JOBID");
	ok(!exists(P("shared/42/x")) && is_dir_of(P("shared/42"), nb_uid, 0777),
	   "... whose DIR/JOBID is left as it was");
	ok(is_dir_of(path, me, 0700), "... the user's own, mode 700");
	is_int(try_open_as_nobody("shared", path, why), 0,
	       "real: another user's job in the same DIR gets its own "
	       "DIR/UID/JOBID");
	snprintf(want, sizeof(want), "%s/%u/42", P("shared"), (unsigned)nb_uid);
	is_str(path, want, "... DIR/%u/42", (unsigned)nb_uid);
	ok(is_dir_of(want, nb_uid, 0700), "... nobody's own, mode 700");

	/* DIR/UID made first by another user (the squat): the job
	 * still gets its directory, DIR/UID.<hex>, and the squatter is named;
	 * names of that form the squatter made are not taken */
	mkd("pre", 01777, me);
	snprintf(want, sizeof(want), "pre/%u", (unsigned)me);
	mkd(want, 0700, nb_uid); /* DIR/UID */
	snprintf(want, sizeof(want), "pre/%u.000000000000", (unsigned)me);
	mkd(want, 0777, nb_uid); /* the first name of the fallback's form */
	snprintf(want, sizeof(want), "%s/%u.000000000001", P("pre"),
		 (unsigned)me);
	ok(symlink(P("nb1777"), want) == 0 && lchown(want, nb_uid, nb_gid) == 0,
	   "real: the squat is set: another user's DIR/UID, DIR/UID.0...0 "
	   "and DIR/UID.0...1 (a link to their directory)");
	is_int(try_open("pre", me, path, why), 0,
	       "real: DIR/UID made first by another user: the job's "
	       "directory is still made");
	snprintf(want, sizeof(want), "%s/%u.", P("pre"), (unsigned)me);
	ok(!strncmp(path, want, strlen(want)) &&
		   strlen(path) == strlen(want) + 12 + 3 &&
		   !strcmp(path + strlen(path) - 3, "/42") &&
		   strncmp(path + strlen(want), "00000000000", 11),
	   "... as DIR/UID.<12 hex digits>/JOBID, none of the other user's: "
	   "%s",
	   path);
	ok(is_dir_of(path, me, 0700), "... the user's own, mode 700");
	snprintf(want, sizeof(want),
		 "%s/%u belongs to uid %u, not to the job's user (uid %u): "
		 "someone else made it; using %s/%u.",
		 P("pre"), (unsigned)me, (unsigned)nb_uid, (unsigned)me,
		 P("pre"), (unsigned)me);
	like(why, want,
	     "... and the line names the squatter and the path used");
	snprintf(want, sizeof(want), "pre/%u/42", (unsigned)me);
	ok(!exists(P(want)), "... nothing is made in the squatter's DIR/UID");
	snprintf(want, sizeof(want), "%s", path);
	is_int(try_open("pre", me, path, why), 0,
	       "real: the next process of the job (another node's task, srun "
	       "at its end) ...");
	is_str(path, want, "... finds the same directory");
	is_int(try_find("pre", me, path, why), 0,
	       "real: the reader (trainenv record) finds it too");
	is_str(path, want, "... the same DIR/UID.<hex>/JOBID");
	like(why, "someone else made it; using ",
	     "... with the same line naming the squatter");

	/* the reader makes nothing */
	mkd("rd", 01777, me);
	is_int(try_find("rd", me, path, why), -2,
	       "real: the reader, DIR/UID missing: -2");
	like(why, "No such file or directory", "... saying it is missing");
	snprintf(want, sizeof(want), "rd/%u", (unsigned)me);
	ok(!exists(P(want)), "... and makes nothing");
	mkd("rd2", 01777, me);
	snprintf(want, sizeof(want), "rd2/%u", (unsigned)me);
	mkd(want, 0700, nb_uid);
	is_int(try_find("rd2", me, path, why), -2,
	       "real: the reader, DIR/UID another user's and no DIR/UID.<hex> "
	       "of the user's: -2");
	like(why, ".<hex> is the user's own", "... saying so");
	snprintf(want, sizeof(want), "rd2/%u/42", (unsigned)me);
	ok(!exists(P(want)), "... and never reads the squatter's");
	is_int(try_find("nb1777", me, path, why), -1,
	       "real: the reader, DIR of another user, mode 1777: refused");

	mkd("prel", 01777, me);
	snprintf(want, sizeof(want), "%s/%u", P("prel"), (unsigned)me);
	if (symlink(P("nb1777"), want) == 0 &&
	    lchown(want, nb_uid, nb_gid) == 0) {
		is_int(try_open("prel", me, path, why), 0,
		       "real: DIR/UID another user's link to their directory: "
		       "the job's directory is still made, elsewhere");
		snprintf(want, sizeof(want),
			 "%s/%u belongs to uid %u, not to the job's user (uid "
			 "%u): someone else made it (a symbolic link); using ",
			 P("prel"), (unsigned)me, (unsigned)nb_uid,
			 (unsigned)me);
		like(why, want, "... saying whose link it is");
	}
	snprintf(want, sizeof(want), "nb1777/%u", (unsigned)me);
	ok(!exists(P(want)), "... nothing reached the other user's directory");

	/* as the job's user, not root */
	mkd("rootonly", 0700, me);
	is_int(try_open_as_nobody("rootonly", path, why), -2,
	       "real: nobody's job, DIR root's 0700: cannot create DIR/UID");
	like(why, "Permission denied", "... saying why");
	mkd("nbown", 0700, nb_uid);
	is_int(try_open_as_nobody("nbown", path, why), 0,
	       "real: nobody's job in nobody's own 0700 DIR: used");
}

static void test_real(void)
{
	struct passwd *pw = getpwnam("nobody");
	char why[256];

	me = geteuid();
	if (pw) {
		nb_uid = pw->pw_uid;
		nb_gid = pw->pw_gid;
	}
	snprintf(base, sizeof(base), "/tmp/te-dumpdir.XXXXXX");
	if (!mkdtemp(base) || chmod(base, 0755) < 0) {
		tap_skip("cannot make a directory under /tmp");
		return;
	}
	/* the checks below need /tmp and / to pass the rule themselves */
	if (te_dump_dir_open(base, "probe", me, NULL, 0, why, sizeof(why)) <
	    0) {
		printf("# %s\n", why);
		tap_skip("this machine's /tmp does not pass the rule");
	} else {
		test_real_any();
		if (me == 0 && pw && nb_uid != 0)
			test_real_others();
		else
			tap_skip("not root or no user nobody: the other user's "
				 "directories (chown) are not tried");
	}
	snprintf(why, sizeof(why), "rm -rf '%s'", base);
	if (system(why) != 0)
		printf("# could not remove %s\n", base);
}

int main(void)
{
	test_levels();
	test_path_rule();
	test_real();
	return tap_done();
}
