/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the rank environment core: launcher detection, master port,
 * host and device lists, and the variables of each launch style. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "launch/rankenv.h"
#include "settings/settings.h"
#include "srun/srunargs.h"
#include "tap.h"

static const char *val(const struct te_envlist *e, const char *name)
{
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->name[i], name))
			return e->value[i];
	return NULL;
}

static int launcher(const char *cmd)
{
	char buf[256], *argv[16], *save = NULL, *t;
	const char *what;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", cmd);
	for (t = strtok_r(buf, " ", &save); t && argc < 15;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	return te_is_node_launcher(argc, argv, &what);
}

static void test_launcher(void)
{
	char why[128];
	char *tr[] = { "/usr/bin/torchrun", "--nproc-per-node=2", "t.py",
		       NULL };
	char *py[] = { "/usr/bin/python3", "train.py", NULL };

	ok(launcher("torchrun train.py"), "torchrun is a node launcher");
	ok(launcher("/opt/venv/bin/torchrun --nnodes 2 t.py"),
	   "torchrun by path");
	ok(launcher("python3 -m torch.distributed.run t.py"),
	   "python3 -m torch.distributed.run");
	ok(launcher("python -u -m torch.distributed.launch t.py"),
	   "python -u -m torch.distributed.launch");
	ok(launcher("python3.11 -mtorch.distributed.run t.py"),
	   "-mMODULE form");
	ok(launcher("python3 -W ignore -m torch.distributed.run t.py"),
	   "-W takes a value");
	ok(launcher("accelerate launch t.py"), "accelerate launch");
	ok(!launcher("accelerate config"), "accelerate config is not");
	ok(!launcher("python3 train.py -m torch.distributed.run"),
	   "-m after the script does not count");
	ok(!launcher("python3 -c import torch.distributed.run"),
	   "-c code is not a launcher");
	ok(!launcher("python3 -m torch.distributed.elastic"),
	   "other module is not");
	ok(!launcher("/bin/torchrunner"), "name must match exactly");
	ok(!launcher("pythonista -m torch.distributed.run"), "not a python");
	ok(!te_is_node_launcher(0, NULL, NULL), "empty argv");

	is_int(te_launcher_decide(TE_W_LAUNCHER_AUTO, 3, tr, 3, 3, 0, why,
				  sizeof(why)),
	       TE_LAUNCH_TORCHRUN, "auto picks torchrun for torchrun");
	like(why, "the command is torchrun", "and says why");
	is_int(te_launcher_decide(TE_W_LAUNCHER_AUTO, 2, py, 3, 3, 8, why,
				  sizeof(why)),
	       TE_LAUNCH_TORCHRUN,
	       "auto picks torchrun for one task per node with 8 GPUs");
	like(why, "one task per node with 8 GPUs", "and says why");
	is_int(te_launcher_decide(TE_W_LAUNCHER_AUTO, 2, py, 6, 3, 2, why,
				  sizeof(why)),
	       TE_LAUNCH_TASK, "auto picks task for several tasks per node");
	is_int(te_launcher_decide(TE_W_LAUNCHER_AUTO, 2, py, 3, 3, 1, why,
				  sizeof(why)),
	       TE_LAUNCH_TASK, "one task per node with one GPU is task mode");
	is_int(te_launcher_decide(TE_W_LAUNCHER_TASK, 3, tr, 3, 3, 8, why,
				  sizeof(why)),
	       TE_LAUNCH_TASK, "launcher=task wins over detection");
	is_int(te_launcher_decide(TE_W_LAUNCHER_TORCHRUN, 2, py, 6, 3, 0, why,
				  sizeof(why)),
	       TE_LAUNCH_TORCHRUN, "launcher=torchrun is obeyed");
}

static void test_port(void)
{
	uint16_t a = te_master_port(1234, 0, 20000, 29999);
	int inrange = 1, distinct = 1;
	static unsigned char seen[10000];

	is_int(a, te_master_port(1234, 0, 20000, 29999),
	       "same job and step: same port");
	ok(a != te_master_port(1234, 1, 20000, 29999), "next step: other port");
	ok(a != te_master_port(1235, 0, 20000, 29999), "next job: other port");
	for (uint32_t j = 5000; j < 5100; j++)
		for (uint32_t s = 0; s < 20; s++) {
			uint16_t p = te_master_port(j, s, 20000, 29999);

			if (p < 20000 || p > 29999)
				inrange = 0;
			if (seen[p - 20000]++)
				distinct = 0;
		}
	ok(inrange, "ports stay in the range");
	ok(distinct, "100 consecutive jobs x 20 steps never share a port");
	is_int(te_master_port(7, 3, 30000, 30000), 30000, "one-port range");
	is_int(te_master_port(0xffffffffu, 0xffffffffu, 1024, 65535) >= 1024, 1,
	       "extreme ids do not overflow");
}

static void test_env(void)
{
	struct te_step_facts f = {
		.job_id = 42,
		.step_id = 1,
		.nnodes = 3,
		.node_id = 1,
		.ntasks = 6,
		.local_tasks = 2,
		.local_id = 1,
		.global_id = 3,
		.gpus = 2,
		.master_addr = "10.0.0.1",
		.master_port = 23456,
		.rdzv_timeout = 1800,
	};
	struct te_envlist e;

	is_int(te_rank_env(&f, TE_LAUNCH_TASK, &e), 0, "task env built");
	is_str(val(&e, "RANK"), "3", "RANK is the global task id");
	is_str(val(&e, "WORLD_SIZE"), "6", "WORLD_SIZE");
	is_str(val(&e, "LOCAL_RANK"), "1", "LOCAL_RANK");
	is_str(val(&e, "LOCAL_WORLD_SIZE"), "2", "LOCAL_WORLD_SIZE");
	is_str(val(&e, "NODE_RANK"), "1", "NODE_RANK");
	is_str(val(&e, "GROUP_RANK"), "1", "GROUP_RANK");
	is_str(val(&e, "MASTER_ADDR"), "10.0.0.1", "MASTER_ADDR");
	is_str(val(&e, "MASTER_PORT"), "23456", "MASTER_PORT");
	ok(!val(&e, "PET_NNODES"), "no PET_* in task mode");

	f.ntasks = 3;
	f.local_tasks = 1;
	f.local_id = 0;
	f.global_id = 1;
	is_int(te_rank_env(&f, TE_LAUNCH_TORCHRUN, &e), 0,
	       "torchrun env built");
	is_str(val(&e, "PET_NNODES"), "3",
	       "PET_NNODES is the number of launchers");
	is_str(val(&e, "PET_NODE_RANK"), "1",
	       "PET_NODE_RANK is the launcher's rank");
	is_str(val(&e, "PET_NPROC_PER_NODE"), "2",
	       "PET_NPROC_PER_NODE from GPUs");
	is_str(val(&e, "PET_MASTER_ADDR"), "10.0.0.1", "PET_MASTER_ADDR");
	is_str(val(&e, "PET_MASTER_PORT"), "23456", "PET_MASTER_PORT");
	is_str(val(&e, "PET_RDZV_CONF"), "timeout=1800,join_timeout=1800",
	       "PET_RDZV_CONF");
	ok(!val(&e, "RANK"), "no RANK in torchrun mode");
	f.gpus = 0;
	f.rdzv_timeout = 0;
	f.master_addr = NULL;
	te_rank_env(&f, TE_LAUNCH_TORCHRUN, &e);
	ok(!val(&e, "PET_NPROC_PER_NODE") && !val(&e, "PET_RDZV_CONF") &&
		   !val(&e, "PET_MASTER_ADDR"),
	   "unknowns are left to torchrun");
}

static void test_lists(void)
{
	char h[64];

	ok(te_hostlist_first("n1", h, sizeof(h)) == 0 && !strcmp(h, "n1"),
	   "single host");
	ok(te_hostlist_first("n[1-3]", h, sizeof(h)) == 0 && !strcmp(h, "n1"),
	   "range");
	ok(te_hostlist_first("gpu[007-010,12]-ib,cpu1", h, sizeof(h)) == 0 &&
		   !strcmp(h, "gpu007-ib"),
	   "zero padding and suffix kept");
	ok(te_hostlist_first("a,b", h, sizeof(h)) == 0 && !strcmp(h, "a"),
	   "comma list");
	ok(te_hostlist_first("rack[2-3]n[5-6]", h, sizeof(h)) == 0 &&
		   !strcmp(h, "rack2n5"),
	   "two bracket groups");
	ok(te_hostlist_first("n[", h, sizeof(h)) < 0,
	   "unterminated bracket refused");
	ok(te_hostlist_first("n[a-b]", h, sizeof(h)) < 0,
	   "letters in range refused");
	ok(te_hostlist_first("n[]", h, sizeof(h)) < 0, "empty range refused");
	ok(te_hostlist_first("", h, sizeof(h)) < 0, "empty list refused");
	ok(te_hostlist_first("bad host", h, sizeof(h)) < 0, "blank refused");
	ok(te_hostlist_first("verylonghostname", h, 8) < 0,
	   "small buffer refused");
	ok(te_hostlist_first(",n1", h, sizeof(h)) < 0,
	   "empty first entry refused");

	is_int(te_devlist_count("0,1,2"), 3, "three devices");
	is_int(te_devlist_count("GPU-5d3e2f1a-aaaa,GPU-2"), 2, "UUIDs count");
	is_int(te_devlist_count(""), 0, "empty list");
	is_int(te_devlist_count(NULL), 0, "unset");
	is_int(te_devlist_count("NoDevFiles"), 0, "NoDevFiles means none");
	is_int(te_devlist_count("0,"), -1, "trailing comma refused");
	is_int(te_devlist_count("0,,1"), -1, "empty entry refused");
	is_int(te_devlist_count("0;rm -rf"), -1, "junk refused");

	ok(te_name_in_list("RANK,WORLD_SIZE", "RANK"), "name at start");
	ok(te_name_in_list("RANK,WORLD_SIZE", "WORLD_SIZE"), "name at end");
	ok(!te_name_in_list("LOCAL_RANK,X", "RANK"), "suffix does not match");
	ok(!te_name_in_list("RANKS", "RANK"), "prefix does not match");
	ok(!te_name_in_list(NULL, "RANK"), "no list");
}

/* TRAINENV_HANG_VARS: names with their values' hashes. */
static void test_owned(void)
{
	char list[64] = "";
	char small[24] = "";

	ok(te_owned_append(list, sizeof(list), "NCCL_RAS_ADDR",
			   "127.0.0.9:28100") == 0,
	   "owned: an entry appended");
	ok(te_owned_append(list, sizeof(list), "B", "a") == 0,
	   "owned: a second one");
	/* FNV-1a's published vector: "a" is e40c292c */
	ok(strlen(list) == 14 + 8 + 11 &&
		   !strncmp(list, "NCCL_RAS_ADDR=", 14) &&
		   !strcmp(list + 22, ",B=e40c292c"),
	   "owned: NAME=8 hex digits of FNV-1a, comma-separated (%s)", list);
	ok(te_owned_is(list, "NCCL_RAS_ADDR", "127.0.0.9:28100"),
	   "owned: the value trainenv set is trainenv's");
	ok(!te_owned_is(list, "NCCL_RAS_ADDR", "127.0.0.1:1"),
	   "owned: a value the job set since is the job's own");
	ok(!te_owned_is(list, "NCCL_RAS_ADDR", NULL),
	   "owned: unset since: nothing to replace");
	ok(te_owned_is(list, "B", "a") && !te_owned_is(list, "B", "b"),
	   "owned: the last entry too");
	ok(!te_owned_is(list, "RAS_ADDR", "127.0.0.9:28100"),
	   "owned: a suffix of a name does not match");
	ok(!te_owned_is("NCCL_RAS_ADDR=1234", "NCCL_RAS_ADDR", "v"),
	   "owned: a short hash matches nothing");
	ok(te_owned_is("X,NCCL_RAS_ADDR", "NCCL_RAS_ADDR", "any"),
	   "owned: a bare name (a release before the hash) owns any value");
	ok(te_owned_append(small, sizeof(small), "ABCDEFGHIJKL", "v") == 0 &&
		   te_owned_append(small, sizeof(small), "C", "v") == -1,
	   "owned: an entry that does not fit is refused");
	is_int((int)strlen(small), 21, "owned: and leaves the list as it was");
}

static int srun_args(const char *cmd, int (*fn)(int, char *const *))
{
	char buf[256], *argv[32], *save = NULL, *t;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", cmd);
	for (t = strtok_r(buf, " ", &save); t && argc < 31;
	     t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	return fn(argc, argv);
}

static int pty(const char *cmd)
{
	return srun_args(cmd, te_srun_asks_pty);
}

static int reads(const char *cmd)
{
	return srun_args(cmd, te_srun_reads_stdin);
}

/* Whether srun reads the terminal itself: the shield stops a background
 * srun only when it would (Slurm's fname.c rules). */
static void test_reads_stdin(void)
{
	ok(reads("srun cat"), "no --input: srun reads stdin");
	ok(reads("srun -N2 --input=all cat"), "--input=all");
	ok(reads("srun --input ALL cat"), "--input ALL (case aside)");
	ok(reads("srun -i 0 cat"), "-i 0: a task number");
	ok(reads("srun -i3 cat"), "-i3 attached");
	ok(reads("srun --input=- cat"), "--input=-");
	ok(!reads("srun --input=none cat"), "--input=none");
	ok(!reads("srun -i none cat"), "-i none");
	ok(!reads("srun -vi none cat"), "-vi none (flags cluster)");
	ok(!reads("srun -inone cat"), "-inone");
	ok(!reads("srun --input=in.txt cat"), "--input=FILE: srun opens it");
	ok(!reads("srun --input in%t cat"), "per-task pattern");
	ok(reads("srun -i none --input all cat"), "the last one wins");
	ok(reads("srun cat --input=none"),
	   "the command's --input is not srun's");
	ok(reads("srun -J -i cat"), "-i as the value of -J");
	ok(reads("srun -- -i none"), "after --");
	ok(!reads("srun -n 2 --input none cat"), "after -n VALUE");
}

static void test_pty(void)
{
	ok(pty("srun --pty bash"), "srun --pty bash");
	ok(pty("srun -N2 -n 4 --pty bash"), "--pty after options with values");
	ok(pty("srun -p debug --partition debug --pty bash"),
	   "-p VALUE and --partition VALUE skipped");
	ok(pty("srun -pdebug --pty=yes bash"), "attached short value, --pty=");
	ok(pty("srun --train-bind numa --pty bash"),
	   "a plugin option's value skipped");
	ok(pty("srun --train-explain --pty bash"),
	   "--train-explain takes no value");
	ok(!pty("srun prog --pty"), "--pty after the command is the command's");
	ok(!pty("srun -n 2 prog --pty"), "after -n VALUE prog");
	ok(!pty("srun -- --pty"), "after --");
	ok(!pty("srun -J --pty prog"), "--pty as the value of -J");
	ok(!pty("srun --job-name --pty prog"),
	   "--pty as the value of --job-name");
	ok(!pty("srun"), "no arguments");
}

int main(void)
{
	test_pty();
	test_reads_stdin();
	test_launcher();
	test_port();
	test_env();
	test_lists();
	test_owned();
	return tap_done();
}
