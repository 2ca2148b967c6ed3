/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `trainenv bind` end to end: runs te_tool_bind() in a child process, as the
 * command does, and compares its output with the .expected files in
 * tests/data/bind (like the .test files of hwloc's XML tests). Each expected file names its
 * topology and arguments in "## topology:" and "## args:" lines and explains
 * in other "##" lines how the expected mapping follows from the topology;
 * every other line is expected output. Then the tool's errors, and a real
 * bind-and-exec on this machine.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bind/bind.h"
#include "tap.h"
#include "tool_bind.h"

#ifndef TE_TOPODIR
#error TE_TOPODIR must name tests/data/topologies
#endif
#ifndef TE_BINDDIR
#error TE_BINDDIR must name tests/data/bind
#endif

#define MAX_ARGS 64

static const char *const scrubbed_env[] = {
	"CUDA_VISIBLE_DEVICES", "SLURM_STEP_GPUS", "SLURM_JOB_GPUS",
	"SLURM_JOB_ID",		"LOCAL_RANK",	   "LOCAL_WORLD_SIZE",
	"SLURM_LOCALID",
};

struct run {
	int status; /* exit status, or 128 + signal */
	char out[65536];
	char err[8192];
};

static void read_all(int fd, char *buf, size_t len)
{
	size_t used = 0;
	ssize_t r;

	while (used + 1 < len &&
	       (r = read(fd, buf + used, len - 1 - used)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		used += (size_t)r;
	}
	buf[used] = '\0';
}

/* Runs te_tool_bind(argv) in a child with a clean environment plus env
 * ("NAME=value" strings, NULL-terminated). */
static void run_tool(char **argv, const char *const *env, struct run *res)
{
	int out[2], errfd;
	char errpath[] = "/tmp/te-bind-test-XXXXXX";
	pid_t pid;
	int st, argc = 0;

	memset(res, 0, sizeof(*res));
	res->status = -1;
	while (argv[argc])
		argc++;
	errfd = mkstemp(errpath);
	if (errfd < 0 || pipe(out)) {
		snprintf(res->err, sizeof(res->err), "test setup failed");
		return;
	}
	unlink(errpath);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		size_t i;

		for (i = 0; i < sizeof(scrubbed_env) / sizeof(*scrubbed_env);
		     i++)
			unsetenv(scrubbed_env[i]);
		for (i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		dup2(out[1], 1);
		dup2(errfd, 2);
		close(out[0]);
		close(out[1]);
		st = te_tool_bind(argc, argv);
		fflush(stdout);
		fflush(stderr);
		_exit(st);
	}
	close(out[1]);
	read_all(out[0], res->out, sizeof(res->out));
	close(out[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		close(errfd);
		return;
	}
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	lseek(errfd, 0, SEEK_SET);
	read_all(errfd, res->err, sizeof(res->err));
	close(errfd);
}

/* Splits a line of arguments on blanks into argv (argv[0] = "bind"). */
static int split_args(char *line, char **argv, int max)
{
	int n = 0;
	char *save = NULL, *tok;

	argv[n++] = (char *)"bind";
	for (tok = strtok_r(line, " \t", &save); tok && n < max - 1;
	     tok = strtok_r(NULL, " \t", &save))
		argv[n++] = tok;
	argv[n] = NULL;
	return n;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Topologies used by at least one expected file. */
static char used_topo[64][256];
static int nused;

static void check_expected_file(const char *name)
{
	char path[8192], topo[4096] = "", args[4096] = "", line[4096];
	static char want[65536];
	char *argv[MAX_ARGS];
	struct run res;
	size_t wlen = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", TE_BINDDIR, name);
	f = fopen(path, "r");
	if (!ok(f != NULL, "%s: readable", name))
		return;
	want[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "## topology: ", 13)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(topo, sizeof(topo), "%s", line + 13);
		} else if (!strncmp(line, "## args: ", 9)) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(args, sizeof(args), "%s", line + 9);
		} else if (strncmp(line, "##", 2)) {
			size_t l = strlen(line);
			if (wlen + l < sizeof(want)) {
				memcpy(want + wlen, line, l + 1);
				wlen += l;
			}
		}
	}
	fclose(f);
	if (!ok(topo[0] && args[0], "%s: has topology and args lines", name))
		return;
	if (nused < 64)
		snprintf(used_topo[nused++], sizeof(used_topo[0]), "%s", topo);

	/* "--topology=PATH" goes right after argv[0]. */
	{
		static char topo_arg[8300];

		snprintf(topo_arg, sizeof(topo_arg), "--topology=%s/%s",
			 TE_TOPODIR, topo);
		split_args(args, argv + 1, MAX_ARGS - 1);
		argv[0] = (char *)"bind";
		argv[1] = topo_arg;
	}
	run_tool(argv, NULL, &res);
	is_int(res.status, 0, "%s: exit status", name);
	if (res.status)
		printf("# stderr: %s", res.err);
	is_str(res.out, want, "%s: output as expected", name);
}

static void test_expected_files(void)
{
	DIR *d = opendir(TE_BINDDIR);
	struct dirent *e;
	char *names[256];
	int n = 0, i, j;

	if (!ok(d != NULL, "open %s", TE_BINDDIR))
		return;
	while ((e = readdir(d)) && n < 256)
		if (ends_with(e->d_name, ".expected"))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof(*names), cmp_str);
	ok(n >= 20, "%d expected files", n);
	for (i = 0; i < n; i++) {
		check_expected_file(names[i]);
		free(names[i]);
	}

	/* Every stored topology must have expectations. */
	d = opendir(TE_TOPODIR);
	if (!ok(d != NULL, "open %s", TE_TOPODIR))
		return;
	while ((e = readdir(d))) {
		int found = 0;

		if (!ends_with(e->d_name, ".xml"))
			continue;
		for (j = 0; j < nused; j++)
			found |= !strcmp(used_topo[j], e->d_name);
		ok(found, "%s has expected mappings", e->d_name);
	}
	closedir(d);
}

