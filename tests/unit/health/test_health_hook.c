/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the site hook (core/health/health_hook.c,
 * health_hook_run.c): which paths may name one, its first line from
 * hostile output, its verdict from its exit status, its keys in the
 * policy (site only; the action bits of a fourth check), and real hooks
 * run through the runner: passing, failing with a reason, killed by a
 * signal, junk, one that hangs (killed with what it started at the
 * bound), one that leaves a process holding its pipe, its environment
 * and descriptors, and files that are not root's alone (refused). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "health/health.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "tap.h"

static char err[512];

static void test_path(void)
{
	char big[300];

	ok(te_health_hook_path_ok("/etc/trainenv/check.sh"), "a plain path");
	ok(te_health_hook_path_ok("/a/..b/c"), "'..b' is a name, not '..'");
	ok(!te_health_hook_path_ok("relative/check.sh"), "relative: refused");
	ok(!te_health_hook_path_ok(""), "empty: refused");
	ok(!te_health_hook_path_ok("/etc/../tmp/x"), "a '..' inside: refused");
	ok(!te_health_hook_path_ok("/etc/x/.."), "a '..' at the end: refused");
	ok(!te_health_hook_path_ok("/etc/my check"), "a blank: refused");
	ok(!te_health_hook_path_ok("/etc/x\001"), "a control byte: refused");
	ok(!te_health_hook_path_ok("/etc/\xc3\xa9"), "non-ASCII: refused");
	memset(big, 'a', sizeof(big));
	big[0] = '/';
	big[255] = '\0';
	ok(te_health_hook_path_ok(big), "255 bytes: taken");
	big[255] = 'a';
	big[256] = '\0';
	ok(!te_health_hook_path_ok(big), "256 bytes: refused");
}

static size_t first(const char *out, size_t len, char *line, size_t size)
{
	return te_health_hook_first_line(out, len, line, size);
}

static void test_first_line(void)
{
	char line[TE_HEALTH_TEXT_MAX], small[8];
	static char huge[1 << 20];
	size_t n;

	n = first("disk full\nmore\n", 15, line, sizeof(line));
	is_str(line, "disk full", "the first line");
	is_int(n, 9, "... its length");
	first("\n \t\r\n  disk full \r\nmore", 23, line, sizeof(line));
	is_str(line, "disk full", "blank lines and blanks skipped, CR dropped");
	first("no newline", 10, line, sizeof(line));
	is_str(line, "no newline", "a last line without '\\n'");
	n = first("", 0, line, sizeof(line));
	ok(n == 0 && line[0] == '\0', "no output: an empty line");
	n = first("\n\n \n", 4, line, sizeof(line));
	ok(n == 0 && line[0] == '\0', "only blank lines: an empty line");
	first("a\0b\033[31mred\x7f\xff\n", 13, line, sizeof(line));
	is_str(line, "a?b?[31mred??", "NUL, escapes, DEL, high bytes: '?'");
	first("abcdefghijk\n", 12, small, sizeof(small));
	is_str(small, "abcdefg", "cut to the buffer, terminated");
	first("x\ny", 1, line, sizeof(line));
	is_str(line, "x", "never past len");
	memset(huge, '\001', sizeof(huge));
	n = first(huge, sizeof(huge), line, sizeof(line));
	ok(n == sizeof(line) - 1 && te_is_printable(line, sizeof(line)),
	   "1 MiB of control bytes: one printable line, cut");
	is_int(first("x", 1, line, 0), 0, "a buffer of 0 bytes: nothing");
}

/* waitpid's status for an exit code, a signal */
#define EXITED(code) ((code) << 8)
#define SIGNALED(sig) (sig)

static const struct te_health_result *result(const char *path, int exec_err,
					     int status, const char *output)
{
	static struct te_health_set s;

	te_health_set_init(&s, "n1");
	te_health_hook_result(path, exec_err, status, output,
			      output ? strlen(output) : 0, &s);
	if (s.n != 1) /* no result, or more: none of the checks below holds */
		memset(&s.r[0], 0, sizeof(s.r[0]));
	return &s.r[0];
}

