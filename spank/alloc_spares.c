/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sbatch's and salloc's side of --train-spares (alloc_spares.h): it
 * implies --no-kill where Slurm still reads that, and says so once where
 * the job will not have it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_spares.h"
#include "srun/srunargs.h"
#include "srun_hangup.h"
#include "state.h"

/* --train-spares implies --no-kill where Slurm still reads it: sbatch and
 * salloc read SBATCH_NO_KILL / SALLOC_NO_KILL after the #SBATCH lines and
 * before the command line, whose SPANK options come last. */
static struct {
	int calls; /* the option's callbacks */
	int had;   /* the variable was there before */
	int set;   /* set here */
	const char *var;
} nk;

static const char *no_kill_var(void)
{
	char **argv = NULL;
	int argc = te_srun_argv(&argv);
	const char *prog = argc > 0 ? strrchr(argv[0], '/') : NULL;

	prog = prog ? prog + 1 : argc > 0 ? argv[0] : "";
	return !strcmp(prog, "salloc") ? "SALLOC_NO_KILL" : "SBATCH_NO_KILL";
}

void te_alloc_spares_option(const char *optarg)
{
	if (!optarg || !strcmp(optarg, "off"))
		return;
	if (!nk.calls++) {
		nk.var = no_kill_var();
		nk.had = getenv(nk.var) != NULL;
	}
	if (!nk.had && !nk.set)
		nk.set = setenv(nk.var, "set", 0) == 0;
}

/* How often the command line itself gives --train-spares (SPANK's
 * options are not in srunargs' table). */
static int spares_on_cmdline(int argc, char **argv)
{
	int cmd = te_srun_command(argc, argv), i, n = 0;
	size_t len = strlen("--train-spares");

	for (i = 1; i < (cmd < 0 ? argc : cmd); i++)
		if (!strncmp(argv[i], "--train-spares", len) &&
		    (argv[i][len] == '=' || !argv[i][len]))
			n++;
	return n;
}

/* Said once at submission when the job will not have --no-kill. */
void te_alloc_spares_no_kill(int argc, char **argv)
{
	const struct te_value *v = &te_plug.cfg.v[TE_S_SPARES];
	int on_cmdline = spares_on_cmdline(argc, argv);

	if (nk.set) /* read already: not the job's environment */
		unsetenv(nk.var);
	if (!v->set || v->word != TE_W_VALUE || nk.had ||
	    te_srun_asks(argc, argv, "no-kill") ||
	    (nk.set && nk.calls > on_cmdline))
		return;
	fprintf(stderr,
		TE_PREFIX "warning: --train-spares=%llu without --no-kill: "
			  "Slurm ends the whole job when one of its nodes is "
			  "lost, so only the other node failures start a step "
			  "again; give --train-spares in the #SBATCH lines "
			  "(it then implies --no-kill) or add --no-kill\n",
		(unsigned long long)v->num);
}
