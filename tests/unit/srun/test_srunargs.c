/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for srunargs.c and its table (srunargs_table.c): srun's,
 * sbatch's and salloc's command lines walked as each Slurm release's
 * getopt_long would, for --pty, --input and --signal. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "srun/srunargs.h"
#include "srun/srunargs_int.h"
#include "tap.h"

#define REL(a, b, c) (((a) << 16) | ((b) << 8) | (c))

/* The releases the table knows (the newest micro release of each, and
 * both sides of 23.02.5), one before and one after them. */
static const struct {
	unsigned version, yymm;
	const char *name;
} rels[] = {
	{ REL(21, 8, 8), 210808, "21.08" },
	{ REL(22, 5, 8), 220508, "22.05" },
	{ REL(23, 2, 4), 230204, "23.02.4" },
	{ REL(23, 2, 8), 230208, "23.02" },
	{ REL(23, 11, 11), 231111, "23.11" },
	{ REL(24, 5, 8), 240508, "24.05" },
	{ REL(24, 11, 7), 241107, "24.11" },
	{ REL(25, 5, 8), 250508, "25.05" },
	{ REL(25, 11, 7), 251107, "25.11" },
	{ REL(26, 5, 3), 260503, "26.05" },
	{ REL(27, 11, 0), 271100, "27.11" },
};
#define NRELS (sizeof(rels) / sizeof(rels[0]))