static void test_result(void)
{
	const struct te_health_result *r;

	r = result("/etc/h.sh", 0, EXITED(0), "");
	ok(r->verdict == TE_HV_PASS, "exit 0: pass");
	is_str(r->text, "hook: /etc/h.sh passed", "... saying so");
	is_str(r->check, "hook", "... check hook");
	is_str(r->device, "/etc/h.sh", "... the path as its device");
	is_str(r->value, "exit 0", "... the status as its value");
	r = result("/etc/h.sh", 0, EXITED(0), "all good\n");
	is_str(r->text, "hook: /etc/h.sh: all good", "... or its first line");
	r = result("/etc/h.sh", 0, EXITED(3), "disk /scratch 98% full\nx\n");
	ok(r->verdict == TE_HV_FAIL, "exit 3: fail");
	is_str(r->text, "hook: /etc/h.sh: disk /scratch 98% full",
	       "... its first line the reason");
	is_str(r->value, "exit 3", "... the status as its value");
	r = result("/etc/h.sh", 0, EXITED(1), "\n");
	is_str(r->text, "hook: /etc/h.sh exited with status 1",
	       "a failure without output: its status");
	r = result("/etc/h.sh", 0, SIGNALED(SIGKILL), "half a li");
	ok(r->verdict == TE_HV_ERROR, "killed by a signal: error");
	is_str(r->text, "hook: /etc/h.sh was killed by signal 9",
	       "... naming the signal");
	is_str(r->value, "signal 9", "... as its value");
	r = result("/etc/h.sh", ENOEXEC, 0, NULL);
	ok(r->verdict == TE_HV_ERROR, "an exec that failed: error");
	like(r->text, "hook: /etc/h.sh cannot be run: Exec format error",
	     "... with the reason");
	r = result("/etc/h.sh", 0, EXITED(2), "\001\002\033]0;pwned\007\n");
	ok(te_is_printable(r->text, TE_HEALTH_TEXT_MAX - 1) &&
		   strstr(r->text, "??"),
	   "junk in the reason: printable");
	{
		char line[600];

		memset(line, 'x', sizeof(line));
		line[sizeof(line) - 1] = '\0';
		r = result("/etc/h.sh", 0, EXITED(1), line);
		is_int(strlen(r->text), TE_HEALTH_TEXT_MAX - 1,
		       "a long reason: cut to the text's size");
	}
}

static int parse(struct te_health_policy *p, const char *text)
{
	err[0] = '\0';
	te_health_policy_init(p);
	return te_health_policy_parse(p, text, strlen(text), "policy", err,
				      sizeof(err));
}

#define HOOK_BIT (1u << TE_HC_HOOK)

static void test_policy_keys(void)
{
	struct te_health_policy p;

	is_str(te_health_check_name(TE_HC_HOOK), "hook", "the check's name");
	is_int(parse(&p, "health_hook=/etc/trainenv/check.sh"), 0,
	       "health_hook parses");
	is_str(p.hook, "/etc/trainenv/check.sh", "... the path kept");
	is_int(p.checks, HOOK_BIT, "... and the hook is a check");
	is_int(parse(&p, "health_hook=/etc/h.sh health=ib"), 0,
	       "health= after health_hook");
	is_int(p.checks, HOOK_BIT | 1u << TE_HC_IB, "... keeps the hook");
	is_int(parse(&p, "health=ib health_hook=/etc/h.sh"), 0,
	       "health= before health_hook");
	is_int(p.checks, HOOK_BIT | 1u << TE_HC_IB, "... the hook added");
	is_int(parse(&p, "health_hook=/etc/h.sh health=none"), 0,
	       "health=none with a hook");
	is_int(p.checks, HOOK_BIT, "... runs the hook alone");
	is_int(parse(&p, "health=ib,hook health_hook=none"), 0,
	       "health_hook=none");
	ok(!(p.checks & HOOK_BIT) && !p.hook[0], "... takes the hook out");
	is_int(parse(&p, "health=hook"), 0, "health=hook alone parses");
	is_int(p.checks, HOOK_BIT, "... the hook listed");
	is_int(parse(&p, "health_hook=check.sh"), -1, "a relative path");
	is_str(err,
	       "policy: health_hook: invalid value 'check.sh'; accepted: an "
	       "absolute path to the site's hook (at most 255 printable "
	       "bytes, no blank, no '..') or none",
	       "... refused, saying what is accepted");
	is_int(parse(&p, "health_hook=/etc/../tmp/x"), -1, "'..': refused");
	is_int(parse(&p, "health=ib,hooks"), -1, "a check 'hooks': refused");
	like(err, "accepted: a comma-separated list of ib, eth, gpu, hook",
	     "... the list names hook");
	is_int(parse(&p, "health_hook_action=drain"), 0,
	       "health_hook_action parses");
	is_int(p.action[TE_HC_HOOK], TE_HA_DRAIN, "... drain");
	/* a fourth check's action bit was TE_HK_TIMEOUT's (1 << 6) */
	ok(!(p.given & TE_HK_TIMEOUT), "... its bit is not health_timeout's");
	ok(p.given & ((unsigned)TE_HK_ACTION_IB << TE_HC_HOOK),
	   "... but its own");
	is_int(parse(&p, "health_hook_action=reboot"), -1,
	       "an unknown action: refused");
	is_int(parse(&p, "health_frob=1"), -1, "an unknown key");
	like(err, "health_hook, health_hook_action", "... lists the hook keys");
}

