/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The job environment srun will give the tasks, as its --export option
 * decides, so that srun's own view of "the value already in the job
 * environment" (precedence level 3, --train-explain) is the tasks' view.
 *
 * Slurm 22.05 (plugins/launch/slurm/launch_slurm.c, _build_user_env):
 * without --export every variable of srun's environment goes to the tasks.
 * Otherwise the comma-separated list is read in order: ALL adds srun's whole
 * environment, NONE ends the list, NAME=VALUE sets NAME, NAME passes srun's
 * own NAME; with ALL srun's environment wins over NAME=VALUE. SLURM_*
 * variables always go. The option comes from the command line, else
 * SRUN_EXPORT_ENV, else SLURM_EXPORT_ENV. Pure functions. */
#ifndef TE_EXPORTENV_H
#define TE_EXPORTENV_H

#include <stddef.h>

#include "settings/settings.h"

/* The value NAME will have in the tasks' environment under the export
 * list spec (NULL: srun's default, everything), srun's own environment
 * being read through env_fn. The result points into env_fn's storage or
 * into buf (len bytes); NULL when the tasks will not have NAME. A value
 * too long for buf comes back as an over-long marker (len-1 'x'), which the
 * settings parser refuses like any over-long value. */
const char *te_export_getenv(const char *spec, const char *name,
			     te_getenv_fn env_fn, void *ctx, char *buf,
			     size_t len);

/* srun's --export value from its own command line: args[0..nargs) are
 * srun's arguments before the command (argv[0] excluded). Handles
 * "--export=V", "--export V" and getopt's unambiguous abbreviations
 * (--exp, --expo, ...); the last one wins. NULL when absent. */
const char *te_export_from_args(int nargs, char *const *args);

#endif
