/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of node health's runner and wire (core/health/health_run.c,
 * health_wire.c): checks that pass and fail, one that hangs (killed and
 * abandoned at the bound, the caller back in time), one that writes
 * junk, one that crashes, one that says nothing, one that floods, one
 * that claims another check's results, one that leaves a process behind
 * holding its pipe; and the wire's decoder against hostile text. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "health/health.h"
#include "util/sysutil.h"
#include "tap.h"

static void check_pass(const void *arg, struct te_health_set *out)
{
	(void)arg;
	te_health_add(out, "ib", "mlx5_0 port 1", "200 Gb/s", TE_HV_PASS,
		      "ib mlx5_0 port 1 ACTIVE LinkUp 200 Gb/s");
}

static void check_fail(const void *arg, struct te_health_set *out)
{
	te_health_add(out, "eth", "eth0", "down", TE_HV_FAIL,
		      "eth eth0 operstate down (want up) %s",
		      (const char *)arg);
}

static void check_hang(const void *arg, struct te_health_set *out)
{
	(void)arg;
	(void)out;
	sleep(60);
}

/* Finds the result pipe (this process's only FIFO open for writing) and
 * writes junk on it, as a library scribbling on a stray descriptor. */
static void check_junk(const void *arg, struct te_health_set *out)
{
	int fd;

	(void)arg;
	for (fd = 3; fd < 256; fd++) {
		struct stat st;

		/* the other checks' read ends refuse it (EBADF) */
		if (!fstat(fd, &st) && S_ISFIFO(st.st_mode) &&
		    write(fd, "\x7f\x45LF\x02junk\n", 10) < 0)
			continue;
	}
	te_health_add(out, "junk", "", "", TE_HV_PASS, "would pass");
}

static void check_crash(const void *arg, struct te_health_set *out)
{
	struct rlimit none = { 0, 0 };

	(void)arg;
	(void)out;
	setrlimit(RLIMIT_CORE, &none); /* no core file from the test */
	abort(); /* not SIGSEGV: ASan would catch that and say a finding */
}

static void check_silent(const void *arg, struct te_health_set *out)
{
	(void)arg;
	(void)out;
}

static void check_flood(const void *arg, struct te_health_set *out)
{
	static char big[256 * 1024];
	int fd;

	(void)arg;
	(void)out;
	memset(big, 'x', sizeof(big));
	for (fd = 3; fd < 256; fd++) {
		struct stat st;

		if (!fstat(fd, &st) && S_ISFIFO(st.st_mode) &&
		    write(fd, big, sizeof(big)) < 0)
			continue;
	}
	sleep(60);
}

static void check_other(const void *arg, struct te_health_set *out)
{
	(void)arg;
	te_health_add(out, "gpu", "gpu 0", "", TE_HV_PASS, "gpu 0 healthy");
}

/* Passes, leaving a process that holds its pipe open for a minute. */
static void check_leaves_child(const void *arg, struct te_health_set *out)
{
	(void)arg;
	if (fork() == 0) {
		sleep(60);
		_exit(0);
	}
	te_health_add(out, "left", "", "", TE_HV_PASS, "left a process");
}

static const struct te_health_result *find(const struct te_health_set *s,
					   const char *check)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->r[i].check, check))
			return &s->r[i];
	return NULL;
}

static void test_run(void)
{
	static struct te_health_set s;
	const struct te_health_check checks[] = {
		{ "ib", check_pass, NULL, NULL },
		{ "eth", check_fail, "(stand-in)", NULL },
		{ "hang", check_hang, NULL, NULL },
		{ "junk", check_junk, NULL, NULL },
		{ "crash", check_crash, NULL, NULL },
		{ "silent", check_silent, NULL, NULL },
		{ "flood", check_flood, NULL, NULL },
		{ "other", check_other, NULL, NULL },
		{ "left", check_leaves_child, NULL, NULL },
	};
	const struct te_health_result *r;
	char err[256];
	int64_t t0, took, deadline;
	int left;

	te_health_set_init(&s, "n7");
	t0 = te_now_ms();
	is_int(te_health_run(checks, 9, 700, &s, err, sizeof(err)), 0,
	       "nine checks run");
	took = te_now_ms() - t0;
	ok(took >= 650 && took < 1200,
	   "the caller is back at the bound (700 ms), not later: %lld ms",
	   (long long)took);
	r = find(&s, "ib");
	ok(r && r->verdict == TE_HV_PASS, "a passing check passes");
	is_str(r ? r->node : NULL, "n7", "... its result names the node");
	is_str(r ? r->text : NULL, "ib mlx5_0 port 1 ACTIVE LinkUp 200 Gb/s",
	       "... with its text");
	r = find(&s, "eth");
	ok(r && r->verdict == TE_HV_FAIL, "a failing check fails");
	is_str(r ? r->text : NULL,
	       "eth eth0 operstate down (want up) (stand-in)",
	       "... with its text, through the wire");
	r = find(&s, "hang");
	/* review finding 9: could not decide is an error, never a drain */
	ok(r && r->verdict == TE_HV_ERROR,
	   "a hanging check is an error (could not decide), not a fail");
	like(r ? r->text : NULL, "hang: no answer within 700 ms: its process",
	     "... saying it was given up at the bound");
	like(r ? r->text : NULL, "killed and abandoned", "... and abandoned");
	r = find(&s, "junk");
	ok(r && r->verdict == TE_HV_ERROR, "a check writing junk: an error");
	like(r ? r->text : NULL,
	     "junk: its process gave no valid result: bad header",
	     "... one line saying its output was not valid");
	r = find(&s, "crash");
	ok(r && r->verdict == TE_HV_ERROR, "a crashing check: an error");
	ok(!te_health_set_ok(&s), "... errors are not ok: the exit is 1");
	like(r ? r->text : NULL,
	     "crash: its process gave no valid result: no "
	     "output",
	     "... saying it gave nothing");
	r = find(&s, "silent");
	is_str(r ? r->text : NULL, "silent: its process gave no result",
	       "a check with no result fails, saying so");
	r = find(&s, "flood");
	like(r ? r->text : NULL, "flood: its process wrote more than",
	     "a flooding check is cut off and fails");
	r = find(&s, "other");
	like(r ? r->text : NULL, "a result of another check",
	     "a check's results must be its own");
	r = find(&s, "left");
	ok(r && r->verdict == TE_HV_PASS,
	   "a check that leaves a process holding its pipe: its result "
	   "counts");
	ok(!te_health_set_ok(&s), "the node fails");
	is_int(s.n, 9, "one result per check");
	deadline = te_now_ms() + 5000;
	while ((left = te_health_reap()) > 0 && te_now_ms() < deadline)
		te_sleep_ms(20);
	is_int(left, 0, "the abandoned children are reaped afterwards");
}

