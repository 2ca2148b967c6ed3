/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the hang report's process table (core/hang/proctab.c): /proc
 * stat lines (hostile names, cut lines; the one reader, core/hang/proc_stat.c,
 * on a real process), environment blocks, slurmstepd's title, and which
 * process stands for each rank (plain tasks, a shell that runs Python,
 * torchrun workers, other steps, orphaned data loaders, tables of 2,048). */
#include "config.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hang/proctab.h"
#include "tap.h"

static void test_stat(void)
{
	struct te_proc p;

	ok(te_proc_stat_parse("4242 (python3) S 4200 4242 4242 0 -1 4194560 "
			      "1000 0 0 0 250 50 0 0 20 0 3 0 12345 1 2 3\n",
			      &p) == 0 &&
		   p.pid == 4242 && p.ppid == 4200 && p.state == 'S' &&
		   p.cpu_ticks == 300 && !strcmp(p.comm, "python3") &&
		   p.start == 12345,
	   "a stat line: pid, comm, state, ppid, utime+stime, start time");
	ok(te_proc_stat_parse("9 (x) S 1 9 9 0 -1 0 0 0 0 0 5 5 0 0 -21 -5 1 0 "
			      "777 0\n",
			      &p) == 0 &&
		   p.start == 777,
	   "negative priority and nice are read past");
	ok(te_proc_stat_parse("7 (a b) c) (d) R 1 7 7 0 -1 0 0 0 0 0 9 1 0\n",
			      &p) == 0 &&
		   p.state == 'R' && p.ppid == 1 &&
		   !strcmp(p.comm, "a b) c) (d") && p.cpu_ticks == 10,
	   "a comm with spaces and parentheses: the last ')' ends it");
	ok(te_proc_stat_parse("8 (xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx) D 2 "
			      "0 0 0 0 0 0 0 0 0 1 1 0",
			      &p) == 0 &&
		   p.comm[0] == '\0' && p.state == 'D',
	   "an over-long comm is left empty, the rest still read");
	ok(te_proc_stat_parse("", &p) < 0, "empty: refused");
	ok(te_proc_stat_parse("12 (x) S", &p) < 0,
	   "cut after the state: refused");
	ok(te_proc_stat_parse("12 (x)S 1 2 3 4 5 6 7 8 9 10 11 12", &p) < 0,
	   "no space after ')': refused");
	ok(te_proc_stat_parse("x (y) S 1 2 3 4 5 6 7 8 9 10 11 12", &p) < 0,
	   "no pid: refused");
	ok(te_proc_stat_parse("5 (y) S 1 2 3 4 5 6 7 8 9 10 zz 12", &p) < 0,
	   "a field that is not a number: refused");
	/* a comm that imitates the fields after it */
	ok(te_proc_stat_parse("10 (x) S 9 9 9) R 77 10 10 0 -1 0 0 0 0 0 3 4 "
			      "0 0 20 0 1 0 555\n",
			      &p) == 0 &&
		   !strcmp(p.comm, "x) S 9 9 9") && p.state == 'R' &&
		   p.ppid == 77 && p.cpu_ticks == 7 && p.start == 555,
	   "a comm holding ') S 9 9 9': the fields after the last ')' count");
	ok(te_proc_stat_parse("10 (x) S 9 9 9) R 77 1 2 3", &p) < 0,
	   "the same, cut before utime and stime: refused");
	ok(te_proc_stat_parse("13 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
			      &p) == 0 &&
		   p.cpu_ticks == 23 && p.start == 0,
	   "cut before the start time: read, start time 0");
	ok(te_proc_stat_parse("13 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
			      "17 18 1",
			      &p) == 0 &&
		   p.start == 1,
	   "cut inside the start time: what is there is read");
	ok(te_proc_stat_parse("13 (x S 1 2 3 4 5 6 7 8 9 10 11 12", &p) < 0,
	   "no ')': refused");
	ok(te_proc_stat_parse("13 x) S 1 2 3 4 5 6 7 8 9 10 11 12", &p) < 0,
	   "no '(': refused");
	ok(te_proc_stat_parse("13 (x) ", &p) < 0,
	   "cut before the state: refused");
	ok(te_proc_stat_parse("13 (x) S 1 2 3 4 5 6 7 8 9 10 11 ", &p) < 0,
	   "cut after utime: refused");
	ok(te_proc_stat_parse("0 (x) S 1 2 3 4 5 6 7 8 9 10 11 12", &p) < 0,
	   "pid 0: refused");
}

