/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hang-up shield's way out of the terminal's session for srun: fork(),
 * or srun started again when it already runs threads (Slurm 26.05 starts
 * its connection manager before any SPANK callback).
 *
 * te_hup_split sets up the pipes and signals the shield needs before srun
 * splits off, starts srun either way, and undoes it all when it cannot.
 *
 * A child made by fork() holds only the forking thread; 26.05's connection
 * manager marks itself shut down in such a child (pthread_atfork) and
 * srun's step launch, which needs it, waits forever. So the shield's child
 * does not carry on as srun: it executes srun again (srun's binary, the
 * command line and starting environment srun was given, plus a marker),
 * in a session of its own. posix_spawn does that without running srun's
 * fork handlers and says whether the execve worked, so that a failure
 * leaves srun as it was.
 *
 * The re-executed srun prints again whatever srun printed before its
 * plugins' init_post_opt (option warnings, -v's list, trainenv's own
 * warnings): its stderr goes to a pipe the shield holds (srun_hangup.c), and in
 * init_post_opt the plugin puts srun's real stderr back and says so on a
 * pipe of its own (te_hup_reexeced; the end of the held pipe alone cannot
 * tell that from srun's exit). The shield drops what was held then, and
 * writes it out when srun ends before that (its errors).
 *
 * The shield itself stays in the original process, whose other threads
 * would take the signals meant for the shield (a process-directed signal
 * goes to any thread that does not block it): te_hup_quiet_threads makes
 * each of them block those. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "srun_hangup_exec.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define ARGS_MAX (1024 * 1024)	  /* srun's command line */
#define ENV_MAX (4 * 1024 * 1024) /* its environment */
#define QUIET_MS 1000		  /* for every thread to block them */
#define QUIET_RESEND 50		  /* rounds (1 ms) between two sends */

/* The marker this process was started with (its plugin's first look). */
static int marker_ok, marker_err = -1, marker_tell = -1, word_fd = -1;

int te_hup_marker_valid(void)
{
	return marker_ok;
}

int te_hup_word_fd(void)
{
	return word_fd;
}

void te_hup_word_set(int fd)
{
	word_fd = fd;
}

static int fd_ok(long fd)
{
	return fd == -1 || (fd > 2 && fd < 65536);
}

/* At load: the marker never reaches the tasks' environment, nor an srun
 * that a task runs (its parent is not the shield). */
__attribute__((constructor)) static void take_marker(void)
{
	const char *v = getenv(TE_SHIELD_ENV);
	char *end;
	long pid, fd = 0, tell = 0;

	if (!v)
		return;
	errno = 0;
	pid = strtol(v, &end, 10);
	if (*end == ':')
		fd = strtol(end + 1, &end, 10);
	if (*end == ':')
		tell = strtol(end + 1, &end, 10);
	if (!errno && *end == ':' && pid > 1 && pid == (long)getppid() &&
	    fd_ok(fd) && fd_ok(tell)) {
		marker_ok = 1;
		marker_err = (int)fd;
		marker_tell = (int)tell;
		/* the name ps and pkill know srun by, not "exe" */
		if (end[1] && strlen(end + 1) < 16)
			prctl(PR_SET_NAME, end + 1, 0, 0, 0);
		v = getenv(TE_SHIELD_WORD_ENV);
		fd = v ? strtol(v, &end, 10) : -1;
		if (v && !*end && fd > 2 && fd < 65536 &&
		    fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0)
			word_fd = (int)fd;
	}
	unsetenv(TE_SHIELD_ENV);
	unsetenv(TE_SHIELD_WORD_ENV);
}

int te_hup_reexeced(void)
{
	if (!marker_ok)
		return 0;
	marker_ok = 0;
	if (marker_err > 2 && fcntl(marker_err, F_GETFD) >= 0) {
		dup2(marker_err, STDERR_FILENO);
		close(marker_err);
	}
	if (marker_tell > 2 && fcntl(marker_tell, F_GETFD) >= 0) {
		ssize_t rc = write(marker_tell, "1", 1);

		(void)rc; /* the shield's deadline covers a failure */
		close(marker_tell);
	}
	return 1;
}

int te_hup_pipe(int p[2])
{
	int i;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	for (i = 0; i < 2; i++) {
		int h = p[i] > 2 ? p[i] : fcntl(p[i], F_DUPFD_CLOEXEC, 3);

		if (h < 0) {
			close(p[0]);
			close(p[1]);
			p[0] = p[1] = -1;
			return -1;
		}
		if (h != p[i])
			close(p[i]);
		p[i] = h;
	}
	return 0;
}

/* A field of /proc/self[/task/TID]/status, as a number in base; -1 when
 * the file or the field is missing (a thread that has ended). */
static long long status_field(pid_t tid, const char *field, int base)
{
	char path[64], buf[4096], *p;
	size_t fl = strlen(field);

	if (tid)
		snprintf(path, sizeof(path), "/proc/self/task/%d/status",
			 (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	if (te_read_small(path, buf, sizeof(buf), 0) < 0)
		return -1;
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, field, fl) && p[fl] == ':')
			return (long long)strtoull(p + fl + 1, NULL, base);
	return -1;
}

int te_hup_thread_count(void)
{
	long long n = status_field(0, "Threads", 10);

	return n > 0 && n < 1000000 ? (int)n : 0;
}

/* The asynchronous signals, which no thread of srun's may take from now
 * on. The synchronous ones (SEGV, BUS, FPE, ILL, TRAP, SYS) go to the
 * thread that caused them, and glibc's own (32, 33) stay open. */
static const int quiet_sigs[] = {
	SIGHUP,	 SIGINT,  SIGQUIT,   SIGUSR1, SIGUSR2,	SIGPIPE, SIGALRM,
	SIGTERM, SIGCHLD, SIGCONT,   SIGTSTP, SIGTTIN,	SIGTTOU, SIGURG,
	SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGWINCH, SIGIO,	 SIGPWR,
};
#define NQUIET (sizeof(quiet_sigs) / sizeof(quiet_sigs[0]))

/* The threads that ran quiet_handler, and the signal that carries it. */
#define ACKED_MAX 1024
static pid_t acked[ACKED_MAX];
static int nacked, quiet_sig;

/* Runs on the thread it was sent to: the mask restored when the handler
 * returns is the one in its context, so the thread goes on blocking. */
static void quiet_handler(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	int k;
	size_t i;

	(void)sig;
	(void)si;
	for (i = 0; i < NQUIET; i++)
		sigaddset(&uc->uc_sigmask, quiet_sigs[i]);
	k = __atomic_fetch_add(&nacked, 1, __ATOMIC_SEQ_CST);
	if (k < ACKED_MAX)
		__atomic_store_n(&acked[k], (pid_t)syscall(SYS_gettid),
				 __ATOMIC_SEQ_CST);
}

/* tid has run quiet_handler, or has it pending (a thread that pthread_create
 * has not yet given its mask to blocks everything: it takes that signal,
 * its own, before any the process gets, as soon as it takes any). */
static int settled(pid_t tid, unsigned long long bit)
{
	int i, n = __atomic_load_n(&nacked, __ATOMIC_SEQ_CST);
	long long pnd;

	for (i = 0; i < n && i < ACKED_MAX; i++)
		if (__atomic_load_n(&acked[i], __ATOMIC_SEQ_CST) == tid)
			return 1;
	pnd = status_field(tid, "SigPnd", 16);
	return pnd < 0 || ((unsigned long long)pnd & bit); /* or gone */
}

/* Each thread but this one gets a signal whose handler makes it block
 * quiet_sigs. Every round (1 ms) lists the threads again, so that one
 * started by a thread not yet quiet is seen too. The handler stays: the
 * shield never returns into srun (te_hup_quiet_undo where it must). */
int te_hup_quiet_threads(char *err, size_t errlen)
{
	struct sigaction sa, old;
	pid_t me = (pid_t)syscall(SYS_gettid), pid = getpid();
	int64_t deadline = te_now_ms() + QUIET_MS;
	int sig, loud = 0, round;

	/* a real-time signal nobody here handles carries the request */
	for (sig = SIGRTMIN + 4; sig <= SIGRTMAX; sig++)
		if (sigaction(sig, NULL, &old) == 0 &&
		    !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			break;
	if (sig > SIGRTMAX)
		return te_err(err, errlen,
			      "no free real-time signal to reach "
			      "srun's threads with");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = quiet_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0)
		return te_err(err, errlen, "sigaction: %s", strerror(errno));
	quiet_sig = sig;
	for (round = 0;; round++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		if (!d) {
			te_err(err, errlen, "/proc/self/task: %s",
			       strerror(errno));
			te_hup_quiet_undo();
			return -1;
		}
		loud = 0;
		while ((e = readdir(d))) {
			pid_t tid = (pid_t)atoi(e->d_name);

			if (tid <= 0 || tid == me ||
			    settled(tid, 1ULL << (sig - 1)))
				continue;
			loud++;
			if (round % QUIET_RESEND == 0)
				syscall(SYS_tgkill, pid, tid, sig);
		}
		closedir(d);
		if (!loud || te_now_ms() >= deadline)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	}
	if (!loud)
		return 0;
	te_hup_quiet_undo();
	return te_err(err, errlen,
		      "%d of srun's threads did not block the "
		      "signals within %d ms",
		      loud, QUIET_MS);
}

void te_hup_quiet_undo(void)
{
	struct sigaction sa;

	if (!quiet_sig)
		return;
	/* SIG_IGN drops what is still pending before the default is back */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(quiet_sig, &sa, NULL);
	sa.sa_handler = SIG_DFL;
	sigaction(quiet_sig, &sa, NULL);
	quiet_sig = 0;
}

/* Reads a NUL-separated /proc file whole into *text; the entries into a
 * new array with room for extra more. Their count, or -1. */
static int read_list(const char *path, size_t max, int extra, char **text,
		     char ***list, char *err, size_t errlen)
{
	char *t = malloc(max + 1), **l;
	ssize_t n = t ? te_read_small(path, t, max + 1, TE_READ_WHOLE) : -1;
	size_t k;
	int count = 0;

	*text = NULL;
	*list = NULL;
	if (n < 0) {
		te_err(err, errlen, "%s: %s", path,
		       t ? strerror(errno) : "out of memory");
		free(t);
		return -1;
	}
	for (k = 0; k < (size_t)n; k += strlen(t + k) + 1)
		count++;
	l = calloc((size_t)count + (size_t)extra + 1, sizeof(*l));
	if (!l) {
		free(t);
		return te_err(err, errlen, "out of memory");
	}
	count = 0;
	for (k = 0; k < (size_t)n; k += strlen(t + k) + 1)
		l[count++] = t + k;
	*text = t;
	*list = l;
	return count;
}

int te_hup_argv_read(struct te_hup_argv *a, char *err, size_t errlen)
{
	size_t ml = strlen(TE_SHIELD_ENV "=");
	int n, i, j;

	memset(a, 0, sizeof(*a));
	/* its path, so that the kernel names the process as before; a binary
	 * replaced since is still there as /proc/self/exe */
	n = (int)readlink("/proc/self/exe", a->exe, sizeof(a->exe) - 1);
	a->exe[n > 0 ? n : 0] = '\0';
	if (n <= 0 || n >= (int)sizeof(a->exe) - 1 || a->exe[0] != '/' ||
	    access(a->exe, X_OK) < 0)
		te_snprintf(a->exe, sizeof(a->exe), "/proc/self/exe");
	n = read_list("/proc/self/cmdline", ARGS_MAX, 0, &a->args, &a->argv,
		      err, errlen);
	if (n < 1) {
		te_hup_argv_free(a);
		return n < 0 ? -1
			     : te_err(err, errlen,
				      "srun's command line "
				      "is empty");
	}
	n = read_list("/proc/self/environ", ENV_MAX, 5, &a->env, &a->envp, err,
		      errlen);
	if (n < 0) {
		te_hup_argv_free(a);
		return -1;
	}
	for (i = j = 0; i < n; i++) /* a marker srun was given */
		if (strncmp(a->envp[i], TE_SHIELD_ENV "=", ml) != 0 &&
		    strncmp(a->envp[i], TE_SHIELD_WORD_ENV "=",
			    strlen(TE_SHIELD_WORD_ENV "=")) != 0)
			a->envp[j++] = a->envp[i];
	a->envp[j++] = a->marker; /* filled in by te_hup_respawn */
	a->envp[j++] = a->word;
	a->envp[j] = NULL;
	return 0;
}

int te_hup_argv_setenv(struct te_hup_argv *a, const char *name,
		       const char *value)
{
	size_t nl = strlen(name), i, j;
	char *slot = NULL;

	for (i = 0; i < 3 && !slot; i++)
		if (!a->extra[i][0])
			slot = a->extra[i];
	if (!slot ||
	    te_snprintf(slot, TE_HUP_EXTRA_MAX, "%s=%s", name, value) < 0) {
		if (slot)
			slot[0] = '\0';
		return -1;
	}
	for (i = j = 0; a->envp[i]; i++) /* the old entry goes */
		if (strncmp(a->envp[i], name, nl) != 0 || a->envp[i][nl] != '=')
			a->envp[j++] = a->envp[i];
	/* there is room: argv_read left five more, three are for these */
	a->envp[j++] = slot;
	a->envp[j] = NULL;
	return 0;
}

void te_hup_argv_free(struct te_hup_argv *a)
{
	free(a->argv);
	free(a->envp);
	free(a->args);
	free(a->env);
	memset(a, 0, sizeof(*a));
}

/* A copy of fd at a number above stderr, left open across execve. */
static int dup_kept(int fd)
{
	return fcntl(fd, F_DUPFD, 3);
}

int te_hup_hold_open(struct te_hup_hold *h, int real_err)
{
	int said[2], held[2];

	h->rd = h->wr = h->keep = h->said = h->tell = -1;
	if (fcntl(real_err, F_GETFD) < 0)
		return 0; /* no stderr: nothing to hold */
	if (te_hup_pipe(said) < 0)
		return -1;
	h->said = said[0];
	h->tell = dup_kept(said[1]);
	close(said[1]);
	h->keep = dup_kept(real_err);
	if (h->tell < 0 || h->keep < 0 || te_hup_pipe(held) < 0) {
		te_hup_hold_close(h);
		return -1;
	}
	h->rd = held[0];
	h->wr = held[1];
	fcntl(h->rd, F_SETFL, O_NONBLOCK);
	fcntl(h->said, F_SETFL, O_NONBLOCK);
	return 0;
}

static void close_set(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void te_hup_hold_started(struct te_hup_hold *h)
{
	close_set(&h->wr);
	close_set(&h->keep);
	close_set(&h->tell);
}

void te_hup_hold_close(struct te_hup_hold *h)
{
	te_hup_hold_started(h);
	close_set(&h->rd);
	close_set(&h->said);
}

int te_hup_hold_word(struct te_hup_hold *h)
{
	char c;
	ssize_t n;

	if (h->said < 0)
		return 0;
	n = read(h->said, &c, 1);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return -1;
	close_set(&h->said);
	return n == 1;
}

pid_t te_hup_respawn(struct te_hup_argv *a, const int from[3],
		     const struct te_hup_hold *h, int word,
		     const sigset_t *mask, char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char comm[32] = "";
	pid_t pid = -1;
	int i, rc;

	if (te_read_small("/proc/self/comm", comm, sizeof(comm), 0) > 0)
		comm[strcspn(comm, "\n")] = '\0';
	te_snprintf(a->marker, sizeof(a->marker), "%s=%d:%d:%d:%s",
		    TE_SHIELD_ENV, (int)getpid(), h->keep, h->tell, comm);
	te_snprintf(a->word, sizeof(a->word), "%s=%d", TE_SHIELD_WORD_ENV,
		    word);
	if (posix_spawn_file_actions_init(&fa) != 0)
		return te_err(err, errlen, "posix_spawn: out of memory");
	if (posix_spawnattr_init(&at) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return te_err(err, errlen, "posix_spawn: out of memory");
	}
	rc = 0;
	for (i = 0; i < 3 && !rc; i++)
		if (from[i] >= 0)
			rc = posix_spawn_file_actions_adddup2(&fa, from[i], i);
	if (!rc)
		rc = posix_spawnattr_setsigmask(&at, mask);
	if (!rc)
		rc = posix_spawnattr_setflags(
			&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
	if (!rc)
		rc = posix_spawn(&pid, a->exe, &fa, &at, a->argv, a->envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc != 0)
		return te_err(err, errlen, "cannot start srun again (%s): %s",
			      a->exe, strerror(rc));
	return pid;
}

const int te_hup_stream[3] = { STDOUT_FILENO, STDERR_FILENO, STDIN_FILENO };

/* The pipes srun will write to (and read from), and for a re-executed
 * srun its command line and the pipe that holds its first words. */
static int split_prepare(struct te_hup_split *sp, char *err, size_t errlen)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (i == 2 ? sp->tty < 0 : !sp->relay[i])
			continue;
		if (te_hup_pipe(sp->pipes[i]) < 0)
			return te_err(err, errlen, "pipe: %s", strerror(errno));
	}
	if (te_hup_pipe(sp->word) < 0)
		return te_err(err, errlen, "pipe: %s", strerror(errno));
	fcntl(sp->word[0], F_SETFL, O_NONBLOCK);
	if (!sp->reexec)
		return 0;
	if (te_hup_argv_read(&sp->a, err, errlen) < 0)
		return -1;
	if (te_hup_hold_open(&sp->hold, sp->pipes[1][1] >= 0
						? sp->pipes[1][1]
						: STDERR_FILENO) < 0)
		return te_err(err, errlen, "pipe: %s", strerror(errno));
	return 0;
}

static int split_signals(struct te_hup_split *sp, const sigset_t *shield,
			 char *err, size_t errlen)
{
	sigset_t set = *shield;

	/* Block what the shield handles before srun starts so that nothing
	 * sent in between is lost; srun gets its own mask back. */
	if (sigprocmask(SIG_BLOCK, &set, &sp->old) < 0)
		return te_err(err, errlen, "sigprocmask: %s", strerror(errno));
	sp->masked = 1;
	/* Without signalfd the shield could forward nothing nor relay: then
	 * no shield at all. */
	sp->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sp->sfd < 0)
		return te_err(err, errlen, "signalfd: %s", strerror(errno));
	/* SIGHUP is blocked while srun starts too (a hang-up now must not
	 * reach srun before it has left the session), but never read: the
	 * shield ignores it. */
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	return 0;
}

