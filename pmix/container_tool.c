/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv-container: what trainenv decided for a task, kept and checked
 * in a container (pyxis and enroot; core/container/container_env.h).
 *
 *   trainenv-container enroot-hook
 *     Run by etc/enroot-hook.sh.in, installed as enroot's last system hook
 *     (hooks.d/99-trainenv.sh), as the job's user, with the environment of
 *     the node's first task (pyxis passes it to enroot). Removes every
 *     variable trainenv decided from the container's environment file
 *     (ENROOT_ENVIRON), which pyxis then copies over each task's, and adds
 *     TRAINENV_CONTAINER, the record of what it removed. Exit 1 with one
 *     line (which pyxis shows with enroot's log) when it cannot: the
 *     container does not start rather than replace trainenv's values
 *     unseen.
 *
 *   trainenv-container check PID --before EXE --fd N --rank R --node NODE
 *                               [--explain]
 *     Started by the plugin (task_init, detached, as the job's user, with
 *     the task's environment as trainenv left it) for the node's first
 *     task of a step that pyxis runs in a container. Waits until task PID
 *     has executed its program: descriptor N is the read end of a pipe
 *     whose write end the task holds close-on-exec, so it reads end of file
 *     the moment the task executes its program (or ends); then
 *     /proc/PID/exe is no longer EXE (slurmstepd). It reads the program's
 *     environment at once and compares it with
 *     what trainenv decided: a difference is one warning line on the
 *     task's stderr (srun's output); --explain also says what the
 *     container had set (TRAINENV_CONTAINER). Gives up silently when the
 *     task ends first; waits at most an hour (an image import can take
 *     minutes).
 *
 *   trainenv-container barrier-proxy --fd N
 *     Started by the plugin (task_init, detached, as the job's user, with
 *     the task's environment, before pyxis enters the container) for each
 *     task of a step that pyxis runs in a container, with PMIx.
 *     Descriptor N is a socket whose other end the task's program holds
 *     (TRAINENV_BARRIER_FD): each request of trainenv-nccl.so or the
 *     Python module there gets the job-wide barrier's answer, the barrier
 *     run here on the node as the task's rank: once for the shim's
 *     requests, anew for each of the module's (core/launch/barrier_proxy.h).
 *     Ends when every holder of the other end has closed it (the task
 *     ended). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "launch/barrier_proxy.h"
#include "container/container_env.h"
#include "hang/proctab.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "launch/version.h"
#include "trainenv/trainenv.h"

#define PREFIX "trainenv: "
#define WAIT_S 3600
#define ENVIRON_MAX (1024 * 1024)

static const char *own_getenv(void *ctx, const char *name)
{
	(void)ctx;
	return getenv(name);
}

/* Up to max bytes of the file at path; -1 (errno) when it cannot be read.
 * *cut: it had more. */
static ssize_t read_file(const char *path, char *buf, size_t max, int *cut)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	*cut = 0;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	while (got < max && (n = read(fd, buf + got, max - got)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		got += (size_t)n;
	}
	if (got == max) {
		char c;

		*cut = read(fd, &c, 1) == 1;
	}
	close(fd);
	return (ssize_t)got;
}

/* ---------------------------------------------------------------- hook */

static int enroot_hook(void)
{
	static struct te_cenv d;
	static char in[TE_CENV_FILE_MAX],
		out[TE_CENV_FILE_MAX + TE_CENV_REPORT_MAX + 64];
	char err[TE_ERR_MAX], tmp[4200], names[TE_CENV_REPORT_MAX];
	const char *path = getenv("ENROOT_ENVIRON");
	char *rec;
	size_t outlen;
	ssize_t len;
	int cut, removed;

	if (!path || path[0] != '/' || strlen(path) > 4096) {
		fprintf(stderr, PREFIX
			"enroot hook: ENROOT_ENVIRON is not an "
			"absolute path: run it as an enroot hook (hooks.d)\n");
		return 1;
	}
	if (!getenv("TRAINENV_SETTINGS"))
		return 0; /* no trainenv step: nothing decided */
	if (te_cenv_decided(own_getenv, NULL, &d, err, sizeof(err)) < 0) {
		fprintf(stderr, PREFIX "enroot hook: %s\n", err);
		return 1;
	}
	len = read_file(path, in, sizeof(in), &cut);
	if (len < 0 || cut) {
		fprintf(stderr, PREFIX "enroot hook: %s: %s\n", path,
			cut ? "larger than 1 MiB" : strerror(errno));
		return 1;
	}
	removed = te_cenv_filter(in, (size_t)len, &d, out, sizeof(out) - 1,
				 &outlen, err, sizeof(err));
	if (removed < 0) {
		fprintf(stderr, PREFIX "enroot hook: %s: %s\n", path, err);
		return 1;
	}
	out[outlen] = '\0';
	te_snprintf(tmp, sizeof(tmp), "%s.trainenv", path);
	if (te_replace_file(path, tmp, out) < 0) {
		fprintf(stderr, PREFIX "enroot hook: cannot rewrite %s: %s\n",
			path, strerror(errno));
		return 1;
	}
	/* the record is the file's last line */
	rec = out + outlen - 1;
	*rec = '\0';
	while (rec > out && rec[-1] != '\n')
		rec--;
	te_clean_text(names, sizeof(names), rec + strlen(TE_CENV_ENV) + 1,
		      sizeof(names) - 1);
	fprintf(stderr,
		PREFIX "enroot hook: kept trainenv's values of %d "
		       "variable%s the container set (%s)\n",
		removed, removed == 1 ? "" : "s", names);
	return 0;
}

/* ---------------------------------------------------------------- check */

/* The start time (field 22 of /proc/PID/stat), 0 when unreadable. */
static unsigned long long start_time(int pid)
{
	struct te_proc p;

	return te_proc_stat_read(pid, &p) == 0 ? p.start : 0;
}

/* Until the task executes its program: 1, or 0 when it ended first or
 * the wait is over. fd: the pipe (-1: polling only). */
static int wait_exec(int pid, unsigned long long t0, const char *before, int fd)
{
	time_t deadline = time(NULL) + WAIT_S;
	char path[64], exe[4200];
	long ms = 10;

	te_snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	for (;;) {
		ssize_t n;

		if (fd >= 0) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			char c;

			if (poll(&p, 1, 1000) > 0 && read(fd, &c, 1) <= 0) {
				close(fd); /* closed: exec (or its end) */
				fd = -1;
			}
		} else {
			te_sleep_ms(ms);
			if (ms < 500)
				ms *= 2;
		}
		if (start_time(pid) != t0)
			return 0; /* the task is gone */
		n = readlink(path, exe, sizeof(exe) - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (strcmp(exe, before))
				return 1; /* it runs its program */
		}
		if (time(NULL) > deadline)
			return 0;
	}
}

static int check(int pid, const char *before, int fd, const char *rank,
		 const char *node, int explain)
{
	static struct te_cenv d;
	static char env[ENVIRON_MAX];
	char path[64], err[TE_ERR_MAX], report[4096], text[4096];
	unsigned long long t0 = start_time(pid);
	const char *rec;
	ssize_t len;
	int cut, diff, enforced;

	if (!t0)
		return 0;
	if (te_cenv_decided(own_getenv, NULL, &d, err, sizeof(err)) < 0) {
		fprintf(stderr,
			PREFIX "warning: rank %s (node %s): container "
			       "check: %s\n",
			rank, node, err);
		return 1;
	}
	if (!wait_exec(pid, t0, before, fd))
		return 0;
	te_snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	len = read_file(path, env, sizeof(env), &cut);
	if (len < 0 || start_time(pid) != t0)
		return 0;
	diff = te_cenv_compare(&d, env, (size_t)len, cut, report,
			       sizeof(report), &enforced);
	rec = te_cenv_block_get(env, (size_t)len, TE_CENV_ENV);
	if (diff)
		fprintf(stderr,
			PREFIX
			"warning: rank %s (node %s): the "
			"container changed what trainenv decided%s: %s; %s\n",
			rank, node,
			enforced ? " (enforced values included)" : "", report,
			rec ? "after trainenv's enroot hook (a "
			      "user's enroot hook, the image's login scripts or pyxis "
			      "itself set them)"
			    : "trainenv's enroot hook did not "
			      "run: install it as hooks.d/99-trainenv.sh in enroot's "
			      "configuration directory");
	if (explain) {
		if (rec)
			te_cenv_record_text(rec, text, sizeof(text));
		if (!rec)
			fprintf(stderr, PREFIX
				"container: trainenv's enroot "
				"hook did not run in this step's container\n");
		else
			fprintf(stderr, PREFIX "container: %s\n", text);
		if (!diff)
			fprintf(stderr,
				PREFIX
				"container: rank %s sees every "
				"value trainenv decided (%d variables)\n",
				rank, d.n);
	}
	fflush(stderr);
	return 0;
}

/* ---------------------------------------------------------------- proxy */

/* The answer to one request: the barrier's, or why the request cannot
 * be served. "once" (the barrier before the first communicator) runs it
 * at the first such request and keeps the answer: the program's children
 * ask again. "each" (trainenv.barrier()) runs a new one every time. */
static int proxy_answer(const char *in, size_t n, char *out, size_t len)
{
	static int ran, failed;
	static char why[TRAINENV_ERR_MAX];
	char line[TRAINENV_ERR_MAX + 160], err[TRAINENV_ERR_MAX];
	double timeout;
	int proto, once;

	if (te_bproxy_parse_request(in, n, &proto, &timeout, &once) < 0)
		return te_bproxy_answer(out, len,
					"the barrier proxy got no "
					"barrier request");
	if (proto != te_protocol_version()) {
		te_snprintf(line, sizeof(line),
			    "trainenv in the container "
			    "speaks protocol %d, the node's barrier proxy %d "
			    "(trainenv %s): %s",
			    proto, te_protocol_version(), PACKAGE_VERSION,
			    TE_PROTOCOL_ADVICE);
		return te_bproxy_answer(out, len, line);
	}
	if (!once)
		return te_bproxy_answer(
			out, len,
			trainenv_barrier(timeout, err, sizeof(err)) < 0 ? err
									: NULL);
	if (!ran) {
		failed = trainenv_barrier(timeout, why, sizeof(why)) < 0;
		ran = 1;
	}
	return te_bproxy_answer(out, len, failed ? why : NULL);
}

/* 1 when the program's end of the socket is closed by every holder (or
 * shut for writing): no request can come any more. A recv of 0 bytes
 * alone does not tell: on a SOCK_SEQPACKET socket it is also an empty
 * datagram, which any process of the task can send. */
static int peers_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	while (poll(&p, 1, 0) < 0)
		if (errno != EINTR)
			return 1;
	return (p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) != 0;
}

