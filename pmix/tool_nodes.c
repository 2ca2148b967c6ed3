/* SPDX-License-Identifier: GPL-2.0-or-later */
/* trainenv nodes: the memory of bad nodes (issue 34, item 4). Reads a
 * record directory (DIR/UID/JOBID/trainenv.STEP.json, as srun writes it)
 * and names the nodes that were the first failure of jobs of several
 * users (core/report/node_memory.h judges). The files are users': the walk
 * follows no link, reads only regular files, at most RECORD_MAX bytes of
 * each and the newest FILES_MAX of them, and takes a record's user from
 * its file's owner. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "report/node_memory.h"
#include "report/steprecord.h"
#include "util/strutil.h"
#include "util/textbuf.h"
#include "tool.h"

#define FILES_MAX 10000	   /* records read: the newest by mtime */
#define WALK_MAX 200000	   /* directory entries looked at, all levels */
#define NODES_OUT_MAX 4096 /* implicated nodes printed */
#define PATH_PART 64	   /* longer names are none of trainenv's */

struct nodes_args {
	int json, exclude_list;
	struct te_nm_opts o;
	const char *dir;
};

/* What was left out and why (one line on stderr, and in --json). */
struct left_out {
	unsigned links, not_regular, too_large, unreadable, not_records, future,
		older, walk_cap;
};

struct cand {
	char part[3][PATH_PART]; /* UID dir, JOBID dir, file name */
	struct timespec mtime;
};

struct walk {
	struct cand *c;
	size_t n, cap, looked;
	struct left_out *lo;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: trainenv nodes [--json | --exclude-list] [--min-users N] "
		"[--last K] [--min-failures M] DIR\n\n"
		"Reads the step records under DIR (DIR/UID/JOBID/trainenv.STEP."
		"json, the\nsite's record-dir) and names each node that was the "
		"first failure of at\nleast M (default 2) of the last K (default "
		"10, at most %d) jobs seen on it,\nthose failures of at least N "
		"(default 2) distinct users. A record's user is\nits file's "
		"owner, never a field of it; a (job, user) counts once. Links,\n"
		"files that are not regular, records over %d bytes and all but "
		"the\nnewest %d are left out (said on stderr).\n"
		"--exclude-list prints only the nodes, comma-separated (for "
		"srun --exclude).\nExit 0: no node implicated; 1: some (printed); "
		"2: usage or I/O error.\n",
		TE_NM_LAST_MAX, TE_NM_RECORD_MAX, FILES_MAX);
}

/* "--NAME N" or "--NAME=N" at argv[*i] into *out (lo..hi); 1 when it is
 * not this option, 0 when taken, 2 on a usage error. */
static int number_opt(int argc, char **argv, int *i, const char *name,
		      unsigned lo, unsigned hi, unsigned *out)
{
	const char *a = argv[*i], *v;
	size_t len = strlen(name);
	uint64_t u;

	if (strncmp(a, name, len) != 0 || (a[len] != '\0' && a[len] != '='))
		return 1;
	if (a[len] == '=') {
		v = a + len + 1;
	} else if (*i + 1 < argc) {
		v = argv[++*i];
	} else {
		fprintf(stderr,
			"trainenv nodes: %s needs a number (%u to %u)\n", name,
			lo, hi);
		return 2;
	}
	if (te_parse_u64(v, hi, &u) < 0 || u < lo) {
		char shown[48];

		te_clean_text(shown, sizeof(shown), v, 40);
		fprintf(stderr,
			"trainenv nodes: %s: '%s' is not a number from %u to "
			"%u\n",
			name, shown, lo, hi);
		return 2;
	}
	*out = (unsigned)u;
	return 0;
}

static int parse_args(int argc, char **argv, struct nodes_args *a)
{
	int i, r;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			a->json = 1;
			continue;
		}
		if (!strcmp(argv[i], "--exclude-list")) {
			a->exclude_list = 1;
			continue;
		}
		r = number_opt(argc, argv, &i, "--min-users", 1, 100000,
			       &a->o.min_users);
		if (r == 1)
			r = number_opt(argc, argv, &i, "--last", 1,
				       TE_NM_LAST_MAX, &a->o.last);
		if (r == 1)
			r = number_opt(argc, argv, &i, "--min-failures", 1,
				       TE_NM_LAST_MAX, &a->o.min_failures);
		if (r == 2)
			return 2;
		if (r == 0)
			continue;
		if (argv[i][0] == '-' || a->dir) {
			char shown[48];

			te_clean_text(shown, sizeof(shown), argv[i], 40);
			fprintf(stderr,
				"trainenv nodes: %s '%s' (one DIR; options "
				"--json, --exclude-list, --min-users N, --last "
				"K, --min-failures M; see --help)\n",
				argv[i][0] == '-' ? "unknown option"
						  : "a second directory",
				shown);
			return 2;
		}
		a->dir = argv[i];
	}
	if (a->json && a->exclude_list) {
		fprintf(stderr, "trainenv nodes: --json and --exclude-list: "
				"one or the other\n");
		return 2;
	}
	if (!a->dir) {
		fprintf(stderr, "trainenv nodes: no DIR (the record directory; "
				"see --help)\n");
		return 2;
	}
	return 0;
}

