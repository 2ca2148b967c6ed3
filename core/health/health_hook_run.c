/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: running the site's hook (health_hook=PATH) in a check's
 * child. The hook is an admin's command run as root, so its file must be
 * root's alone (as the MPS server's and the policy files are checked);
 * it gets nothing of the caller (no argument, a fixed PATH, stdin
 * /dev/null, no descriptor but its output pipe) and stays in the
 * check's process group, so that the runner's kill at the bound takes
 * it and whatever it started. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "health/health.h"
#include "util/runcap.h"
#include "util/strutil.h"

#define NOT_RUN(why) "hook: %s " why ": not run"

/* path's file into real when it may run as root: a regular, executable
 * file owned by root that group and others may not write, in a
 * directory alike. 0, or -1 with an error result added. */
static int trusted(const char *path, char *real, struct te_health_set *out)
{
	struct stat st;
	char *slash;

	if (!realpath(path, real) || stat(real, &st) < 0) {
		te_health_add(out, "hook", path, "", TE_HV_ERROR,
			      NOT_RUN("cannot be found (%s)"), path,
			      strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR)) {
		te_health_add(out, "hook", path, "", TE_HV_ERROR,
			      NOT_RUN("is not an executable regular file"),
			      path);
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		te_health_add(out, "hook", path, "", TE_HV_ERROR,
			      NOT_RUN("is not root-owned and writable by root "
				      "alone (uid %u, mode %04o)"),
			      path, (unsigned)st.st_uid,
			      (unsigned)(st.st_mode & 07777));
		return -1;
	}
	slash = strrchr(real, '/');
	*slash = '\0';
	if (stat(real[0] ? real : "/", &st) < 0 || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		te_health_add(out, "hook", path, "", TE_HV_ERROR,
			      NOT_RUN("is in a directory that is not root's "
				      "alone"),
			      path);
		return -1;
	}
	*slash = '/';
	return 0;
}

/* The hook's process: its output on 1 and 2, the exec's failure (its
 * errno) on errfd; never returns. */
__attribute__((noreturn)) static void exec_hook(const char *real,
						const char *path, int outfd,
						int errfd, pid_t parent)
{
	char *argv[] = { (char *)path, NULL };
	char *envp[] = { (char *)TE_HEALTH_HOOK_ENV_PATH, NULL };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int sig, null, e;

	/* dies with the check's child (it was that child's parent's
	 * death signal, which a fork does not inherit) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		goto fail;
	/* an ignored signal would stay ignored in the hook */
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	null = open("/dev/null", O_RDONLY);
	if (null < 0 || dup2(null, 0) < 0 || dup2(outfd, 1) < 0 ||
	    dup2(outfd, 2) < 0 || dup2(errfd, 3) < 0 ||
	    fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
		goto fail;
	errfd = 3;
	te_close_from(4);
	execve(real, argv, envp);
fail:
	e = errno ? errno : ENOEXEC;
	if (write(errfd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* Reads the hook's output (the first out_max bytes kept, the rest read
 * and dropped, so that a talkative hook is not killed by SIGPIPE) until
 * its end, or until the hook has exited and nothing more is there (a
 * process it left behind may hold the pipe open); then reaps it. The
 * runner's bound ends a hook that never does. */
static size_t read_and_reap(pid_t pid, int fd, char *buf, size_t out_max,
			    int *status)
{
	char sink[4096];
	size_t got = 0;
	int reaped = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (!reaped && waitpid(pid, status, WNOHANG) == pid)
			reaped = 1;
		if (poll(&p, 1, reaped ? 0 : 50) <= 0) {
			if (reaped)
				break;
			continue;
		}
		if (got < out_max)
			r = read(fd, buf + got, out_max - got);
		else
			r = read(fd, sink, sizeof(sink));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (got < out_max)
			got += (size_t)r;
	}
	while (!reaped && waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			break;
	return got;
}

void te_health_check_hook(const char *path, struct te_health_set *out)
{
	static char buf[TE_HEALTH_HOOK_OUT_MAX];
	char real[PATH_MAX];
	int op[2], ep[2], exec_err = 0, status = 0;
	pid_t pid, parent = getpid();
	size_t got;
	ssize_t r;

	if (!path || !path[0]) {
		te_health_add(out, "hook", "", "", TE_HV_NA,
			      "hook: not applicable: no health_hook set");
		return;
	}
	if (!te_health_hook_path_ok(path)) {
		te_health_add(out, "hook", "", "", TE_HV_ERROR,
			      "hook: the path is not absolute printable "
			      "text without '..': not run");
		return;
	}
	if (trusted(path, real, out) < 0)
		return;
	/* waitpid needs SIGCHLD not ignored */
	signal(SIGCHLD, SIG_DFL);
	if (pipe2(op, O_CLOEXEC) < 0)
		goto fail;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		exec_err = errno;
		close(op[0]);
		close(op[1]);
		errno = exec_err;
		goto fail;
	}
	pid = fork();
	if (pid == 0)
		exec_hook(real, path, op[1], ep[1], parent);
	exec_err = errno;
	close(op[1]);
	close(ep[1]);
	if (pid < 0) {
		close(op[0]);
		close(ep[0]);
		errno = exec_err;
		goto fail;
	}
	exec_err = 0;
	/* nothing (its end at the exec) or the exec's errno */
	while ((r = read(ep[0], &exec_err, sizeof(exec_err))) < 0 &&
	       errno == EINTR)
		;
	if (r != (ssize_t)sizeof(exec_err))
		exec_err = 0;
	close(ep[0]);
	got = read_and_reap(pid, op[0], buf, sizeof(buf), &status);
	close(op[0]);
	te_health_hook_result(path, exec_err, status, buf, got, out);
	return;
fail:
	te_health_add(out, "hook", path, "", TE_HV_ERROR,
		      "hook: %s could not be started (%s)", path,
		      strerror(errno));
}