static int walk(unsigned version, const char *cmd,
		int (*fn)(int, char *const *))
{
	char buf[512], *argv[64], *save = NULL, *t;
	int argc = 0;

	te_srun_argv_set_release(version);
	snprintf(buf, sizeof(buf), "%s", cmd);
	for (t = strtok_r(buf, " ", &save); t && argc < 63;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	return fn(argc, argv);
}

static int pty(unsigned v, const char *cmd)
{
	return walk(v, cmd, te_srun_asks_pty);
}

static int reads(unsigned v, const char *cmd)
{
	return walk(v, cmd, te_srun_reads_stdin);
}

static int sig(unsigned v, const char *cmd)
{
	return walk(v, cmd, te_srun_asks_signal);
}

static int active(const struct te_so *o, unsigned prog, unsigned yymm)
{
	return (o->progs & prog) && o->since <= yymm &&
	       (!o->until || yymm < o->until);
}

/* The table itself: whole rows, and in every release each program has a
 * name and a short letter at most once. */
static void test_table(void)
{
	static const unsigned progs[] = { TE_SO_SRUN, TE_SO_SBATCH,
					  TE_SO_SALLOC };
	/* srun's options that take a value, per release above */
	static const int srun_values[NRELS] = { 94, 94, 98, 96,	 98, 98,
						98, 98, 99, 102, 102 };
	size_t i, j, r, p;
	int bad = 0, twice = 0;

	ok(te_so_count > 150, "the table has rows (%zu)", te_so_count);
	for (i = 0; i < te_so_count; i++) {
		const struct te_so *o = &te_so_table[i];

		if (!o->name || !o->name[0] || o->kind > TE_SO_OPTIONAL ||
		    !o->progs || o->progs & ~7u ||
		    (o->until && o->until <= o->since)) {
			printf("# bad row %zu (%s)\n", i,
			       o->name ? o->name : "null");
			bad++;
		}
		if (i && strcmp(te_so_table[i - 1].name, o->name) > 0) {
			printf("# %s after %s\n", o->name,
			       te_so_table[i - 1].name);
			bad++;
		}
	}
	ok(!bad, "every row has a name, a kind, programs and since < until, "
		 "in name order");
	for (r = 0; r < NRELS; r++)
		for (p = 0; p < 3; p++)
			for (i = 0; i < te_so_count; i++)
				for (j = i + 1; j < te_so_count; j++) {
					const struct te_so *a = &te_so_table[i],
							   *b = &te_so_table[j];

					if (!active(a, progs[p],
						    rels[r].yymm) ||
					    !active(b, progs[p], rels[r].yymm))
						continue;
					if (!strcmp(a->name, b->name) ||
					    (a->letter &&
					     a->letter == b->letter)) {
						printf("# %s: %s and %s\n",
						       rels[r].name, a->name,
						       b->name);
						twice++;
					}
				}
	ok(!twice, "no program has a name or letter twice in one release");
	for (r = 0; r < NRELS; r++) {
		int n = 0;

		for (i = 0; i < te_so_count; i++)
			n += active(&te_so_table[i], TE_SO_SRUN,
				    rels[r].yymm) &&
			     te_so_table[i].kind == TE_SO_VALUE;
		is_int(n, srun_values[r],
		       "%s: srun has %d options with a value", rels[r].name,
		       srun_values[r]);
	}
}

/* 22.05's walk, as before the table had releases: its value options (the
 * old list, less argv and environment, which are no command-line options;
 * srun's, else sbatch's) hide the next word. */
static void test_2205_unchanged(void)
{
	static const char *const old[] = { "accel-bind",
					   "account",
					   "acctg-freq",
					   "array",
					   "batch",
					   "bb",
					   "bbf",
					   "bcast-exclude",
					   "begin",
					   "chdir",
					   "cluster",
					   "cluster-constraint",
					   "clusters",
					   "comment",
					   "constraint",
					   "container",
					   "context",
					   "core-spec",
					   "cores-per-socket",
					   "cpu-bind",
					   "cpu-freq",
					   "cpu_bind",
					   "cpus-per-gpu",
					   "cpus-per-task",
					   "deadline",
					   "delay-boot",
					   "dependency",
					   "distribution",
					   "epilog",
					   "error",
					   "exclude",
					   "export",
					   "export-file",
					   "extra-node-info",
					   "gid",
					   "gpu-bind",
					   "gpu-freq",
					   "gpus",
					   "gpus-per-node",
					   "gpus-per-socket",
					   "gpus-per-task",
					   "gres",
					   "gres-flags",
					   "het-group",
					   "hint",
					   "input",
					   "job-name",
					   "jobid",
					   "kill-on-invalid-dep",
					   "licenses",
					   "mail-type",
					   "mail-user",
					   "mcs-label",
					   "mem",
					   "mem-bind",
					   "mem-per-cpu",
					   "mem-per-gpu",
					   "mincpus",
					   "mpi",
					   "msg-timeout",
					   "network",
					   "nodefile",
					   "nodelist",
					   "nodes",
					   "ntasks",
					   "ntasks-per-core",
					   "ntasks-per-gpu",
					   "ntasks-per-node",
					   "ntasks-per-socket",
					   "ntasks-per-tres",
					   "open-mode",
					   "output",
					   "pack-group",
					   "partition",
					   "power",
					   "prefer",
					   "priority",
					   "profile",
					   "prolog",
					   "qos",
					   "relative",
					   "reservation",
					   "signal",
					   "slurmd-debug",
					   "sockets-per-node",
					   "switches",
					   "task-epilog",
					   "task-prolog",
					   "tasks-per-node",
					   "thread-spec",
					   "threads",
					   "threads-per-core",
					   "time",
					   "time-min",
					   "tmp",
					   "uid",
					   "wait",
					   "wait-all-nodes",
					   "wckey",
					   "wrap",
					   NULL };
	const char *shorts = "ABCDFGJLMNSTWabcdeimnopqrtwx";
	char cmd[128];
	int missed = 0;
	size_t i;

	for (i = 0; old[i]; i++) {
		int srun = 0;
		const char *prog;
		size_t j;

		for (j = 0; j < te_so_count; j++)
			if (!strcmp(te_so_table[j].name, old[i]) &&
			    (te_so_table[j].progs & TE_SO_SRUN))
				srun = 1;
		prog = srun ? "srun" : "sbatch";
		/* srun's --pty, or sbatch's --signal, taken for the value */
		snprintf(cmd, sizeof(cmd), "%s --%s %s x", prog, old[i],
			 srun ? "--pty" : "--signal");
		if (walk(REL(22, 5, 8), cmd,
			 srun ? te_srun_asks_pty : te_srun_asks_signal)) {
			printf("# %s: --%s takes no value\n", prog, old[i]);
			missed++;
		}
		snprintf(cmd, sizeof(cmd), "%s --%s=--signal --signal=x cmd",
			 prog, old[i]);
		if (!sig(REL(22, 5, 8), cmd)) {
			printf("# %s: --%s=v hides the next word\n", prog,
			       old[i]);
			missed++;
		}
	}
	ok(!missed, "22.05: every option of the old list takes a value");
	missed = 0;
	for (i = 0; shorts[i]; i++) {
		snprintf(cmd, sizeof(cmd), "%s -%c --signal x",
			 shorts[i] == 'a' ? "sbatch" : "srun", shorts[i]);
		if (sig(REL(22, 5, 8), cmd)) {
			printf("# -%c takes no value\n", shorts[i]);
			missed++;
		}
	}
	ok(!missed, "22.05: every short letter of the old list takes a value");

	ok(pty(0, "srun -N2 -n 4 --pty bash"), "version 0: 22.05's table");
	ok(pty(REL(22, 5, 8), "srun --pty bash"), "22.05: srun --pty bash");
	ok(pty(REL(22, 5, 8), "srun -p debug --partition debug --pty bash"),
	   "22.05: -p VALUE and --partition VALUE skipped");
	ok(!pty(REL(22, 5, 8), "srun -J --pty prog"),
	   "22.05: --pty as the value of -J");
	ok(!pty(REL(22, 5, 8), "srun --tres-per-task gres/gpu:1 --pty bash"),
	   "22.05: --tres-per-task is no option: its value is the command");
	ok(pty(REL(22, 5, 8), "srun --power x --pty bash"),
	   "22.05: --power takes a value");
	ok(pty(REL(22, 5, 8), "srun --pty=yes bash"),
	   "22.05: --pty= (a flag then) still says --pty");
}

/* Per release, the options that differ from 22.05. */
static void test_releases(void)
{
	size_t r;

	for (r = 0; r < NRELS; r++) {
		unsigned v = rels[r].version, y = rels[r].yymm;
		const char *n = rels[r].name;

		is_int(pty(v, "srun --tres-per-task gres/gpu:1 --pty bash"),
		       y >= 230200, "%s: --tres-per-task VALUE (23.02)", n);
		is_int(pty(v, "srun --extra x --container-id c --pty bash"),
		       y >= 230200, "%s: --extra, --container-id (23.02)", n);
		is_int(pty(v, "srun --uid 1000 --pty bash"), y < 230205,
		       "%s: srun --uid VALUE (until 23.02.5)", n);
		ok(sig(v, "sbatch --uid 1000 --signal=USR1 job.sh"),
		   "%s: sbatch keeps --uid VALUE", n);
		is_int(pty(v, "srun --treewidth 4 --pty bash"), y >= 231100,
		       "%s: --treewidth VALUE (23.11)", n);
		is_int(pty(v, "srun --tres-bind gres/gpu:closest --pty bash"),
		       y >= 231100, "%s: --tres-bind VALUE (23.11)", n);
		is_int(sig(v, "sbatch --export-file f --signal=USR1 job.sh"),
		       y < 231100 || y >= 240500,
		       "%s: sbatch --export-file VALUE (not in 23.11)", n);
		is_int(pty(v, "srun --segment 2 --pty bash"), y >= 240500,
		       "%s: --segment VALUE (24.05)", n);
		is_int(pty(v, "srun --power x --pty bash"), y < 240500,
		       "%s: --power VALUE (until 24.05)", n);
		ok(!pty(v, "srun --external-launcher x --pty bash"),
		   "%s: --external-launcher takes no next word", n);
		ok(pty(v, "srun --oom-kill-step=1 --pty bash") &&
			   !pty(v, "srun --oom-kill-step 1 --pty bash"),
		   "%s: --oom-kill-step[=v] (24.11) never takes the next word",
		   n);
		ok(pty(v, "srun --wait-for-children --pty bash"),
		   "%s: --wait-for-children is a flag (25.05)", n);
		is_int(pty(v, "srun --resources r --pty bash"), y >= 251100,
		       "%s: --resources VALUE (25.11)", n);
		is_int(pty(v, "srun --ignore-signals USR1 --pty bash"),
		       y >= 260500, "%s: --ignore-signals VALUE (26.05)", n);
		is_int(pty(v, "srun --mem-update x --container-type t "
			      "--pty bash"),
		       y >= 260500,
		       "%s: --mem-update, --container-type (26.05)", n);
		ok(pty(v, "srun --async --parsable --pty bash"),
		   "%s: --async, --parsable are flags (26.05)", n);
		/* an abbreviation that 26.05's --parsable makes ambiguous */
		is_int(pty(v, "srun --par debug --pty bash"), y < 260500,
		       "%s: --par abbreviates --partition (until 26.05)", n);
		ok(pty(v, "srun --pty=yes bash") && pty(v, "srun --pty bash"),
		   "%s: --pty and --pty=v", n);
	}
}

/* Optional values: only "--opt=v" and "-xv", never the next word. */
static void test_optional(void)
{
	unsigned v = REL(25, 11, 7);

	ok(!pty(v, "srun --kill-on-bad-exit 1 --pty bash"),
	   "--kill-on-bad-exit 1: 1 is the command");
	ok(pty(v, "srun --kill-on-bad-exit=1 --pty bash"),
	   "--kill-on-bad-exit=1");
	ok(!pty(v, "srun -I 5 --pty bash"), "-I 5: 5 is the command");
	ok(pty(v, "srun -I5 --pty bash"), "-I5");
	ok(pty(v, "srun -K --pty bash"), "-K alone");
	ok(reads(v, "srun -Ki none cat"), "-Ki: i is -K's value, not -i");
	ok(!reads(v, "srun -K -i none cat"), "-K -i none");
	ok(pty(v, "srun --overlap --propagate=NPROC --pty bash"),
	   "--overlap, --propagate=v");
	ok(!pty(v, "srun --propagate NPROC --pty bash"),
	   "--propagate NPROC: NPROC is the command");
	ok(pty(v, "srun --pty=x bash"), "--pty= (optional from 23.02)");
}

static void test_short(void)
{
	unsigned v = REL(24, 5, 8);

	ok(pty(v, "srun -N2 --pty bash"), "-N2");
	ok(pty(v, "srun -n 4 --pty bash"), "-n 4");
	ok(pty(v, "srun -vN2 -ln 4 --pty bash"),
	   "-vN2 -ln 4: flags, then a value");
	ok(!pty(v, "srun -vn --pty bash"), "-vn --pty: --pty is -n's value");
	ok(!reads(v, "srun -vlinone cat"), "-vlinone: -i none");
	ok(reads(v, "srun -Jinone cat"), "-Jinone: -J's value");
	ok(pty(v, "srun -lu --pty bash"), "-lu: flags only");
	ok(pty(v, "srun -Z --pty bash"), "-Z (no-allocate) a flag");
	ok(!pty(v, "srun -N 2 -- --pty bash"), "--: the command follows");
	ok(!pty(v, "srun -- -N 2 --pty"), "-- first");
	ok(!pty(v, "srun - --pty bash"), "a lone - is the command");
	ok(!pty(v, "srun prog --pty"), "--pty after the command");
	ok(!pty(v, "srun"), "no arguments");
	ok(!pty(v, "srun --nodes"), "a value missing at the end");
}

/* getopt_long's abbreviations: a unique prefix is the option, an
 * ambiguous one is refused (taken here for an unknown flag). */
static void test_abbreviations(void)
{
	unsigned v = REL(25, 5, 8);

	ok(pty(v, "srun --part debug --pty bash"), "--part VALUE");
	ok(pty(v, "srun --pt bash"), "--pt is --pty");
	ok(!reads(v, "srun --inp none cat"), "--inp none is --input none");
	ok(sig(v, "srun --sig=USR1@60 cmd"), "--sig= is --signal=");
	ok(!pty(v, "srun --n 2 --pty bash"), "--n is ambiguous");
	ok(pty(v, "srun --mem 4G --pty bash"), "--mem: exact beats mem-bind");
	ok(pty(v, "srun --train-bind numa --pty bash"),
	   "the plugin's --train-NAME VALUE");
	ok(pty(v, "srun --train on --pty bash"), "the plugin's --train VALUE");
	ok(pty(v, "srun --train-explain --pty bash"),
	   "--train-explain takes no value");
	ok(!pty(v, "srun --tra x --pty bash"),
	   "--tra: ambiguous among the plugin's options");
	ok(!pty(v, "srun --train-bogus x --pty bash"),
	   "an unknown option is taken for a flag");
}

/* sbatch and salloc (the allocator side) by argv[0]. */
static void test_programs(void)
{
	unsigned v = REL(24, 11, 7);

	ok(sig(v, "sbatch --wait --signal B:USR1@60 job.sh"),
	   "sbatch: --wait is a flag");
	ok(sig(v, "/usr/bin/sbatch -W --signal=USR1 job.sh"),
	   "sbatch: -W is a flag");
	ok(!pty(v, "srun --wait --pty bash"), "srun: --wait takes a value");
	ok(pty(v, "srun -W 5 --pty bash"), "srun: -W 5");
	ok(sig(v, "sbatch -a 1-3 --signal USR1 job.sh"), "sbatch: -a VALUE");
	ok(sig(v, "sbatch --wrap hostname --signal USR1"),
	   "sbatch: --wrap VALUE");
	ok(!sig(v, "sbatch job.sh --signal USR1"),
	   "sbatch: the script's arguments are not sbatch's");
	ok(sig(v, "salloc --no-shell --signal USR1"), "salloc: --no-shell");
	ok(!sig(v, "salloc -i x --signal USR1"), "salloc has no -i");
	ok(sig(v, "sbatch --requeue --signal USR1 job.sh"),
	   "sbatch: --requeue a flag");
	ok(sig(REL(25, 11, 0), "sbatch --requeue=1 --signal USR1 job.sh"),
	   "sbatch 25.11: --requeue=v");
	ok(!sig(REL(25, 11, 0), "sbatch --requeue 1 --signal USR1 job.sh"),
	   "sbatch 25.11: --requeue never takes the next word");
}

/* te_srun_asks: the step kinds srun's own options ask for. */
static const char *asks_name;
static int asks_fn(int argc, char *const *argv)
{
	return te_srun_asks(argc, argv, asks_name);
}

static int asks(unsigned v, const char *name, const char *cmd)
{
	asks_name = name;
	return walk(v, cmd, asks_fn);
}

static void test_asks(void)
{
	unsigned v2311 = REL(23, 11, 11), v2405 = REL(24, 5, 8),
		 v2605 = REL(26, 5, 3);

	ok(asks(v2311, "external-launcher",
		"srun --external-launcher -N2 prted"),
	   "23.11: --external-launcher (a flag) is seen");
	ok(asks(v2405, "external-launcher",
		"srun --external-launcher=1 -N2 prted"),
	   "24.05: --external-launcher=VALUE (optional value) is seen");
	ok(asks(v2405, "external-launcher",
		"srun --external-launcher -N2 prted"),
	   "24.05: --external-launcher without a value is seen");
	ok(!asks(v2405, "external-launcher",
		 "srun -N2 prted --external-launcher"),
	   "the command's own --external-launcher is not srun's");
	ok(asks(v2605, "async", "srun --async -o out.%j -N2 python3 train.py"),
	   "26.05: --async is seen");
	ok(!asks(v2605, "async", "srun -o --async python3 train.py"),
	   "26.05: --async as the value of -o is not srun's");
	ok(!asks(v2605, "async", "srun -N2 python3 train.py"),
	   "26.05: a plain srun is not --async");
}

/* te_srun_command: where the command starts. */
static int cmd_fn(int argc, char *const *argv)
{
	return te_srun_command(argc, argv);
}

static void test_command(void)
{
	unsigned v = REL(22, 5, 8);

	is_int(walk(v, "srun -N2 --ntasks-per-node=2 apptainer exec img x",
		    cmd_fn),
	       3, "the command after srun's options");
	is_int(walk(v, "srun -o out.txt -N 2 apptainer exec img x", cmd_fn), 5,
	       "options with their values in the next word");
	is_int(walk(v, "srun -N2 -- apptainer exec", cmd_fn), 3,
	       "after \"--\"");
	is_int(walk(v, "srun -N2 --", cmd_fn), -1, "\"--\" and nothing after");
	is_int(walk(v, "srun -N2", cmd_fn), -1, "no command");
	is_int(walk(v, "srun -lN2 sh", cmd_fn), 2, "bundled flags");
}

int main(void)
{
	test_table();
	test_2205_unchanged();
	test_releases();
	test_optional();
	test_short();
	test_abbreviations();
	test_programs();
	test_asks();
	test_command();
	return tap_done();
}
