/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What srun, sbatch and salloc share: settings resolved at submission
 * (submit.c). */
#ifndef TE_SUBMIT_H
#define TE_SUBMIT_H

/* Resolves te_plug.cfg in srun/sbatch/salloc; prints the error and returns
 * -1 when a user value is refused. */
int te_submit_resolve(void);
/* The same with the job environment that srun's --export list gives the
 * tasks (NULL: srun's whole environment); again: the warnings were already
 * printed. */
int te_submit_resolve_export(const char *export_spec, int again);
/* 1 when trainenv is on for this job/step. */
int te_submit_train_on(void);
/* Prints the --train-explain report when it was asked for. */
void te_submit_explain(const char *what);

#endif
