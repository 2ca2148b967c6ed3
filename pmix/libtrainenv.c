/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libtrainenv: the application barrier (include/trainenv/trainenv.h).
 *
 * The same barrier as the launch one (pmix/barrier.c) run from inside the
 * training program: a fence without data plus rank 0's coordinator for
 * the report. Each call is one barrier "generation": all processes of a
 * rank (this one, `trainenv barrier` commands, earlier calls) count their
 * barriers in a per-rank file in the step's private PMIx directory, so
 * that every rank names the coordinator key of the same generation
 * without talking to the others. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include "barrier.h"
#include "netinfo.h"
#include "launch/rdzv_proto.h"
#include "settings/settings.h"
#include "util/strutil.h"
#include "launch/version.h"
#include "trainenv/trainenv.h"

static pthread_mutex_t lib_mu = PTHREAD_MUTEX_INITIALIZER;
static struct te_pmix sess;
static int held; /* trainenv_init() depth */
/* Rank 0's coordinator address, found once per held session: looking at
 * the interfaces and resolving the host name on every barrier would delay
 * every rank, which waits for rank 0. */
static char held_addr[TE_ADDR_MAX];
static unsigned local_seq; /* without a private directory */
/* Held session: what every barrier would look up again, found once
 * (the environment checks passed; the private directory, once checked). */
static int held_env_ok;
static char held_tmpdir[512];

const char *trainenv_version(void)
{
	return PACKAGE_VERSION;
}

static int have_pmix_env(char *err, size_t errlen)
{
	if (getenv("PMIX_RANK") && getenv("PMIX_NAMESPACE"))
		return 0;
	return te_err(err, errlen,
		      "no PMIx server for this process: run the "
		      "step with srun --mpi=pmix (or MpiDefault=pmix in "
		      "slurm.conf)");
}

/* torchrun's workers inherit the torchrun task's PMIx rank: one of them
 * may stand for it, not all. */
static int torchrun_worker_ok(char *err, size_t errlen)
{
	const char *lr = getenv("LOCAL_RANK");

	if (!getenv("TORCHELASTIC_RUN_ID") || !lr || !strcmp(lr, "0"))
		return 0;
	return te_err(err, errlen,
		      "torchrun worker with LOCAL_RANK=%.8s: the "
		      "workers of one torchrun share its PMIx rank, so only "
		      "LOCAL_RANK 0 may join the PMIx barrier (the others wait "
		      "for it with torch.distributed), or run 'trainenv "
		      "barrier' before torchrun",
		      lr);
}

/* The step's barrier seconds, from the effective settings the plugin
 * encoded (TRAINENV_SETTINGS, decoded and checked against the table's
 * rows): te_setting_barrier_s, the numeric barrier value, else the row's
 * built-in. Under --train-barrier=first-collective the value is a word and
 * the deadline is the site's number, which only the policy knows: the
 * plugin derives TRAINENV_BARRIER_TIMEOUT from the same row and policy
 * (te_setting_barrier_s in spank/stepd_rdzv.c), and it counts first. */
static double default_timeout(void)
{
	static struct te_config cfg;
	const char *s = getenv(TE_SETTINGS_ENV);
	const char *t = getenv(TE_BARRIER_TIMEOUT_ENV);
	char err[TE_ERR_MAX];
	uint64_t secs;

	if (t && te_parse_u64(t, te_setting_max(TE_S_BARRIER), &secs) == 0 &&
	    secs > 0)
		return (double)secs;
	if (!s || te_config_decode(&cfg, s, err, sizeof(err)) < 0)
		memset(&cfg, 0, sizeof(cfg)); /* unset: the built-in */
	return (double)te_setting_barrier_s(&cfg, NULL);
}

/* The next barrier generation of this rank, counted in a file shared by
 * every process of the rank on this node (kept open while a session is
 * held). */
static int seq_fd = -1;
/* A held session's counter: the file's page, shared with every process
 * that reads the file, so that a barrier counts without a system call. */
#define SEQ_DIGITS 10 /* the file: 10 digits and a newline */
static char *seq_map;

/* The next value of the counter in the mapped file (a held session's
 * process counts alone; see next_seq). */
static unsigned mapped_seq_next(void)
{
	uint64_t n = 0, v;
	int i;

	for (i = 0; i < SEQ_DIGITS; i++) {
		if (seq_map[i] < '0' || seq_map[i] > '9') {
			n = 0; /* not what we write: start again */
			break;
		}
		n = n * 10 + (uint64_t)(seq_map[i] - '0');
	}
	if (++n >= UINT32_MAX)
		n = 1;
	v = n;
	for (i = SEQ_DIGITS - 1; i >= 0; i--) {
		seq_map[i] = (char)('0' + v % 10);
		v /= 10;
	}
	seq_map[SEQ_DIGITS] = '\n';
	return (unsigned)n;
}