static void test_policy_merge(void)
{
	struct te_health_policy site, user, out;
	struct te_health_result r;

	parse(&site, "health=ib health_hook=/etc/h.sh health_hook_action=drain "
		     "health_timeout=7");
	parse(&user, "health_hook=/home/u/mine.sh");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user's health_hook: refused");
	is_str(err, "health_hook: only the site's policy sets it",
	       "... saying it is the site's");
	parse(&user, "health_hook=none");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user's health_hook=none: refused too");
	parse(&user, "health=ib,gpu");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user leaving the hook out: refused");
	like(err, "the site runs ib,hook", "... naming the site's checks");
	parse(&user, "health=ib,gpu,hook");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), 0,
	       "a user adding gpu, keeping the hook: merged");
	is_str(out.hook, "/etc/h.sh", "... the site's hook runs");
	is_int(out.timeout_s, 7, "... within the site's bound");
	parse(&user, "health_hook_action=warn");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user lowering the hook's action: refused");

	memset(&r, 0, sizeof(r));
	te_strlcpy(r.check, "hook", sizeof(r.check));
	r.verdict = TE_HV_FAIL;
	parse(&user, "health_gpu_action=exclude");
	te_health_policy_merge(&site, &user, &out, err, sizeof(err));
	is_int(te_health_action_for(&r, &site, &out), TE_HA_DRAIN,
	       "a failed hook: the site's drain");
	r.verdict = TE_HV_ERROR;
	is_int(te_health_action_for(&r, &site, &out), TE_HA_EXCLUDE,
	       "a hook that could not decide: never drains");
	r.verdict = TE_HV_PASS;
	is_int(te_health_action_for(&r, &site, &out), TE_HA_WARN,
	       "a hook that passed: nothing to do");
	r.verdict = TE_HV_FAIL;
	parse(&site, "health=ib health_hook=/etc/h.sh");
	parse(&user, "health_hook_action=exclude");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), 0,
	       "a user raising the hook's warn to exclude: merged");
	is_int(te_health_action_for(&r, &site, &out), TE_HA_EXCLUDE,
	       "... the failed hook excludes");
	parse(&user, "health_hook_action=drain");
	is_int(te_health_policy_merge(&site, &user, &out, err, sizeof(err)), -1,
	       "a user's health_hook_action=drain: refused");
	parse(&site, "health=ib health_hook_action=drain");
	parse(&user, "health=ib,hook");
	te_health_policy_merge(&site, &user, &out, err, sizeof(err));
	is_int(te_health_action_for(&r, &site, &out), TE_HA_EXCLUDE,
	       "a hook only the user listed: never drains");
}

/* ------------------------------------------------------ real hooks */

static char dir[64];

static void run_hook_check(const void *arg, struct te_health_set *out)
{
	te_health_check_hook(arg, out);
}

/* Runs the hook PATH through the runner (bound ms) into s; the time it
 * took. */
static long long run(const char *path, int bound, struct te_health_set *s)
{
	struct te_health_check c = { "hook", run_hook_check, path, NULL };
	int64_t t0 = te_now_ms();

	te_health_set_init(s, "n1");
	if (te_health_run(&c, 1, bound, s, err, sizeof(err)) < 0)
		te_health_add(s, "hook", "", "", TE_HV_ERROR, "%s", err);
	return (long long)(te_now_ms() - t0);
}

