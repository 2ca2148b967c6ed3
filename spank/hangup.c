/* The srun-side hang-up shield.
 *
 * srun answers SIGHUP (and SIGPIPE) by SIGKILLing every task, and resets an
 * inherited SIG_IGN, so neither nohup nor a SIGHUP handler in the tasks can
 * keep a step alive when the submitting terminal goes away. So, before srun
 * starts its signal thread, we fork:
 *
 *  - the child calls setsid() and carries on as srun: it has left the
 *    terminal's session, so the terminal's hang-up never reaches it;
 *  - the parent (the shield) keeps srun's pid, process group and terminal.
 *    It ignores SIGHUP, forwards the signals a user sends from the terminal
 *    or with kill (INT, QUIT, TERM, USR1, USR2, ALRM, WINCH, CONT) so that
 *    Ctrl-C and kill behave as Slurm documents, follows Ctrl-Z (stops and
 *    resumes srun with itself), and exits with srun's status.
 *
 * When srun's stdout/stderr is a terminal, pipe or socket, the shield also
 * relays it: srun writes into a pipe the shield holds open, so a terminal
 * that is gone (EIO) or a pipe reader that died (srun would get SIGPIPE and
 * kill the step) only makes the shield drop that output. Regular files are
 * left alone: writing to them cannot fail that way.
 *
 * Interactive sessions (--pty) are not shielded: a shell should end with its
 * terminal. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hangup.h"
#include "srunargs.h"
#include "strutil.h"

static const int forwarded[] = {
	SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT,
};

static int needs_relay(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return 0;
	return S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ||
	       S_ISSOCK(st.st_mode);
}

/* srun's /proc/self/cmdline holds its own options: --pty asks for an
 * interactive session that should die with its terminal. Only srun's
 * options count, not the command's ("srun prog --pty"). */
int te_hangup_is_pty(void)
{
	static char buf[65536];
	char *argv[1024];
	ssize_t n;
	size_t i = 0;
	int argc = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	while (i < (size_t)n && argc < 1023) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	return te_srun_asks_pty(argc, argv);
}

struct relay {
	int in;		/* pipe from srun, -1 when done */
	int out;	/* where it goes */
	int dead;	/* the destination failed: drop from now on */
};

static void relay_some(struct relay *r)
{
	char buf[65536];
	ssize_t n = read(r->in, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close(r->in);
		r->in = -1;
		return;
	}
	for (ssize_t off = 0; off < n && !r->dead;) {
		ssize_t w = write(r->out, buf + off, (size_t)(n - off));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* EIO: the terminal hung up; EPIPE: the reader is
			 * gone. Either way srun must not notice. */
			r->dead = 1;
			break;
		}
		off += w;
	}
}

static void exit_like(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		sigset_t s;

		signal(sig, SIG_DFL);
		sigemptyset(&s);
		sigaddset(&s, sig);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		kill(getpid(), sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void __attribute__((noreturn))
shield_loop(pid_t child, int sfd, struct relay *r, int nr)
{
	int status = 0, done = 0;
	int64_t deadline = 0;

	for (;;) {
		struct pollfd p[3];
		int np = 0, open_pipes = 0, i, timeout = -1;

		p[np].fd = sfd;
		p[np++].events = POLLIN;
		for (i = 0; i < nr; i++) {
			if (r[i].in < 0)
				continue;
			p[np].fd = r[i].in;
			p[np++].events = POLLIN;
			open_pipes++;
		}
		if (done) {
			/* srun is gone: its output may still be in the
			 * pipes, but a process it left behind could hold
			 * them open; do not wait for that forever. */
			int64_t left = deadline - now_ms();

			if (!open_pipes || left <= 0)
				exit_like(status);
			timeout = (int)left;
		}
		if (poll(p, (nfds_t)np, timeout) < 0 && errno != EINTR)
			exit_like(done ? status : (1 << 8));
		for (i = 1; i < np; i++) {
			if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			for (int k = 0; k < nr; k++)
				if (r[k].in == p[i].fd)
					relay_some(&r[k]);
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				int sig = (int)si.ssi_signo;

				if (sig == SIGCHLD) {
					int st;
					pid_t w;

					while ((w = waitpid(child, &st,
							    WNOHANG | WUNTRACED)) > 0) {
						if (WIFSTOPPED(st)) {
							/* Ctrl-Z stopped srun:
							 * stop with it so the
							 * shell sees the job
							 * stopped. */
							raise(SIGSTOP);
						} else if (!done) {
							status = st;
							done = 1;
							deadline = now_ms() + 2000;
						}
					}
				} else if (sig == SIGTSTP || sig == SIGTTIN ||
					   sig == SIGTTOU) {
					/* srun leads an orphaned process
					 * group, where the kernel drops
					 * SIGTSTP: only SIGSTOP stops it. */
					kill(child, SIGSTOP);
				} else if (!done) {
					kill(child, sig);
				}
			}
		}
	}
}

int te_hangup_shield(char *err, size_t errlen)
{
	int relay_fd[2] = { STDOUT_FILENO, STDERR_FILENO };
	int pipes[2][2] = { { -1, -1 }, { -1, -1 } };
	struct relay r[2];
	sigset_t set, old;
	int nr = 0, sfd, i;
	pid_t pid;

	for (i = 0; i < 2; i++) {
		if (!needs_relay(relay_fd[i]))
			continue;
		if (pipe2(pipes[i], O_CLOEXEC) < 0) {
			te_snprintf(err, errlen, "pipe: %s", strerror(errno));
			goto fail;
		}
	}
	/* Block what the shield handles before forking so that nothing sent
	 * in between is lost; the child restores srun's mask. */
	sigemptyset(&set);
	for (i = 0; i < (int)(sizeof(forwarded) / sizeof(forwarded[0])); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTSTP);
	sigaddset(&set, SIGTTIN);
	sigaddset(&set, SIGTTOU);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, &old) < 0) {
		te_snprintf(err, errlen, "sigprocmask: %s", strerror(errno));
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		te_snprintf(err, errlen, "fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		goto fail;
	}
	if (pid == 0) {
		/* The child goes on as srun, out of the terminal's session. */
		setsid();
		for (i = 0; i < 2; i++) {
			if (pipes[i][1] < 0)
				continue;
			dup2(pipes[i][1], relay_fd[i]);	/* clears CLOEXEC */
			close(pipes[i][0]);
			close(pipes[i][1]);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		return 0;
	}

	/* The shield. Never returns into srun. */
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigdelset(&set, SIGHUP);
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		/* Without signalfd the shield cannot forward anything: let it
		 * simply wait, srun keeps running unprotected from Ctrl-C
		 * forwarding but protected from hang-up. */
		int st;

		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		exit_like(st);
	}
	for (i = 0; i < 2; i++) {
		if (pipes[i][0] < 0)
			continue;
		close(pipes[i][1]);
		fcntl(pipes[i][0], F_SETFL, O_NONBLOCK);
		r[nr].in = pipes[i][0];
		r[nr].out = relay_fd[i];
		r[nr].dead = 0;
		nr++;
	}
	shield_loop(pid, sfd, r, nr);

fail:
	for (i = 0; i < 2; i++) {
		if (pipes[i][0] >= 0)
			close(pipes[i][0]);
		if (pipes[i][1] >= 0)
			close(pipes[i][1]);
	}
	return -1;
}
