/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The srun-side hang-up shield.
 *
 * srun answers SIGHUP (and SIGPIPE) by SIGKILLing every task, and resets an
 * inherited SIG_IGN, so neither nohup nor a SIGHUP handler in the tasks can
 * keep a step alive when the submitting terminal goes away. So, in srun's
 * init_post_opt (before srun handles any signal of the step), srun splits:
 *
 *  - a child calls setsid() and is srun from then on: it has left the
 *    terminal's session, so the terminal's hang-up never reaches it;
 *  - the original process (the shield) keeps srun's pid, process group and
 *    terminal. It ignores SIGHUP, forwards the signals a user sends from
 *    the terminal or with kill (INT, QUIT, TERM, USR1, USR2, ALRM, WINCH,
 *    CONT) so that Ctrl-C and kill behave as Slurm documents, follows
 *    Ctrl-Z (stops and resumes srun with itself), and exits with srun's
 *    status (_exit: srun's exit handlers never run in it).
 *
 * Up to Slurm 25.11 srun runs no thread yet at init_post_opt: the child of
 * a fork() carries on as srun. Slurm 26.05's srun starts its connection
 * manager's threads before any SPANK callback, and a forked copy of it
 * hangs (the manager shuts itself down in a child): when srun runs threads
 * (counted, not guessed from the release), the child executes srun again
 * (srun_hangup_exec.c) and the shield first makes srun's other threads block
 * every signal it takes, so that none of them handles one in its place.
 *
 * When srun's stdout/stderr is a terminal, pipe or socket, the shield also
 * relays it: srun writes into a pipe the shield holds open, so a terminal
 * that is gone (EIO) or a pipe reader that died (srun would get SIGPIPE and
 * kill the step) only makes the shield drop that output. Regular files and
 * other devices are left alone: writing to them cannot fail that way. The
 * relay never blocks: it writes through a non-blocking descriptor of its
 * own and holds at most RELAY_CAP bytes per stream; when that is full it
 * stops reading from srun, so a stalled reader (srun | less) holds srun back
 * as it would without the shield while signals still get through.
 *
 * Job control: srun ignores SIGTTIN, so when its job is in the background
 * its read of the terminal fails (EIO) and srun ends its stdin there: what
 * the user types goes to the shell. Out of the terminal's session, the
 * terminal is no longer srun's controlling terminal and that read would
 * succeed, taking the user's input. So when srun reads a terminal, the
 * shield (still in the session, SIGTTIN blocked: the same EIO) reads it for
 * srun and relays it through a pipe, ending srun's stdin where srun would.
 * It hears each arrival of input from the terminal itself (tty_notify), so
 * that it does not miss what the shell reads first, as srun's poll can.
 * And the shield stops with the very signal that stopped the job (SIGTSTP
 * for Ctrl-Z), so the shell reports what it reports without the shield.
 *
 * Interactive sessions (--pty) are not shielded: a shell should end with its
 * terminal. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "srun_hangup.h"
#include "srun_hangup_exec.h"
#include "srun_hangup_relay.h"
#include "srun_hangup_relaunch.h"
#include "util/relaybuf.h"
#include "srun/srunargs.h"
#include "util/strutil.h"
#include "util/sysutil.h"

/* How long the shield keeps reading srun's pipes after srun is gone: a
 * process srun left behind may hold them open. */
#define LEFTOVER_MS 2000
/* How long a re-executed srun's first words are held (srun_hangup_exec.c) at
 * most: longer, and they go out (srun never took its stderr back). */
#define HOLD_MS 15000

static const int forwarded[] = {
	SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH, SIGCONT,
};

/* srun's own command line (/proc/self/cmdline) into argv; returns argc. */
static int srun_cmdline(char *buf, size_t len, char **argv, int max)
{
	ssize_t n = te_read_small("/proc/self/cmdline", buf, len, 0);
	size_t i = 0;
	int argc = 0;

	argv[0] = NULL;
	if (n <= 0)
		return 0;
	while (i < (size_t)n && argc < max - 1) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;
	return argc;
}

static char cmdline_buf[65536];
static char *cmdline_argv[1024];

int te_srun_argv(char ***argv)
{
	int argc = srun_cmdline(cmdline_buf, sizeof(cmdline_buf), cmdline_argv,
				1024);

	*argv = cmdline_argv;
	return argc;
}

/* srun's /proc/self/cmdline holds its own options: --pty asks for an
 * interactive session that should die with its terminal. Only srun's
 * options count, not the command's ("srun prog --pty"). */
int te_hangup_is_pty(void)
{
	int argc = srun_cmdline(cmdline_buf, sizeof(cmdline_buf), cmdline_argv,
				1024);

	return te_srun_asks_pty(argc, cmdline_argv);
}

/* srun will read its stdin, and that is a terminal: a non-blocking
 * descriptor of our own to read it for srun, or -1 (then srun reads it
 * itself, as without the shield). */
static int terminal_for_srun(void)
{
	int argc;

	if (!isatty(STDIN_FILENO))
		return -1;
	argc = srun_cmdline(cmdline_buf, sizeof(cmdline_buf), cmdline_argv,
			    1024);
	if (!te_srun_reads_stdin(argc, cmdline_argv))
		return -1;
	return open("/proc/self/fd/0",
		    O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
}

/* Stops this process by SIG's default action, as the kernel stops a job,
 * so that the shell reports the job as it would report srun ("Stopped",
 * "Stopped (tty input)"). SIG and SIGCONT must be blocked on entry. Returns
 * 1 once stopped and continued (SIGCONT is then pending), 0 when the kernel
 * discarded SIG (an orphaned process group) and nothing stopped. */
static int stop_with(int sig)
{
	struct sigaction dfl, old;
	sigset_t one, pending;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, &old);
	sigemptyset(&one);
	sigaddset(&one, sig);
	kill(getpid(), sig); /* pending: a stop signal flushes any SIGCONT */
	sigprocmask(SIG_UNBLOCK, &one, NULL); /* delivered: stopped here */
	sigprocmask(SIG_BLOCK, &one, NULL);
	sigaction(sig, &old, NULL);
	return sigpending(&pending) == 0 && sigismember(&pending, SIGCONT);
}

/* The terminal signals each arrival of input (SIGURG, read from the
 * signalfd, with si_code POLL_IN): a poll alone can miss input that the
 * shell reads first (the kernel wakes both, and by the time the poll looks
 * again the queue may be empty), and in the background it is that arrival
 * which makes srun's read fail and its stdin end. Enabling O_ASYNC makes
 * the terminal's foreground group the owner until F_SETOWN: SIGURG, which
 * programs ignore by default, is all it could get in between. Without
 * this, the poll still serves. */
static void tty_notify(int tty)
{
	int fl = fcntl(tty, F_GETFL);

	if (fl < 0 || fcntl(tty, F_SETSIG, SIGURG) < 0 ||
	    fcntl(tty, F_SETFL, fl | O_ASYNC) < 0)
		return;
	if (fcntl(tty, F_SETOWN, getpid()) < 0)
		fcntl(tty, F_SETFL, fl);
}

static void __attribute__((noreturn)) exit_like(int status)
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

struct shield {
	pid_t child;
	int sfd;
	struct te_hup_relay *r;
	int nr;
	int stop_sig; /* stop with this once srun has stopped */
	int srun_stopped;
	int done, status;
	int64_t deadline;
	struct te_hup_hold *hold; /* a re-executed srun's, or NULL */
	int64_t hold_until;	  /* see HOLD_MS */
	int hold_idx;		  /* its relay in r, or -1 */
	char *hold_mem;
	int relaunchable; /* srun may leave the word to start again */
	int stop_asked;	  /* TERM, QUIT or INT twice came for this srun */
	int64_t int_ms;	  /* the last INT */
	struct te_hup_relaunch rl;
};

int te_hangup_relaunch_wanted;

/* The held stderr of a re-executed srun (srun_hangup_exec.c): once its plugin
 * says it took the real stderr back, what was held was said before, by the
 * first srun: dropped. When srun ended first, or kept it past HOLD_MS, it
 * goes out. */
static void hold_settle(struct shield *s, struct te_hup_relay *r)
{
	int word;

	if (!r->hold)
		return;
	word = te_hup_hold_word(s->hold);
	if (word < 0 && !s->done && te_now_ms() < s->hold_until)
		return;
	r->hold = 0;
	if (word == 1) {
		r->dead = 1;
		te_relaybuf_taken(&r->buf, r->buf.len);
	}
	te_hup_relay_flush(r, 0); /* from now on as any output */
}

/* srun is stopped: the shield stops too, so the shell sees the job stopped
 * (Ctrl-Z); it goes on when the shell continues the job. */
static void follow_stop(struct shield *s)
{
	int sig = s->stop_sig ? s->stop_sig : SIGSTOP;

	s->stop_sig = 0;
	if (!stop_with(sig) && sig != SIGSTOP)
		stop_with(SIGSTOP); /* orphaned group: SIGSTOP still stops */
}

static void on_signal(struct shield *s, int sig)
{
	int st;
	pid_t w;

	switch (sig) {
	case SIGCHLD:
		while ((w = waitpid(s->child, &st, WNOHANG | WUNTRACED)) > 0) {
			if (WIFSTOPPED(st)) {
				s->srun_stopped = 1;
				follow_stop(s);
			} else if (!s->done) {
				s->status = st;
				s->done = 1;
				s->deadline = te_now_ms() + LEFTOVER_MS;
			}
		}
		return;
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		if (s->done)
			return;
		/* srun leads an orphaned process group, where the kernel
		 * drops SIGTSTP: only SIGSTOP stops it. */
		s->stop_sig = sig;
		if (s->srun_stopped)
			follow_stop(s);
		else
			kill(s->child, SIGSTOP);
		return;
	case SIGCONT:
		if (!s->done) {
			s->srun_stopped = 0;
			kill(s->child, SIGCONT);
		}
		return;
	default:
		if (!s->done) {
			/* the user (Ctrl-C, scancel, kill) ends this srun:
			 * it is not started again */
			if (sig == SIGTERM || sig == SIGQUIT ||
			    (sig == SIGINT && te_now_ms() - s->int_ms < 1000))
				s->stop_asked = 1;
			/* one Ctrl-C is srun's status; two within a
			 * second end it (srun's own rule) */
			if (sig == SIGINT)
				s->int_ms = te_now_ms();
			kill(s->child, sig);
			return;
		}
		/* srun is gone and only its output is left to write: a user
		 * who interrupts that gets the shell back now. */
		if (sig == SIGINT || sig == SIGTERM || sig == SIGQUIT)
			exit_like(s->status);
	}
}

/* The terminal's word that input arrived (tty_notify; SIGIO if the kernel
 * could not queue SIGURG): read it now, as srun would. Returns 0 for any
 * other signal. */
static int tty_input(struct shield *s, const struct signalfd_siginfo *si)
{
	int i;

	if ((si->ssi_signo != SIGURG && si->ssi_signo != SIGIO) ||
	    si->ssi_code != POLL_IN)
		return 0;
	for (i = 0; i < s->nr; i++)
		if (s->r[i].input && s->r[i].in >= 0 &&
		    s->r[i].in == (int)si->ssi_fd) {
			te_hup_relay_fill(&s->r[i]);
			te_hup_relay_flush(&s->r[i], 0);
		}
	return 1;
}

/* A process srun left behind may hold its pipes open: once LEFTOVER_MS
 * after srun's end, they are no longer read. */
static void leftover_close(struct shield *s)
{
	int i;

	for (i = 0; i < s->nr; i++)
		if (s->r[i].in >= 0) {
			close(s->r[i].in);
			s->r[i].in = -1;
		}
}

/* One round of the shield's poll. */
struct round {
	/* signals, 4 relays both ways, the plugin's word */
	struct pollfd p[1 + 4 * 2 + 1];
	int who[1 + 4 * 2 + 1]; /* relay index, or -1 */
	int np;
	int busy;     /* output or input still to relay */
	int reading;  /* some relay still reads from srun */
	int64_t wake; /* when to look again, if not before */
};

static void round_add(struct round *rd, int fd, short events, int who)
{
	rd->p[rd->np].fd = fd;
	rd->p[rd->np].events = events;
	rd->who[rd->np++] = who;
}

/* srun's output (and a re-executed srun's held stderr): what to read and
 * where to wait for room. Every relay is settled here, the input too. */
static void round_output(struct shield *s, struct round *rd)
{
	int i;

	for (i = 0; i < s->nr; i++) {
		struct te_hup_relay *r = &s->r[i];

		te_hup_input_settle(r, s->done);
		hold_settle(s, r);
		if (r->hold) {
			rd->wake = s->hold_until;
			round_add(rd, s->hold->said, POLLIN, -1);
		}
		if (r->input)
			continue; /* polled below, never busy */
		if (r->in >= 0 && (r->buf.len < r->buf.cap || r->hold))
			round_add(rd, r->in, POLLIN, i);
		if (r->buf.len > 0 && !r->dead && !r->hold &&
		    (r->full || (!r->sock && r->wfd < 0)))
			round_add(rd, r->sock || r->wfd < 0 ? r->out : r->wfd,
				  POLLOUT, i);
		rd->reading |= r->in >= 0;
		rd->busy |= r->in >= 0 || (r->buf.len > 0 && !r->dead);
	}
}

/* The terminal to srun's stdin. */
static void round_input(struct shield *s, struct round *rd)
{
	int i;

	for (i = 0; i < s->nr; i++) {
		struct te_hup_relay *r = &s->r[i];

		if (!r->input)
			continue;
		if (r->in >= 0 && r->buf.len < r->buf.cap)
			round_add(rd, r->in, POLLIN, i);
		if (r->buf.len > 0 && r->full && !r->dead)
			round_add(rd, r->wfd, POLLOUT, i);
	}
}

static int poll_timeout(int64_t wake)
{
	int64_t left;

	if (wake < 0)
		return -1;
	left = wake - te_now_ms();
	return left < 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

static void read_signals(struct shield *s)
{
	struct signalfd_siginfo si;

	while (read(s->sfd, &si, sizeof(si)) == sizeof(si))
		/* the terminal's word that input arrived is taken here; a
		 * timer srun's threads set (26.05's connection manager) is
		 * not the user's */
		if (!tty_input(s, &si) &&
		    (si.ssi_signo != SIGALRM || si.ssi_code != SI_TIMER))
			on_signal(s, (int)si.ssi_signo);
}

static void relay_events(struct shield *s, const struct round *rd)
{
	int i;

	for (i = 1; i < rd->np; i++) {
		struct te_hup_relay *r = &s->r[rd->who[i] < 0 ? 0 : rd->who[i]];

		if (!rd->p[i].revents || rd->who[i] < 0)
			continue; /* the word: read above */
		if (rd->p[i].events & POLLIN) {
			if (r->in == rd->p[i].fd)
				te_hup_relay_fill(r);
			te_hup_relay_flush(r, 0);
		} else {
			r->full = 0;
			te_hup_relay_flush(r, 1);
		}
	}
}

/* No more relaunch: the relays' pipes are srun's alone, so that they end
 * with it (and what it left behind). */
static void relaunch_off(struct shield *s)
{
	int i;

	s->relaunchable = 0;
	for (i = 0; i < 2; i++) {
		if (s->rl.out[i] >= 0)
			close(s->rl.out[i]);
		s->rl.out[i] = -1;
	}
	if (s->rl.word_rd >= 0)
		close(s->rl.word_rd);
	if (s->rl.word_wr >= 0)
		close(s->rl.word_wr);
	s->rl.word_rd = s->rl.word_wr = -1;
}

/* srun is gone: when it left the word, srun runs again (its stdin ends:
 * the first step took it; its first words are held as a re-executed
 * srun's are), and the shield carries on with it. */
static void relaunch_try(struct shield *s)
{
	char err[512];
	pid_t pid;
	int i;

	if (s->stop_asked) {
		relaunch_off(s); /* srun's word, if any, is not followed */
		return;
	}
	pid = te_hup_relaunch(&s->rl, err, sizeof(err));
	if (pid <= 0) {
		if (pid < 0)
			dprintf(STDERR_FILENO,
				"trainenv: relaunch: not relaunched: %s\n",
				err);
		relaunch_off(s);
		return;
	}
	s->child = pid;
	s->done = 0;
	s->status = 0;
	s->srun_stopped = 0;
	for (i = 0; i < s->nr; i++)
		if (s->r[i].input && s->r[i].in >= 0) {
			close(s->r[i].in);
			s->r[i].in = -1;
			te_hup_relay_flush(&s->r[i], 0);
		}
	if (s->rl.hold.rd < 0)
		return;
	if (s->hold_idx < 0)
		s->hold_idx = s->nr++;
	else if (s->r[s->hold_idx].in >= 0)
		close(s->r[s->hold_idx].in);
	te_hup_relay_open(&s->r[s->hold_idx], s->rl.hold.rd, STDERR_FILENO,
			  s->hold_mem);
	s->r[s->hold_idx].hold = 1;
	s->hold = &s->rl.hold;
	s->hold_until = te_now_ms() + HOLD_MS;
}

static void __attribute__((noreturn)) shield_loop(struct shield *s)
{
	for (;;) {
		struct round rd;

		rd.np = rd.busy = rd.reading = 0;
		rd.wake = -1;
		if (s->done && te_now_ms() >= s->deadline)
			leftover_close(s);
		round_add(&rd, s->sfd, POLLIN, -1);
		round_output(s, &rd);
		round_input(s, &rd);
		if (s->done) {
			/* srun is gone: what it wrote is still to go out.
			 * The pipes are read until LEFTOVER_MS after srun's
			 * end; the writing waits for the reader as srun's
			 * own would, but a signal ends it (on_signal). */
			if (!rd.busy)
				exit_like(s->status);
			if (rd.reading)
				rd.wake = s->deadline;
		}
		if (poll(rd.p, (nfds_t)rd.np, poll_timeout(rd.wake)) < 0 &&
		    errno != EINTR)
			exit_like(s->done ? s->status : (1 << 8));
		/* Signals first: they must get through whatever the I/O. */
		if (rd.p[0].revents & POLLIN)
			read_signals(s);
		if (s->done && s->relaunchable)
			relaunch_try(s);
		relay_events(s, &rd);
	}
}

/* What the shield reads from its signalfd: the signals it forwards, srun's
 * end and stops, the job's stops, the terminal's word (tty_notify). */
static void shield_sigset(sigset_t *set)
{
	int i;

	sigemptyset(set);
	for (i = 0; i < (int)(sizeof(forwarded) / sizeof(forwarded[0])); i++)
		sigaddset(set, forwarded[i]);
	sigaddset(set, SIGCHLD);
	sigaddset(set, SIGTSTP);
	sigaddset(set, SIGTTIN);
	sigaddset(set, SIGTTOU);
	sigaddset(set, SIGURG); /* tty_notify */
	sigaddset(set, SIGIO);
}

/* The shield. Never returns into srun, never runs its exit code. */
static void __attribute__((noreturn))
shield_run(struct te_hup_split *sp, pid_t pid)
{
	static char mem[4][RELAY_CAP];
	struct te_hup_relay r[4];
	struct shield s;
	int i;

	memset(&s, 0, sizeof(s));
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	s.child = pid;
	s.sfd = sp->sfd;
	s.r = r;
	s.hold_idx = -1;
	s.hold_mem = mem[3];
	s.relaunchable = te_hangup_relaunch_wanted;
	s.rl.word_rd = sp->word[0];
	s.rl.word_wr = sp->word[1];
	s.rl.mask = sp->old;
	s.rl.hold = (struct te_hup_hold){ -1, -1, -1, -1, -1 };
	for (i = 0; i < 2; i++) {
		s.rl.out[i] = -1;
		if (sp->pipes[i][0] < 0)
			continue;
		if (s.relaunchable) /* for the next srun (relaunch_off) */
			s.rl.out[i] = sp->pipes[i][1];
		else
			close(sp->pipes[i][1]);
		fcntl(sp->pipes[i][0], F_SETFL, O_NONBLOCK);
		te_hup_relay_open(&r[s.nr++], sp->pipes[i][0], te_hup_stream[i],
				  mem[i]);
	}
	if (sp->tty >= 0) {
		close(sp->pipes[2][0]);
		te_hup_input_open(&r[s.nr++], sp->tty, sp->pipes[2][1], mem[2]);
		tty_notify(sp->tty);
	}
	if (!s.relaunchable)
		relaunch_off(&s);
	if (sp->hold.rd >= 0) {
		s.hold_idx = s.nr;
		te_hup_relay_open(&r[s.nr], sp->hold.rd, STDERR_FILENO, mem[3]);
		r[s.nr++].hold = 1;
		s.hold = &sp->hold;
		s.hold_until = te_now_ms() + HOLD_MS;
	}
	shield_loop(&s);
}

int te_hangup_shield(char *err, size_t errlen)
{
	struct te_hup_split sp;
	sigset_t set;
	pid_t pid;
	int i;

	if (te_hup_reexeced())
		return 0; /* its shield started this srun: carry on */
	sp.reexec = te_hup_thread_count() > 1; /* see srun_hangup_exec.c */
	sp.tty = terminal_for_srun();
	for (i = 0; i < 2; i++)
		sp.relay[i] = te_hup_needs_relay(te_hup_stream[i]);
	shield_sigset(&set);
	pid = te_hup_split(&sp, &set, err, errlen);
	if (pid <= 0)
		return pid < 0 ? -1 : 0; /* srun, shielded or not */
	shield_run(&sp, pid);
}
