/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scale simulation's driver (tests/bench/bench_scale.sh runs it once
 * per size): the launch rendezvous of N nodes of P ranks on this one
 * machine, with the real trainenv-rdzv, one process per simulated node,
 * over the stand-in libpmix (sim_pmix.c) and loopback TCP. Prints
 *   nodes=N ranks_per_node=P all_done_ms=X rank0_cpu_s=Y rank0_rss_mb=Z max_conns=C
 * then '#' lines with what else it saw; exit 0 when every node's result
 * says done, 1 when one does not, 2 on bad usage, 3 when the size cannot
 * run on this machine (it says why).
 *
 * Each node gets what slurmstepd gives its first task (spank/stepd_rdzv.c,
 * core/launch/rdzv_plan.c): a private PMIx directory (PMIX_SERVER_TMPDIR) where
 * its other P-1 ranks have left their arrival files, held locked as a
 * waiting task holds them (spank/stepd_rdzv_client.c; the driver holds the
 * locks, until the node's helper has written the node's result), and the
 * helper's arguments with --lead and a barrier. Every helper is started
 * and stopped first; then all go on together (rank 0's at a higher CPU
 * priority, as it would have its own node's CPUs), never within 2048 tasks
 * of the kernel's pid limit. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "settings/settings.h"
#include "launch/rdzv_proto.h"
#include "sim_conns.h"
#include "sim_table.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define TASK_RESERVE 2048 /* tasks left to the machine's other users */

struct node {
	pid_t pid;
	int status; /* exit status, once reaped */
	int state;  /* 0 not started, 1 running, 2 reaped */
};

static struct opts {
	const char *helper, *simlib, *connwatch, *base;
	unsigned nodes, ppn, barrier;
	int keep;
} o = { .base = "/dev/shm", .barrier = 0 };

static struct node *nodes;
static char dir[512];
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char width_s[8];	     /* --launch-tree-width: the site key's K */
static const char *ckpt_dir; /* --checkpoint-dir: the helpers' probe */

static int usage(void)
{
	fprintf(stderr,
		"usage: bench_scale --helper PATH --simlib DIR "
		"--connwatch SO --nodes N --ranks-per-node P [--dir BASE] "
		"[--barrier S] [--launch-tree-width K] [--checkpoint-dir DIR] [--keep]\n"
		"  N >= 1, 1 <= P <= %d; BASE (default /dev/shm) holds the "
		"run's files\n",
		SIM_PPN_MAX);
	return 2;
}

static int parse(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;

		if (!strcmp(a, "--keep")) {
			o.keep = 1;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (!strcmp(a, "--helper"))
			o.helper = v;
		else if (!strcmp(a, "--simlib"))
			o.simlib = v;
		else if (!strcmp(a, "--connwatch"))
			o.connwatch = v;
		else if (!strcmp(a, "--dir"))
			o.base = v;
		else if (!strcmp(a, "--nodes") &&
			 te_parse_u64(v, 1u << 20, &n) == 0 && n)
			o.nodes = (unsigned)n;
		else if (!strcmp(a, "--ranks-per-node") &&
			 te_parse_u64(v, SIM_PPN_MAX, &n) == 0 && n)
			o.ppn = (unsigned)n;
		else if (!strcmp(a, "--barrier") &&
			 te_parse_u64(v, 86400, &n) == 0 && n)
			o.barrier = (unsigned)n;
		else if (!strcmp(a, "--checkpoint-dir") && v[0] == '/')
			ckpt_dir = v;
		else if (!strcmp(a, "--launch-tree-width") &&
			 te_parse_u64(v, 1024, &n) == 0 && n >= 2)
			te_snprintf(width_s, sizeof(width_s), "%u",
				    (unsigned)n);
		else {
			fprintf(stderr, "bench_scale: bad %s '%s'\n", a, v);
			return usage();
		}
	}
	if (!o.helper || !o.simlib || !o.connwatch || !o.nodes || !o.ppn)
		return usage();
	if (!o.barrier) /* this machine starts about 1,000 a second */
		o.barrier = 120 + o.nodes / 50;
	return 0;
}

/* runnable and total tasks of the machine (/proc/loadavg) */
static int tasks_now(long *running, long *total)
{
	char buf[128];

	if (te_read_small("/proc/loadavg", buf, sizeof(buf), 0) < 0 ||
	    sscanf(buf, "%*s %*s %*s %ld/%ld", running, total) != 2)
		return -1;
	return 0;
}

static long read_long(const char *path)
{
	char buf[64];

	return te_read_small(path, buf, sizeof(buf), 0) < 0 ? -1 : atol(buf);
}

/* Whether N helpers fit here; says why not. */
static int feasible(void)
{
	long running, total, pid_max = read_long("/proc/sys/kernel/pid_max");
	struct rlimit rl;
	long avail_kb = -1;
	char buf[4096], *m;

	if (tasks_now(&running, &total) < 0 || pid_max < 0)
		return 0;
	if (total + (long)o.nodes + TASK_RESERVE > pid_max) {
		printf("nodes=%u ranks_per_node=%u impossible here: %u helper "
		       "processes, %ld tasks running, kernel.pid_max %ld\n",
		       o.nodes, o.ppn, o.nodes, total, pid_max);
		return -1;
	}
	/* the helpers inherit it; rank 0's raises its soft limit itself */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (te_read_small("/proc/meminfo", buf, sizeof(buf), 0) > 0 &&
	    (m = strstr(buf, "MemAvailable:")))
		avail_kb = atol(m + 13);
	/* measured: a waiting helper holds about 0.6 MB of its own */
	if (avail_kb >= 0 && avail_kb / 1024 < (long)o.nodes + 512) {
		printf("nodes=%u ranks_per_node=%u impossible here: %ld MB "
		       "available, about %u MB needed\n",
		       o.nodes, o.ppn, avail_kb / 1024, o.nodes + 512);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- setup */

static struct sim_table *table_make(char *path, size_t len)
{
	size_t size = sim_table_size((uint64_t)o.nodes * o.ppn);
	struct sim_table *t;
	int fd;

	te_snprintf(path, len, "%s/table", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)size) < 0) {
		perror(path);
		return NULL;
	}
	t = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (t == MAP_FAILED)
		return NULL;
	t->nodes = o.nodes;
	t->ppn = o.ppn;
	t->magic = SIM_MAGIC;
	return t;
}

/* The nodes' other ranks arrive before their helpers start: each file
 * made under another name, locked, renamed into place (as
 * spank/stepd_rdzv_client.c does), and held locked, as a waiting task holds it,
 * by a holder process until the end of the run. A holder keeps at most
 * HOLDER_FDS locks: the descriptor limit cannot be raised here past its
 * hard value. */
#define HOLDER_FDS 16000

static int holders_stop_fd = -1;

static int hold_range(unsigned a, unsigned b, int ready)
{
	struct rlimit rl;
	unsigned i, r;
	char c = 1;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (i = a; i < b; i++)
		for (r = 1; r < o.ppn; r++) {
			char ndir[540], path[600], tmp[620];
			int fd;

			te_snprintf(ndir, sizeof(ndir), "%s/n%u", dir, i + 1);
			te_snprintf(path, sizeof(path), "%s/%s", ndir,
				    TE_ARRIVED_DIR);
			if (mkdir(path, 0700) < 0 && errno != EEXIST) {
				perror(path);
				return 1;
			}
			te_snprintf(path, sizeof(path), TE_ARRIVED_FMT, ndir,
				    i * o.ppn + r);
			te_snprintf(tmp, sizeof(tmp), "%s.tmp", path);
			fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			if (fd < 0 || flock(fd, LOCK_SH) < 0 ||
			    rename(tmp, path) < 0) {
				perror(tmp);
				return 1;
			}
		}
	return write(ready, &c, 1) == 1 ? 0 : 1;
}

/* Starts the holders; 0 once every arrival file is there and locked. */
static int holders_start(void)
{
	unsigned per = o.ppn > 1 ? HOLDER_FDS / (o.ppn - 1) : o.nodes, a;
	int stop_pipe[2], ready[2], n = 0, got = 0;
	char c;

	if (o.ppn < 2)
		return 0;
	if (pipe2(stop_pipe, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0)
		return -1;
	for (a = 0; a < o.nodes; a += per, n++) {
		unsigned b = a + per < o.nodes ? a + per : o.nodes;
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0) {
			close(stop_pipe[1]);
			close(ready[0]);
			if (hold_range(a, b, ready[1]))
				_exit(1);
			/* until the driver closes its end */
			while (read(stop_pipe[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
	}
	close(stop_pipe[0]);
	close(ready[1]);
	holders_stop_fd = stop_pipe[1];
	while (got < n && read(ready[0], &c, 1) == 1)
		got++;
	close(ready[0]);
	return got == n ? 0 : -1;
}

static void holders_stop(void)
{
	if (holders_stop_fd >= 0)
		close(holders_stop_fd);
	holders_stop_fd = -1;
}

/* ---------------------------------------------------------------- start */

static char job_s[16];
static char env_path[600], env_log[600], env_lib[600], env_ns[64];
static char env_preload[640];
/* the helper's settings, as the plugin gives them (TRAINENV_SETTINGS) */
static char env_settings[sizeof(TE_SETTINGS_ENV) + 8192];

/* TRAINENV_SETTINGS=: barrier, version check, launch-tree-width and the
 * checkpoint dir of this run, as the plugin encodes them. 0 or -1. */
static int settings_env(void)
{
	static struct te_config cfg;
	const char *set[][2] = {
		{ "barrier", NULL },
		{ "version-check", "warn" },
		{ "launch-tree-width", width_s[0] ? width_s : NULL },
		{ "checkpoint-dir", ckpt_dir },
	};
	char barrier[16], err[TE_ERR_MAX];
	size_t i, n;

	te_snprintf(barrier, sizeof(barrier), "%u", o.barrier);
	set[0][1] = barrier;
	memset(&cfg, 0, sizeof(cfg));
	for (i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		int id = te_setting_find(set[i][0]);

		if (!set[i][1])
			continue;
		if (te_value_parse(id, set[i][1], 0, &cfg.v[id], err,
				   sizeof(err)) < 0) {
			fprintf(stderr, "bench_scale: %s: %s\n", set[i][0],
				err);
			return -1;
		}
		cfg.v[id].src = TE_SRC_OPTION;
	}
	te_snprintf(env_settings, sizeof(env_settings), "%s=", TE_SETTINGS_ENV);
	n = strlen(env_settings);
	return te_config_encode(&cfg, env_settings + n,
				sizeof(env_settings) - n);
}

static int start_node(unsigned i)
{
	char ndir[540], out[600], err[600];
	char e_rank[32], e_tmp[600], e_node[48], e_watch[640];
	/* the plugin's command line: the step's facts; the settings are in
	 * env_settings */
	char *argv[] = { (char *)"trainenv-rdzv",
			 (char *)"--job",
			 job_s,
			 (char *)"--step",
			 (char *)"0",
			 (char *)"--lead",
			 NULL };
	char *envp[] = { (char *)"PATH=/usr/bin:/bin",
			 (char *)"LANG=C",
			 env_lib,
			 env_path,
			 env_log,
			 env_ns,
			 e_rank,
			 e_tmp,
			 e_node,
			 e_watch,
			 env_preload,
			 env_settings,
			 (char *)"TE_SIM_PMIX_WAIT_S=600",
			 NULL };
	posix_spawn_file_actions_t fa;
	int rc;

	te_snprintf(ndir, sizeof(ndir), "%s/n%u", dir, i + 1);
	te_snprintf(out, sizeof(out), "%s/rdzv.out", ndir);
	te_snprintf(err, sizeof(err), "%s/rdzv.err", ndir);
	te_snprintf(e_rank, sizeof(e_rank), "PMIX_RANK=%u", i * o.ppn);
	te_snprintf(e_tmp, sizeof(e_tmp), "PMIX_SERVER_TMPDIR=%s", ndir);
	te_snprintf(e_node, sizeof(e_node), "SLURMD_NODENAME=" SIM_HOST_FMT,
		    i + 1);
	te_snprintf(e_watch, sizeof(e_watch), "TE_SIM_CONNWATCH=%s/conns.peak",
		    ndir);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	posix_spawn_file_actions_addopen(&fa, 2, err,
					 O_WRONLY | O_CREAT | O_TRUNC, 0600);
	rc = posix_spawn(&nodes[i].pid, o.helper, &fa, NULL, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		fprintf(stderr, "bench_scale: cannot start %s: %s\n", o.helper,
			strerror(rc));
		return -1;
	}
	nodes[i].state = 1;
	return 0;
}

/* ---------------------------------------------------------------- results */

struct outcome {
	unsigned done, failed_nodes;
	int rank0_conns;   /* connwatch's peak of rank 0's helper, -1 */
	int any_conns;	   /* the most any node's helper held */
	unsigned no_watch; /* helpers that left no count */
	double last_ms;	   /* realtime of the last node's result */
	char first_error[TE_RDZV_TEXT_MAX + 64];
};

static void results(struct outcome *r)
{
	static char buf[TE_RDZV_OUT_MAX + 1];
	unsigned i;

	memset(r, 0, sizeof(*r));
	r->rank0_conns = -1;
	for (i = 0; i < o.nodes; i++) {
		struct te_rdzv_result res;
		char path[600], perr[256];
		struct stat st;
		ssize_t n;
		int peak;

		te_snprintf(path, sizeof(path), "%s/n%u/conns.peak", dir,
			    i + 1);
		if (te_read_small(path, perr, sizeof(perr), 0) > 0 &&
		    sscanf(perr, "%d", &peak) == 1) {
			if (i == 0)
				r->rank0_conns = peak;
			if (peak > r->any_conns)
				r->any_conns = peak;
		} else {
			r->no_watch++;
		}

		te_snprintf(path, sizeof(path), "%s/n%u/" TE_NODE_RESULT, dir,
			    i + 1);
		n = te_read_small(path, buf, sizeof(buf), TE_READ_NOFOLLOW);
		if (n < 0 || stat(path, &st) < 0) {
			if (!r->first_error[0])
				te_snprintf(
					r->first_error, sizeof(r->first_error),
					"n%u: no result (helper exit status "
					"%d)",
					i + 1, nodes[i].status);
			r->failed_nodes++;
			continue;
		}
		if (st.st_mtim.tv_sec * 1e3 + st.st_mtim.tv_nsec / 1e6 >
		    r->last_ms)
			r->last_ms = st.st_mtim.tv_sec * 1e3 +
				     st.st_mtim.tv_nsec / 1e6;
		if (te_rdzv_parse(buf, (size_t)n, &res, perr, sizeof(perr)) <
			    0 ||
		    res.failed || !res.master_addr[0] || !res.master_port) {
			if (!r->first_error[0])
				te_snprintf(r->first_error,
					    sizeof(r->first_error), "n%u: %s",
					    i + 1,
					    res.failed ? res.error
						       : "no MASTER_ADDR");
			r->failed_nodes++;
			continue;
		}
		r->done++;
	}
}

static int rm_entry(const char *path, const struct stat *st, int type,
		    struct FTW *f)
{
	(void)st;
	(void)type;
	(void)f;
	remove(path);
	return 0;
}

/* ---------------------------------------------------------------- main */

static double cpu_s(const struct rusage *ru)
{
	return ru->ru_utime.tv_sec + ru->ru_stime.tv_sec +
	       (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
	long running, total;
	unsigned next = 0, reaped = 0, i;
	struct sim_conns conns = { 0 };
	struct rusage ru0 = { 0 }, self, kids;
	struct sim_table *tab;
	struct outcome out;
	char tpath[600];
	double t0, spawned_ms = 0;
	int64_t deadline, next_sample = 0, sample_gap = 5, rank0_end = 0;
	int64_t m0;
	int rc;

	if ((rc = parse(argc, argv)))
		return rc;
	if (access(o.helper, X_OK) < 0) {
		fprintf(stderr, "bench_scale: %s: %s\n", o.helper,
			strerror(errno));
		return 2;
	}
	if (feasible() < 0)
		return 3;
	te_snprintf(dir, sizeof(dir), "%s/te-sim.XXXXXX", o.base);
	if (!mkdtemp(dir)) {
		perror(dir);
		return 3;
	}
	nodes = calloc(o.nodes, sizeof(*nodes));
	if (!nodes)
		return 3;
	for (i = 0; i < o.nodes; i++) {
		te_snprintf(tpath, sizeof(tpath), "%s/n%u", dir, i + 1);
		if (mkdir(tpath, 0700) < 0) {
			perror(tpath);
			return 3;
		}
	}
	if (!(tab = table_make(tpath, sizeof(tpath))))
		return 3;
	if (holders_start() < 0) {
		fprintf(stderr, "bench_scale: the followers' arrival files "
				"could not be made\n");
		holders_stop();
		return 3;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	te_snprintf(job_s, sizeof(job_s), "%u",
		    1000u + (unsigned)getpid() % 9000u);
	if (settings_env() < 0) {
		fprintf(stderr, "bench_scale: cannot encode the settings\n");
		return 2;
	}
	te_snprintf(env_path, sizeof(env_path), "TE_SIM_PMIX=%s", tpath);
	te_snprintf(env_log, sizeof(env_log), "TE_SIM_LOG=%s/sim.log", dir);
	te_snprintf(env_lib, sizeof(env_lib), "LD_LIBRARY_PATH=%s", o.simlib);
	te_snprintf(env_ns, sizeof(env_ns), "PMIX_NAMESPACE=sim.%s", job_s);
	te_snprintf(env_preload, sizeof(env_preload), "LD_PRELOAD=%s",
		    o.connwatch);

	/* Every node's helper is made first, stopped at once (not timed);
	 * then all are let go together, as nodes start when srun launches
	 * the step: a helper started early would only wait, and N waiting
	 * helpers' polls (each looks at its ranks 5 times a second) would
	 * cost this machine's CPUs what N nodes' CPUs never notice. */
	for (i = 0; i < o.nodes && !stop; i++) {
		if (start_node(i) < 0)
			break;
		kill(nodes[i].pid, SIGSTOP);
	}
	if (i < o.nodes) {
		for (next = 0; next < i; next++)
			kill(nodes[next].pid, SIGKILL);
		holders_stop();
		while (wait(NULL) > 0)
			;
		nftw(dir, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
		return 3;
	}
	spawned_ms = 0;
	/* rank 0's helper stands for a node of its own: on this machine it
	 * must not wait for the CPU behind thousands of others */
	setpriority(PRIO_PROCESS, (id_t)nodes[0].pid, -10);
	t0 = realtime_ms();
	m0 = te_now_ms();
	deadline = m0 + (int64_t)o.barrier * 1000 + 30000;
	next = 0;
	while (reaped < o.nodes && !stop && te_now_ms() < deadline) {
		int64_t now;
		struct rusage ru;
		pid_t pid;
		int st;

		/* let them go, while the kernel has task ids to spare for the
		 * threads they start (two at most each) */
		if (next < o.nodes && tasks_now(&running, &total) == 0) {
			long room = (read_long("/proc/sys/kernel/pid_max") -
				     TASK_RESERVE - total) /
				    2;

			while (room-- > 0 && next < o.nodes)
				kill(nodes[next++].pid, SIGCONT);
			if (next == o.nodes)
				spawned_ms = (double)(te_now_ms() - m0);
		}
		while ((pid = wait4(-1, &st, WNOHANG, &ru)) > 0) {
			for (i = 0; i < o.nodes && nodes[i].pid != pid; i++)
				;
			if (i == o.nodes)
				continue;
			nodes[i].state = 2;
			nodes[i].status = WIFEXITED(st) ? WEXITSTATUS(st)
							: 128 + WTERMSIG(st);
			reaped++;
			if (i == 0) {
				ru0 = ru;
				rank0_end = te_now_ms();
			}
		}
		now = te_now_ms();
		if (nodes[0].state == 1 && now >= next_sample) {
			int64_t c0 = te_now_ms();

			sim_conns_sample(&conns, nodes[0].pid);
			/* the look costs this machine's CPUs: keep it under a
			 * fifth of the time */
			sample_gap = (te_now_ms() - c0) * 4;
			if (sample_gap < 10)
				sample_gap = 10;
			next_sample = now + sample_gap;
		}
		usleep(2000);
	}
	if (reaped < o.nodes) {
		fprintf(stderr,
			"bench_scale: %s; stopping the %u helpers left\n",
			stop ? "stopped" : "past the deadline",
			o.nodes - reaped);
		for (i = 0; i < o.nodes; i++)
			if (nodes[i].state == 1)
				kill(nodes[i].pid, SIGKILL);
	}
	holders_stop();
	while (wait(NULL) > 0) /* the holders, and any helper killed */
		;
	results(&out);
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	if (out.done == o.nodes) {
		printf("nodes=%u ranks_per_node=%u all_done_ms=%.0f rank0_cpu_s=%.4f "
		       "rank0_rss_mb=%.1f max_conns=%d\n",
		       o.nodes, o.ppn, out.last_ms - t0, cpu_s(&ru0),
		       ru0.ru_maxrss / 1024.0, out.rank0_conns);
		rc = 0;
	} else {
		printf("nodes=%u ranks_per_node=%u FAILED: %u of %u nodes done; "
		       "first: %s\n",
		       o.nodes, o.ppn, out.done, o.nodes, out.first_error);
		rc = 1;
	}
	printf("# nodes_done=%u/%u resumed_all_ms=%.0f rank0_wall_ms=%lld "
	       "max_conns_any_node=%d sampled_rank0_max_conns=%d (%lu looks at "
	       "/proc, listeners %s) rank0_dmodex_served=%u driver_cpu_s=%.2f "
	       "children_cpu_s=%.2f\n",
	       out.done, o.nodes, spawned_ms, (long long)(rank0_end - m0),
	       out.any_conns, conns.max_conns, conns.samples,
	       conns.diag_ok ? "excluded" : "counted",
	       atomic_load(&sim_slot(tab, 0)->served), cpu_s(&self),
	       cpu_s(&kids));
	if (out.no_watch)
		printf("# %u helpers left no connection count (killed, or "
		       "the preload did not load)\n",
		       out.no_watch);
	{
		char log[600], buf[4096];
		ssize_t n;

		te_snprintf(log, sizeof(log), "%s/sim.log", dir);
		n = te_read_small(log, buf, sizeof(buf), 0);
		if (n > 0) { /* what the stand-in did not simulate */
			char *nl = strchr(buf, '\n');

			if (nl)
				*nl = '\0';
			printf("# sim_pmix: the helpers asked for something not "
			       "simulated, first: %s (all: %s/sim.log)\n",
			       buf, o.keep ? dir : "removed");
		}
	}
	if (o.keep)
		printf("# files kept in %s\n", dir);
	else
		nftw(dir, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
	sim_conns_free(&conns);
	return rc;
}