static int dec(const char *text, struct te_health_set *b)
{
	char err[256];

	return te_health_wire_decode(text, strlen(text), "ib", b, err,
				     sizeof(err));
}

/* Review finding 7: the caller's stdin and stdout closed, so that the
 * result pipe lands on 0 and 1; the check still answers. */
static void test_closed_stdio(void)
{
	struct te_health_check c = { "ib", check_pass, NULL, NULL };
	struct te_health_set set;
	char err[256];
	int in = dup(0), out = dup(1), rc;

	fflush(stdout);
	close(0);
	close(1);
	te_health_set_init(&set, "n1");
	rc = te_health_run(&c, 1, 5000, &set, err, sizeof(err));
	dup2(in, 0);
	dup2(out, 1);
	close(in);
	close(out);
	is_int(rc, 0, "stdin and stdout closed: the check runs");
	ok(set.n == 1 && te_health_set_ok(&set),
	   "... and passes (its pipe not made /dev/null)");
	if (set.n)
		printf("# %s\n", set.r[0].text);
}

/* Reports whether its stderr is /dev/null (the same device and inode). */
static void check_stderr(const void *arg, struct te_health_set *out)
{
	struct stat a, b;
	int null = fstat(2, &a) == 0 && stat("/dev/null", &b) == 0 &&
		   a.st_rdev == b.st_rdev && a.st_ino == b.st_ino;

	(void)arg;
	te_health_add(out, "ib", "stderr", null ? "null" : "caller's",
		      TE_HV_PASS, "stderr is %s", null ? "/dev/null" : "not");
}

/* Review finding 3 (the job prolog): a check's child must not hold the
 * caller's stderr, which a child stuck in the kernel would keep open past
 * the caller's bound (the prolog reads its helper's stderr to the end). */
static void test_child_stderr(void)
{
	struct te_health_check c = { "ib", check_stderr, NULL, NULL };
	struct te_health_set set;
	char err[256];

	te_health_set_init(&set, "n1");
	te_health_run(&c, 1, 5000, &set, err, sizeof(err));
	ok(set.n == 1 && !strcmp(set.r[0].value, "null"),
	   "a check's child has /dev/null as stderr, not the caller's");
}

static void check_locked(const void *arg, struct te_health_set *out)
{
	(void)arg;
	te_health_add(out, "gpu", "gpu 0", "ok", TE_HV_PASS, "gpu 0 healthy");
}

/* Review finding 6: a check whose lock a stuck process still holds is
 * not run again (no pile of processes stuck in the driver): one line
 * naming the holder; the lock free, it runs. */
static void test_lock(void)
{
	char path[256], err[256];
	const char *tmp = getenv("TMPDIR");
	struct te_health_check c = { "gpu", check_locked, NULL, path };
	struct te_health_set set;
	int fd;

	snprintf(path, sizeof(path), "%s/te-lock-%ld", tmp ? tmp : "/tmp",
		 (long)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0 || write(fd, "4242\n", 5) != 5) {
		printf("Bail out! cannot hold %s\n", path);
		exit(1);
	}
	te_health_set_init(&set, "n1");
	te_health_run(&c, 1, 1000, &set, err, sizeof(err));
	ok(set.n == 1 && set.r[0].verdict == TE_HV_FAIL,
	   "its lock held by a stuck check: fails");
	like(set.n ? set.r[0].text : NULL,
	     "gpu: a previous gpu check (pid 4242) still holds its lock after "
	     "800 ms (stuck in the kernel?): not run",
	     "... naming the holder, the check not run");
	close(fd);
	te_health_set_init(&set, "n1");
	te_health_run(&c, 1, 1000, &set, err, sizeof(err));
	ok(set.n == 1 && set.r[0].verdict == TE_HV_PASS,
	   "the lock free: the check runs and passes");
	unlink(path);
}

