/* SPDX-License-Identifier: GPL-2.0-or-later */
/* First-failure report, slurmstepd's side: one sender process per step.
 * task_exit runs in slurmstepd's thread that reaps the tasks: it must never
 * wait on the network per task (one wait per failed task, after scancel,
 * kept killed tasks unreaped past UnkillableStepTimeout and drained the
 * node). So task_exit only hands the line over a socketpair, without
 * blocking, to the step's sender: a child forked at the first failure (as
 * the hang-up shield and the rendezvous client already fork), running as
 * the job's user, that connects without blocking and gives the network at
 * most TE_FAILREP_BUDGET_MS in all. A failure is reported while the other
 * tasks still run. Slurm kills every process of the step once the last task
 * is reaped: the last task_exit lets the sender finish first (finish, at
 * most wait_ms, once per step). Its last message says what it delivered.
 *
 * SlurmdParameters=contain_spank (24.05 and later) runs task_exit in a
 * clone(CLONE_VM) child of slurmstepd with a copy of its descriptors: the
 * memory is shared, the descriptors are not. A sender started there is
 * that child's own; a later task_exit (another child) must never write to
 * the descriptor number it sees in memory, which is some other file of
 * slurmstepd's there. So the sender belongs to the process that started
 * it (snd.owner: its pid and start time, never the pid alone, which a later
 * clone may have again, and the descriptor's socket): any other process
 * starts its own, which sends that process's lines and ends when the
 * process does (its descriptor closes), and finishes none but its own. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "failrep_net.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define ATTEMPT_MS 1000 /* one connection to srun, at most */
#define LINGER_MS 20	/* gathers the lines of one burst */
#define PENDING_MAX (64 * 1024)

/* What the sender's last message says. */
enum {
	S_OK,
	S_CONNECT,
	S_TIMEOUT,
	S_USER,
	S_BUDGET,
	S_SPACE,
	S_KILLED
};
static const char *const status_text[] = {
	[S_OK] = "delivered",
	[S_CONNECT] = "cannot connect to srun",
	[S_TIMEOUT] = "srun did not answer in time",
	[S_USER] = "cannot switch to the job's user",
	[S_BUDGET] = "the step's time for reports is spent",
	[S_SPACE] = "too many reports at once",
	[S_KILLED] = "the sender was stopped before it finished",
};

static struct {
	int started, finished;
	pid_t pid;
	struct te_failrep_owner owner; /* the process whose descriptor fd is,
					* and that descriptor's socket */
	int fd;			       /* slurmstepd's end of the socketpair */
	unsigned handed, refused;
	char where[INET6_ADDRSTRLEN + 16];
} snd = { .fd = -1 };

/* ------------------------------------------------------ the sender child */

/* Only async-signal-safe calls from here on (slurmstepd has threads). */
static int send_batch(const struct sockaddr_storage *sa, socklen_t salen,
		      const char *buf, size_t len, int64_t deadline)
{
	size_t off = 0;
	int fd, rc = S_OK;

	fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		    0);
	if (fd < 0)
		return S_CONNECT;
	if (connect(fd, (const struct sockaddr *)sa, salen) < 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		return S_CONNECT;
	}
	while (off < len) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int64_t left = deadline - te_now_ms();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			rc = S_TIMEOUT;
			break;
		}
		if (p.revents & (POLLERR | POLLHUP)) {
			rc = S_CONNECT;
			break;
		}
		n = send(fd, buf + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			rc = S_CONNECT;
			break;
		}
		off += (size_t)n;
	}
	close(fd);
	return rc;
}

/* The sender's state. */
struct sender {
	int fd; /* from slurmstepd, and the last message */
	const struct sockaddr_storage *sa;
	socklen_t salen;
	size_t len; /* in pending */
	unsigned sent, lost;
	int64_t spent; /* on the network */
	int status, eof;
};

static char pending[PENDING_MAX];

/* Nothing of slurmstepd's stays open here: a descriptor held by this
 * process must not keep anything of the step alive. Returns fd's new
 * number, 3. */
static int keep_only(int fd)
{
	if (fd > 3) {
		dup2(fd, 3);
		fd = 3;
	} else if (fd < 3) {
		int moved = fcntl(fd, F_DUPFD, 3);

		if (moved < 0)
			_exit(1);
		fd = moved;
	}
	close_range(0, (unsigned)fd - 1, 0);
	close_range((unsigned)fd + 1, ~0U, 0);
	return fd;
}

