/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What trainenv decided for a task, as environment variables, and the two
 * pure halves of keeping it in a container (the I/O is
 * pmix/container_tool.c): the filter trainenv's enroot hook applies to the
 * container's environment file before pyxis copies it over the task's,
 * and the comparison of a program's environment with the decisions.
 *
 * pyxis copies every variable of the container's environment (the image's
 * ENV, enroot's environment files, what enroot's hooks add: its PyTorch
 * hook's MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK) over the
 * task's, which trainenv prepared before (trainenv is listed first). The
 * hook runs last among enroot's system hooks, once per node, with the
 * environment of the node's first task: it removes from the container's
 * environment every variable trainenv decided, so that pyxis leaves each
 * task's own value alone (a per-task value such as RANK cannot be written
 * there: the file is the node's), and records what it removed in
 * TRAINENV_CONTAINER. All input is hostile: names are checked, values
 * are cleaned before they reach a message, every buffer is bounded. */
#ifndef TE_CONTAINER_ENV_H
#define TE_CONTAINER_ENV_H

#include <stddef.h>

#include "settings/settings.h"

#define TE_CENV_ENV "TRAINENV_CONTAINER" /* the hook's record */
#define TE_CENV_MAX 96			 /* variables decided */
#define TE_CENV_NAME_MAX 64		 /* a name, terminator included */
#define TE_CENV_FILE_MAX (1024 * 1024)	 /* an environment file */
#define TE_CENV_REPORT_MAX 2048		 /* TRAINENV_CONTAINER's value */
#define TE_CENV_SHOW_MAX 64		 /* a value's bytes in a report */

struct te_cenv_var {
	char name[TE_CENV_NAME_MAX];
	char value[TE_VALUE_MAX + 1];
	int has_value; /* the task had it (value) */
	int enforced;  /* the site's value (enforce=) */
};

struct te_cenv {
	int n;
	struct te_cenv_var v[TE_CENV_MAX];
};

/* 1 when s is an environment name of at most TE_CENV_NAME_MAX - 1
 * characters: a letter or '_', then letters, digits or '_'. */
int te_cenv_name_valid(const char *s, size_t len);

/* The variables trainenv decided for the task whose environment getenv_fn
 * reads: every name of each set knob (from TRAINENV_SETTINGS), the rank
 * variables (TRAINENV_RANK_VARS), TORCH_NCCL_DEBUG_INFO_TEMP_FILE with a
 * dump directory, CUDA_DEVICE_ORDER with a binding (TRAINENV_BIND); each
 * with the task's value. No TRAINENV_SETTINGS, or --train=off: none (0).
 * -1 with a message when TRAINENV_SETTINGS or TRAINENV_RANK_VARS cannot
 * be read. Every TRAINENV_* variable is trainenv's too (te_cenv_ours). */
int te_cenv_decided(te_getenv_fn getenv_fn, void *ctx, struct te_cenv *out,
		    char *err, size_t errlen);

/* 1 when the variable called name (len bytes) is one of d's or a
 * TRAINENV_* one. */
int te_cenv_ours(const struct te_cenv *d, const char *name, size_t len);

/* The hook's filter. in: the container's environment file (len bytes,
 * "NAME=VALUE" lines as enroot writes them; other lines are kept as they
 * are). out: the same without the lines of trainenv's variables, then one
 * line TRAINENV_CONTAINER=enroot:NAME=VALUE;... naming each variable of
 * d that the container had set and its value there (cleaned, cut at
 * TE_CENV_SHOW_MAX bytes; ";..." when more did not fit). Returns the
 * number of d's variables removed, or -1 with a message (out too small,
 * a NUL byte in the file). */
int te_cenv_filter(const char *in, size_t len, const struct te_cenv *d,
		   char *out, size_t outcap, size_t *outlen, char *err,
		   size_t errlen);

/* The program's environment (NUL-separated NAME=VALUE strings, as
 * /proc/PID/environ; len bytes, cut is 1 when it was longer) against d:
 * report gets "NAME=VALUE (trainenv: VALUE[, enforced])" or "NAME unset
 * (trainenv: VALUE)" for each variable of d the program does not have as
 * decided, "; "-separated and cleaned; *enforced_changed counts the
 * enforced ones among them. Returns how many differ. A variable past a
 * cut environment is not judged. */
int te_cenv_compare(const struct te_cenv *d, const char *env, size_t len,
		    int cut, char *report, size_t replen,
		    int *enforced_changed);

/* TRAINENV_CONTAINER's value as a sentence: "the container's
 * environment set A=1, B=2; trainenv's enroot hook kept trainenv's
 * values", or that it set none of them; cleaned. */
void te_cenv_record_text(const char *rec, char *out, size_t len);

/* The value of name in a NUL-separated environment block, or NULL. */
const char *te_cenv_block_get(const char *env, size_t len, const char *name);

#endif
