/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the GPU checks' verdicts (core/health/health_gpu.c): a
 * healthy GPU, each fault (ECC, retired pages, remapped rows pending and
 * failed, a foreign process, a missing or lost GPU, a failed query), what
 * is not supported left out, the MPS server excepted, NVLink links down
 * against the site's count; a process's owner read from a stand-in /proc
 * tree. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "health/health.h"
#include "tap.h"

static struct te_health_set s;

static const char *one(const struct te_health_gpu *g, unsigned visible)
{
	te_health_set_init(&s, "n1");
	te_health_gpu_results(g, 1, visible, 1001, &s);
	return s.n == 1 ? s.r[0].text : "(not one result)";
}

static void test_verdicts(void)
{
	struct te_health_gpu g;

	memset(&g, 0, sizeof(g));
	g.index = 3;
	is_str(one(&g, 8),
	       "gpu 3 healthy (ECC, retired pages, remapped rows, processes)",
	       "a healthy GPU passes");
	is_int(s.r[0].verdict, TE_HV_PASS, "... pass");
	is_str(s.r[0].device, "gpu 3", "... device 'gpu 3'");
	g.remap_pending = 1;
	is_str(one(&g, 8), "gpu 3 remapped rows pending",
	       "remapped rows pending: the issue's line");
	is_int(s.r[0].verdict, TE_HV_FAIL, "... fail");
	is_str(s.r[0].value, "remap pending", "... its value");
	g.remap_pending = 0;
	g.remap_failed = 1;
	is_str(one(&g, 8), "gpu 3 remapped rows failed", "remapping failed");
	g.remap_failed = 0;
	g.ecc_uncorrected = 2;
	g.retired_pending = 1;
	is_str(one(&g, 8),
	       "gpu 3 volatile uncorrectable ECC errors 2, retired pages "
	       "pending",
	       "ECC errors and retired pages: both on one line");
	is_str(s.r[0].value, "ECC 2", "... the first one's value");
	memset(&g, 0, sizeof(g));
	g.index = 1;
	g.remap_rc = TE_NVML_NOT_SUPPORTED;
	g.retired_rc = TE_NVML_NOT_SUPPORTED;
	g.remap_pending = 1; /* not read: not supported */
	is_int((one(&g, 8), s.r[0].verdict), TE_HV_PASS,
	       "what the GPU does not support is left out, not failed");
	g.ecc_rc = 15;
	is_str(one(&g, 8), "gpu 1 ECC unreadable (GPU is lost, 15)",
	       "a failed query fails, naming NVML's code");
	memset(&g, 0, sizeof(g));
	g.index = 7;
	is_str(one(&g, 4), "gpu 7 not found (4 GPUs visible)",
	       "a job GPU NVML does not show: not found");
	is_str(s.r[0].value, "missing", "... value missing");
	g.index = 2;
	g.handle_rc = 15;
	is_str(one(&g, 4), "gpu 2 unreadable (GPU is lost, 15)",
	       "a GPU whose handle fails");
}

