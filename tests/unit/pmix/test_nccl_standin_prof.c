/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_nccl_standin_prof: libnccl-profiler-trainenv.so loaded and driven by
 * the tests' stand-in libnccl (tests/integration/nccl_standin_prof.c), as
 * NCCL loads and drives it: NCCL_PROFILER_PLUGIN at the first
 * communicator, ncclProfiler_v5, _v4 or _v3 (STANDIN_PROFILER_VERSION),
 * init per communicator, the collectives' and their kernel channels'
 * events, finalize at ncclCommDestroy; the window as the plugin took it.
 * A child process per case (a process loads its plugin once). Without
 * NCCL_PROFILER_PLUGIN, or with "none", no plugin is loaded. TE_STANDIN_SO
 * and TE_NPROF_SO name the built libraries. */
#include "config.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define TE_STANDIN_PROFILER
#include "nccl_profiler.h"
#include "nccl_standin.h"
#include "report/failrep.h"
#include "tap.h"

#define ROUNDS 8

struct standin {
	ncclResult_t (*init)(ncclComm_t *, int, ncclUniqueId, int);
	ncclResult_t (*all_reduce)(const void *, void *, size_t, int, int,
				   ncclComm_t, void *);
	ncclResult_t (*all_gather)(const void *, void *, size_t, int,
				   ncclComm_t, void *);
	ncclResult_t (*destroy)(ncclComm_t);
};

/* Failing checks in the child say why on stdout (a TAP comment) and make
 * its exit status non-zero. */
static int fails;
#define CHECK(cond, ...)                     \
	do {                                 \
		if (!(cond)) {               \
			printf("# ");        \
			printf(__VA_ARGS__); \
			printf("\n");        \
			fails++;             \
		}                            \
	} while (0)

static int load(struct standin *s)
{
	void *lib = dlopen(TE_STANDIN_SO, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		printf("# %s: %s\n", TE_STANDIN_SO, dlerror());
		return -1;
	}
	s->init = (ncclResult_t(*)(ncclComm_t *, int, ncclUniqueId,
				   int))dlsym(lib, "ncclCommInitRank");
	*(void **)&s->all_reduce = dlsym(lib, "ncclAllReduce");
	*(void **)&s->all_gather = dlsym(lib, "ncclAllGather");
	*(void **)&s->destroy = dlsym(lib, "ncclCommDestroy");
	return s->init && s->all_reduce && s->all_gather && s->destroy ? 0 : -1;
}

/* Two communicators (rank 1 of 4, rank 0 of 2): all_reduce on A, whose
 * channels last 2 ms, all_gather on B, 0.5 ms; then the window. */
static void run_comms(const struct standin *s, int want_plugin)
{
	ncclUniqueId ia, ib;
	ncclComm_t a = NULL, b = NULL;
	struct te_nprof_comm out[TE_STRAG_COMMS];
	te_nprof_take_fn take;
	void *plugin;
	size_t n = 0, i;
	int r;

	memset(&ia, 'a', sizeof(ia));
	memset(&ib, 'b', sizeof(ib));
	CHECK(s->init(&a, 4, ia, 1) == ncclSuccess && a, "init A");
	CHECK(s->init(&b, 2, ib, 0) == ncclSuccess && b, "init B");
	for (r = 0; r < ROUNDS; r++) {
		setenv("STANDIN_WAIT_US", "2000", 1);
		CHECK(s->all_reduce(NULL, NULL, 1, 0, 0, a, NULL) == 0, "ar");
		setenv("STANDIN_WAIT_US", "500", 1);
		CHECK(s->all_gather(NULL, NULL, 1, 0, b, NULL) == 0, "ag");
	}
	plugin = dlopen(TE_NPROF_SO, RTLD_NOW | RTLD_NOLOAD);
	CHECK(!plugin == !want_plugin, "the plugin is %sloaded",
	      plugin ? "" : "not ");
	if (plugin) {
		take = (te_nprof_take_fn)dlsym(plugin, TE_NPROF_TAKE_SYMBOL);
		n = take ? take(out, TE_STRAG_COMMS, NULL) : 0;
		CHECK(n == 2, "2 communicators in the window, not %zu", n);
		for (i = 0; i < n; i++) {
			int is_a = out[i].st.op == TE_STRAG_OP_ALL_REDUCE;
			uint64_t want = is_a ? 2000000 : 500000;

			CHECK(out[i].st.count == ROUNDS, "%s: %llu collectives",
			      is_a ? "A" : "B",
			      (unsigned long long)out[i].st.count);
			CHECK(out[i].st.mean_ns >= want &&
				      out[i].st.mean_ns < want + 20000000,
			      "%s: mean wait %llu ns, want %llu at least",
			      is_a ? "A" : "B",
			      (unsigned long long)out[i].st.mean_ns,
			      (unsigned long long)want);
			CHECK(out[i].rank == (is_a ? 1 : 0), "%s: rank %d",
			      is_a ? "A" : "B", out[i].rank);
		}
	}
	CHECK(s->destroy(a) == 0 && s->destroy(b) == 0, "destroy");
}

