/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A job's step records read from its directory (goodput_read.h): the
 * names srun gives them, the user's own regular files only, each whole
 * or not at all. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/goodput_read.h"
#include "report/steprecord.h"
#include "util/sysutil.h"

#define NAME_MAX_LEN 64 /* longer names are none of srun's records */

/* The record name at dfd into buf: its length, or -1 (counted in rd). */
static long read_one(int dfd, const char *name, uid_t uid, char *buf,
		     struct te_gp_reading *rd)
{
	struct stat st;
	ssize_t got;
	int fd, e;

	/* O_NONBLOCK: a FIFO in its place cannot hold us */
	fd = openat(dfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rd->not_regular++;
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (st.st_uid != uid) {
		rd->not_owned++;
		close(fd);
		return -1;
	}
	/* the whole record or nothing (a longer file is EFBIG) */
	got = te_read_fd(fd, buf, TE_GP_RECORD_MAX + 1, TE_READ_WHOLE);
	e = errno;
	close(fd);
	if (got < 0 && e == EFBIG)
		rd->too_large++;
	return got < 0 ? -1 : (long)got;
}

static void read_entry(int dfd, const char *name, uint32_t job, uid_t uid,
		       struct te_gp_reading *rd, te_gp_bad_fn bad, void *ctx)
{
	static char buf[TE_GP_RECORD_MAX + 1];
	char err[160];
	long len;

	if (rd->n >= TE_GP_STEPS_MAX) {
		rd->over++;
		return;
	}
	len = read_one(dfd, name, uid, buf, rd);
	if (len < 0)
		return;
	if (te_gp_record_parse(buf, (size_t)len, &rd->steps[rd->n], err,
			       sizeof(err)) < 0) {
		rd->bad++;
		if (bad)
			bad(name, err, ctx);
		return;
	}
	if (rd->steps[rd->n].job != job) {
		rd->other_job++;
		return;
	}
	rd->n++;
}

int te_gp_read_job(int dir, uint32_t job, uid_t uid, struct te_gp_reading *rd,
		   te_gp_bad_fn bad, void *ctx)
{
	struct dirent *e;
	DIR *d = fdopendir(dir);

	if (!d) {
		int saved = errno;

		close(dir);
		errno = saved;
		return -1;
	}
	while ((e = readdir(d)) && rd->looked++ < TE_GP_WALK_MAX)
		if (strlen(e->d_name) < NAME_MAX_LEN &&
		    te_step_record_is_name(e->d_name))
			read_entry(dirfd(d), e->d_name, job, uid, rd, bad, ctx);
	closedir(d);
	return 0;
}