/* DIR/NAME holding a script, with mode; its path. */
static const char *script(const char *name, const char *body, mode_t mode)
{
	static char path[4][128];
	static int k;
	char *p = path[k++ % 4];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (!f)
		return p;
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(p, mode);
	return p;
}

/* Whether process pid has gone (or is a zombie), waiting at most 3 s. */
static int gone(long pid)
{
	char path[64], stat[256];
	int i;

	for (i = 0; i < 60; i++) {
		FILE *f;
		char *rp;

		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		f = fopen(path, "r");
		if (!f)
			return 1;
		stat[0] = '\0';
		if (!fgets(stat, sizeof(stat), f))
			stat[0] = '\0';
		fclose(f);
		rp = strrchr(stat, ')');
		if (rp && rp[1] == ' ' && rp[2] == 'Z')
			return 1;
		usleep(50000);
	}
	return 0;
}

static long read_pid(const char *name)
{
	char path[128], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return atol(buf) > 1 ? atol(buf) : -1;
}

static void test_system_files(void)
{
	static struct te_health_set s;

	run("/bin/true", 5000, &s);
	ok(s.n == 1 && s.r[0].verdict == TE_HV_PASS, "/bin/true: pass");
	is_str(s.r[0].text, "hook: /bin/true passed", "... saying so");
	run("/bin/false", 5000, &s);
	ok(s.n == 1 && s.r[0].verdict == TE_HV_FAIL, "/bin/false: fail");
	is_str(s.r[0].text, "hook: /bin/false exited with status 1",
	       "... with its status");
	run("/nonexistent/te-hook", 5000, &s);
	ok(s.n == 1 && s.r[0].verdict == TE_HV_ERROR, "no such file: error");
	is_str(s.r[0].text,
	       "hook: /nonexistent/te-hook cannot be found (No such file or "
	       "directory): not run",
	       "... one line saying so");
	run("/etc/passwd", 5000, &s);
	like(s.r[0].text, "is not an executable regular file: not run",
	     "a file that is not executable: not run");
	run("/usr/bin", 5000, &s);
	like(s.r[0].text, "hook: /usr/bin is not an executable regular file",
	     "a directory: not run");
	run("", 5000, &s);
	ok(s.n == 1 && s.r[0].verdict == TE_HV_NA, "no hook: n/a");
}

