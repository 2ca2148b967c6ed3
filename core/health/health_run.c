/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: the runner. Each check runs in a child process of its own
 * and hands back its results as text (health_wire.c); the parent waits
 * for them until the bound and no longer. A child still running then is
 * killed and abandoned, not waited for: a check stuck in the kernel (an
 * NVML call on a wedged GPU) cannot die until it leaves it, and waitpid
 * would wait with it. Its zombie is reaped later (te_health_reap). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "health/health.h"
#include "util/runcap.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define CHECKS_MAX 16
#define ABANDONED_MAX 64

/* Children killed or finished but not reaped yet (one list per process:
 * the tool and the prolog run one check round at a time). */
static pid_t abandoned[ABANDONED_MAX];
static int n_abandoned;

struct child {
	pid_t pid;
	int fd; /* the read end; -1 once done */
	char *buf;
	size_t got;
	int too_long;
	int started;
};

int te_health_reap(void)
{
	int i, left = 0;

	for (i = 0; i < n_abandoned; i++)
		if (abandoned[i] > 0 &&
		    waitpid(abandoned[i], NULL, WNOHANG) == 0)
			abandoned[left++] = abandoned[i];
	n_abandoned = left;
	return left;
}

static void abandon(pid_t pid)
{
	te_health_reap();
	if (n_abandoned < ABANDONED_MAX)
		abandoned[n_abandoned++] = pid;
}

/* The child's hold of c->lock, waited for at most wait_ms: 0 (held, or
 * no lock), or -1 with a failure added to out (another run's child
 * still holds it: the check is not run). */
static int take_lock(const struct te_health_check *c, int wait_ms,
		     struct te_health_set *out)
{
	int64_t until = te_now_ms() + wait_ms;
	char pid[16];
	ssize_t r;
	int fd;

	if (!c->lock)
		return 0;
	fd = open(c->lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		te_health_add(out, c->name, "", "", TE_HV_ERROR,
			      "%s: its lock %.80s cannot be opened (%s)",
			      c->name, c->lock, strerror(errno));
		return -1;
	}
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (te_now_ms() >= until) {
			r = pread(fd, pid, sizeof(pid) - 1, 0);
			pid[r > 0 ? r : 0] = '\0';
			pid[strspn(pid, "0123456789")] = '\0';
			te_health_add(out, c->name, "", "", TE_HV_FAIL,
				      "%s: a previous %s check (pid %s) still "
				      "holds its lock after %d ms (stuck in "
				      "the kernel?): not run",
				      c->name, c->name, pid[0] ? pid : "?",
				      wait_ms);
			return -1;
		}
		usleep(20000);
	}
	te_snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	/* the pid only names the holder in a later run's line */
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, strlen(pid), 0) < 0)
		pid[0] = '\0';
	return 0; /* fd stays open, the lock held, until this child ends */
}

/* The child: runs the check, writes its results on fd, exits. */
__attribute__((noreturn)) static void
child_main(const struct te_health_check *c, int fd, pid_t parent,
	   struct te_health_set *scratch, char *wire, const char *node,
	   int bound_ms)
{
	int null;

	/* with the caller's stdin or stdout closed the pipe may be on 0 or
	 * 1: moved past them before they become /dev/null */
	if (fd < 3 && (fd = fcntl(fd, F_DUPFD, 3)) < 0)
		_exit(4);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	signal(SIGPIPE, SIG_DFL);
	/* a library's chatter stays out of the report; and stderr goes
	 * too: a child stuck in the kernel would otherwise hold the
	 * caller's stderr open (the job prolog reads the helper's stderr
	 * to its end) long after the caller gave it up (review finding 3) */
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	/* the result's pipe on 3; nothing else of the caller's (slurmd's
	 * sockets, the other checks' pipes) */
	if (fd != 3 && dup2(fd, 3) < 0)
		_exit(4);
	fd = 3;
	te_close_from(4);
	te_health_set_init(scratch, node);
	if (take_lock(c, bound_ms / 5 * 4, scratch) == 0)
		c->fn(c->arg, scratch);
	if (te_health_wire_encode(scratch, wire, TE_HEALTH_WIRE_MAX + 1) < 0)
		_exit(3);
	_exit(te_write_all(fd, wire, strlen(wire)) < 0 ? 2 : 0);
}

/* Starts c's child; -1 with errno when it could not be. */
static int start(const struct te_health_check *c, struct child *ch,
		 struct te_health_set *scratch, char *wire, const char *node,
		 int bound_ms)
{
	int p[2];
	pid_t parent = getpid();

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	ch->pid = fork();
	if (ch->pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		errno = e;
		return -1;
	}
	if (ch->pid == 0) {
		close(p[0]);
		child_main(c, p[1], parent, scratch, wire, node, bound_ms);
	}
	setpgid(ch->pid, ch->pid); /* either side may get there first */
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	ch->fd = p[0];
	ch->started = 1;
	return 0;
}

/* Reads what ch has for us; marks it done at its end (or when it wrote
 * more than its wire allows). */
