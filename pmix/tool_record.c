/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv record: a job's goodput from its step records (issue 35, item
 * 6). Reads DIR/UID/JOBID/trainenv.STEP.json as the calling user (UID its
 * own; the directories found and checked as the plugin made them,
 * core/report/dumpdir.h), following no link, only regular files it owns, at most
 * TE_GP_RECORD_MAX bytes of each and TE_GP_STEPS_MAX of them;
 * core/report/goodput.h sums them up. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/dumpdir.h"
#include "report/goodput.h"
#include "report/goodput_read.h"
#include "util/strutil.h"
#include "util/sysutil.h"
#include "tool.h"

#define BAD_SAID_MAX 8	    /* left-out records named on stderr */
#define OUT_MAX (64 * 1024) /* the summary's text */

struct record_args {
	const char *dir;
	uint32_t job;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trainenv record JOBID --dir DIR\n\n"
		"Sums up job JOBID's step records, DIR/UID/JOBID/trainenv.STEP."
		"json (DIR:\nthe site's record-dir or the job's "
		"--train-nccl-dump-dir; UID: yours):\nsteps, failures, "
		"relaunches, requeues, the nodes left out, and how the\nwall "
		"time from the first step's start to the last step's end "
		"went:\n\n"
		"  wall = training + initialisation + lost + other\n\n"
		"training: from each step's launch barrier (its start where "
		"the record does\nnot say) to its end; initialisation: its "
		"start to that barrier; lost: a\nfailed step's end to the next "
		"step's start; other: the other gaps.\n"
		"Reads only regular files you own, no link, at most %d "
		"bytes each and %d\nrecords. Exit 0: printed; 1: no record "
		"of the job; 2: usage or I/O error.\n",
		TE_GP_RECORD_MAX, TE_GP_STEPS_MAX);
}

static int bad_usage(const char *what, const char *arg)
{
	char shown[48];

	te_clean_text(shown, sizeof(shown), arg ? arg : "", 40);
	fprintf(stderr,
		"trainenv record: %s%s%s%s (usage: trainenv record JOBID "
		"--dir DIR; see --help)\n",
		what, arg ? " '" : "", arg ? shown : "", arg ? "'" : "");
	return 2;
}

static int parse_args(int argc, char **argv, struct record_args *a)
{
	uint64_t u;
	int i, have_job = 0;

	for (i = 1; i < argc; i++) {
		const char *v = argv[i];

		if (!strncmp(v, "--dir=", 6)) {
			a->dir = v + 6;
		} else if (!strcmp(v, "--dir")) {
			if (i + 1 >= argc)
				return bad_usage("--dir needs a directory",
						 NULL);
			a->dir = argv[++i];
		} else if (v[0] == '-') {
			return bad_usage("unknown option (--dir DIR, --help)",
					 v);
		} else if (have_job) {
			return bad_usage("a second JOBID", v);
		} else if (te_parse_u64(v, UINT32_MAX, &u) < 0 || u == 0) {
			return bad_usage("JOBID is a job id (1 to 4294967295), "
					 "not",
					 v);
		} else {
			a->job = (uint32_t)u;
			have_job = 1;
		}
	}
	if (!have_job)
		return bad_usage("no JOBID", NULL);
	if (!a->dir || !a->dir[0])
		return bad_usage("--dir DIR is needed (the record directory: "
				 "the site's record-dir or the job's "
				 "--train-nccl-dump-dir)",
				 NULL);
	return 0;
}

/* DIR/UID/JOBID found as the plugin made it (core/report/dumpdir.h: every
 * directory on the way held to its rules, DIR/UID.<hex> when DIR/UID is
 * another user's, no link followed), opened for reading; its fd, or -1
 * (said; errno ENOENT when a level is missing). */
static int open_job_dir(const struct record_args *a)
{
	char name[24], why[2 * TE_DUMP_DIR_PATH_MAX + 160];
	int path_fd, fd, saved;

	te_snprintf(name, sizeof(name), "%u", a->job);
	path_fd = te_dump_dir_find(a->dir, name, getuid(), NULL, 0, why,
				   sizeof(why));
	if (path_fd < 0) {
		saved = path_fd == -2 ? errno : EPERM;
		fprintf(stderr, "trainenv record: %s\n", why);
		errno = saved;
		return -1;
	}
	if (why[0])
		fprintf(stderr, "trainenv record: note: %s\n", why);
	/* the finder's descriptor is O_PATH, which fdopendir refuses */
	fd = openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	saved = errno;
	close(path_fd);
	if (fd < 0)
		fprintf(stderr, "trainenv record: %s/%u/%u: %s\n", a->dir,
			(unsigned)getuid(), a->job, strerror(saved));
	errno = saved;
	return fd;
}

/* A file that is no step record, named (at most BAD_SAID_MAX). */
static void say_bad(const char *name, const char *why, void *ctx)
{
	static unsigned said;
	char shown[96];

	(void)ctx;
	if (said++ >= BAD_SAID_MAX)
		return;
	te_clean_text(shown, sizeof(shown), name, 60);
	fprintf(stderr, "trainenv record: %s left out: %s\n", shown, why);
}

static void say_left_out(const struct te_gp_reading *rd)
{
	if (rd->bad || rd->other_job || rd->not_owned || rd->not_regular ||
	    rd->too_large || rd->over)
		fprintf(stderr,
			"trainenv record: %zu records read; left out: %u not "
			"step records, %u of another job, %u not yours, %u "
			"not regular files or links, %u over %d bytes, %u past "
			"%d records\n",
			rd->n, rd->bad, rd->other_job, rd->not_owned,
			rd->not_regular, rd->too_large, TE_GP_RECORD_MAX,
			rd->over, TE_GP_STEPS_MAX);
}

static int summarize(const struct record_args *a, struct te_gp_reading *rd)
{
	static char out[OUT_MAX];
	struct te_gp_summary sum;

	say_left_out(rd);
	if (rd->n == 0) {
		fprintf(stderr,
			"trainenv record: no step record of job %u "
			"under %s\n",
			a->job, a->dir);
		return 1;
	}
	te_gp_summarize(rd->steps, rd->n, &sum);
	if (te_gp_text(rd->steps, rd->n, &sum, out, sizeof(out)) < 0)
		fprintf(stderr, "trainenv record: the summary was cut\n");
	fputs(out, stdout);
	return 0;
}

int te_tool_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	struct te_gp_reading rd = { 0 };
	int rc, fd;

	if (argc == 2 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	fd = open_job_dir(&a);
	if (fd < 0)
		return errno == ENOENT ? 1 : 2;
	rd.steps = calloc(TE_GP_STEPS_MAX, sizeof(*rd.steps));
	if (!rd.steps ||
	    te_gp_read_job(fd, a.job, getuid(), &rd, say_bad, NULL) < 0) {
		fprintf(stderr, "trainenv record: %s\n", strerror(errno));
		free(rd.steps);
		return 2;
	}
	rc = summarize(&a, &rd);
	free(rd.steps);
	return rc;
}
