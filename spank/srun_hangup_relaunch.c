/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shield starts srun again (--train-spares, srun_relaunch.c decides):
 * srun's last word, read from the pipe it was given, names the nodes to
 * leave out and the step's node and task counts; the shield runs srun's
 * own command line again with those before the command, in srun's first
 * environment plus the relaunch's count and nodes, its stdin /dev/null
 * (srun's input was taken by the first step), its stdout and stderr where
 * the first srun's went. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/relaunch.h"
#include "srun_hangup_exec.h"
#include "srun_hangup_relaunch.h"
#include "util/strutil.h"

/* The word, when srun left one: 1, 0 none (or not one well-formed line). */
static int word_read(int fd, struct te_relaunch_word *w)
{
	char line[TE_RELAUNCH_WORD_MAX];
	ssize_t n = read(fd, line, sizeof(line) - 1);

	if (n <= 0)
		return 0;
	line[n] = '\0';
	return te_relaunch_word_parse(line, w) == 0;
}

/* The relaunch's environment: the count, and the nodes left out. */
static int relaunch_env(struct te_hup_argv *a, const struct te_relaunch_word *w)
{
	char num[16], first[16];

	te_snprintf(num, sizeof(num), "%u", w->restart);
	te_snprintf(first, sizeof(first), "%u", w->first);
	return te_hup_argv_setenv(a, TE_RELAUNCH_COUNT_ENV, num) < 0 ||
			       te_hup_argv_setenv(a, TE_RELAUNCH_EXCLUDED_ENV,
						  w->exclude) < 0 ||
			       te_hup_argv_setenv(a, TE_RELAUNCH_FIRST_ENV,
						  first) < 0
		       ? -1
		       : 0;
}

pid_t te_hup_relaunch(struct te_hup_relaunch *r, char *err, size_t errlen)
{
	static char optbuf[TE_EXCLUDE_MAX * 2 + 64];
	struct te_relaunch_word w;
	struct te_hup_argv a;
	char **argv;
	int argc, from[3], word = -1, devnull;
	pid_t pid;

	if (!word_read(r->word_rd, &w))
		return 0;
	if (te_hup_argv_read(&a, err, errlen) < 0)
		return -1;
	for (argc = 0; a.argv[argc]; argc++)
		;
	argv = calloc((size_t)argc + 7, sizeof(*argv));
	if (!argv ||
	    te_relaunch_argv(argc, a.argv, &w, argv, optbuf, sizeof(optbuf)) <
		    0 ||
	    relaunch_env(&a, &w) < 0) {
		free(argv);
		te_hup_argv_free(&a);
		return te_err(err, errlen,
			      "srun's command line has no room for the "
			      "relaunch's options");
	}
	free(a.argv);
	a.argv = argv;
	if (te_hup_hold_open(&r->hold,
			     r->out[1] >= 0 ? r->out[1] : STDERR_FILENO) < 0)
		r->hold = (struct te_hup_hold){ -1, -1, -1, -1, -1 };
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	from[0] = devnull;
	from[1] = r->out[0];
	from[2] = r->hold.wr >= 0 ? r->hold.wr : r->out[1];
	if (r->word_wr >= 0)
		word = fcntl(r->word_wr, F_DUPFD, 3); /* across execve */
	pid = te_hup_respawn(&a, from, &r->hold, word, &r->mask, err, errlen);
	if (word >= 0)
		close(word);
	if (devnull >= 0)
		close(devnull);
	te_hup_argv_free(&a);
	te_hup_hold_started(&r->hold);
	return pid;
}
