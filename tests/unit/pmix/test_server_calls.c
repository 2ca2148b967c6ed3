/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit test of the barrier session's calls that wait for the node's PMIx
 * server (pmix/barrier_session.c): PMIx_Commit and PMIx_Finalize run on one
 * long-lived worker thread, the caller waits half a second at most, and no
 * new session opens while a commit or finalize of the last one is
 * unanswered (in this process: a forked child starts clean). PMIx is a
 * stand-in defined here: its PMIx_Commit can be held (a server that does
 * not answer) and notes the thread it ran on. */
#include "config.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "util/sysutil.h"
#include "tap.h"

/* ---------------------------------------------------------------- stand-in */

static pthread_mutex_t sim_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sim_cv = PTHREAD_COND_INITIALIZER;
static int commit_held;	    /* PMIx_Commit waits while set */
static int commits_running; /* inside PMIx_Commit now */
static int inits, commits, finalizes;
static pid_t commit_tids[16];

static pid_t tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

pmix_status_t PMIx_Init(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo)
{
	(void)info;
	(void)ninfo;
	memset(proc, 0, sizeof(*proc));
	strcpy(proc->nspace, "sim.1");
	proc->rank = 0;
	pthread_mutex_lock(&sim_mu);
	inits++;
	pthread_mutex_unlock(&sim_mu);
	return PMIX_SUCCESS;
}

pmix_status_t PMIx_Commit(void)
{
	pthread_mutex_lock(&sim_mu);
	if (commits < 16)
		commit_tids[commits] = tid();
	commits++;
	commits_running++;
	while (commit_held)
		pthread_cond_wait(&sim_cv, &sim_mu);
	commits_running--;
	pthread_cond_broadcast(&sim_cv);
	pthread_mutex_unlock(&sim_mu);
	return PMIX_SUCCESS;
}

pmix_status_t PMIx_Finalize(const pmix_info_t info[], size_t ninfo)
{
	(void)info;
	(void)ninfo;
	pthread_mutex_lock(&sim_mu);
	finalizes++;
	pthread_mutex_unlock(&sim_mu);
	return PMIX_SUCCESS;
}

pmix_status_t PMIx_Get(const pmix_proc_t *proc, const char key[],
		       const pmix_info_t info[], size_t ninfo,
		       pmix_value_t **val)
{
	(void)proc;
	(void)info;
	(void)ninfo;
	if (strcmp(key, PMIX_JOB_SIZE))
		return PMIX_ERR_NOT_FOUND; /* host, peers: the fallbacks */
	*val = calloc(1, sizeof(**val));
	if (!*val)
		return PMIX_ERR_NOMEM;
	(*val)->type = PMIX_UINT32;
	(*val)->data.uint32 = 2;
	return PMIX_SUCCESS;
}

pmix_status_t PMIx_Put(pmix_scope_t scope, const char key[], pmix_value_t *val)
{
	(void)scope;
	(void)key;
	(void)val;
	return PMIX_SUCCESS;
}

pmix_status_t PMIx_Fence_nb(const pmix_proc_t procs[], size_t nprocs,
			    const pmix_info_t info[], size_t ninfo,
			    pmix_op_cbfunc_t cbfunc, void *cbdata)
{
	return PMIX_ERR_NOT_SUPPORTED;
}

pmix_status_t PMIx_Get_nb(const pmix_proc_t *proc, const char key[],
			  const pmix_info_t info[], size_t ninfo,
			  pmix_value_cbfunc_t cbfunc, void *cbdata)
{
	return PMIX_ERR_NOT_SUPPORTED;
}

const char *PMIx_Error_string(pmix_status_t status)
{
	return status == PMIX_SUCCESS ? "SUCCESS" : "ERROR";
}

pmix_status_t PMIx_Info_load(pmix_info_t *info, const char *key,
			     const void *data, pmix_data_type_t type)
{
	memset(info, 0, sizeof(*info));
	return PMIX_SUCCESS;
}

void PMIx_Value_destruct(pmix_value_t *val)
{
	(void)val;
}

/* OpenPMIx 5 (trixie's) makes PMIX_LOAD_PROCID and PMIX_VALUE_FREE calls
 * into the library: without these the program does not link there. */
#if PMIX_VERSION_MAJOR >= 5
void PMIx_Load_procid(pmix_proc_t *p, const char *ns, pmix_rank_t rk)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->nspace, sizeof(p->nspace), "%s", ns ? ns : "");
	p->rank = rk;
}

void PMIx_Value_free(pmix_value_t *v, size_t n)
{
	(void)n;
	free(v);
}
#endif

static void hold_commit(int on)
{
	pthread_mutex_lock(&sim_mu);
	commit_held = on;
	pthread_cond_broadcast(&sim_cv);
	pthread_mutex_unlock(&sim_mu);
}