/* Review finding 8: C lines add up; 4295 of them wrapped the counts and
 * hid the one failure. */
static void test_wire_cut(void)
{
	static char buf[TE_HEALTH_WIRE_MAX + 1];
	static struct te_health_set set;
	char err[200];
	size_t o = 0;
	int i, rc;

	o += (size_t)snprintf(buf + o, sizeof(buf) - o,
			      "TEHEALTH1\nR fail =gpu =gpu%%200 =ECC =gpu%%200"
			      "%%20ECC\n");
	for (i = 0; i < 4294; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o,
				      "C 1000000 1000000\n");
	o += (size_t)snprintf(buf + o, sizeof(buf) - o,
			      "C 967295 967295\nEND\n");
	te_health_set_init(&set, "n1");
	rc = te_health_wire_decode(buf, o, "gpu", &set, err, sizeof(err));
	is_int(rc, -1, "4295 counts of cut results: refused");
	ok(set.n == 0 && set.cut == 0, "... nothing of it kept");
	o = (size_t)snprintf(buf, sizeof(buf),
			     "TEHEALTH1\nC 3 1\nC 2 0\nEND\n");
	te_health_set_init(&set, "n1");
	is_int(te_health_wire_decode(buf, o, "gpu", &set, err, sizeof(err)), -1,
	       "two counts of cut results: refused");
	o = (size_t)snprintf(buf, sizeof(buf), "TEHEALTH1\nC 3 1\nEND\n");
	te_health_set_init(&set, "n1");
	set.cut = INT_MAX - 1;
	is_int(te_health_wire_decode(buf, o, "gpu", &set, err, sizeof(err)), -1,
	       "a count that would wrap what the set holds: refused");
	set.cut = 0;
	is_int(te_health_wire_decode(buf, o, "gpu", &set, err, sizeof(err)), 0,
	       "one count: taken");
	ok(set.cut == 3 && set.cut_fail == 1 && !te_health_set_ok(&set),
	   "... and its failure fails the set");
}

static void test_wire(void)
{
	static struct te_health_set a, b;
	char buf[TE_HEALTH_WIRE_MAX + 1], err[256];
	int i;

	te_health_set_init(&a, "n1");
	te_health_add(&a, "ib", "mlx5_0 port 1", "", TE_HV_NA,
		      "ib: 100%% = and spaces");
	te_health_add(&a, "ib", "", "DOWN", TE_HV_FAIL, "x");
	for (i = 0; i < TE_HEALTH_RESULTS_MAX + 3; i++)
		te_health_add(&a, "ib", "d", "v", TE_HV_FAIL, "cut %d", i);
	is_int(te_health_wire_encode(&a, buf, sizeof(buf)), 0,
	       "a full set encodes");
	te_health_set_init(&b, "n2");
	is_int(te_health_wire_decode(buf, strlen(buf), "ib", &b, err,
				     sizeof(err)),
	       0, "... and decodes");
	is_int(b.n, a.n, "... every result");
	is_str(b.r[0].text, "ib: 100% = and spaces", "... text as it was");
	is_str(b.r[0].value, "", "... an empty field empty");
	is_int(b.r[0].verdict, TE_HV_NA, "... verdicts kept");
	is_str(b.r[0].node, "n2", "... the node the parent's");
	is_int(b.cut_fail, a.cut_fail, "... cut failures counted");
	te_health_set_init(&b, "n2");
	is_int(dec("TEHEALTH1\nR pass =ib = = =x\n", &b), -1,
	       "no END: refused");
	is_int(b.n, 0, "... and nothing of it kept");
	is_int(dec("TEHEALTH1\nR maybe =ib = = =x\nEND\n", &b), -1,
	       "a bad verdict: refused");
	is_int(dec("TEHEALTH1\nR pass =ib = =\nEND\n", &b), -1,
	       "a missing field: refused");
	is_int(dec("TEHEALTH1\nR pass =ib = = =%zz\nEND\n", &b), -1,
	       "a bad escape: refused");
	is_int(dec("TEHEALTH1\nR pass =ib = = =x y\nEND\n", &b), -1,
	       "a word too many: refused");
	is_int(dec("TEHEALTH1\nC 5 6\nEND\n", &b), -1,
	       "more cut failures than cut results: refused");
	is_int(dec("TEHEALTH1\nR pass =ib = = =%0A%01\nEND\n", &b), 0,
	       "control bytes in a field decode");
	is_str(b.r[0].text, "??", "... cleaned to '?'");
}

int main(void)
{
	test_run();
	test_closed_stdio();
	test_child_stderr();
	test_lock();
	test_wire_cut();
	test_wire();
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