/* Starts srun: 0 in the child that goes on as srun, srun's pid in the
 * shield, -1 with a reason when nothing was started. */
static pid_t split_start(struct te_hup_split *sp, char *err, size_t errlen)
{
	int from[3] = { sp->pipes[2][0], sp->pipes[0][1],
			sp->hold.wr >= 0 ? sp->hold.wr : sp->pipes[1][1] };
	int word;
	pid_t pid;

	if (!sp->reexec) {
		pid = fork();
		if (pid < 0)
			te_snprintf(err, errlen, "fork: %s", strerror(errno));
		return pid;
	}
	/* srun's other threads leave the signals to the shield; if srun
	 * must go on unshielded, it takes them on this one */
	if (te_hup_quiet_threads(err, errlen) < 0)
		return -1;
	word = dup_kept(sp->word[1]); /* across execve, in srun */
	pid = te_hup_respawn(&sp->a, from, &sp->hold, word, &sp->old, err,
			     errlen);
	if (word >= 0)
		close(word);
	if (pid < 0)
		return -1;
	te_hup_argv_free(&sp->a);
	te_hup_hold_started(&sp->hold);
	return pid;
}

/* The child goes on as srun, out of the terminal's session. */
static void split_child(struct te_hup_split *sp)
{
	int i;

	setsid();
	close(sp->sfd);
	if (sp->tty >= 0)
		close(sp->tty);
	close(sp->word[0]);
	te_hup_word_set(sp->word[1]);
	for (i = 0; i < 3; i++) {
		int end = i == 2 ? 0 : 1; /* srun's end */

		if (sp->pipes[i][0] < 0)
			continue;
		dup2(sp->pipes[i][end], te_hup_stream[i]); /* clears CLOEXEC */
		close(sp->pipes[i][0]);
		close(sp->pipes[i][1]);
	}
	sigprocmask(SIG_SETMASK, &sp->old, NULL);
}

