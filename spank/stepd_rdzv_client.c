/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin's side of the launch rendezvous: runs trainenv-rdzv from
 * task_init and reads its result, with a deadline (stepd_rdzv_client.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stepd_rdzv_client.h"
#include "settings/settings.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "launch/version.h"

/* The helper was killed (SIGKILL) before it answered: Slurm cancelled
 * the step, as the first node to find a helper of another protocol asks
 * (te_stepd_end_step_now), and a node whose helper had not answered yet
 * (a node slower to start the step: Slurm 24.11 at times) lost the
 * answer, and with it the versions. Its protocol is asked once more,
 * alone (--protocol-version: no PMIx, nothing to wait for; this task
 * itself is not killed before its program starts), so that every node
 * names both versions whenever the cancel came. Each node of such a step
 * asks Slurm to end it, so a later cancel may kill the question too: it
 * is asked again, at most TE_ASK_TRIES times, within TE_PROTOCOL_ASK_MS
 * each. 1 with that line in err, else 0 (the same protocol, or no
 * answer: the kill is said as such). */
#define TE_ASK_TRIES 3
static int killed_helper_versions(const char *path, char *const envp[],
				  char *err, size_t errlen)
{
	char *argv[] = { (char *)TE_RDZV_HELPER, (char *)"--protocol-version",
			 NULL };
	char out[256], e[TE_ERR_MAX]; /* an answer, or 0.1.0's refusal */
	struct te_spawn_out o;
	int i;

	for (i = 0; i < TE_ASK_TRIES; i++) {
		if (te_spawn_capture(path, argv, envp, TE_PROTOCOL_ASK_MS, 0,
				     out, sizeof(out), &o, e, sizeof(e)) < 0 ||
		    o.killed || o.too_long)
			return 0;
		if (!WIFSIGNALED(o.status))
			return te_protocol_asked(path, WEXITSTATUS(o.status),
						 out, o.got, err, errlen);
		if (WTERMSIG(o.status) != SIGKILL)
			return 0;
	}
	return 0;
}

int te_rdzv_spawn(const char *path, char *const argv[], char *const envp[],
		  int timeout_ms, struct te_rdzv_result *r, char *err,
		  size_t errlen)
{
	static char buf[TE_RDZV_OUT_MAX + 1];
	struct te_spawn_out o;
	char perr[256], e[TE_ERR_MAX];

	memset(r, 0, sizeof(*r));
	if (te_spawn_capture(path, argv, envp, timeout_ms, 0, buf, sizeof(buf),
			     &o, e, sizeof(e)) < 0) {
		return te_err(err, errlen, "the rendezvous helper %s", e);
	}
	if (o.killed)
		return te_err(err, errlen,
			      "the rendezvous helper did not finish "
			      "within %d s and was killed",
			      timeout_ms / 1000);
	if (o.too_long)
		return te_err(err, errlen,
			      "the rendezvous helper wrote more than "
			      "%d bytes",
			      TE_RDZV_OUT_MAX);
	/* a helper of another protocol answers with its own and exits */
	if (!WIFSIGNALED(o.status) &&
	    te_protocol_refused(path, WEXITSTATUS(o.status), buf, o.got, err,
				errlen))
		return -2;
	if (te_rdzv_parse(buf, o.got, r, perr, sizeof(perr)) < 0) {
		/* SIGKILL from outside: Slurm kills a step's processes
		 * when it cancels the step (as a node that failed it on
		 * purpose asks), and the kernel's OOM killer sends it too;
		 * neither is the rendezvous's fault, and the task has not
		 * been killed (Slurm leaves a task that has not started
		 * its program): say so, not a hint to skip PMIx. */
		if (WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGKILL) {
			if (killed_helper_versions(path, envp, err, errlen))
				return -2;
			te_snprintf(
				err, errlen,
				"the rendezvous helper was "
				"killed (signal 9) before it answered, not "
				"by trainenv: as when Slurm cancels the step "
				"(another node's line says why) or the node "
				"runs out of memory");
			return -3;
		}
		if (WIFSIGNALED(o.status))
			te_snprintf(err, errlen,
				    "the rendezvous helper was "
				    "killed by signal %d",
				    WTERMSIG(o.status));
		else if (WEXITSTATUS(o.status))
			te_snprintf(err, errlen,
				    "the rendezvous helper exited "
				    "with status %d (%s)",
				    WEXITSTATUS(o.status), perr);
		else
			te_snprintf(err, errlen,
				    "unreadable output from the "
				    "rendezvous helper: %s",
				    perr);
		return -1;
	}
	return 0;
}

/* Creates path already locked (shared): made under another name,
 * locked, then renamed, so that nobody sees it unlocked. */
static int locked_file(const char *path)
{
	char tmp[700];
	int fd;

	if (te_snprintf(tmp, sizeof(tmp), "%s.tmp", path) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_SH) < 0 || rename(tmp, path) < 0) {
		int e = errno;

		unlink(tmp);
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int te_rdzv_lead_lock(const char *dir)
{
	char path[600];

	if (te_snprintf(path, sizeof(path), "%s/%s", dir, TE_LEAD_LOCK) < 0)
		return -1;
	return locked_file(path);
}

/* 1 when dir/NAME exists and nobody holds it locked any more. */
static int lock_released(const char *dir, const char *name)
{
	char path[600];
	int fd, released;

	if (te_snprintf(path, sizeof(path), "%s/%s", dir, name) < 0)
		return 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0; /* not made yet (or no lead lock at all) */
	released = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return released;
}

#define LOOK_MS 200 /* the slowest look at the files while waiting */

/* Drains the watch on the step's directory: 1 when an event is about the
 * node's result or the first task's lock (or events were lost). Other
 * files there (the result's temporary, a failure file) wake the node's
 * waiting tasks too: they look at the files only when it may matter (the
 * launch is short of CPU where many tasks share few cores). */
static int result_news(int ino)
{
	char ev[4096]
		__attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	int news = 0;

	while ((n = read(ino, ev, sizeof(ev))) > 0) {
		ssize_t off = 0;

		while (off + (ssize_t)sizeof(struct inotify_event) <= n) {
			const struct inotify_event *e =
				(const struct inotify_event *)(ev + off);

			if (e->mask & (IN_Q_OVERFLOW | IN_IGNORED))
				news = 1;
			else if (e->len && (!strcmp(e->name, TE_NODE_RESULT) ||
					    !strcmp(e->name, TE_LEAD_LOCK)))
				news = 1;
			off += (ssize_t)sizeof(struct inotify_event) + e->len;
		}
	}
	return news;
}

/* The arrivals' directory in the step's private directory: made by the
 * node's first task to arrive, and only used when it is as private as
 * the step's directory itself (te_private_dir_ok). */
static int arrivals_dir(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -1;
	if (!te_private_dir_ok(path)) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/* A watch on dir for the node's result, or -1: none (the files are then
 * looked at after ever longer sleeps). */
static int watch_dir(const char *dir)
{
	int ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);

	if (ino >= 0 &&
	    inotify_add_watch(ino, dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
		close(ino);
		ino = -1;
	}
	return ino;
}

/* Says this task is here: its arrival file, held locked (the descriptor
 * returned). -1 when it cannot (err says why: the caller leaves a failure
 * file instead); -2 when dir is too long for the file's name. */
static int arrive(const char *dir, uint32_t rank, char *err, size_t errlen)
{
	char path[600], adir[600];
	int fd;

	if (te_snprintf(path, sizeof(path), TE_ARRIVED_FMT, dir, rank) < 0) {
		te_snprintf(err, errlen, "PMIX_SERVER_TMPDIR is too long");
		return -2;
	}
	te_snprintf(adir, sizeof(adir), "%s/%s", dir, TE_ARRIVED_DIR);
	if (arrivals_dir(adir) < 0) {
		te_snprintf(err, errlen, "cannot make %s: %s", adir,
			    strerror(errno));
		return -1;
	}
	/* The arrival file is held locked for as long as this task waits:
	 * the node's helper takes a file nobody holds for a task that ended
	 * while waiting (killed), and tells rank 0 that its rank failed. */
	fd = locked_file(path);
	if (fd < 0)
		te_snprintf(err, errlen, "cannot write %s: %s", path,
			    strerror(errno));
	return fd;
}

/* Waits for news of the node's result with the watch ino, looked ms
 * after the last look at the files, left ms before the deadline: 1 when
 * the files are worth a look. Without a watch: a sleep of *wait ms
 * (doubled up to 8), then always a look. */
static int wait_news(int ino, int64_t looked, int64_t left, int *wait)
{
	if (ino >= 0) {
		struct pollfd p = { .fd = ino, .events = POLLIN };

		/* A look at least every LOOK_MS, whatever else wakes
		 * us: the close of the first task's lock is told
		 * before its lock goes (the kernel's order), so the
		 * event alone may come too early to see it released. */
		int64_t due = looked + LOOK_MS - te_now_ms();

		if (due > left)
			due = left;
		return due <= 0 || poll(&p, 1, (int)due) <= 0 ||
		       result_news(ino);
	}
	poll(NULL, 0, *wait);
	if (*wait < 5)
		*wait *= 2;
	return 1;
}

int te_rdzv_follow(const char *dir, uint32_t rank, int timeout_ms,
		   struct te_rdzv_result *r, char *err, size_t errlen)
{
	static char buf[TE_RDZV_OUT_MAX + 1];
	int64_t deadline = te_now_ms() + timeout_ms;
	char path[600], perr[256];
	int64_t looked = 0;
	int ino, lockfd, wait = 1, lead_gone = 0, look = 1;

	memset(r, 0, sizeof(*r));
	/* watch before arriving: the result cannot slip in between */
	ino = watch_dir(dir);
	lockfd = arrive(dir, rank, err, errlen);
	if (lockfd == -2)
		goto fail;
	if (lockfd < 0)
		goto not_arrived;
	if (te_snprintf(path, sizeof(path), "%s/%s", dir, TE_NODE_RESULT) < 0)
		goto fail;
	for (;;) {
		ssize_t got;
		int64_t left;

		if (!look)
			goto wait;
		looked = te_now_ms();
		got = te_read_small(path, buf, sizeof(buf),
				    TE_READ_NOFOLLOW | TE_READ_MINE);
		/* not there yet (or a link: never this user's result) */
		if (got >= 0 || errno == EINVAL || errno == EPERM) {
			if (ino >= 0)
				close(ino);
			close(lockfd);
			if (got < 0)
				return te_err(err, errlen,
					      "%s is not this "
					      "user's file",
					      path);
			if (te_rdzv_parse(buf, (size_t)got, r, perr,
					  sizeof(perr)) < 0)
				return te_err(err, errlen,
					      "unreadable rendezvous "
					      "result of this node: %s",
					      perr);
			return 0;
		}
		if (lead_gone) {
			te_snprintf(err, errlen,
				    "this node's first task ended "
				    "before its rendezvous finished");
			goto fail;
		}
		/* the first task gone and no result: one more look at the
		 * result (written before the lock goes), then fail */
		if (lock_released(dir, TE_LEAD_LOCK)) {
			lead_gone = 1;
			continue;
		}
wait:
		left = deadline - te_now_ms();
		if (left <= 0) {
			te_snprintf(err, errlen,
				    "the rendezvous of this node "
				    "(run by its first task) did not finish "
				    "within %d s",
				    timeout_ms / 1000);
			goto fail;
		}
		look = wait_news(ino, looked, left, &wait);
	}
not_arrived:
	/* the node's helper tells rank 0 at once (a failure file, in the
	 * step's directory itself), rather than the barrier waiting for
	 * this rank until its deadline */
	te_rdzv_leave_failed(dir, rank, err);
fail:
	if (ino >= 0)
		close(ino);
	if (lockfd >= 0)
		close(lockfd);
	return -1;
}

void te_rdzv_leave_error(const char *dir, const char *err)
{
	static struct te_rdzv_result r;

	memset(&r, 0, sizeof(r));
	r.failed = 1;
	te_rdzv_clean_text(r.error, sizeof(r.error), err);
	te_rdzv_write_node_result(dir, &r);
}

int te_rdzv_leave_failed(const char *dir, uint32_t rank, const char *why)
{
	char path[600], tmp[640], line[TE_FAILED_TEXT_MAX + 2];
	size_t len;

	te_rdzv_clean_text(line, TE_FAILED_TEXT_MAX + 1,
			   why && *why ? why : "no reason given");
	len = strlen(line);
	line[len++] = '\n';
	line[len] = '\0';
	if (te_snprintf(path, sizeof(path), TE_FAILED_FMT, dir, rank) < 0 ||
	    te_snprintf(tmp, sizeof(tmp), "%s.tmp", path) < 0)
		return -1;
	/* whole, then renamed: the node's helper never reads half of it */
	return te_replace_file(path, tmp, line);
}