/* The entries of the directory at dfd (closed here), each passed to fn
 * with its lstat; stops at WALK_MAX entries in all. */
static void each_entry(int dfd, struct walk *w,
		       void (*fn)(int dfd, const char *name,
				  const struct stat *st, void *arg),
		       void *arg)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	struct stat st;

	if (!d) {
		close(dfd);
		w->lo->unreadable++;
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (++w->looked > WALK_MAX) {
			w->lo->walk_cap++;
			break;
		}
		if (strlen(e->d_name) >= PATH_PART ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			w->lo->links++;
			continue;
		}
		fn(dirfd(d), e->d_name, &st, arg);
	}
	closedir(d);
}

struct level {
	struct walk *w;
	const char *up[2];
	int depth; /* the directory being entered: 0 USER, 1 JOB */
};

static void file_entry(int dfd, const char *name, const struct stat *st,
		       void *arg)
{
	struct level *l = arg;
	struct walk *w = l->w;
	struct cand *c;

	(void)dfd;
	if (!te_step_record_is_name(name))
		return;
	if (!S_ISREG(st->st_mode)) {
		w->lo->not_regular++;
		return;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 1024;
		struct cand *more = realloc(w->c, cap * sizeof(*more));

		if (!more) {
			w->lo->walk_cap++;
			return;
		}
		w->c = more;
		w->cap = cap;
	}
	c = &w->c[w->n++];
	te_strlcpy(c->part[0], l->up[0], PATH_PART);
	te_strlcpy(c->part[1], l->up[1], PATH_PART);
	te_strlcpy(c->part[2], name, PATH_PART);
	c->mtime = st->st_mtim;
}

/* A directory of the tree, DIR/USER or DIR/USER/JOB (l->depth 0 or 1):
 * entered without following a link, its name kept for the records under
 * it; below JOB come the record files. */
static void dir_entry(int dfd, const char *name, const struct stat *st,
		      void *arg)
{
	struct level *l = arg;
	int fd, depth = l->depth;

	if (!S_ISDIR(st->st_mode))
		return;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		l->w->lo->unreadable++;
		return;
	}
	l->up[depth] = name;
	l->depth = depth + 1;
	each_entry(fd, l->w, depth == 0 ? dir_entry : file_entry, l);
	l->depth = depth;
}

static int newest_first(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec > y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec > y->mtime.tv_nsec ? -1 : 1;
	return 0;
}

/* Opens c under root, no link followed at any level; the file's fd, or
 * -1. */
