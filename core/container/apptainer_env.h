/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv's decisions carried into Apptainer and Singularity containers.
 *
 * Apptainer passes the task's environment into the container, but the
 * image's ENV (its %environment) wins where both set a variable, and
 * --cleanenv (-e) drops the task's environment altogether. What it applies
 * inside the container whatever those say is APPTAINERENV_NAME (Apptainer
 * 1.x) and SINGULARITYENV_NAME (Singularity 3.x and SingularityCE, which
 * Apptainer also reads): NAME gets the value inside. Given the variables
 * trainenv set in a task, with the task's values, te_appt_env() gives both
 * names for each. Written from Apptainer's documentation and source
 * (internal/pkg/util/env), and run under Debian sid's apptainer 1.4.5
 * (tests/integration/t29_apptainer.sh). Pure. */
#ifndef TE_APPTAINER_ENV_H
#define TE_APPTAINER_ENV_H

#include <stddef.h>

#define TE_APPT_IN_MAX 160	       /* variables looked at */
#define TE_APPT_NAME_MAX 64	       /* NAME, terminator included */
#define TE_APPT_VALUE_MAX 16384	       /* one value */
#define TE_APPT_TOTAL_MAX (128 * 1024) /* every value together */

struct te_appt_var {
	char name[TE_APPT_NAME_MAX + 16]; /* APPTAINERENV_NAME */
	const char *value;		  /* the caller's */
};

struct te_appt_out {
	int n;	     /* entries in v */
	int skipped; /* variables left out */
	struct te_appt_var v[2 * TE_APPT_IN_MAX];
};

/* names[i] and values[i] (i < n): a variable trainenv set in the task and
 * its value there (NULL: the task does not have it). out gets
 * APPTAINERENV_NAME and SINGULARITYENV_NAME for each, in that order, with
 * the same value. Left out, and counted in out->skipped: a variable the
 * task does not have, a name that is not a variable name or is too long,
 * Apptainer's own (APPTAINER*, SINGULARITY*) and those it refuses or
 * treats apart or that name this node's files (HOME, PATH, LD_PRELOAD,
 * LD_LIBRARY_PATH, PREPEND_PATH, APPEND_PATH), a value over
 * TE_APPT_VALUE_MAX or past TE_APPT_TOTAL_MAX in all, and what is past
 * TE_APPT_IN_MAX; a name given twice is taken once (the first). Returns
 * how many variables were taken. */
int te_appt_env(const char *const *names, const char *const *values, size_t n,
		struct te_appt_out *out);

/* 1 when a command's first word runs Apptainer ("apptainer",
 * "singularity", with a directory or not), else 0 (NULL too). */
int te_appt_command(const char *word);

#endif
