/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs a program with a deadline and reads its output (core/util/runcap.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/runcap.h"
#include "util/strutil.h"
#include "util/sysutil.h"

void te_close_from(int lowfd)
{
	long max = sysconf(_SC_OPEN_MAX);
	int fd;

#ifdef __NR_close_range
	if (syscall(__NR_close_range, lowfd, ~0U, 0) == 0)
		return;
#endif
	if (max < 0 || max > 65536)
		max = 65536;
	for (fd = lowfd; fd < max; fd++)
		close(fd);
}

/* What the child needs, on the parent's side: with CLONE_VM the child
 * runs in the parent's memory until its execve, and says there why the
 * execve failed. */
struct spawn_req {
	const char *path;
	char *const *argv;
	char *const *envp;
	int out;
	pid_t parent;
	unsigned flags;
	volatile int exec_errno;
};

/* The child, in the parent's memory (CLONE_VM | CLONE_VFORK) until its
 * execve: only system calls here, no allocation, no stdio. A handler of
 * the parent must never run in it, so every caught signal goes back to
 * its default before the mask opens. Not instrumented by AddressSanitizer:
 * the frame on the borrowed stack never returns, and its poisoned
 * redzones would outlive the stack. */
__attribute__((no_sanitize_address)) static int child(void *arg)
{
	struct spawn_req *q = arg;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int sig, null;

	for (sig = 1; sig < NSIG; sig++) {
		struct sigaction cur;

		if (sigaction(sig, NULL, &cur) == 0 &&
		    cur.sa_handler != SIG_IGN && cur.sa_handler != SIG_DFL)
			sigaction(sig, &dfl, NULL);
	}
	sigaction(SIGPIPE, &dfl, NULL);
	/* Dies with the task: when Slurm kills a step whose task waits here,
	 * the task may go first, and a helper left behind is no longer
	 * Slurm's to find (seen: a helper of a killed step waiting for its
	 * deadline). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != q->parent) {
		q->exec_errno = ESRCH;
		_exit(126);
	}
	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(q->out, STDOUT_FILENO) < 0 ||
	    ((q->flags & TE_SPAWN_STDERR) && dup2(q->out, STDERR_FILENO) < 0)) {
		q->exec_errno = errno;
		_exit(126);
	}
	null = open("/dev/null", O_RDONLY);
	if (null >= 0 && null != STDIN_FILENO) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	te_close_from(3);
	execve(q->path, q->argv, q->envp);
	q->exec_errno = errno ? errno : ENOEXEC;
	_exit(127);
}

/* Starts the child sharing this process's memory until its execve (what
 * posix_spawn does, which cannot ask for PR_SET_PDEATHSIG): a fork would
 * copy the page tables of a task, a copy of slurmstepd (13 MB resident,
 * some 330 mappings), to throw them away at the execve: 2.2 ms instead
 * of 0.5 ms per start on this project's test machine, on the launch's
 * critical path. The parent waits until the child has run execve or
 * ended (the deadline starts after: an execve that hangs, as on a hung
 * network file system, is not cut short); signals stay blocked here
 * meanwhile. -1 with errno. */
static pid_t spawn_child(struct spawn_req *q)
{
	enum {
		STACK = 64 * 1024
	};
	sigset_t all, old;
	char *stack;
	pid_t pid;
	int e, cancel;

#if defined(__GLIBC__) && !__GLIBC_PREREQ(2, 24)
	/* older glibc's clone() with CLONE_VM clobbers the caller's cached
	 * pid and tid (glibc bug 19957): fork there */
	pid = fork();
	if (pid == 0)
		child(q);
	return pid;
#endif
	stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	sigfillset(&all);
	/* the child's open() and close() are cancellation points, on this
	 * thread's state */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	q->exec_errno = 0;
	pid = clone(child, stack + STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, q);
	e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_setcancelstate(cancel, NULL);
	munmap(stack, STACK);
	errno = e;
	return pid;
}

/* A descriptor that becomes readable when pid has ended (Linux 5.3 on),
 * or -1. */
static int pid_fd(pid_t pid)
{
#ifdef __NR_pidfd_open
	return (int)syscall(__NR_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* Waits for pid until deadline; then kills its group and reaps it. The
 * caller saw the output's end, which comes a moment before the child can
 * be reaped: the wait wakes when it has ended (pidfd), else polls from
 * 1 ms on (a fixed 10 ms cost every launch's first task up to 10 ms). */
static int reap(pid_t pid, int64_t deadline, int *status, int *killed)
{
	int pfd = pid_fd(pid), nap = 1, rc = -1;

	*killed = 0;
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		int64_t left;

		if (w == pid) {
			rc = 0;
			break;
		}
		if (w < 0 && errno != EINTR)
			break;
		if (te_now_ms() >= deadline && !*killed) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			*killed = 1;
			deadline = te_now_ms() + 5000; /* to be reaped */
		} else if (te_now_ms() >= deadline) {
			break;
		}
		left = deadline - te_now_ms();
		if (left < 1)
			left = 1;
		if (pfd >= 0) {
			struct pollfd p = { .fd = pfd, .events = POLLIN };

			poll(&p, 1, left > 1000 ? 1000 : (int)left);
			continue;
		}
		poll(NULL, 0, nap < left ? nap : (int)left);
		if (nap < 10)
			nap *= 2;
	}
	if (pfd >= 0)
		close(pfd);
	return rc;
}

int te_spawn_capture(const char *path, char *const argv[], char *const envp[],
		     int timeout_ms, unsigned flags, char *buf, size_t cap,
		     struct te_spawn_out *o, char *err, size_t errlen)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old_chld;
	int64_t deadline = te_now_ms() + timeout_ms;
	struct stat st;
	int pfd[2], rc = -1;
	struct spawn_req q = { .path = path,
			       .argv = argv,
			       .envp = envp,
			       .parent = getpid(),
			       .flags = flags };
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (cap < 2)
		return te_err(err, errlen, "no room for the output of %s",
			      path);
	buf[0] = '\0';
	if (stat(path, &st) < 0)
		return te_err(err, errlen, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return te_err(err, errlen, "%s is not a regular file", path);
	/* Run from task_init, as the job user: this is the permission execve
	 * will check. Said here in one line, rather than as an exit status
	 * 127 after the child's own complaint. */
	if (access(path, X_OK) < 0)
		return te_err(err, errlen, "%s is not executable: %s", path,
			      strerror(errno));
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return te_err(err, errlen, "pipe: %s", strerror(errno));
	/* waitpid needs SIGCHLD not ignored */
	sigaction(SIGCHLD, &dfl, &old_chld);
	q.out = pfd[1];
	pid = spawn_child(&q);
	close(pfd[1]);
	if (pid < 0) {
		te_snprintf(err, errlen, "cannot start %s: %s", path,
			    strerror(errno));
		close(pfd[0]);
		sigaction(SIGCHLD, &old_chld, NULL);
		return -1;
	}
	if (q.exec_errno) { /* it never ran: no output to wait for */
		int status;

		te_snprintf(err, errlen, "%s cannot be run: %s", path,
			    strerror(q.exec_errno));
		close(pfd[0]);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		sigaction(SIGCHLD, &old_chld, NULL);
		return -1;
	}
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		int64_t left = deadline - te_now_ms();
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(&p, 1, left > 1000 ? 1000 : (int)left) <= 0)
			continue;
		n = read(pfd[0], buf + o->got, cap - 1 - o->got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		o->got += (size_t)n;
		if (o->got >= cap - 1) {
			o->too_long = 1;
			break;
		}
	}
	buf[o->got] = '\0';
	close(pfd[0]);
	if (o->too_long)
		deadline = te_now_ms(); /* kill it now */
	if (reap(pid, deadline, &o->status, &o->killed) < 0) {
		te_snprintf(err, errlen, "%s (pid %ld) could not be reaped",
			    path, (long)pid);
		goto out;
	}
	rc = 0;
out:
	sigaction(SIGCHLD, &old_chld, NULL);
	return rc;
}

char **te_env_with(char *const envp[], const char *assignment)
{
	size_t n = 0, k = 0, nl = strcspn(assignment, "=");
	int placed = 0;
	char **out;

	while (envp && envp[n])
		n++;
	out = calloc(n + 2, sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(envp[i], assignment, nl) && envp[i][nl] == '=') {
			if (!placed++)
				out[k++] = (char *)assignment;
			continue; /* later duplicates would be read too */
		}
		out[k++] = envp[i];
	}
	if (!placed)
		out[k++] = (char *)assignment;
	out[k] = NULL;
	return out;
}

static int has_prefix(const char *s, const char *const list[])
{
	size_t i;

	for (i = 0; list && list[i]; i++)
		if (!strncmp(s, list[i], strlen(list[i])))
			return 1;
	return 0;
}

size_t te_env_count(char *const envp[])
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

long te_env_without(char *const envp[], const char *const drop[],
		    const char *const keep[], char **out, size_t max)
{
	size_t i, k = 0;

	if (max == 0)
		return -1;
	for (i = 0; envp && envp[i]; i++) {
		if (has_prefix(envp[i], drop) && !has_prefix(envp[i], keep))
			continue;
		if (k + 1 >= max) {
			out[k] = NULL;
			return -1;
		}
		out[k++] = envp[i];
	}
	out[k] = NULL;
	return (long)k;
}

char **te_env_without_dup(char *const envp[], const char *const drop[],
			  const char *const keep[])
{
	size_t n = te_env_count(envp) + 1;
	char **out = calloc(n, sizeof(*out));

	if (out)
		te_env_without(envp, drop, keep, out, n);
	return out;
}

int te_find_program(const char *name, char *path, size_t len)
{
	const char *p = getenv("PATH");
	char dir[4096];

	if (!p || !*p)
		p = "/usr/bin:/bin";
	while (*p) {
		size_t l = strcspn(p, ":");

		/* only absolute directories: "" or "." would be the cwd */
		if (l && l < sizeof(dir) && p[0] == '/') {
			memcpy(dir, p, l);
			dir[l] = '\0';
			if (te_snprintf(path, len, "%s/%s", dir, name) == 0 &&
			    access(path, X_OK) == 0)
				return 0;
		}
		p += l + (p[l] == ':');
	}
	return -1;
}
