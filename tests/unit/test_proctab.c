/* Unit tests of the hang report's process table (core/proctab.c): /proc
 * stat lines, environment blocks, and which process stands for each rank
 * (plain tasks, a shell that runs Python, torchrun workers, other steps). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "proctab.h"
#include "tap.h"

static void test_stat(void)
{
	struct te_proc p;

	ok(te_proc_stat_parse("4242 (python3) S 4200 4242 4242 0 -1 4194560 "
			      "1000 0 0 0 250 50 0 0 20 0 3 0 12345 1 2 3\n",
			      &p) == 0 && p.pid == 4242 && p.ppid == 4200 &&
	   p.state == 'S' && p.cpu_ticks == 300 && !strcmp(p.comm, "python3") &&
	   p.start == 12345,
	   "a stat line: pid, comm, state, ppid, utime+stime, start time");
	ok(te_proc_stat_parse("9 (x) S 1 9 9 0 -1 0 0 0 0 0 5 5 0 0 -21 -5 1 0 "
			      "777 0\n", &p) == 0 && p.start == 777,
	   "negative priority and nice are read past");
	ok(te_proc_stat_parse("7 (a b) c) (d) R 1 7 7 0 -1 0 0 0 0 0 9 1 0\n",
			      &p) == 0 && p.state == 'R' && p.ppid == 1 &&
	   !strcmp(p.comm, "a b) c) (d") && p.cpu_ticks == 10,
	   "a comm with spaces and parentheses: the last ')' ends it");
	ok(te_proc_stat_parse("8 (xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx) D 2 "
			      "0 0 0 0 0 0 0 0 0 1 1 0", &p) == 0 &&
	   p.comm[0] == '\0' && p.state == 'D',
	   "an over-long comm is left empty, the rest still read");
	ok(te_proc_stat_parse("", &p) < 0, "empty: refused");
	ok(te_proc_stat_parse("12 (x) S", &p) < 0, "cut after the state: refused");
	ok(te_proc_stat_parse("12 (x)S 1 2 3 4 5 6 7 8 9 10 11 12", &p) < 0,
	   "no space after ')': refused");
	ok(te_proc_stat_parse("x (y) S 1 2 3 4 5 6 7 8 9 10 11 12", &p) < 0,
	   "no pid: refused");
	ok(te_proc_stat_parse("5 (y) S 1 2 3 4 5 6 7 8 9 10 zz 12", &p) < 0,
	   "a field that is not a number: refused");
}

static void test_environ(void)
{
	static const char env[] = "HOME=/root\0SLURM_JOB_ID=17\0"
		"SLURM_STEP_ID=0\0SLURM_PROCID=5\0RANK=11\0"
		"TORCHELASTIC_RUN_ID=abc\0X=1";
	struct te_proc p;

	te_proc_environ_parse(env, sizeof(env) - 1, &p);
	ok(p.job == 17 && p.step == 0 && p.procid == 5 && p.rank == 11 &&
	   p.elastic && p.node[0] == '\0',
	   "job, step, procid, rank and torchrun's run id read");
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

static void test_python(void)
{
	ok(te_proc_is_python("/usr/bin/python3.11") &&
	   te_proc_is_python("python3") && te_proc_is_python("python") &&
	   te_proc_is_python("/usr/bin/python3.11d"),
	   "python, python3, python3.11, python3.11d");
	ok(!te_proc_is_python("/usr/bin/pythonista") &&
	   !te_proc_is_python("/bin/sh") && !te_proc_is_python("ipython3"),
	   "not pythonista, sh, ipython3");
}

static struct te_proc P(int pid, int ppid, long job, long step, long procid,
			long rank, int elastic, int py)
{
	struct te_proc p = {
		.pid = pid, .ppid = ppid, .state = 'S', .job = job,
		.step = step, .procid = procid, .rank = rank,
		.elastic = elastic, .is_python = py,
	};
	return p;
}

static void test_pick(void)
{
	struct te_proc t[16];
	struct te_rank_proc r[16];
	size_t n = 0, k;

	/* two plain Python tasks of 5.0, a task of another step, a stray */
	t[n++] = P(100, 1, 5, 0, 3, -1, 0, 1);
	t[n++] = P(101, 1, 5, 0, 2, -1, 0, 1);
	t[n++] = P(102, 100, 5, 0, 3, -1, 0, 0);	/* rank 3's child */
	t[n++] = P(200, 1, 5, 1, 0, -1, 0, 1);		/* step 5.1 */
	t[n++] = P(300, 1, -1, -1, -1, -1, 0, 1);	/* not in a job */
	k = te_proc_pick_ranks(t, n, 5, 0, r, 16);
	ok(k == 2 && r[0].rank == 2 && t[r[0].idx].pid == 101 &&
	   r[1].rank == 3 && t[r[1].idx].pid == 100,
	   "plain tasks: one per rank, ordered by rank, other steps left out");

	/* a shell task that runs Python under it */
	n = 0;
	t[n++] = P(10, 1, 6, 0, 0, -1, 0, 0);		/* sh -c */
	t[n++] = P(11, 10, 6, 0, 0, -1, 0, 0);		/* sh */
	t[n++] = P(12, 11, 6, 0, 0, -1, 0, 1);		/* python */
	t[n++] = P(13, 12, 6, 0, 0, -1, 0, 1);		/* python child */
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
	t[n++] = P(30, 1, 8, 0, 1, -1, 0, 1);		/* the agent */
	t[n++] = P(31, 30, 8, 0, 1, 7, 1, 1);		/* worker RANK 7 */
	t[n++] = P(32, 30, 8, 0, 1, 6, 1, 1);		/* worker RANK 6 */
	t[n++] = P(33, 31, 8, 0, 1, 7, 1, 1);		/* RANK 7's child */
	k = te_proc_pick_ranks(t, n, 8, 0, r, 16);
	ok(k == 2 && r[0].rank == 6 && t[r[0].idx].pid == 32 &&
	   r[1].rank == 7 && t[r[1].idx].pid == 31,
	   "torchrun: the workers, not the agent nor a worker's children");
	k = te_proc_pick_ranks(t, n, 8, 0, r, 1);
	is_int(k, 1, "at most max");
	n = 0;
	t[n] = P(50, 1, 8, 0, 2, -1, 0, 1);		/* an agent, no worker */
	t[n++].agent = 1;
	t[n++] = P(51, 1, 8, 0, 3, -1, 0, 1);		/* a plain task */
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

int main(void)
{
	test_stat();
	test_environ();
	test_python();
	test_pick();
	return tap_done();
}
