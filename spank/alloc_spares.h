/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sbatch's and salloc's side of --train-spares (alloc_spares.c). */
#ifndef TE_ALLOC_SPARES_H
#define TE_ALLOC_SPARES_H

/* The option's callback (before the checks): sets SBATCH_NO_KILL or
 * SALLOC_NO_KILL, which sbatch reads after the #SBATCH lines. */
void te_alloc_spares_option(const char *optarg);
/* At init_post_opt, settings resolved: takes that variable out of the
 * job's environment again and says once when the job will not have
 * --no-kill. argv: sbatch's or salloc's command line. */
void te_alloc_spares_no_kill(int argc, char **argv);

#endif