#define TOPO(f) "--topology=" TE_TOPODIR "/" f

static void expect_fail(const char *what, int status, const char *needle,
			const char *const *env, ...)
{
	char *argv[MAX_ARGS];
	va_list ap;
	struct run res;
	int n = 0;
	const char *a;

	argv[n++] = (char *)"bind";
	va_start(ap, env);
	while ((a = va_arg(ap, const char *)) && n < MAX_ARGS - 1)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	run_tool(argv, env, &res);
	is_int(res.status, status, "%s: exit status %d", what, status);
	like(res.err, needle, "%s: message", what);
	ok(res.err[0] && strchr(res.err, '\n') && !strstr(res.err, "(null)"),
	   "%s: a message was printed", what);
}

static void test_tool_errors(void)
{
	static const char *const mig[] = {
		"CUDA_VISIBLE_DEVICES=MIG-4a1b2c3d-1111-2222-3333-444455556666",
		NULL,
	};
	static const char *const uuid[] = {
		"CUDA_VISIBLE_DEVICES=GPU-4a1b2c3d-1111-2222-3333-444455556666",
		"SLURM_STEP_GPUS=0",
		NULL,
	};
	static const char *const junk_cvd[] = {
		"CUDA_VISIBLE_DEVICES=0,1,banana",
		NULL,
	};
	static const char *const bad_lws[] = { "LOCAL_WORLD_SIZE=-2", NULL };

	expect_fail("unknown option", 2, "unknown argument --bogus", NULL,
		    "--show", "--bogus", NULL);
	expect_fail("bad mode", 2, "--mode accepts none, numa or cores", NULL,
		    "--show", "--mode", "fast", NULL);
	expect_fail("bad smt", 2, "--smt accepts all or one", NULL, "--show",
		    "--smt=two", NULL);
	expect_fail("missing value", 2, "missing value for --tasks", NULL,
		    "--show", "--tasks", NULL);
	expect_fail("no action", 2, "exactly one of", NULL, NULL);
	expect_fail("two actions", 2, "exactly one of", NULL, "--show",
		    "--list-gpus", NULL);
	expect_fail("nothing after --", 2, "no command after --", NULL, "--",
		    NULL);
	expect_fail("--allowed with a command", 2, "--show only", NULL,
		    "--allowed", "0", "--", "true", NULL);
	expect_fail("missing topology file", 1, "cannot", NULL, "--show",
		    "--topology", "/nonexistent/topo.xml", "--gpus", "all",
		    NULL);
	expect_fail("not a topology", 1, "cannot", NULL, "--show", "--topology",
		    "/etc/passwd", "--gpus", "all", NULL);
	expect_fail(
		"GPU index out of range", 1,
		"GPU index 16 is out of range: this node has 16 GPUs (0-15)",
		NULL, "--show", TOPO("nvidiaDGX2.xml"), "--gpus", "16", NULL);
	expect_fail("GPU on a node without GPU", 1,
		    "this node has no NVIDIA GPU", NULL, "--show",
		    TOPO("96em64t-4n4d3ca2co-pci.xml"), "--gpus", "0", NULL);
	expect_fail("GPU listed twice", 1, "listed twice", NULL, "--show",
		    TOPO("nvidiaDGX2.xml"), "--gpus", "1,0-3", NULL);
	expect_fail("junk GPU list", 1, "--gpus:", NULL, "--show",
		    TOPO("nvidiaDGX2.xml"), "--gpus", "first", NULL);
	expect_fail("zero tasks", 1, "--tasks must be a number from 1 to", NULL,
		    "--show", TOPO("nvidiaDGX2.xml"), "--gpus", "all",
		    "--tasks", "0", NULL);
	expect_fail("too many tasks", 1, "--tasks must be", NULL, "--show",
		    TOPO("nvidiaDGX2.xml"), "--gpus", "all", "--tasks", "4097",
		    NULL);
	expect_fail("tasks with junk", 1, "--tasks must be", NULL, "--show",
		    TOPO("nvidiaDGX2.xml"), "--gpus", "all", "--tasks", "2x",
		    NULL);
	expect_fail("huge tasks", 1, "--tasks must be", NULL, "--show",
		    TOPO("nvidiaDGX2.xml"), "--gpus", "all", "--tasks",
		    "99999999999999999999", NULL);
	expect_fail("bad LOCAL_WORLD_SIZE", 1, "LOCAL_WORLD_SIZE must be",
		    bad_lws, "--show", TOPO("nvidiaDGX2.xml"), "--gpus", "all",
		    NULL);
	expect_fail("allowed CPUs outside the topology", 1,
		    "no allowed CPU is in this topology", NULL, "--show",
		    TOPO("nvidiaDGX2.xml"), "--gpus", "all", "--allowed",
		    "2-23", NULL);
	expect_fail("empty allowed list", 1, "--allowed: the list is empty",
		    NULL, "--show", TOPO("nvidiaDGX2.xml"), "--gpus", "all",
		    "--allowed", "", NULL);
	expect_fail("junk allowed list", 1, "--allowed:", NULL, "--show",
		    TOPO("nvidiaDGX2.xml"), "--gpus", "all", "--allowed",
		    "0-3;", NULL);
	expect_fail("MIG instances", 1, "UUID or MIG instance", mig, "--show",
		    TOPO("nvidiaDGX2.xml"), NULL);
	expect_fail("GPU UUIDs even with SLURM_STEP_GPUS", 1,
		    "binding needs whole GPUs named by index", uuid, "--show",
		    TOPO("nvidiaDGX2.xml"), NULL);
	expect_fail(
		"junk CUDA_VISIBLE_DEVICES", 1,
		"CUDA_VISIBLE_DEVICES=0,1,banana is not a list of GPU indexes",
		junk_cvd, "--show", TOPO("nvidiaDGX2.xml"), NULL);
}

