/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What srun was asked for on its own command line (srunargs.c). */
#ifndef TE_SRUNARGS_H
#define TE_SRUNARGS_H

/* The Slurm release whose options the functions below know, as
 * SLURM_VERSION_NUMBER ((major << 16) | (minor << 8) | micro): the plugin
 * passes the one it was built for. Until it is called, and for a release
 * older than 22.05, 22.05's options; for a release newer than the newest
 * known (srunargs_table.c), the newest's. */
void te_srun_argv_set_release(unsigned slurm_version);

/* The functions below read ARGV as srun's own command line, or sbatch's or
 * salloc's when argv[0] names one of those: its options up to "--" or the
 * first word that is not an option (the command, or the batch script). */

/* 1 when srun's own options (not the command's arguments) ask for --pty. */
int te_srun_asks_pty(int argc, char *const *argv);

/* 1 when srun itself will read its stdin (its --input option is absent,
 * "all" or a task number), 0 when the input is "none" or a file. */
int te_srun_reads_stdin(int argc, char *const *argv);

/* 1 when srun's own options ask for --signal. */
int te_srun_asks_signal(int argc, char *const *argv);

/* 1 when srun's own options hold the long option NAME (without its
 * dashes, e.g. "external-launcher"), with or without a value. */
int te_srun_asks(int argc, char *const *argv, const char *name);

/* The value of srun's own long option NAME (its last, however given), or
 * NULL when it is absent or has no value. Points into ARGV. */
const char *te_srun_option_value(int argc, char *const *argv, const char *name);

/* The index in ARGV of the command's first word (after srun's options and
 * a "--"), or -1 when there is none. */
int te_srun_command(int argc, char *const *argv);

#endif
