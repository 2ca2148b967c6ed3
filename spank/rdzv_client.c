#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rdzv_client.h"
#include "strutil.h"

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void close_from(int lowfd)
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

static void child(const char *path, char *const argv[], char *const envp[],
		  int out) __attribute__((noreturn));
static void child(const char *path, char *const argv[], char *const envp[],
		  int out)
{
	sigset_t none;
	int null;

	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (dup2(out, STDOUT_FILENO) < 0)
		_exit(126);
	null = open("/dev/null", O_RDONLY);
	if (null >= 0 && null != STDIN_FILENO) {
		dup2(null, STDIN_FILENO);
		close(null);
	}
	close_from(3);
	execve(path, argv, envp);
	fprintf(stderr, "trainenv: cannot run %s: %s\n", path, strerror(errno));
	_exit(127);
}

/* Waits for pid until deadline; then kills its group and reaps it. */
static int reap(pid_t pid, long long deadline, int *status, int *killed)
{
	*killed = 0;
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -1;
		if (mono_ms() >= deadline && !*killed) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			*killed = 1;
			deadline = mono_ms() + 5000;	/* to be reaped */
		} else if (mono_ms() >= deadline) {
			return -1;
		}
		poll(NULL, 0, 10);
	}
}

int te_rdzv_spawn(const char *path, char *const argv[], char *const envp[],
		  int timeout_ms, struct te_rdzv_result *r, char *err,
		  size_t errlen)
{
	static char buf[TE_RDZV_OUT_MAX + 1];
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old_chld;
	long long deadline = mono_ms() + timeout_ms;
	struct stat st;
	size_t got = 0;
	int pfd[2], status = 0, killed = 0, too_long = 0, rc = -1;
	char perr[256];
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (stat(path, &st) < 0) {
		te_snprintf(err, errlen, "the rendezvous helper %s: %s", path,
			    strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		te_snprintf(err, errlen, "the rendezvous helper %s is not a "
			    "regular file", path);
		return -1;
	}
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		te_snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	/* waitpid needs SIGCHLD not ignored */
	sigaction(SIGCHLD, &dfl, &old_chld);
	pid = fork();
	if (pid < 0) {
		te_snprintf(err, errlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		sigaction(SIGCHLD, &old_chld, NULL);
		return -1;
	}
	if (pid == 0)
		child(path, argv, envp, pfd[1]);
	close(pfd[1]);
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		long long left = deadline - mono_ms();
		ssize_t n;

		if (left <= 0)
			break;
		if (poll(&p, 1, left > 1000 ? 1000 : (int)left) <= 0)
			continue;
		n = read(pfd[0], buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got >= sizeof(buf) - 1) {
			too_long = 1;
			break;
		}
	}
	close(pfd[0]);
	if (too_long)
		deadline = mono_ms();	/* kill it now */
	if (reap(pid, deadline, &status, &killed) < 0) {
		te_snprintf(err, errlen, "the rendezvous helper (pid %ld) "
			    "could not be reaped", (long)pid);
		goto out;
	}
	if (killed) {
		te_snprintf(err, errlen, "the rendezvous helper did not finish "
			    "within %d s and was killed", timeout_ms / 1000);
		goto out;
	}
	if (too_long) {
		te_snprintf(err, errlen, "the rendezvous helper wrote more than "
			    "%d bytes", TE_RDZV_OUT_MAX);
		goto out;
	}
	if (te_rdzv_parse(buf, got, r, perr, sizeof(perr)) < 0) {
		if (WIFSIGNALED(status))
			te_snprintf(err, errlen, "the rendezvous helper was "
				    "killed by signal %d", WTERMSIG(status));
		else if (WEXITSTATUS(status))
			te_snprintf(err, errlen, "the rendezvous helper exited "
				    "with status %d (%s)", WEXITSTATUS(status),
				    perr);
		else
			te_snprintf(err, errlen, "unreadable output from the "
				    "rendezvous helper: %s", perr);
		goto out;
	}
	rc = 0;
out:
	sigaction(SIGCHLD, &old_chld, NULL);
	return rc;
}