/* The one reader, on a real process whose name is hostile. */
static void test_stat_read(void)
{
	static const char name[] = "a) R 1 (b c"; /* 11 of comm's 15 */
	struct te_proc p;
	int fd[2], pid;
	char c;

	ok(te_proc_stat_read(getpid(), &p) == 0 && p.pid == getpid() &&
		   p.ppid == getppid() && p.state == 'R' && p.start > 0,
	   "this process: pid, parent, running, a start time");
	ok(te_proc_stat_read(0, &p) < 0 && te_proc_stat_read(-1, &p) < 0,
	   "pid 0 and -1: refused");
	ok(te_proc_stat_read(INT_MAX, &p) < 0, "a pid that is not there: -1");
	if (pipe(fd) < 0 || (pid = fork()) < 0) {
		ok(0, "pipe and fork");
		return;
	}
	if (pid == 0) {
		prctl(PR_SET_NAME, name);
		if (write(fd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(fd[1]);
	if (read(fd[0], &c, 1) != 1)
		c = 0;
	close(fd[0]);
	ok(c == 'x' && te_proc_stat_read(pid, &p) == 0 && p.pid == pid &&
		   p.ppid == getpid() && !strcmp(p.comm, name),
	   "a child named 'a) R 1 (b c': its name whole, its parent");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_environ(void)
{
	static const char env[] = "HOME=/root\0SLURM_JOB_ID=17\0"
				  "SLURM_STEP_ID=0\0SLURM_PROCID=5\0RANK=11\0"
				  "TORCHELASTIC_RUN_ID=abc\0X=1";
	struct te_proc p;

	te_proc_environ_parse(env, sizeof(env) - 1, &p);
	ok(p.job == 17 && p.step == 0 && p.procid == 5 && p.rank == 11 &&
		   p.elastic && p.node[0] == '\0' && p.world == -1,
	   "job, step, procid, rank and torchrun's run id read");
	te_proc_environ_parse("WORLD_SIZE=16\0RANK=3", 20, &p);
	ok(p.world == 16 && p.rank == 3, "WORLD_SIZE read");
	te_proc_environ_parse("SLURMD_NODENAME=n7\0A=1", 22, &p);
	is_str(p.node, "n7", "the node slurmd set (SLURMD_NODENAME)");
	ok(!p.agent, "not a torchrun agent");
	te_proc_environ_parse("TRAINENV_LAUNCHER=torchrun (auto)", 33, &p);
	ok(p.agent, "TRAINENV_LAUNCHER=torchrun...: torchrun's agent");
	te_proc_environ_parse("SLURMD_NODENAME=../x\0", 21, &p);
	is_str(p.node, "", "a node name with '/' is no name");
	te_proc_environ_parse("SLURM_JOB_ID=x1\0SLURM_STEP_ID=\0RANK=-3", 37,
			      &p);
	ok(p.job == -1 && p.step == -1 && p.rank == -1 && !p.elastic,
	   "malformed numbers are unknown (-1)");
	te_proc_environ_parse("SLURM_JOB_ID=99999999999999999999", 33, &p);
	is_int(p.job, -1, "a number past int range is unknown");
	te_proc_environ_parse("SLURM_JOB_ID=4", 13, &p);
	is_int(p.job, -1, "a block cut inside a value: that value is unknown");
	te_proc_environ_parse("SLURM_JOB_ID", 12, &p);
	is_int(p.job, -1, "a name without '=': unknown");
}

/* TRAINENV_TASK: the task without Slurm's variables (apptainer exec
 * --cleanenv keeps trainenv's copies only). */
static void test_task_env(void)
{
	static const char *const bad[] = {
		"TRAINENV_TASK=12 0 3",
		"TRAINENV_TASK=12 0 3 n1 x",
		"TRAINENV_TASK=12 0 -3 n1",
		"TRAINENV_TASK=12 0 3 ../n1",
		"TRAINENV_TASK=12 x 3 n1",
		"TRAINENV_TASK=99999999999 0 3 n1",
		"TRAINENV_TASK=",
		"TRAINENV_TASK=12 0 3 "
		"n123456789012345678901234567890123456789012345678901234567890123",
		"TRAINENV_TASK=12  0 3 n1",
		"TRAINENV_TASK= 12 0 3 n1",
		"TRAINENV_TASK=12 0 3 n1 ",
		"TRAINENV_TASK=12 0 3 n\tx",
		"TRAINENV_TASK=12 0 3 n\033[2J",
	};
	struct te_proc p;
	char env[512];
	size_t i, n_bad = 0, n_fuzz = 0, n_taken = 0;
	unsigned seed = 7;

	te_proc_environ_parse("A=1\0TRAINENV_TASK=12 0 3 n17\0B=2", 33, &p);
	ok(p.job == 12 && p.step == 0 && p.procid == 3 &&
		   !strcmp(p.node, "n17"),
	   "TRAINENV_TASK alone: job, step, procid "
	   "and node");
	te_proc_environ_parse("SLURM_JOB_ID=5\0SLURM_STEP_ID=1\0SLURM_PROCID=0"
			      "\0SLURMD_NODENAME=n2\0TRAINENV_TASK=12 0 3 n17",
			      86, &p);
	ok(p.job == 5 && p.step == 1 && p.procid == 0 && !strcmp(p.node, "n2"),
	   "Slurm's variables, when there, over TRAINENV_TASK");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		te_proc_environ_parse(bad[i], strlen(bad[i]), &p);
		if (p.job == -1 && p.step == -1 && p.procid == -1 && !p.node[0])
			n_bad++;
		else
			printf("# taken: %s\n", bad[i]);
	}
	is_int((int)n_bad, (int)(sizeof(bad) / sizeof(bad[0])),
	       "malformed TRAINENV_TASK (fields missing or too many, a "
	       "negative, a '/', not a number, past int, empty, a 64-byte "
	       "node, spaces doubled, leading or trailing, control "
	       "characters): none of it taken");
	/* random bytes after the name: never past the node's buffer, and
	 * all four fields or none */
	for (i = 0; i < 200000; i++) {
		size_t len = 14 + (seed = seed * 1103515245 + 12345) % 120, k;

		memcpy(env, "TRAINENV_TASK=", 14);
		for (k = 14; k < len; k++) {
			seed = seed * 1103515245 + 12345;
			env[k] = "0123456789 n/\0x-._"[(seed >> 16) % 19];
		}
		te_proc_environ_parse(env, len, &p);
		if (strlen(p.node) < sizeof(p.node) &&
		    ((p.job >= 0 && p.step >= 0 && p.procid >= 0 && p.node[0]) ||
		     (p.job == -1 && p.step == -1 && p.procid == -1 &&
		      !p.node[0])))
			n_fuzz++;
		n_taken += p.job >= 0;
	}
	is_int((int)n_fuzz, 200000,
	       "200,000 random TRAINENV_TASK values: "
	       "all four fields or none");
	ok(n_taken > 0, "  of which %zu taken (the check can pass both ways)",
	   n_taken);
}

static void test_python(void)
{
	ok(te_proc_is_python("/usr/bin/python3.11") &&
		   te_proc_is_python("python3") &&
		   te_proc_is_python("python") &&
		   te_proc_is_python("/usr/bin/python3.11d"),
	   "python, python3, python3.11, python3.11d");
	ok(!te_proc_is_python("/usr/bin/pythonista") &&
		   !te_proc_is_python("/bin/sh") &&
		   !te_proc_is_python("ipython3"),
	   "not pythonista, sh, ipython3");
}

static struct te_proc P(int pid, int ppid, long job, long step, long procid,
			long rank, int elastic, int py) {
	struct te_proc p = {
		.pid = pid,
		.ppid = ppid,
		.state = 'S',
		.job = job,
		.step = step,
		.procid = procid,
		.rank = rank,
		.elastic = elastic,
		.is_python = py,
	};
	return p;
}

static void
test_pick(void)
{
	struct te_proc t[16];
	struct te_rank_proc r[16];
	size_t n = 0, k;

	/* two plain Python tasks of 5.0, a task of another step, a stray */
	t[n++] = P(100, 1, 5, 0, 3, -1, 0, 1);
	t[n++] = P(101, 1, 5, 0, 2, -1, 0, 1);
	t[n++] = P(102, 100, 5, 0, 3, -1, 0, 0);  /* rank 3's child */
	t[n++] = P(200, 1, 5, 1, 0, -1, 0, 1);	  /* step 5.1 */
	t[n++] = P(300, 1, -1, -1, -1, -1, 0, 1); /* not in a job */
	k = te_proc_pick_ranks(t, n, 5, 0, r, 16);
	ok(k == 2 && r[0].rank == 2 && t[r[0].idx].pid == 101 &&
		   r[1].rank == 3 && t[r[1].idx].pid == 100,
	   "plain tasks: one per rank, ordered by rank, other steps left out");

	/* a shell task that runs Python under it */
	n = 0;
	t[n++] = P(10, 1, 6, 0, 0, -1, 0, 0);  /* sh -c */
	t[n++] = P(11, 10, 6, 0, 0, -1, 0, 0); /* sh */
	t[n++] = P(12, 11, 6, 0, 0, -1, 0, 1); /* python */
	t[n++] = P(13, 12, 6, 0, 0, -1, 0, 1); /* python child */
	k = te_proc_pick_ranks(t, n, 6, 0, r, 16);
	ok(k == 1 && r[0].rank == 0 && t[r[0].idx].pid == 12,
	   "a shell task: its shallowest Python process stands for it");

	/* a C task: itself */
	n = 0;
	t[n++] = P(20, 1, 7, 2, 4, -1, 0, 0);
	k = te_proc_pick_ranks(t, n, 7, 2, r, 16);
	ok(k == 1 && r[0].rank == 4 && t[r[0].idx].pid == 20,
	   "a task with no Python: the task itself");

	/* torchrun: one agent task per node, its workers carry RANK */
	n = 0;
	t[n++] = P(30, 1, 8, 0, 1, -1, 0, 1); /* the agent */
	t[n++] = P(31, 30, 8, 0, 1, 7, 1, 1); /* worker RANK 7 */
	t[n++] = P(32, 30, 8, 0, 1, 6, 1, 1); /* worker RANK 6 */
	t[n++] = P(33, 31, 8, 0, 1, 7, 1, 1); /* RANK 7's child */
	k = te_proc_pick_ranks(t, n, 8, 0, r, 16);
	ok(k == 2 && r[0].rank == 6 && t[r[0].idx].pid == 32 &&
		   r[1].rank == 7 && t[r[1].idx].pid == 31,
	   "torchrun: the workers, not the agent nor a worker's children");
	k = te_proc_pick_ranks(t, n, 8, 0, r, 1);
	is_int(k, 1, "at most max");
	n = 0;
	t[n] = P(50, 1, 8, 0, 2, -1, 0, 1); /* an agent, no worker */
	t[n++].agent = 1;
	t[n++] = P(51, 1, 8, 0, 3, -1, 0, 1); /* a plain task */
	k = te_proc_pick_ranks(t, n, 8, 0, r, 16);
	ok(k == 1 && r[0].rank == 3,
	   "a torchrun agent whose workers are gone stands for no rank");

	/* a parent loop in a racy snapshot ends */
	n = 0;
	t[n++] = P(40, 41, 9, 0, 0, -1, 0, 1);
	t[n++] = P(41, 40, 9, 0, 1, -1, 0, 1);
	k = te_proc_pick_ranks(t, n, 9, 0, r, 16);
	is_int(k, 0, "a parent loop: no task root, no endless walk");
	k = te_proc_pick_ranks(t, 0, 9, 0, r, 16);
	is_int(k, 0, "no process: nothing");
}

static void test_stepd_title(void)
{
	long j = 0, s = 0;

	ok(te_proc_stepd_title("slurmstepd: [57.3]", 19, &j, &s) == 0 &&
		   j == 57 && s == 3,
	   "slurmstepd's title: its job and step");
	ok(te_proc_stepd_title("slurmstepd: [57.0]\0\0\0", 21, &j, &s) == 0 &&
		   j == 57 && s == 0,
	   "... padded with NULs");
	ok(te_proc_stepd_title("slurmstepd: [57.batch]", 22, &j, &s) < 0 &&
		   te_proc_stepd_title("slurmstepd: [57.extern]", 23, &j, &s) <
			   0,
	   "the batch and extern steps: no numbered step");
	ok(te_proc_stepd_title("/sbin/init", 10, &j, &s) < 0 &&
		   te_proc_stepd_title("slurmstepd: [57.0", 17, &j, &s) < 0 &&
		   te_proc_stepd_title("slurmstepd: [57.0]x", 19, &j, &s) < 0 &&
		   te_proc_stepd_title("slurmstepd: [.0]", 16, &j, &s) < 0 &&
		   te_proc_stepd_title("slurmstepd: [5x.0]", 18, &j, &s) < 0 &&
		   te_proc_stepd_title("slurmstepd: [57.0]", 10, &j, &s) < 0 &&
		   te_proc_stepd_title("", 0, &j, &s) < 0,
	   "anything else, cut or malformed: not slurmstepd");
}

/* A process of job.step whose parent is the step's slurmstepd. */
static struct te_proc T(int pid, long job, long step, long procid, int py) {
	struct te_proc p = P(pid, 2, job, step, procid, -1, 0, py);

	p.parent_kind = TE_PARENT_STEPD;
	p.stepd_job = job;
	p.stepd_step = step;
	return p;
}

static void
test_orphans(void)
{
	struct te_proc t[16];
	struct te_rank_proc r[16];
	size_t n = 0, k;

	/* rank 0's task and a data loader; rank 1's task died and its loader
	 * was adopted by init (same environment, SLURM_PROCID 1) */
	t[n++] = T(100, 5, 0, 0, 1);
	t[n++] = P(101, 100, 5, 0, 0, -1, 0, 1);
	t[n] = P(201, 1, 5, 0, 1, -1, 0, 1);
	t[n++].parent_kind = TE_PARENT_OTHER;
	t[n] = P(202, 201, 5, 0, 1, -1, 0, 1); /* the orphan's child */
	t[n++].parent_kind = TE_PARENT_OTHER;
	k = te_proc_pick_ranks(t, n, 5, 0, r, 16);
	ok(k == 1 && r[0].rank == 0 && t[r[0].idx].pid == 100,
	   "an orphaned data loader (adopted by init) is no rank, nor its child");
	/* a process of the step's environment under another step's
	 * slurmstepd (a collector started inside the step) */
	t[2] = T(201, 5, 0, 1, 1);
	t[2].stepd_step = 1;
	k = te_proc_pick_ranks(t, 3, 5, 0, r, 16);
	ok(k == 1 && r[0].rank == 0,
	   "a process under another step's slurmstepd is no task of this one");
	t[2].stepd_step = 0;
	k = te_proc_pick_ranks(t, 3, 5, 0, r, 16);
	ok(k == 2 && r[1].rank == 1 && t[r[1].idx].pid == 201,
	   "control: under the step's own slurmstepd it is rank 1's task");
	t[2].parent_kind = TE_PARENT_UNKNOWN;
	k = te_proc_pick_ranks(t, 3, 5, 0, r, 16);
	is_int(k, 2, "a parent /proc does not show (hidepid): taken as a task");

	/* torchrun: a worker's loader adopted by init after its worker died */
	n = 0;
	t[n] = T(30, 8, 0, 1, 1);
	t[n++].agent = 1;
	t[n++] = P(31, 30, 8, 0, 1, 7, 1, 1); /* worker RANK 7 */
	t[n] = P(33, 1, 8, 0, 1, 6, 1, 1);    /* RANK 6's loader */
	t[n++].parent_kind = TE_PARENT_OTHER;
	k = te_proc_pick_ranks(t, n, 8, 0, r, 16);
	ok(k == 1 && r[0].rank == 7 && t[r[0].idx].pid == 31,
	   "torchrun: an orphaned worker's loader is no rank");
}

/* 2,048 processes, all of the step: answers checked one by one. */
static void test_big(void)
{
	struct te_proc *t = calloc(2048, sizeof(*t));
	struct te_rank_proc *r = calloc(2048, sizeof(*r));
	size_t i, k, good = 0;

	if (!t || !r) {
		ok(0, "no memory");
		return;
	}
	/* shuffled pids: the index must not rely on table order */
	for (i = 0; i < 2048; i++)
		t[i] = T((int)(100000 - 37 * ((i * 1031) % 2048)), 9, 0,
			 (long)(2047 - i), 1);
	k = te_proc_pick_ranks(t, 2048, 9, 0, r, 2048);
	for (i = 0; i < k; i++)
		good += r[i].rank == (long)i && t[r[i].idx].procid == (long)i;
	ok(k == 2048 && good == 2048,
	   "2,048 detached tasks: 2,048 ranks, each its own process, in order");

	/* 256 tasks (a shell), each a Python child and 6 loaders under it */
	for (i = 0; i < 2048; i++) {
		size_t task = i / 8 * 8;

		if (i == task)
			t[i] = T((int)(3000 + i), 9, 0, (long)(i / 8), 0);
		else
			t[i] = P((int)(3000 + i),
				 3000 + (int)(i % 8 == 1 ? task : task + 1), 9,
				 0, (long)(i / 8), -1, 0, 1);
	}
	k = te_proc_pick_ranks(t, 2048, 9, 0, r, 2048);
	for (i = 0, good = 0; i < k; i++)
		good += r[i].rank == (long)i &&
			t[r[i].idx].pid == 3000 + (int)(8 * i + 1);
	ok(k == 256 && good == 256,
	   "256 shell tasks x 8: 256 ranks, each its Python child");

	/* the same, every rank's task gone: its loaders are orphans */
	for (i = 0; i < 2048; i += 8) {
		t[i].pid = 1; /* no such process of the step */
		t[i].job = -1;
		t[i + 1].ppid = 1;
		t[i + 1].parent_kind = TE_PARENT_OTHER;
	}
	k = te_proc_pick_ranks(t, 2048, 9, 0, r, 2048);
	is_int(k, 0,
	       "... and with every task gone, 1,792 orphaned processes: no rank");

	/* 8 torchrun agents x 255 workers */
	for (i = 0; i < 2048; i++) {
		if (i % 256 == 0) {
			t[i] = T((int)(7000 + i), 9, 0, (long)(i / 256), 1);
			t[i].agent = 1;
		} else {
			t[i] = P((int)(7000 + i), 7000 + (int)(i / 256 * 256),
				 9, 0, (long)(i / 256), (long)(i - i / 256 - 1),
				 1, 1);
		}
	}
	k = te_proc_pick_ranks(t, 2048, 9, 0, r, 2048);
	for (i = 0, good = 0; i < k; i++)
		good += r[i].rank == (long)i && t[r[i].idx].rank == (long)i;
	ok(k == 2040 && good == 2040,
	   "8 torchrun agents x 255 workers: the 2,040 workers, in rank order");
	free(t);
	free(r);
}

/* Issue 25, item 7: the environment read whole, in pieces of any size:
 * 20,000 variables (over a megabyte) before the step's, an entry split
 * across pieces, a long entry skipped, the first of two kept. */
static void test_env_pick(void)
{
	static char env[2 * 1024 * 1024];
	static struct te_env_pick pick;
	struct te_proc p;
	size_t len = 0, i, piece, n_ok = 0;
	size_t pieces[] = { 1, 7, 4096, 65536, sizeof(env) };

	for (i = 0; i < 20000; i++)
		len += (size_t)snprintf(
			       env + len, sizeof(env) - len,
			       "USER_VARIABLE_%05zu=%s", i,
			       "some value of about forty bytes here") +
		       1;
	len += (size_t)snprintf(env + len, sizeof(env) - len, "RANK=%0300d",
				1) +
	       1;
	memcpy(env + len,
	       "SLURM_JOB_ID=77\0SLURM_STEP_ID=0\0SLURM_PROCID=5\0"
	       "SLURMD_NODENAME=n3\0RANK=4\0TORCHELASTIC_RUN_ID=x\0"
	       "SLURM_JOB_ID=99\0WORLD_SIZE=8",
	       123);
	len += 123;
	ok(len > 1024 * 1024, "an environment of %zu bytes", len);
	for (piece = 0; piece < sizeof(pieces) / sizeof(pieces[0]); piece++) {
		te_env_pick_init(&pick);
		for (i = 0; i < len; i += pieces[piece])
			te_env_pick_feed(&pick, env + i,
					 len - i < pieces[piece]
						 ? len - i
						 : pieces[piece]);
		te_env_pick_end(&pick);
		memset(&p, 0, sizeof(p));
		te_proc_environ_parse(pick.out, pick.outlen, &p);
		if (p.job == 77 && p.step == 0 && p.procid == 5 &&
		    p.rank == 4 && p.elastic && p.world == 8 &&
		    !strcmp(p.node, "n3"))
			n_ok++;
	}
	is_int((int)n_ok, 5,
	       "the step's variables found after 20,000 others, "
	       "in pieces of 1, 7, 4096, 65536 bytes and whole; a 305-byte "
	       "RANK skipped, the first SLURM_JOB_ID kept, the last entry "
	       "without its NUL read");
	ok(pick.outlen < sizeof(pick.out), "  what is kept: %zu bytes",
	   pick.outlen);
	te_env_pick_init(&pick);
	te_env_pick_feed(&pick, env, 20000);
	te_env_pick_end(&pick);
	memset(&p, 0, sizeof(p));
	te_proc_environ_parse(pick.out, pick.outlen, &p);
	ok(p.job == -1 && pick.outlen == 0, "none of them: nothing kept");
}

int main(void)
{
	test_env_pick();
	test_stat();
	test_stat_read();
	test_environ();
	test_task_env();
	test_python();
	test_pick();
	test_stepd_title();
	test_orphans();
	test_big();
	return tap_done();
}
