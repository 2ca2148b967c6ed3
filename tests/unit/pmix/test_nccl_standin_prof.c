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

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TE_STANDIN_PROFILER
#include "nccl_profiler.h"
#include "nccl_standin.h"
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
	return tap_done();
}