/* Runs one case in a child with that environment; its exit status. */
static int run_case(const char *plugin, const char *version, int want)
{
	struct standin s;
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (plugin)
			setenv("NCCL_PROFILER_PLUGIN", plugin, 1);
		else
			unsetenv("NCCL_PROFILER_PLUGIN");
		if (version)
			setenv("STANDIN_PROFILER_VERSION", version, 1);
		if (load(&s) < 0)
			_exit(2);
		run_comms(&s, want);
		fflush(stdout);
		_exit(fails ? 1 : 0);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* ---- the sender: a rank's window to srun's listener ---- */

#define TOKEN "0123456789abcdef0123456789abcdef"

/* A loopback listener standing for srun's: its descriptor and port. */
static int listener(uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 8) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

/* What comes to fd within ms: the bytes of the connections that come
 * (one, or all within ms when all is set), "" if none. */
static void receive_some(int fd, int ms, int all, char *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t got = 0;
	int c;

	buf[0] = '\0';
	while (got + 1 < len && poll(&p, 1, ms) == 1 &&
	       (c = accept(fd, NULL, NULL)) >= 0) {
		struct pollfd q = { .fd = c, .events = POLLIN };

		while (got + 1 < len && poll(&q, 1, 2000) == 1) {
			ssize_t n = read(c, buf + got, len - 1 - got);

			if (n <= 0)
				break;
			got += (size_t)n;
		}
		close(c);
		if (!all)
			break;
	}
	buf[got] = '\0';
}

static void receive(int fd, int ms, char *buf, size_t len)
{
	receive_some(fd, ms, 0, buf, len);
}

/* A rank (comm_rank of communicator A, SLURM_PROCID procid, local rank
 * local) runs ROUNDS all_reduces with the sender asked for in a window of
 * 1 s, and waits for it. */
static void run_rank_child(uint16_t port, const char *kinds, int comm_rank,
			   const char *procid, const char *local)
{
	struct standin s;
	ncclUniqueId ia;
	ncclComm_t a = NULL;
	char env[64];
	int r;

	snprintf(env, sizeof(env), "%u:%s", port, TOKEN);
	setenv("TRAINENV_REPORT", env, 1);
	setenv("TRAINENV_REPORT_KINDS", kinds, 1);
	setenv("TRAINENV_STRAGGLER", "30", 1);
	setenv("TRAINENV_STRAGGLER_WINDOW", "1", 1);
	setenv("SLURM_SRUN_COMM_HOST", "127.0.0.1", 1);
	setenv("SLURMD_NODENAME", "n1", 1);
	setenv("SLURM_PROCID", procid, 1);
	setenv("SLURM_LOCALID", local, 1);
	setenv("NCCL_PROFILER_PLUGIN", TE_NPROF_SO, 1);
	unsetenv("STANDIN_PROFILER_VERSION");
	if (load(&s) < 0)
		_exit(2);
	memset(&ia, 'a', sizeof(ia));
	CHECK(s.init(&a, 4, ia, comm_rank) == ncclSuccess && a, "init A");
	setenv("STANDIN_WAIT_US", "300", 1);
	for (r = 0; r < ROUNDS; r++)
		CHECK(s.all_reduce(NULL, NULL, 1, 0, 0, a, NULL) == 0, "ar");
	/* ncclCommDestroy: NCCL may unload the plugin; the sender stays */
	CHECK(s.destroy(a) == 0, "destroy");
	sleep(2);
	fflush(stdout);
	_exit(fails ? 1 : 0);
}

static pid_t rank_case(int fd, uint16_t port, const char *kinds, int comm_rank,
		       const char *procid, const char *local)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fd);
		run_rank_child(port, kinds, comm_rank, procid, local);
	}
	return pid;
}

static pid_t sender_case(int fd, uint16_t port, const char *kinds)
{
	return rank_case(fd, port, kinds, 1, "5", "0");
}

/* Two ranks of one node: local rank 0 sends srun both ranks' waits, the
 * other sends srun nothing; alone, the other sends its own. */