/* srun goes on unshielded, as it was. */
static void split_undo(struct te_hup_split *sp)
{
	int i;

	if (sp->masked) {
		te_hup_quiet_undo();
		sigprocmask(SIG_SETMASK, &sp->old, NULL);
	}
	te_hup_argv_free(&sp->a);
	te_hup_hold_close(&sp->hold);
	if (sp->sfd >= 0)
		close(sp->sfd);
	if (sp->tty >= 0)
		close(sp->tty);
	for (i = 0; i < 2; i++)
		if (sp->word[i] >= 0)
			close(sp->word[i]);
	for (i = 0; i < 3; i++) {
		if (sp->pipes[i][0] >= 0)
			close(sp->pipes[i][0]);
		if (sp->pipes[i][1] >= 0)
			close(sp->pipes[i][1]);
	}
}

pid_t te_hup_split(struct te_hup_split *sp, const sigset_t *shield, char *err,
		   size_t errlen)
{
	pid_t pid;
	int i;

	for (i = 0; i < 3; i++)
		sp->pipes[i][0] = sp->pipes[i][1] = -1;
	sp->word[0] = sp->word[1] = -1;
	sp->hold = (struct te_hup_hold){ -1, -1, -1, -1, -1 };
	memset(&sp->a, 0, sizeof(sp->a));
	sp->masked = 0;
	sp->sfd = -1;
	if (split_prepare(sp, err, errlen) < 0 ||
	    split_signals(sp, shield, err, errlen) < 0 ||
	    (pid = split_start(sp, err, errlen)) < 0) {
		split_undo(sp);
		return -1;
	}
	if (pid == 0)
		split_child(sp);
	return pid;
}