static void test_env_preview(void)
{
	static const char *const step[] = {
		"SLURM_JOB_ID=42",
		"SLURM_STEP_GPUS=1,2",
		"CUDA_VISIBLE_DEVICES=0,1",
		NULL,
	};
	static const char *const nogpu[] = { "SLURM_JOB_ID=42", NULL };
	static const char *const lws[] = {
		"LOCAL_WORLD_SIZE=4",
		"CUDA_VISIBLE_DEVICES=0",
		NULL,
	};
	char *argv[] = {
		(char *)"bind",
		(char *)"--show",
		(char *)TOPO("24em64t-2n6c2t-pci.xml"),
		(char *)"--tasks=2",
		(char *)"--verbose",
		NULL,
	};
	char *argv2[] = {
		(char *)"bind",
		(char *)"--show",
		(char *)TOPO("24em64t-2n6c2t-pci.xml"),
		NULL,
	};
	char *help[] = { (char *)"bind", (char *)"--help", NULL };
	struct run res;

	/* ConstrainDevices=yes: CUDA_VISIBLE_DEVICES counts 0,1 among the
	 * step's GPUs, SLURM_STEP_GPUS names node GPUs 1 and 2. */
	run_tool(argv, step, &res);
	is_int(res.status, 0, "env: SLURM_STEP_GPUS preview runs");
	is_str(res.out,
	       "rank 0 gpu 0000:11:00.0 numa 1 cpus 1,3,5,7,9,11,13,15,17,19,21,23\n"
	       "rank 1 gpu 0000:14:00.0 numa 1 cpus 1,3,5,7,9,11,13,15,17,19,21,23\n",
	       "env: node GPUs come from SLURM_STEP_GPUS, not the relative "
	       "CUDA_VISIBLE_DEVICES");

	/* A Slurm step without GPU variables has no GPU. */
	run_tool(argv, nogpu, &res);
	is_int(res.status, 0, "env: step without GPU runs");
	like(res.out, "note: no GPU allocated to this step",
	     "env: step without GPU is noted");
	like(res.out, "rank 1 gpu none numa 1 cpus 1,3,5",
	     "env: step without GPU spreads over NUMA nodes");

	/* Task count from LOCAL_WORLD_SIZE, GPU from CUDA_VISIBLE_DEVICES. */
	run_tool(argv2, lws, &res);
	is_int(res.status, 0, "env: LOCAL_WORLD_SIZE preview runs");
	like(res.out, "rank 3 gpu 0000:06:00.0 numa 0",
	     "env: 4 ranks from LOCAL_WORLD_SIZE share the one GPU");

	run_tool(help, NULL, &res);
	is_int(res.status, 0, "--help exits 0");
	like(res.out, "usage: trainenv bind", "--help prints the usage");
}