static int open_cand(int root, const struct cand *c)
{
	int d1, d2, fd;

	d1 = openat(root, c->part[0],
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d1 < 0)
		return -1;
	d2 = openat(d1, c->part[1],
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(d1);
	if (d2 < 0)
		return -1;
	/* O_NONBLOCK: a FIFO swapped in since the walk cannot hold us */
	fd = openat(d2, c->part[2],
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(d2);
	return fd;
}

/* Reads the record at fd (closed here) into buf[0..RECORD_MAX]; its
 * length, or -1 (what was wrong counted in lo). */
static long read_record(int fd, char *buf, struct stat *st, struct left_out *lo)
{
	size_t got = 0;
	ssize_t r;

	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		lo->not_regular++;
		close(fd);
		return -1;
	}
	if (st->st_size > TE_NM_RECORD_MAX) {
		lo->too_large++;
		close(fd);
		return -1;
	}
	while (got <= TE_NM_RECORD_MAX) {
		r = read(fd, buf + got, TE_NM_RECORD_MAX + 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got > TE_NM_RECORD_MAX) {
		lo->too_large++;
		return -1;
	}
	return (long)got;
}

/* The newest FILES_MAX candidates read into m. */
static void read_records(int root, struct walk *w, struct te_nm *m,
			 unsigned *read_ok)
{
	static char buf[TE_NM_RECORD_MAX + 1];
	struct te_nm_record r;
	struct stat st;
	char err[160];
	size_t i;
	long len;
	int fd, rc;

	if (w->n) /* w->c is NULL when nothing was found */
		qsort(w->c, w->n, sizeof(*w->c), newest_first);
	if (w->n > FILES_MAX)
		w->lo->older = (unsigned)(w->n - FILES_MAX);
	for (i = 0; i < w->n && i < FILES_MAX; i++) {
		fd = open_cand(root, &w->c[i]);
		if (fd < 0) {
			if (errno == ELOOP)
				w->lo->links++;
			else
				w->lo->unreadable++;
			continue;
		}
		len = read_record(fd, buf, &st, w->lo);
		if (len < 0)
			continue;
		if (te_nm_record_parse(buf, (size_t)len, &r, err,
				       sizeof(err))) {
			w->lo->not_records++;
			continue;
		}
		rc = te_nm_add(m, (uint32_t)st.st_uid, &r, time(NULL));
		if (rc < 0) /* m holds FILES_MAX: not reached */
			break;
		if (rc > 0) {
			w->lo->future++;
			continue;
		}
		(*read_ok)++;
	}
}

static void say_left_out(const struct left_out *lo, unsigned nread,
			 size_t njobs)
{
	fprintf(stderr,
		"trainenv nodes: %u records read (%zu jobs); left out: %u "
		"links, %u not regular files, %u over %d bytes, %u not step "
		"records, %u ending in the future, %u older than the newest "
		"%d, %u unreadable, %u past %d entries\n",
		nread, njobs, lo->links, lo->not_regular, lo->too_large,
		TE_NM_RECORD_MAX, lo->not_records, lo->future, lo->older,
		FILES_MAX, lo->unreadable, lo->walk_cap, WALK_MAX);
}

static void print_json(const struct nodes_args *a, const struct left_out *lo,
		       unsigned nread, size_t njobs,
		       const struct te_nm_node *bad, size_t nbad)
{
	static char out[NODES_OUT_MAX * 128 + 1024];
	struct te_buf b;
	size_t i;

	te_buf_init(&b, out, sizeof(out));
	te_buf_printf(&b,
		      "{\"min_users\":%u,\"last\":%u,\"min_failures\":%u,"
		      "\"records\":%u,\"jobs\":%zu,\"left_out\":{\"links\":%u,"
		      "\"not_regular\":%u,\"too_large\":%u,\"not_records\":%u,"
		      "\"future\":%u,\"older\":%u,\"unreadable\":%u,"
		      "\"walk_cap\":%u},\"nodes\":[",
		      a->o.min_users, a->o.last, a->o.min_failures, nread,
		      njobs, lo->links, lo->not_regular, lo->too_large,
		      lo->not_records, lo->future, lo->older, lo->unreadable,
		      lo->walk_cap);
	for (i = 0; i < nbad; i++) {
		te_buf_printf(&b, "%s", i ? "," : "");
		te_nm_json(&bad[i], &b);
	}
	te_buf_printf(&b, "]}");
	printf("%s\n", out);
}

static void print_result(const struct nodes_args *a,
			 const struct te_nm_node *bad, size_t nbad)
{
	char line[256];
	size_t i;

	if (a->exclude_list) {
		for (i = 0; i < nbad; i++)
			printf("%s%s", i ? "," : "", bad[i].node);
		if (nbad)
			printf("\n");
		return;
	}
	for (i = 0; i < nbad; i++) {
		te_nm_line(&bad[i], line, sizeof(line));
		printf("%s\n", line);
	}
}

int te_tool_nodes(int argc, char **argv)
{
	struct nodes_args a = { .o = { 2, 10, 2 } };
	struct left_out lo = { 0 };
	struct walk w = { .lo = &lo };
	struct level l = { .w = &w };
	static struct te_nm_node bad[NODES_OUT_MAX];
	struct te_nm_job *jobs;
	struct te_nm m;
	unsigned nread = 0;
	long nbad;
	int root, rc;

	if (argc == 2 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	root = open(a.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0) {
		fprintf(stderr, "trainenv nodes: %s: %s\n", a.dir,
			strerror(errno));
		return 2;
	}
	jobs = calloc(FILES_MAX, sizeof(*jobs));
	if (!jobs) {
		close(root);
		fprintf(stderr, "trainenv nodes: out of memory\n");
		return 2;
	}
	te_nm_init(&m, jobs, FILES_MAX);
	each_entry(dup(root), &w, dir_entry, &l);
	read_records(root, &w, &m, &nread);
	close(root);
	free(w.c);
	nbad = te_nm_judge(&m, &a.o, bad, NODES_OUT_MAX);
	if (nbad < 0) {
		free(jobs);
		fprintf(stderr, "trainenv nodes: out of memory\n");
		return 2;
	}
	if (nbad > NODES_OUT_MAX)
		nbad = NODES_OUT_MAX;
	say_left_out(&lo, nread, m.njobs);
	if (a.json)
		print_json(&a, &lo, nread, m.njobs, bad, (size_t)nbad);
	else
		print_result(&a, bad, (size_t)nbad);
	free(jobs);
	return nbad ? 1 : 0;
}