static void test_node_sender(int fd, uint16_t port)
{
	const char *kinds = "health,steptime,straggler";
	char buf[16384], err[128], *line, *save = NULL;
	struct te_failrep rep;
	struct te_strag_summary sum;
	pid_t a, b;
	int st_a = -1, st_b = -1, lines = 0, from_other = 0, both = 0;
	int seen0 = 0, seen1 = 0;

	b = rank_case(fd, port, kinds, 1, "5", "1");
	a = rank_case(fd, port, kinds, 0, "4", "0");
	receive_some(fd, 3500, 1, buf, sizeof(buf));
	waitpid(a, &st_a, 0);
	waitpid(b, &st_b, 0);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (te_failrep_parse(line, TOKEN, &rep) < 0 ||
		    te_strag_line_parse(rep.text, strlen(rep.text), &sum, err,
					sizeof(err)) < 0)
			continue;
		lines++;
		from_other += rep.rank != 4;
		both += sum.nranks == 2 && sum.ranks[0].rank == 0 &&
			sum.ranks[1].rank == 1;
		seen0 |= sum.ranks[0].rank == 0;
		seen1 |= sum.ranks[sum.nranks - 1].rank == 1;
	}
	ok(WIFEXITED(st_a) && WEXITSTATUS(st_a) == 0 && WIFEXITED(st_b) &&
		   WEXITSTATUS(st_b) == 0 && lines > 0 && !from_other &&
		   seen0 && seen1,
	   "two local ranks: only local rank 0 (rank 4) sends srun lines (%d), "
	   "with both ranks' waits (%d lines with both)",
	   lines, both);
	b = rank_case(fd, port, kinds, 1, "5", "1");
	receive(fd, 2500, buf, sizeof(buf));
	waitpid(b, &st_b, 0);
	if ((line = strchr(buf, '\n')))
		*line = '\0';
	ok(te_failrep_parse(buf, TOKEN, &rep) == 0 && rep.straggler &&
		   rep.rank == 5,
	   "local rank 1 without a local rank 0 sends srun its own: %.80s",
	   buf);
}

static void test_sender(void)
{
	struct te_failrep rep;
	struct te_strag_summary sum;
	char buf[8192], err[128], *nl;
	uint16_t port;
	int fd = listener(&port), st = -1;
	pid_t pid;

	if (fd < 0) {
		ok(0, "a loopback listener");
		return;
	}
	pid = sender_case(fd, port, "health,steptime,straggler");
	receive(fd, 5000, buf, sizeof(buf));
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the rank ran");
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	ok(buf[0] && te_failrep_parse(buf, TOKEN, &rep) == 0 && rep.straggler &&
		   rep.rank == 5 && !strcmp(rep.node, "n1"),
	   "within the window, srun gets a straggler line with the token: "
	   "%.120s",
	   buf);
	ok(te_strag_line_parse(rep.text, strlen(rep.text), &sum, err,
			       sizeof(err)) == 0 &&
		   sum.window == 1 && !strcmp(sum.node, "n1") &&
		   sum.nranks == 1 && sum.ranks[0].rank == 1 &&
		   sum.ranks[0].count == ROUNDS &&
		   sum.ranks[0].mean_ns >= 300000 &&
		   sum.op == TE_STRAG_OP_ALL_REDUCE,
	   "its summary: window 1, the rank in its communicator (1), %d "
	   "all_reduce calls, each waiting 0.3 ms at least (%s)",
	   ROUNDS, rep.text);
	pid = sender_case(fd, port, "health,steptime");
	receive(fd, 2500, buf, sizeof(buf));
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0 && !buf[0],
	   "an srun that does not read straggler lines gets none");
	test_node_sender(fd, port);
	close(fd);
}

int main(void)
{
	static const char *const versions[] = { "5", "4", "3" };
	size_t i;

	for (i = 0; i < 3; i++)
		ok(run_case(TE_NPROF_SO, versions[i], 1) == 0,
		   "the stand-in NCCL drives ncclProfiler_v%s: 2 communicators, "
		   "%d collectives each, their waits in the window",
		   versions[i], ROUNDS);
	ok(run_case(NULL, NULL, 0) == 0,
	   "NCCL_PROFILER_PLUGIN unset: no plugin, the collectives go on");
	ok(run_case("none", NULL, 0) == 0,
	   "NCCL_PROFILER_PLUGIN=none: no plugin");
	ok(run_case("/nonexistent/libnccl-profiler-x.so", NULL, 0) == 0,
	   "a plugin that does not load: the collectives go on without");
	test_sender();
	return tap_done();
}