/* S_OK, or S_USER when root could not become uid/gid. */
static int become_user(uid_t uid, gid_t gid)
{
	if (geteuid() == 0 && uid != 0 && uid != (uid_t)-1 &&
	    (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	     setresuid(uid, uid, uid) < 0))
		return S_USER;
	return S_OK;
}

/* Gathers one burst of lines into pending: the first, then what comes
 * within LINGER_MS (a line past pending's room is lost). Sets eof at the
 * end of slurmstepd's input. Waits for slurmstepd, never for the network. */
static void gather_burst(struct sender *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };
	char msg[TE_FAILREP_LINE_MAX + 1];
	int64_t linger_end = 0;

	for (;;) {
		int64_t left = linger_end ? linger_end - te_now_ms() : -1;
		ssize_t n;

		if (linger_end && left <= 0)
			break;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR) {
			s->eof = 1;
			break;
		}
		n = recv(s->fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			s->eof = 1;
			break;
		}
		if (s->len + (size_t)n > sizeof(pending))
			s->lost++;
		else {
			memcpy(pending + s->len, msg, (size_t)n);
			s->len += (size_t)n;
		}
		if (!linger_end)
			linger_end = te_now_ms() + LINGER_MS;
	}
}

/* Sends pending within ATTEMPT_MS and what is left of the budget; its
 * lines count as sent or lost. */
static void send_pending(struct sender *s)
{
	int64_t start = te_now_ms();

	s->status =
		send_batch(s->sa, s->salen, pending, s->len,
			   start + (TE_FAILREP_BUDGET_MS - s->spent < ATTEMPT_MS
					    ? TE_FAILREP_BUDGET_MS - s->spent
					    : ATTEMPT_MS));
	s->spent += te_now_ms() - start;
	for (size_t i = 0; i < s->len; i++)
		if (pending[i] == '\n')
			*(s->status == S_OK ? &s->sent : &s->lost) += 1;
	s->len = 0;
}