static void test_scripts(void)
{
	static struct te_health_set s;
	const char *p;
	long long ms;
	long pid, bg;
	int fd;

	p = script("fail.sh",
		   "printf '\\n  disk /scratch 98%% full\\r\\nsecond line\\n'\n"
		   "exit 3",
		   0755);
	run(p, 5000, &s);
	ok(s.n == 1 && s.r[0].verdict == TE_HV_FAIL, "a failing hook: fail");
	like(s.r[0].text, "fail.sh: disk /scratch 98% full",
	     "... its first line the reason");
	is_str(s.r[0].value, "exit 3", "... its status the value");

	/* a descriptor of the caller's, not close-on-exec */
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0 && fd != 9) {
		dup2(fd, 9);
		close(fd);
	}
	p = script("env.sh",
		   "n=$(env | grep -cv '^PWD=\\|^SHLVL=\\|^_=\\|^OLDPWD=')\n"
		   "fd9=no; [ -e /proc/$$/fd/9 ] && fd9=yes\n"
		   "echo \"path=$PATH vars=$n in=$(cat) fd9=$fd9 args=$#\"",
		   0700);
	run(p, 5000, &s);
	like(s.r[0].text,
	     "path=/usr/sbin:/usr/bin:/sbin:/bin vars=1 in= fd9=no args=0",
	     "the hook gets a fixed PATH alone, stdin empty, no descriptor "
	     "of the caller's, no argument");
	close(9);

	p = script("stderr.sh", "echo 'on stderr' >&2; exit 1", 0755);
	run(p, 5000, &s);
	like(s.r[0].text, "stderr.sh: on stderr", "stderr is read too");

	p = script("sig.sh", "kill -9 $$", 0755);
	run(p, 5000, &s);
	ok(s.r[0].verdict == TE_HV_ERROR, "a hook killed by a signal: error");
	like(s.r[0].text, "sig.sh was killed by signal 9", "... saying so");

	p = script("junk.sh",
		   "printf '\\001\\000\\033[2J'\n"
		   "head -c 1048576 /dev/urandom\nexit 1",
		   0755);
	ms = run(p, 5000, &s);
	ok(s.n == 1 && s.r[0].verdict == TE_HV_FAIL &&
		   te_is_printable(s.r[0].text, TE_HEALTH_TEXT_MAX - 1),
	   "1 MiB of junk: one printable failure line (%lld ms)", ms);
	is_str(s.r[0].value, "exit 1",
	       "... its own status (read whole, no SIGPIPE)");

	p = script("hang.sh",
		   "echo $$ > \"$(dirname \"$0\")/hang.pid\"\n"
		   "sleep 600 & echo $! > \"$(dirname \"$0\")/hang.bg\"\n"
		   "wait",
		   0755);
	ms = run(p, 1000, &s);
	ok(ms < 2500, "a hook that hangs: given up at the bound (%lld ms)", ms);
	like(s.r[0].text, "no answer within 1000 ms", "... saying so");
	ok(s.r[0].verdict == TE_HV_ERROR, "... an error");
	pid = read_pid("hang.pid");
	bg = read_pid("hang.bg");
	ok(pid > 0 && gone(pid), "... the hook (pid %ld) is killed", pid);
	ok(bg > 0 && gone(bg), "... and what it started (pid %ld)", bg);

	p = script("bg.sh",
		   "sleep 30 & echo $! > \"$(dirname \"$0\")/bg.pid\"\n"
		   "echo left one behind",
		   0755);
	ms = run(p, 10000, &s);
	ok(ms < 3000 && s.r[0].verdict == TE_HV_PASS,
	   "a hook that leaves a process holding its pipe: done when it "
	   "exits (%lld ms)",
	   ms);
	bg = read_pid("bg.pid");
	ok(bg > 0 && gone(bg), "... that process killed with the check");
}

static void test_trust(void)
{
	static struct te_health_set s;
	char sub[96], path[128];
	const char *p;

	p = script("gw.sh", "exit 0", 0775);
	run(p, 5000, &s);
	ok(s.n == 1 && s.r[0].verdict == TE_HV_ERROR,
	   "a group-writable hook: error");
	like(s.r[0].text,
	     "gw.sh is not root-owned and writable by root alone (uid 0, "
	     "mode 0775): not run",
	     "... one line saying why");
	p = script("ow.sh", "exit 0", 0757);
	run(p, 5000, &s);
	like(s.r[0].text, "mode 0757): not run", "an other-writable hook too");
	p = script("daemon.sh", "exit 0", 0755);
	if (chown(p, 1, 0) == 0) {
		run(p, 5000, &s);
		like(s.r[0].text, "daemon.sh is not root-owned",
		     "a hook of uid 1");
	} else {
		tap_skip("chown to uid 1 failed");
	}
	snprintf(sub, sizeof(sub), "%s/open", dir);
	mkdir(sub, 0777);
	chmod(sub, 0777);
	snprintf(path, sizeof(path), "%s/open/h.sh", dir);
	fclose(fopen(path, "w"));
	chmod(path, 0755);
	run(path, 5000, &s);
	like(s.r[0].text, "is in a directory that is not root's alone",
	     "a hook in a directory others may write: not run");
	snprintf(path, sizeof(path), "%s/link.sh", dir);
	if (symlink("/bin/true", path) == 0) {
		run(path, 5000, &s);
		ok(s.r[0].verdict == TE_HV_PASS,
		   "a link to a root file: the file is checked, and runs");
	} else {
		tap_skip("symlink failed");
	}
}

int main(void)
{
	char cmd[128];

	test_path();
	test_first_line();
	test_result();
	test_policy_keys();
	test_policy_merge();
	test_system_files();
	te_strlcpy(dir, "/tmp/te-hook-XXXXXX", sizeof(dir));
	if (geteuid() != 0) {
		tap_skip("not root: hooks must be root's files (the scripts)");
	} else if (!mkdtemp(dir)) {
		tap_skip("mkdtemp failed");
	} else {
		test_scripts();
		test_trust();
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			printf("# could not remove %s\n", dir);
	}
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