static int get_locked(int *v)
{
	int n;

	pthread_mutex_lock(&sim_mu);
	n = *v;
	pthread_mutex_unlock(&sim_mu);
	return n;
}

/* ---------------------------------------------------------------- tests */

static char err[512];

/* Commits on a server that answers: the same thread every time, not the
 * caller's. */
static void test_one_worker(void)
{
	struct te_pmix p;
	int i, same = 1;

	is_int(te_pmix_open(&p, err, sizeof(err)), 0, "a session opens");
	for (i = 0; i < 5; i++)
		is_int(te_pmix_commit(&p, err, sizeof(err)), 0,
		       "commit %d answered", i + 1);
	is_int(get_locked(&commits), 5, "five commits reached PMIx");
	for (i = 1; i < 5; i++)
		same &= commit_tids[i] == commit_tids[0];
	ok(same, "all five ran on one thread (no thread made per call)");
	ok(commit_tids[0] != tid(), "... not the caller's");
	is_int(te_pmix_server_silent_ms(&p), 0, "the server is not silent");
	te_pmix_close(&p);
	is_int(get_locked(&finalizes), 1, "close finalized");
}

/* A server that does not answer a commit: the caller's wait is bounded,
 * and the session cannot be torn down and opened again under it. */
static void test_stuck_commit(void)
{
	struct te_pmix p;
	int64_t t0;
	int inits_before, tries;

	is_int(te_pmix_open(&p, err, sizeof(err)), 0, "a second session opens");
	hold_commit(1);
	t0 = te_now_ms();
	is_int(te_pmix_commit(&p, err, sizeof(err)), 0,
	       "an unanswered commit returns (it goes on by itself)");
	ok(te_now_ms() - t0 < 2000, "... within its bound (%lld ms)",
	   (long long)(te_now_ms() - t0));
	is_int(get_locked(&commits_running), 1, "the commit still runs");
	ok(te_pmix_server_silent_ms(&p) > 0, "the server is named silent");
	t0 = te_now_ms();
	is_int(te_pmix_commit(&p, err, sizeof(err)), 0,
	       "a second commit behind it returns too");
	ok(te_now_ms() - t0 < 2000, "... within its bound");
	is_int(get_locked(&commits_running), 1,
	       "... without a second PMIx_Commit beside the first");
	t0 = te_now_ms();
	te_pmix_close(&p);
	ok(te_now_ms() - t0 < 2000, "close returns within its bound");
	inits_before = get_locked(&inits);
	err[0] = '\0';
	is_int(te_pmix_open(&p, err, sizeof(err)), -1,
	       "no new session while the last one's commit is unanswered");
	ok(strstr(err, "PMIx_Commit") != NULL, "the reason names it: %s", err);
	is_int(get_locked(&inits), inits_before, "... PMIx_Init not called");
	hold_commit(0);
	for (tries = 0; tries < 200; tries++) {
		if (te_pmix_open(&p, err, sizeof(err)) == 0)
			break;
		usleep(10000);
	}
	ok(tries < 200, "once the server answers, a session opens again");
	is_int(get_locked(&finalizes), 2,
	       "the last session's finalize ran (after its commit)");
	te_pmix_close(&p);
}

/* A child forked while a commit is unanswered has no worker thread: the
 * parent's pending state is not its own, so its session opens (the
 * worker state belongs to the process that started the worker). */
static void test_fork_while_stuck(void)
{
	struct te_pmix p;
	int status = -1, tries;
	pid_t child, got = 0;

	is_int(te_pmix_open(&p, err, sizeof(err)), 0, "a session opens");
	hold_commit(1);
	is_int(te_pmix_commit(&p, err, sizeof(err)), 0,
	       "an unanswered commit returns");
	is_int(get_locked(&commits_running), 1, "the commit still runs");
	fflush(stdout);
	child = fork();
	if (child == 0) {
		alarm(10); /* never hang */
		err[0] = '\0';
		if (te_pmix_open(&p, err, sizeof(err)) != 0) {
			printf("# child refused: %s\n", err);
			fflush(stdout);
			_exit(1);
		}
		te_pmix_close(&p);
		_exit(0);
	}
	ok(child > 0, "forked");
	for (tries = 0; child > 0 && tries < 1000 && got == 0; tries++) {
		got = waitpid(child, &status, WNOHANG);
		if (got == 0)
			usleep(10000);
	}
	if (got == 0 && child > 0) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
	}
	ok(got == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "the forked child opens a session though its parent's commit "
	   "is unanswered (status %d)",
	   status);
	hold_commit(0);
	te_pmix_close(&p);
	for (tries = 0; tries < 200; tries++) {
		if (te_pmix_open(&p, err, sizeof(err)) == 0)
			break;
		usleep(10000);
	}
	ok(tries < 200, "the parent's next session opens once answered");
	te_pmix_close(&p);
}

int main(void)
{
	test_one_worker();
	test_stuck_commit();
	test_fork_while_stuck();
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