/* Real binding of this process, then exec: compare the child's
 * Cpus_allowed_list with what te_bind_compute() says for that rank. */
static void test_bind_exec(void)
{
	static const char *const rank1[] = {
		"LOCAL_RANK=1",
		"LOCAL_WORLD_SIZE=2",
		NULL,
	};
	static const char *const rank2of2[] = {
		"LOCAL_RANK=2",
		"LOCAL_WORLD_SIZE=2",
		NULL,
	};
	static const char *const norank[] = { "LOCAL_WORLD_SIZE=2", NULL };
	static const char *const nolws[] = { "LOCAL_RANK=0", NULL };
	static const char *const slurmid[] = {
		"SLURM_LOCALID=0",
		"LOCAL_WORLD_SIZE=1",
		NULL,
	};
	static const char *const mig[] = {
		"LOCAL_RANK=0",
		"LOCAL_WORLD_SIZE=1",
		"CUDA_VISIBLE_DEVICES=MIG-0",
		NULL,
	};
	char *show_cpus[] = {
		(char *)"bind",
		(char *)"--mode",
		(char *)"cores",
		(char *)"--gpus=none",
		(char *)"--",
		(char *)"/bin/sh",
		(char *)"-c",
		(char *)"sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status",
		NULL,
	};
	char *none_true[] = {
		(char *)"bind", (char *)"--mode=none",
		(char *)"--",	(char *)"true",
		NULL,
	};
	char *missing[] = {
		(char *)"bind", (char *)"--gpus=none",
		(char *)"--",	(char *)"/nonexistent/program",
		NULL,
	};
	char *best[] = {
		(char *)"bind", (char *)"--best-effort", (char *)"--",
		(char *)"echo", (char *)"ran",		 NULL,
	};
	char *strict[] = {
		(char *)"bind", (char *)"--", (char *)"echo",
		(char *)"ran",	NULL,
	};
	hwloc_topology_t topo;
	struct te_bind_request req;
	struct te_bind_result br;
	hwloc_bitmap_t cur = hwloc_bitmap_alloc();
	char err[256], want[1024];
	struct run res;

	if (te_bind_topology_load(NULL, &topo, err, sizeof(err))) {
		tap_skip("this machine's topology cannot be loaded");
		hwloc_bitmap_free(cur);
		return;
	}
	hwloc_get_cpubind(topo, cur, HWLOC_CPUBIND_PROCESS);
	memset(&req, 0, sizeof(req));
	req.mode = TE_BIND_MODE_CORES;
	req.ntasks = 2;
	req.allowed = cur;
	if (!ok(te_bind_compute(topo, &req, &br, err, sizeof(err)) == 0,
		"compute rank 1 of 2 on this machine")) {
		printf("# %s\n", err);
	} else {
		te_bind_format_set(br.ranks[1].cpuset, want, sizeof(want) - 1);
		strcat(want, "\n");
		run_tool(show_cpus, rank1, &res);
		is_int(res.status, 0, "bind -- sh: exit status");
		if (res.status)
			printf("# stderr: %s", res.err);
		is_str(res.out, want,
		       "bind -- sh: the command runs on rank "
		       "1's CPUs");
		te_bind_result_free(&br);
	}
	hwloc_topology_destroy(topo);
	hwloc_bitmap_free(cur);

	run_tool(show_cpus, slurmid, &res);
	is_int(res.status, 0, "SLURM_LOCALID stands in for LOCAL_RANK");

	run_tool(show_cpus, norank, &res);
	is_int(res.status, 1, "no LOCAL_RANK: exit 1");
	like(res.err, "LOCAL_RANK is not set", "no LOCAL_RANK: message");
	run_tool(show_cpus, nolws, &res);
	is_int(res.status, 1, "no LOCAL_WORLD_SIZE: exit 1");
	like(res.err, "LOCAL_WORLD_SIZE is not set",
	     "no LOCAL_WORLD_SIZE: message");
	run_tool(show_cpus, rank2of2, &res);
	is_int(res.status, 1, "LOCAL_RANK >= LOCAL_WORLD_SIZE: exit 1");
	like(res.err, "LOCAL_RANK=2 but there are only 2 local ranks",
	     "LOCAL_RANK too large: message");

	run_tool(none_true, NULL, &res);
	is_int(res.status, 0, "--mode none runs the command without any env");

	run_tool(missing, rank1, &res);
	is_int(res.status, 127, "missing command: exit 127");
	like(res.err, "cannot run /nonexistent/program",
	     "missing command: message");

	run_tool(strict, mig, &res);
	is_int(res.status, 1, "MIG: binding refused, command not run");
	is_str(res.out, "", "MIG: nothing ran");
	run_tool(best, mig, &res);
	is_int(res.status, 0, "MIG with --best-effort: command runs");
	is_str(res.out, "ran\n", "MIG with --best-effort: its output");
	like(res.err, "warning: running echo without binding",
	     "MIG with --best-effort: warning");
}

int main(void)
{
	test_expected_files();
	test_tool_errors();
	test_env_preview();
	test_bind_exec();
	return tap_done();
}