static void drain_child(struct child *ch)
{
	for (;;) {
		ssize_t r;

		if (ch->got >= TE_HEALTH_WIRE_MAX) {
			ch->too_long = 1;
			break;
		}
		r = read(ch->fd, ch->buf + ch->got,
			 TE_HEALTH_WIRE_MAX - ch->got);
		if (r > 0) {
			ch->got += (size_t)r;
			/* its END: done, even if a process it started
			 * still holds the pipe open */
			if (ch->got >= 5 &&
			    !memcmp(ch->buf + ch->got - 5, "\nEND\n", 5))
				break;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		break; /* end, or an error: done */
	}
	close(ch->fd);
	ch->fd = -1;
}

/* Waits for every child's output until deadline (monotonic ms). */
static void collect(struct child *ch, int n, int64_t deadline)
{
	struct pollfd pf[CHECKS_MAX];
	int idx[CHECKS_MAX], i, k;

	for (;;) {
		int64_t left = deadline - te_now_ms();

		for (i = k = 0; i < n; i++)
			if (ch[i].fd >= 0) {
				pf[k].fd = ch[i].fd;
				pf[k].events = POLLIN;
				pf[k].revents = 0;
				idx[k++] = i;
			}
		if (!k || left <= 0)
			return;
		if (poll(pf, (nfds_t)k, (int)left) < 0 && errno != EINTR)
			return;
		for (i = 0; i < k; i++)
			if (pf[i].revents)
				drain_child(&ch[idx[i]]);
	}
}

/* What became of one child, into out. */
static void verdict(const struct te_health_check *c, struct child *ch,
		    int bound_ms, struct te_health_set *out)
{
	char err[160];
	int before = out->n + out->cut;

	/* its group, whatever it did: nothing it started outlives it */
	kill(-ch->pid, SIGKILL);
	if (ch->fd >= 0 || ch->too_long) {
		kill(ch->pid, SIGKILL);
		if (ch->fd >= 0)
			close(ch->fd);
		ch->fd = -1;
		if (ch->too_long)
			te_health_add(out, c->name, "", "", TE_HV_ERROR,
				      "%s: its process wrote more than %d "
				      "bytes: killed",
				      c->name, TE_HEALTH_WIRE_MAX);
		else
			te_health_add(out, c->name, "", "", TE_HV_ERROR,
				      "%s: no answer within %d ms: its process "
				      "%ld was killed and abandoned",
				      c->name, bound_ms, (long)ch->pid);
	} else if (te_health_wire_decode(ch->buf, ch->got, c->name, out, err,
					 sizeof(err)) < 0) {
		te_health_add(out, c->name, "", "", TE_HV_ERROR,
			      "%s: its process gave no valid result: %s",
			      c->name, err);
	} else if (out->n + out->cut == before) {
		te_health_add(out, c->name, "", "", TE_HV_ERROR,
			      "%s: its process gave no result", c->name);
	}
	if (waitpid(ch->pid, NULL, WNOHANG) == 0)
		abandon(ch->pid);
}

/* Frees what te_health_run allocated. */
static void release(struct child *ch, int n, struct te_health_set *scratch,
		    char *wire)
{
	int i;

	for (i = 0; i < n; i++)
		free(ch[i].buf);
	free(scratch);
	free(wire);
}

int te_health_run(const struct te_health_check *checks, int n, int bound_ms,
		  struct te_health_set *out, char *err, size_t errlen)
{
	struct child ch[CHECKS_MAX];
	struct te_health_set *scratch;
	char *wire;
	int64_t deadline = te_now_ms() + (bound_ms > 0 ? bound_ms : 0);
	int i, started = 0;

	if (n < 0 || n > CHECKS_MAX)
		return te_err(err, errlen, "health: %d checks (at most %d)", n,
			      CHECKS_MAX);
	memset(ch, 0, sizeof(ch));
	/* Allocated before any fork: the children only use them. */
	scratch = malloc(sizeof(*scratch));
	wire = malloc(TE_HEALTH_WIRE_MAX + 1);
	for (i = 0; i < n; i++) {
		ch[i].fd = -1;
		ch[i].buf = malloc(TE_HEALTH_WIRE_MAX + 1);
		if (!ch[i].buf) { /* one missing is all missing */
			free(wire);
			wire = NULL;
		}
	}
	if (!scratch || !wire) {
		release(ch, n, scratch, wire);
		return te_err(err, errlen, "health: out of memory");
	}
	for (i = 0; i < n; i++) {
		if (start(&checks[i], &ch[i], scratch, wire, out->node,
			  bound_ms) == 0)
			started++;
		else
			te_health_add(out, checks[i].name, "", "", TE_HV_ERROR,
				      "%s: could not start its process (%s)",
				      checks[i].name, strerror(errno));
	}
	if (n && !started) {
		release(ch, n, scratch, wire);
		return te_err(err, errlen, "health: no check could be started");
	}
	collect(ch, n, deadline);
	for (i = 0; i < n; i++)
		if (ch[i].started)
			verdict(&checks[i], &ch[i], bound_ms, out);
	release(ch, n, scratch, wire);
	return 0;
}