static int barrier_proxy(int fd)
{
	char in[TE_BPROXY_MSG_MAX + 1], out[TE_BPROXY_MSG_MAX + 1];

	for (;;) {
		int reply, k;
		ssize_t n = te_bproxy_recv_request(fd, in, sizeof(in), &reply);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 && reply >= 0)
			close(reply);
		if (n < 0 || (n == 0 && peers_gone(fd)))
			return 0; /* every holder closed it */
		if (n == 0)
			continue; /* an empty datagram: no request */
		k = proxy_answer(in, (size_t)n, out, sizeof(out));
		if (reply >= 0) {
			/* the asker's own channel, fresh: the answer fits;
			 * an asker gone since is no reason to stop */
			if (k > 0)
				send(reply, out, (size_t)k,
				     MSG_NOSIGNAL | MSG_DONTWAIT);
			close(reply);
			continue;
		}
		while (k > 0 && send(fd, out, (size_t)k, MSG_NOSIGNAL) < 0) {
			if (errno != EINTR)
				return 0; /* nobody to answer */
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: trainenv-container enroot-hook\n"
		   "       trainenv-container check PID --before EXE [--fd N] "
		   "--rank R --node NODE [--explain]\n"
		   "       trainenv-container barrier-proxy --fd N\n");
}

