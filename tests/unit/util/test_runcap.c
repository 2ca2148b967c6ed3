/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of te_spawn_capture (core/util/runcap.c): output, status,
 * deadline, what the child inherits and what it does not, and a program
 * that cannot be run; te_env_without, the one environment filter. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/runcap.h"
#include "tap.h"

static char *env[] = { "PATH=/usr/bin:/bin", "TE_RUNCAP_TEST=from-envp", NULL };

/* runs sh -c SCRIPT; rc of te_spawn_capture */
static int sh(const char *script, int timeout_ms, unsigned flags, char *buf,
	      size_t cap, struct te_spawn_out *o, char *err, size_t errlen)
{
	char *argv[] = { "sh", "-c", (char *)script, NULL };

	return te_spawn_capture("/bin/sh", argv, env, timeout_ms, flags, buf,
				cap, o, err, errlen);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* the hexadecimal mask of a "SigXxx:" line of a status text */
static unsigned long long sig_mask(const char *status, const char *name)
{
	const char *p = strstr(status, name);

	return p ? strtoull(p + strlen(name), NULL, 16) : ~0ULL;
}

/* The filter of the hang report's collector, the task watchers and gdb. */
static void test_env_without(void)
{
	char *envp[] = {
		"SLURM_JOB_ID=7",  "SLURM_CONF=/etc/s.conf", "PATH=/bin",
		"TRAINENV_X=1",	   "TRAINENV_GDB=/g",	     "SLURM_STEP_ID=0",
		"SLURM_JOB_IDX=9", "PYTHONPATH=/p",	     NULL
	};
	const char *slurm[] = { "SLURM_", "TRAINENV_", NULL };
	const char *keep[] = { "SLURM_CONF=", "TRAINENV_GDB=", NULL };
	const char *ids[] = { "SLURM_JOB_ID=", "SLURM_STEP_ID=", NULL };
	char *out[16], *tiny[3];
	static char *big[20002], *bigout[20002];
	char names[20000][8];
	size_t i;

	is_int((int)te_env_without(envp, slurm, keep, out, 16), 4,
	       "env_without: prefixes dropped, the kept ones stay");
	ok(!strcmp(out[0], "SLURM_CONF=/etc/s.conf") &&
		   !strcmp(out[1], "PATH=/bin") &&
		   !strcmp(out[2], "TRAINENV_GDB=/g") &&
		   !strcmp(out[3], "PYTHONPATH=/p") && !out[4],
	   "  in their order, NULL at the end");
	is_int((int)te_env_without(envp, ids, NULL, out, 16), 6,
	       "env_without: whole names (SLURM_JOB_IDX stays)");
	ok(!strcmp(out[4], "SLURM_JOB_IDX=9"), "  SLURM_JOB_IDX=9 kept");
	is_int((int)te_env_without(envp, ids, NULL, tiny, 3), -1,
	       "env_without: out too small: -1");
	ok(tiny[2] == NULL && !strcmp(tiny[1], "PATH=/bin"),
	   "  what fits, NULL-terminated");
	is_int((int)te_env_without(NULL, ids, NULL, out, 16), 0,
	       "env_without: no environment");
	for (i = 0; i < 20000; i++) {
		snprintf(names[i], sizeof(names[i]), "V%zu=", i);
		big[i] = names[i];
	}
	big[20000] = "SLURM_JOB_ID=1";
	is_int((int)te_env_without(big, ids, NULL, bigout, 20002), 20000,
	       "env_without: 20,000 variables, whole");
	is_int((int)te_env_count(big), 20001, "env_count");
	{
		char **dup = te_env_without_dup(big, ids, NULL);

		ok(dup && te_env_count(dup) == 20000 &&
			   dup[19999] == big[19999],
		   "env_without_dup: an array of its own, whole");
		free(dup);
	}
}

int main(void)
{
	test_env_without();
	char buf[4096], err[512], small[8], path[] = "/tmp/te-runcap-XXXXXX";
	struct te_spawn_out o;
	struct sigaction usr1 = { .sa_handler = on_usr1 },
			 ign = { .sa_handler = SIG_IGN }, cur;
	sigset_t block, old;
	double t0;
	int rc, fd;
	char *argv_true[] = { "true", NULL };

	rc = sh("echo out; echo err >&2", 5000, 0, buf, sizeof(buf), &o, err,
		sizeof(err));
	is_int(rc, 0, "a program runs");
	is_str(buf, "out\n", "its output is read, its stderr is not");
	ok(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 && !o.killed &&
		   !o.too_long,
	   "exit status 0, not killed");

	rc = sh("echo out; echo err >&2", 5000, TE_SPAWN_STDERR, buf,
		sizeof(buf), &o, err, sizeof(err));
	ok(rc == 0 && strstr(buf, "out\n") && strstr(buf, "err\n"),
	   "TE_SPAWN_STDERR: stderr joins the output");

	rc = sh("exit 3", 5000, 0, buf, sizeof(buf), &o, err, sizeof(err));
	ok(rc == 0 && WIFEXITED(o.status) && WEXITSTATUS(o.status) == 3,
	   "its exit status comes back");

	rc = sh("echo \"$TE_RUNCAP_TEST\"", 5000, 0, buf, sizeof(buf), &o, err,
		sizeof(err));
	is_str(buf, "from-envp\n", "it runs with envp, not this environment");

	t0 = now_s();
	rc = sh("echo started; exec sleep 30", 300, 0, buf, sizeof(buf), &o,
		err, sizeof(err));
	ok(rc == 0 && o.killed && WIFSIGNALED(o.status) &&
		   WTERMSIG(o.status) == SIGKILL,
	   "past the deadline it is killed");
	ok(now_s() - t0 < 5.0, "and reaped: %.2f s for a 0.3 s deadline",
	   now_s() - t0);
	is_str(buf, "started\n", "what it wrote before stays");

	rc = sh("yes", 5000, 0, small, sizeof(small), &o, err, sizeof(err));
	ok(rc == 0 && o.too_long && o.killed && o.got == sizeof(small) - 1 &&
		   strlen(small) == sizeof(small) - 1,
	   "more output than the buffer holds: cut, killed");

	/* what the child must not inherit: descriptors, the caller's
	 * blocked signals, its handlers; SIGPIPE back to its default, other
	 * ignored signals stay ignored (as with a plain fork and exec) */
	fd = open("/dev/null", O_RDONLY);
	if (fd >= 0 && fd != 9) {
		dup2(fd, 9);
		close(fd);
	}
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGUSR1, &usr1, NULL);
	sigaction(SIGPIPE, &ign, NULL);
	sigaction(SIGUSR2, &ign, NULL);
	rc = sh("test -e /proc/self/fd/9 && echo fd9-open || echo fd9-closed;"
		" cat /proc/self/status; read -r pid c s pp pgid r </proc/$$/stat;"
		" echo \"pid=$$ pgid=$pgid\"",
		5000, 0, buf, sizeof(buf), &o, err, sizeof(err));
	ok(rc == 0 && strstr(buf, "fd9-closed"),
	   "other descriptors are closed");
	is_int((long long)sig_mask(buf, "SigBlk:"), 0,
	       "no signal blocked in the child");
	ok(!(sig_mask(buf, "SigIgn:") & (1ULL << (SIGPIPE - 1))),
	   "SIGPIPE back to its default");
	ok(sig_mask(buf, "SigIgn:") & (1ULL << (SIGUSR2 - 1)),
	   "an ignored signal stays ignored");
	{
		const char *p = strstr(buf, "pid=");
		unsigned long pid = 0, pgid = 1;

		if (p)
			sscanf(p, "pid=%lu pgid=%lu", &pid, &pgid);
		ok(p && pid == pgid, "it leads its own process group");
	}
	sigaction(SIGUSR1, NULL, &cur);
	ok(cur.sa_handler == on_usr1, "the caller's handler is untouched");
	{
		sigset_t now;

		sigprocmask(SIG_SETMASK, NULL, &now);
		ok(sigismember(&now, SIGUSR1) && !sigismember(&now, SIGUSR2),
		   "the caller's signal mask is as it was");
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(9);

	/* SIGCHLD ignored by the caller: still reaped, and left ignored */
	sigaction(SIGCHLD, &ign, NULL);
	rc = te_spawn_capture("/bin/true", argv_true, env, 5000, 0, buf,
			      sizeof(buf), &o, err, sizeof(err));
	ok(rc == 0 && WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0,
	   "SIGCHLD ignored: the status still comes back");
	sigaction(SIGCHLD, NULL, &cur);
	ok(cur.sa_handler == SIG_IGN, "and SIGCHLD is ignored again");
	sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = SIG_DFL }, NULL);

	/* cannot be run: one reason, from the parent */
	rc = te_spawn_capture("/nonexistent/te-helper", argv_true, env, 5000, 0,
			      buf, sizeof(buf), &o, err, sizeof(err));
	ok(rc < 0, "a missing program fails");
	like(err, "/nonexistent/te-helper: No such file", "and says so: %s",
	     err);
	fd = mkstemp(path);
	if (fd >= 0) {
		/* executable, but neither ELF nor "#!": execve says ENOEXEC */
		if (write(fd, "\x01\x02garbage", 9) != 9)
			perror("write");
		fchmod(fd, 0700);
		close(fd);
		rc = te_spawn_capture(path, argv_true, env, 5000, 0, buf,
				      sizeof(buf), &o, err, sizeof(err));
		ok(rc < 0, "a file execve refuses fails");
		like(err, "cannot be run: Exec format error",
		     "and says why: %s", err);
		chmod(path, 0600);
		rc = te_spawn_capture(path, argv_true, env, 5000, 0, buf,
				      sizeof(buf), &o, err, sizeof(err));
		ok(rc < 0 && strstr(err, "is not executable"),
		   "not executable: %s", err);
		unlink(path);
	} else {
		tap_skip("mkstemp in /tmp failed: no ENOEXEC case");
	}

	/* many in a row: nothing leaks (descriptors) */
	{
		int i, fails = 0, before = open("/dev/null", O_RDONLY), after;

		close(before);
		for (i = 0; i < 200; i++)
			if (te_spawn_capture("/bin/true", argv_true, env, 5000,
					     0, buf, sizeof(buf), &o, err,
					     sizeof(err)) < 0)
				fails++;
		after = open("/dev/null", O_RDONLY);
		close(after);
		ok(fails == 0 && after == before,
		   "200 runs: all ran, no descriptor left open (%d failed)",
		   fails);
	}
	return tap_done();
}