static void test_procs(void)
{
	struct te_health_gpu g;

	memset(&g, 0, sizeof(g));
	g.index = 0;
	g.n_procs = 3;
	g.procs[0] = (struct te_health_gpu_proc){ 100, 1ull << 30, 1001,
						  "python3", 0 };
	g.procs[1] = (struct te_health_gpu_proc){ 101, 1ull << 20, 0,
						  "nvidia-cuda-mps", 1 };
	g.procs[2] = (struct te_health_gpu_proc){ 102, 2048ull << 20, 1002,
						  "python\x01", 0 };
	is_str(one(&g, 1),
	       "gpu 0 memory held by pid 102 (uid 1002, python?, 2048 MiB), "
	       "not of this job",
	       "another uid's process fails; the job's and MPS do not");
	is_str(s.r[0].value, "pid 102", "... value the pid");
	/* review finding 4: a name is anyone's choice */
	g.n_procs = 1;
	g.procs[0] = (struct te_health_gpu_proc){ 103, 1ull << 20, 1002,
						  "nvidia-cuda-mps", 0 };
	like(one(&g, 1), "memory held by pid 103 (uid 1002",
	     "a process named nvidia-cuda-mps, not the MPS binary: foreign");
	g.procs[0].mps = 1;
	like(one(&g, 1), "memory held by pid 103 (uid 1002",
	     "... the MPS binary run by another user: foreign");
	g.procs[0].uid = 1001;
	like(one(&g, 1), "healthy", "... run by the job's uid: the job's");
	/* review finding 15: a user's name for a process in a drain reason */
	g.procs[0] = (struct te_health_gpu_proc){ 104, 1ull << 20, 1002,
						  "x: ok' $(id)", 0 };
	like(one(&g, 1), "(uid 1002, x??ok????id?, 1 MiB)",
	     "a process name of blanks, quotes and ':': each made '?'");
	g.procs[0] = (struct te_health_gpu_proc){ 55, 5ull << 20, -1, "?", 0 };
	like(one(&g, 1), "memory held by pid 55 (not in this node's /proc",
	     "a pid with no /proc entry is not of the job");
	/* review finding 2: no job named (HealthCheckProgram): any user's
	 * job may be on the GPU, so its processes are not checked */
	te_health_set_init(&s, "n1");
	te_health_gpu_results(&g, 1, 1, TE_HEALTH_NO_JOB, &s);
	is_str(s.r[0].text,
	       "gpu 0 healthy (ECC, retired pages, remapped rows; processes "
	       "not checked: no job given)",
	       "no job: another's process passes, saying processes were not "
	       "checked");
	g.procs_rc = TE_NVML_INSUFFICIENT_SIZE;
	like(one(&g, 1), "more than 32 processes hold memory",
	     "more processes than fit: fails");
	memset(&g, 0, sizeof(g));
	g.ecc_uncorrected = 1;
	g.retired_pending = 1;
	g.remap_failed = 1;
	g.remap_pending = 1;
	g.n_procs = TE_HEALTH_GPU_PROCS_MAX;
	for (int i = 0; i < g.n_procs; i++)
		g.procs[i] = (struct te_health_gpu_proc){ 100000 + i,
							  1ull << 40,
							  4000000 + i, "x", 0 };
	ok(strlen(one(&g, 1)) < TE_HEALTH_TEXT_MAX,
	   "every fault at once: one line within its size");
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

/* PROC/PID/exe pointing at a file named name, with mode. */
static void exe_link(const char *root, unsigned pid, const char *name,
		     mode_t mode)
{
	char dir[300], path[340], target[340];

	snprintf(dir, sizeof(dir), "%s/%u", root, pid);
	mkdir(dir, 0755);
	snprintf(target, sizeof(target), "%s/bin-%u", root, pid);
	mkdir(target, 0755);
	snprintf(target, sizeof(target), "%s/bin-%u/%s", root, pid, name);
	put(target, "binary");
	chmod(target, mode);
	snprintf(path, sizeof(path), "%s/exe", dir);
	unlink(path);
	if (symlink(target, path) < 0)
		printf("# symlink %s failed\n", path);
}

/* Review finding 4: the MPS server told by its binary, not its name. */
static void test_is_mps(const char *root)
{
	exe_link(root, 901, "python3", 0755);
	is_int(te_health_proc_is_mps(root, 901), 0,
	       "a python3 binary: not MPS");
	is_int(te_health_proc_is_mps(root, 999), 0, "no such process: not MPS");
	exe_link(root, 902, "nvidia-cuda-mps-server", 0775);
	is_int(te_health_proc_is_mps(root, 902), 0,
	       "an MPS binary writable by its group: not trusted");
	exe_link(root, 903, "nvidia-cuda-mps-server", 0755);
	if (getuid() == 0)
		is_int(te_health_proc_is_mps(root, 903), 1,
		       "a root-owned nvidia-cuda-mps-server: MPS");
	else
		is_int(te_health_proc_is_mps(root, 903), 0,
		       "an nvidia-cuda-mps-server not owned by root: not MPS");
}

static void test_owner(void)
{
	char root[256], dir[300], path[320], comm[16];
	const char *tmp = getenv("TMPDIR");
	long uid;

	snprintf(root, sizeof(root), "%s/te-proc-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	snprintf(dir, sizeof(dir), "%s/812", root);
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/status", dir);
	put(path, "Name:\tpython3\nState:\tS\nUid:\t1001\t1001\t1001\t1001\n");
	snprintf(path, sizeof(path), "%s/comm", dir);
	put(path, "python3\n");
	is_int(te_health_proc_owner(root, 812, &uid, comm, sizeof(comm)), 0,
	       "a process's owner reads");
	is_int(uid, 1001, "... its real uid");
	is_str(comm, "python3", "... its name");
	is_int(te_health_proc_owner(root, 813, &uid, comm, sizeof(comm)), -1,
	       "no such process: -1");
	is_int(uid, -1, "... uid unknown");
	snprintf(path, sizeof(path), "%s/status", dir);
	put(path, "Name:\tx\nUid:\tjunk\n");
	is_int(te_health_proc_owner(root, 812, &uid, comm, sizeof(comm)), -1,
	       "a junk Uid line: -1");
	test_is_mps(root);
	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	if (system(path) != 0)
		printf("# could not remove %s\n", root);
	is_int(te_health_proc_owner("/proc", (unsigned)getpid(), &uid, comm,
				    sizeof(comm)),
	       0, "this process in /proc");
	is_int(uid, (long)getuid(), "... is this uid's");
}

/* NVLink against the site's count (health_nvlink). */
static void test_links(void)
{
	struct te_health_gpu g;

	memset(&g, 0, sizeof(g));
	g.index = 3;
	g.n_links_seen = 18;
	g.n_links_up = 16;
	g.links_down = (1ul << 4) | (1ul << 9);
	is_str(one(&g, 8),
	       "gpu 3 healthy (ECC, retired pages, remapped rows, processes)",
	       "links down but health_nvlink not set: nothing said");
	g.links_want = 18;
	is_str(one(&g, 8),
	       "gpu 3 nvlink 2 of 18 links down (links 4, 9; want 18 up)",
	       "2 of 18 links down, 18 wanted: fails naming the links");
	is_int(s.r[0].verdict, TE_HV_FAIL, "... fail");
	is_str(s.r[0].value, "nvlink 16 up", "... its value");
	g.links_want = 16;
	is_str(one(&g, 8),
	       "gpu 3 healthy (ECC, retired pages, remapped rows, processes; "
	       "nvlink 16 of 18 up)",
	       "16 up, 16 wanted: passes, saying how many are up");
	g.links_want = 18;
	g.n_links_up = 17;
	g.links_down = 1ul << 17;
	is_str(one(&g, 8),
	       "gpu 3 nvlink 1 of 18 links down (link 17; want 18 up)",
	       "one link down: 'link', the last one named");
	g.n_links_seen = 12;
	g.n_links_up = 12;
	g.links_down = 0;
	is_str(one(&g, 8), "gpu 3 nvlink 12 links up (want 18)",
	       "fewer links than wanted, none down: fails");
	g.n_links_seen = g.n_links_up = 0;
	is_str(one(&g, 8), "gpu 3 no NVLink (want 18 links up)",
	       "no NVLink while the site expects it: fails");
	g.links_rc = TE_NVML_NOT_SUPPORTED;
	is_str(one(&g, 8), "gpu 3 no NVLink (want 18 links up)",
	       "... NVLink not supported: the same");
	g.links_rc = 15;
	is_str(one(&g, 8), "gpu 3 NVLink unreadable (GPU is lost, 15)",
	       "a failing NVLink query: fails, naming NVML's code");
	g.links_rc = 0;
	g.n_links_seen = 18;
	g.n_links_up = 18;
	g.remap_pending = 1;
	is_str(one(&g, 8), "gpu 3 remapped rows pending",
	       "all links up, rows pending: only the rows named");
}

int main(void)
{
	test_verdicts();
	test_links();
	test_procs();
	test_owner();
	is_str(te_health_nvml_rc_text(999), "NVML error", "an unknown code");
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