int main(int argc, char **argv)
{
	const char *before = NULL, *rank = "?", *node = "?";
	char r[16], nd[64];
	uint64_t pid, fd = 0;
	int i, explain = 0, have_fd = 0;

	if ((i = te_protocol_args(&argc, &argv)) >= 0)
		return i;
	if (argc == 2 && !strcmp(argv[1], "enroot-hook"))
		return enroot_hook();
	if (argc == 4 && !strcmp(argv[1], "barrier-proxy") &&
	    !strcmp(argv[2], "--fd") && te_parse_u64(argv[3], 1023, &fd) == 0 &&
	    fd > 2)
		return barrier_proxy((int)fd);
	if (argc < 3 || strcmp(argv[1], "check") ||
	    te_parse_u64(argv[2], 4194304, &pid) < 0 || pid == 0) {
		usage(stderr);
		return 2;
	}
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--explain"))
			explain = 1;
		else if (i + 1 < argc && !strcmp(argv[i], "--before"))
			before = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--fd") &&
			 te_parse_u64(argv[i + 1], 1023, &fd) == 0 && fd > 2) {
			have_fd = 1;
			i++;
		} else if (i + 1 < argc && !strcmp(argv[i], "--rank"))
			rank = argv[++i];
		else if (i + 1 < argc && !strcmp(argv[i], "--node"))
			node = argv[++i];
		else {
			usage(stderr);
			return 2;
		}
	}
	if (!before) {
		usage(stderr);
		return 2;
	}
	te_clean_text(r, sizeof(r), rank, sizeof(r) - 1);
	te_clean_text(nd, sizeof(nd), node, sizeof(nd) - 1);
	return check((int)pid, before, have_fd ? (int)fd : -1, r, nd, explain);
}