/* The last message, "STATUS SENT LOST": no stdio here, digits by hand. */
static void say_status(const struct sender *s)
{
	char last[64], *q = last;
	unsigned v[3] = { (unsigned)s->status, s->sent, s->lost };

	for (int k = 0; k < 3; k++) {
		char d[12];
		int nd = 0;

		do {
			d[nd++] = (char)('0' + v[k] % 10);
			v[k] /= 10;
		} while (v[k] && nd < 11);
		while (nd)
			*q++ = d[--nd];
		*q++ = k < 2 ? ' ' : '\0';
	}
	send(s->fd, last, (size_t)(q - last), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void __attribute__((noreturn))
sender_main(int fd, const struct sockaddr_storage *sa, socklen_t salen,
	    uid_t uid, gid_t gid)
{
	struct sender s = { .sa = sa, .salen = salen };

	s.fd = keep_only(fd);
	/* A step's kill (scancel) reaches this process too: it ends within
	 * its budget anyway, and what it holds is the report of the kill. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	s.status = become_user(uid, gid);
	while (s.status == S_OK && !s.eof) {
		gather_burst(&s);
		if (!s.len)
			continue;
		send_pending(&s);
		if (s.status == S_OK && !s.eof &&
		    s.spent >= TE_FAILREP_BUDGET_MS)
			s.status = S_BUDGET;
	}
	if (s.status == S_OK && s.lost)
		s.status = S_SPACE;
	/* The lines still in the socketpair are lost too: count them. */
	while (s.status != S_OK) {
		char msg[TE_FAILREP_LINE_MAX + 1];
		ssize_t n = recv(s.fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);

		if (n <= 0)
			break;
		s.lost++;
	}
	say_status(&s);
	_exit(s.status == S_OK ? 0 : 1);
}

/* ------------------------------------------------------ slurmstepd */

/* This process's id from the kernel: glibc's getpid() is not told of a
 * clone() that Slurm made itself. */
static pid_t this_process(void)
{
	return (pid_t)syscall(SYS_getpid);
}

/* 1 when the sender was started by this very process, and snd.fd is
 * still its socket here (see the top). */
static int sender_is_ours(void)
{
	struct te_failrep_owner now;

	te_failrep_owner_of(&now, (long)this_process(), snd.fd);
	return te_failrep_owner_same(&snd.owner, &now);
}

static int start_sender(const char *host, uint16_t port, uid_t uid, gid_t gid,
			char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	struct sockaddr_storage sa;
	socklen_t salen;
	char sport[8];
	int sv[2], e;

	snd.started = 1;
	snd.fd = -1;
	te_failrep_owner_of(&snd.owner, (long)this_process(), -1);
	te_snprintf(snd.where, sizeof(snd.where), "%s:%u", host, port);
	te_snprintf(sport, sizeof(sport), "%u", port);
	if ((e = getaddrinfo(host, sport, &hints, &ai)) != 0)
		return te_err(err, errlen, "srun address '%.64s': %s", host,
			      gai_strerror(e));
	if (ai->ai_addrlen > sizeof(sa)) {
		freeaddrinfo(ai);
		return te_err(err, errlen, "srun address too long");
	}
	memcpy(&sa, ai->ai_addr, ai->ai_addrlen);
	salen = ai->ai_addrlen;
	freeaddrinfo(ai);
	/* SEQPACKET: a line is handed over whole or not at all. */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return te_err(err, errlen, "socketpair: %s", strerror(errno));
	snd.pid = fork();
	if (snd.pid < 0) {
		te_snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (snd.pid == 0)
		sender_main(sv[1], &sa, salen, uid, gid);
	close(sv[1]);
	snd.fd = sv[0];
	te_failrep_owner_of(&snd.owner, (long)this_process(), snd.fd);
	return 0;
}

int te_failrep_sender_add(const char *host, uint16_t port, const char *token,
			  const struct te_failrep *r, uid_t uid, gid_t gid,
			  char *err, size_t errlen)
{
	char line[TE_FAILREP_LINE_MAX];

	if (te_failrep_format(line, sizeof(line), token, r) < 0)
		return te_err(err, errlen, "cannot format the report");
	if (snd.started && !sender_is_ours()) {
		/* contain_spank: another process's sender, out of reach */
		snd.started = snd.finished = 0;
		snd.fd = -1;
		snd.pid = 0;
	}
	if (!snd.started && start_sender(host, port, uid, gid, err, errlen) < 0)
		return -1;
	if (snd.fd < 0) {
		snd.refused++;
		return te_err(err, errlen, "no sender for this step");
	}
	if (send(snd.fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* gone (it gave up: its status says why) or full */
		snd.refused++;
		return te_err(err, errlen, "the step's report sender %s",
			      errno == EAGAIN ? "is busy" : "has given up");
	}
	snd.handed++;
	return 0;
}

/* 1 when the sender is gone (reaped here or by slurmstepd's own wait). */
static int sender_gone(void)
{
	int st;
	pid_t w = waitpid(snd.pid, &st, WNOHANG);

	return w == snd.pid || (w < 0 && errno == ECHILD);
}

int te_failrep_sender_finish(int wait_ms, char *err, size_t errlen)
{
	int64_t deadline = te_now_ms() + wait_ms;
	char msg[64];
	unsigned status = S_TIMEOUT, sent = 0, lost = snd.handed;
	ssize_t n = -1;

	err[0] = '\0';
	if (!snd.started || snd.finished || !sender_is_ours())
		return 0;
	snd.finished = 1;
	if (snd.fd < 0) {
		te_snprintf(err, errlen, "the report sender could not start");
		return (int)snd.refused;
	}
	shutdown(snd.fd, SHUT_WR); /* the sender sends what it has */
	for (;;) {
		struct pollfd p = { .fd = snd.fd, .events = POLLIN };
		int64_t left = deadline - te_now_ms();

		n = recv(snd.fd, msg, sizeof(msg) - 1, MSG_DONTWAIT);
		if (n > 0 || n == 0 || (errno != EAGAIN && errno != EINTR))
			break;
		if (left <= 0 || poll(&p, 1, (int)left) < 0)
			break;
	}
	if (n > 0) {
		msg[n] = '\0';
		if (sscanf(msg, "%u %u %u", &status, &sent, &lost) != 3 ||
		    status > S_KILLED)
			status = S_TIMEOUT;
	} else if (n == 0) {
		status = S_KILLED; /* it ended without a word */
	}
	close(snd.fd);
	snd.fd = -1;
	/* Kill only our own child, never a pid that was reaped and reused:
	 * waitpid tells which (nothing else reaps once the tasks are done). */
	while (!sender_gone()) {
		if (te_now_ms() >= deadline) {
			kill(snd.pid, SIGKILL);
			waitpid(snd.pid, NULL, 0);
			break;
		}
		usleep(2000);
	}
	if (status == S_OK)
		return 0;
	lost += snd.refused;
	te_snprintf(err, errlen, "%s at %s (%u delivered)", status_text[status],
		    snd.where, sent);
	return lost ? (int)lost : 1;
}