static unsigned next_seq(const char *dir, uint32_t rank)
{
	char path[600], buf[32];
	uint64_t n = 0;
	ssize_t got;
	int fd = seq_fd, wrote = 1;

	if (seq_map)
		return mapped_seq_next();
	if (fd < 0) {
		if (!te_private_dir_ok(dir) ||
		    te_snprintf(path, sizeof(path), "%s/trainenv-seq.%u", dir,
				rank) < 0)
			return ++local_seq;
		fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
			  0600);
		if (fd < 0)
			return ++local_seq;
	}
	/* A held session's process is the rank's only one in a barrier:
	 * no other process of the rank counts at the same time. */
	if (!held && flock(fd, LOCK_EX) < 0) {
		if (fd != seq_fd)
			close(fd);
		return ++local_seq;
	}
	got = pread(fd, buf, sizeof(buf) - 1, 0);
	if (got > 0) {
		buf[got] = '\0';
		if (buf[got - 1] == '\n')
			buf[got - 1] = '\0';
		if (te_parse_u64(buf, UINT32_MAX - 1, &n) < 0)
			n = 0;
	}
	n++;
	/* fixed width: no truncation needed */
	te_snprintf(buf, sizeof(buf), "%010llu\n", (unsigned long long)n);
	if (pwrite(fd, buf, strlen(buf), 0) != (ssize_t)strlen(buf)) {
		n = ++local_seq;
		wrote = 0;
	}
	if (!held)
		flock(fd, LOCK_UN);
	if (held && seq_fd < 0) {
		void *m;

		seq_fd = fd;
		/* the file holds SEQ_DIGITS + 1 bytes now: map them */
		m = wrote ? mmap(NULL, SEQ_DIGITS + 1, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0)
			  : MAP_FAILED;
		if (m != MAP_FAILED)
			seq_map = m;
	} else if (fd != seq_fd)
		close(fd);
	return (unsigned)n;
}

static int open_locked(char *err, size_t errlen)
{
	if (held || sess.open)
		return 0;
	return te_pmix_open(&sess, err, errlen);
}

/* Once per process: a plugin of another protocol started this task (its
 * settings and deadline in the environment may mean something else
 * here). One line on stderr; the program goes on. */
static void check_protocol_locked(void)
{
	static int checked;
	char line[512];

	if (checked)
		return;
	checked = 1;
	if (te_protocol_env_check(getenv(TE_PROTOCOL_ENV), line,
				  sizeof(line))) {
		fprintf(stderr, "trainenv: warning: %s\n", line);
		fflush(stderr);
	}
}

int trainenv_init(char *err, size_t errlen)
{
	int rc = 0;

	if (have_pmix_env(err, errlen) < 0)
		return -1;
	pthread_mutex_lock(&lib_mu);
	check_protocol_locked();
	if (!held && (rc = open_locked(err, errlen)) == 0)
		held = 1;
	else if (held)
		held++;
	pthread_mutex_unlock(&lib_mu);
	return rc;
}

void trainenv_finalize(void)
{
	pthread_mutex_lock(&lib_mu);
	if (held && --held == 0) {
		te_pmix_close(&sess);
		if (seq_map)
			munmap(seq_map, SEQ_DIGITS + 1);
		seq_map = NULL;
		if (seq_fd >= 0)
			close(seq_fd);
		seq_fd = -1;
		held_addr[0] = '\0';
		held_env_ok = 0;
		held_tmpdir[0] = '\0';
	}
	pthread_mutex_unlock(&lib_mu);
}

int trainenv_barrier(double timeout_s, char *err, size_t errlen)
{
	struct te_barrier_opts o = { 0 };
	struct te_barrier_result br;
	struct te_barrier *b;
	char addr[TE_ADDR_MAX] = "", ifname[TE_IFNAME_MAX], e[TE_MSG_MAX];
	const char *pattern;
	int rc = -1;

	if (!errlen)
		return -1;
	err[0] = '\0';
	if (!(timeout_s > 0))
		timeout_s = default_timeout();
	if (timeout_s > (double)te_setting_max(TE_S_BARRIER))
		timeout_s = (double)te_setting_max(TE_S_BARRIER);
	pthread_mutex_lock(&lib_mu);
	if (!(held && held_env_ok)) {
		if (have_pmix_env(err, errlen) < 0 ||
		    torchrun_worker_ok(err, errlen) < 0)
			goto out;
		if (held)
			held_env_ok = 1;
	}
	if (open_locked(e, sizeof(e)) < 0) {
		te_snprintf(err, errlen, "barrier: %s", e);
		goto out;
	}
	o.timeout_s = timeout_s;
	if (!(held && held_tmpdir[0])) {
		o.tmpdir = getenv("PMIX_SERVER_TMPDIR");
		/* kept only whole (a cut path would name another directory) */
		if (held && o.tmpdir && te_private_dir_ok(o.tmpdir) &&
		    te_strlcpy(held_tmpdir, o.tmpdir, sizeof(held_tmpdir)) >=
			    sizeof(held_tmpdir))
			held_tmpdir[0] = '\0';
	}
	if (held && held_tmpdir[0]) {
		o.tmpdir = held_tmpdir;
		o.tmpdir_ok = 1;
	}
	o.seq = next_seq(o.tmpdir, sess.me.rank);
	if (sess.me.rank == 0 && held && held_addr[0]) {
		o.addr = held_addr;
	} else if (sess.me.rank == 0) {
		pattern = getenv("NCCL_SOCKET_IFNAME");
		if (!pattern || !*pattern)
			pattern = getenv("GLOO_SOCKET_IFNAME");
		if (te_node_address(pattern, addr, sizeof(addr), ifname,
				    sizeof(ifname), e, sizeof(e)) < 0) {
			te_snprintf(err, errlen, "barrier: %s", e);
			/* the others wait for rank 0: let them pass the
			 * fence and fail on their own instead of hanging */
			goto close;
		}
		o.addr = addr;
		if (held)
			te_strlcpy(held_addr, addr, sizeof(held_addr));
	}
	b = te_barrier_prepare(&sess, &o, e, sizeof(e));
	if (!b) {
		te_snprintf(err, errlen, "barrier: %s", e);
		goto close;
	}
	rc = te_barrier_wait(b, &br);
	if (rc < 0)
		te_strlcpy(err, br.msg, errlen);
close:
	if (!held) {
		te_pmix_close(&sess);
		/* nobody of this node may start a fence while our session
		 * is still closing (see te_local_quiesce) */
		if (rc == 0)
			te_local_quiesce(&sess, o.tmpdir, o.seq, 3000);
	}
out:
	pthread_mutex_unlock(&lib_mu);
	return rc;
}
