/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's progress guard for --train-requeue (srun_progress.h): reads the
 * checkpoint directory as the user and keeps the guard's state there;
 * core/report/recovery.c decides what counts and when to stop. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "srun_lines.h"
#include "srun_progress.h"
#include "state.h"
#include "report/recovery.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define PROGRESS_SCAN_MAX 20000 /* directory entries the guard looks at */

#define say te_recovery_say

/* The newest mtime (ns) of the user's own regular files in dir and its
 * subdirectories (one level; core/report/recovery.c says which entries count),
 * read as the user, bounded; -1 when dir cannot be read. */
int64_t te_progress_newest_checkpoint(const char *dir)
{
	int64_t newest = 0;
	int budget = PROGRESS_SCAN_MAX, top, level, what;
	uint32_t me = (uint32_t)geteuid();
	int fds[2];
	DIR *d[2] = { NULL, NULL };
	struct dirent *e;
	struct stat st;

	top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (top < 0 || !(d[0] = fdopendir(top))) {
		if (top >= 0)
			close(top);
		return -1;
	}
	fds[0] = top;
	level = 0;
	while (level >= 0 && budget-- > 0) {
		e = readdir(d[level]);
		if (!e) {
			closedir(d[level]);
			d[level--] = NULL;
			continue;
		}
		if (fstatat(fds[level], e->d_name, &st, AT_SYMLINK_NOFOLLOW) <
			    0 ||
		    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			continue;
		what = te_progress_entry(e->d_name, S_ISDIR(st.st_mode),
					 (uint32_t)st.st_uid, me);
		if (what == TE_PROGRESS_COUNT) {
			int64_t ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL +
				     st.st_mtim.tv_nsec;

			if (ns > newest)
				newest = ns;
		} else if (what == TE_PROGRESS_DESCEND && level == 0) {
			int fd = openat(fds[0], e->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						O_CLOEXEC);

			if (fd >= 0 && (d[1] = fdopendir(fd))) {
				fds[1] = fd;
				level = 1;
			} else if (fd >= 0) {
				close(fd);
			}
		}
	}
	for (; level >= 0; level--)
		closedir(d[level]);
	return newest;
}

/* Replaces DIR/.trainenv-progress with line: written to a new file of a
 * random name beside it (O_EXCL, never through a link: another user of a
 * shared directory can neither make that name first nor point it
 * elsewhere), then renamed over the state. 0, or -1 with why. */
static int progress_save(const char *dir, const char *line, char *why,
			 size_t len)
{
	char path[TE_VALUE_MAX + 64], tmp[TE_VALUE_MAX + 96], name[64];
	char hex[TE_PROGRESS_TMP_HEX + 1];
	int fd = -1, tries, ok, e;

	if (te_snprintf(path, sizeof(path), "%s/%s", dir, TE_PROGRESS_FILE) < 0)
		return te_err(why, len, "the path is too long");
	for (tries = 0; tries < 8 && fd < 0; tries++) {
		if (te_random_hex(hex, sizeof(hex), TE_PROGRESS_TMP_HEX) < 0 ||
		    te_progress_tmp_name(hex, name, sizeof(name)) < 0 ||
		    te_snprintf(tmp, sizeof(tmp), "%s/%s", dir, name) < 0)
			return te_err(why, len, "no random name");
		fd = open(tmp,
			  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0600);
		if (fd < 0 && errno != EEXIST)
			return te_err(why, len, "%s", strerror(errno));
	}
	if (fd < 0)
		return te_err(why, len, "no free temporary name");
	ok = write(fd, line, strlen(line)) == (ssize_t)strlen(line);
	e = ok ? 0 : errno ? errno : EIO;
	if (close(fd) < 0 && ok) {
		ok = 0;
		e = errno;
	}
	if (ok && rename(tmp, path) < 0) {
		ok = 0;
		e = errno;
	}
	if (!ok) {
		unlink(tmp);
		return te_err(why, len, "%s", strerror(e));
	}
	return 0;
}

/* The progress guard: 1 when the requeues must stop (said), else 0. The
 * state is the user's file in the checkpoint directory, replaced whole. */
int te_progress_srun_stops(const job_info_t *j)
{
	const struct te_value *ck = &te_plug.cfg.v[TE_S_CHECKPOINT_DIR];
	const struct te_value *lim = &te_plug.cfg.v[TE_S_REQUEUE_NO_PROGRESS];
	struct te_progress prev, next;
	char path[TE_VALUE_MAX + 64], why[TE_ERR_MAX];
	char line[TE_PROGRESS_LINE_MAX];
	int64_t newest;
	ssize_t got;
	int have;

	if (!ck->set || ck->word != TE_W_VALUE || !lim->set ||
	    lim->word != TE_W_VALUE)
		return 0;
	newest = te_progress_newest_bounded(ck->text, TE_PROGRESS_SCAN_MS);
	if (newest < 0) {
		say("warning: requeue: cannot read the checkpoint directory "
		    "%s: no progress guard",
		    ck->text);
		return 0;
	}
	te_snprintf(path, sizeof(path), "%s/%s", ck->text, TE_PROGRESS_FILE);
	/* only the user's own file, never through a link: the directory
	 * may be shared with others */
	got = te_read_small(path, line, sizeof(line),
			    TE_READ_NOFOLLOW | TE_READ_MINE);
	have = got > 0 && te_progress_parse(line, &prev) == 0;
	te_progress_next(have ? &prev : NULL, j->job_id, j->restart_cnt, newest,
			 &next);
	if (te_progress_format(&next, line, sizeof(line)) < 0 ||
	    progress_save(ck->text, line, why, sizeof(why)) < 0)
		say("warning: requeue: cannot save the progress guard's state "
		    "in %s: %s; the next restart does not know this one's "
		    "checkpoint (--train-checkpoint-dir)",
		    path, why);
	if (next.stalls < lim->num)
		return 0;
	say("requeue: stopped: the newest checkpoint in %s did not change in %u "
	    "restart%s in a row (site limit requeue-no-progress); not "
	    "requeued, srun exits with code 93",
	    ck->text, next.stalls, next.stalls == 1 ? "" : "s");
	return 1;
}

int64_t te_progress_newest_bounded(const char *dir, int timeout_ms)
{
	int64_t v = -1, end = te_now_ms() + timeout_ms, left;
	struct pollfd pf;
	int p[2], rc = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) { /* glibc's malloc is usable after fork */
		close(p[0]);
		v = te_progress_newest_checkpoint(dir);
		_exit(write(p[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	close(p[1]);
	pf.fd = p[0];
	pf.events = POLLIN;
	while (pid > 0 && (left = end - te_now_ms()) > 0 &&
	       (rc = poll(&pf, 1, (int)left)) < 0 && errno == EINTR)
		;
	if (pid > 0 && rc == 1 && read(p[0], &v, sizeof(v)) == sizeof(v)) {
		waitpid(pid, NULL, 0);
	} else {
		v = -1;
		if (pid > 0) { /* stuck in the file system: left to end */
			kill(pid, SIGKILL);
			waitpid(pid, NULL, WNOHANG);
		}
	}
	close(p[0]);
	return v;
}
