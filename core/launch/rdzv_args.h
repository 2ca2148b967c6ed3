/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The command line of the trainenv-rdzv helper (pmix/rdzv.c), which the
 * plugin's task_init writes (spank/stepd_rdzv.c): parsed into plain
 * options, every value checked. */
#ifndef TE_RDZV_ARGS_H
#define TE_RDZV_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "launch/launch_verdict.h"
#include "launch/rdzv_core.h"
#include "settings/settings.h"

/* What the helper knows. Its command line carries only the step's facts
 * that are not settings (--job, --step, --lead, --failed; --protocol
 * comes first and is taken off before: core/launch/version.h); every
 * setting comes from the effective settings the plugin encoded
 * (TRAINENV_SETTINGS, te_rdzv_opts_settings), checked against the
 * settings table's rows when decoded. */
struct te_rdzv_opts {
	/* the command line */
	unsigned long job, step; /* --job, --step */
	int lead;		 /* --lead: stands for the node's other tasks */
	/* this task failed before the barrier (--failed TEXT, or the test
	 * hook): rank 0 is told and fails the step at once. NULL, or
	 * failed_text. */
	const char *failed;
	char failed_text[TE_FAIL_TEXT_MAX + 1];
	/* the settings */
	uint16_t port_lo, port_hi; /* port-range */
	uint16_t port_start;	   /* MASTER_PORT's first try: te_master_port()
				 * of the job, step and range */
	unsigned barrier;	   /* barrier seconds, 0: off (first-collective
				 * too: no launch barrier) */
	unsigned wait;		   /* without a barrier: seconds for rank 0's
				 * data (te_setting_barrier_s: 300) */
	int vcheck;		   /* version-check: enum te_w_version_check */
	const char *ckpt;	   /* checkpoint-dir, NULL or ckpt_text */
	char ckpt_text[TE_VALUE_MAX];
	int ifname;	     /* socket-ifname=yes */
	int hooks;	     /* test-hooks=on */
	unsigned tree_width; /* launch-tree-width: children per helper */
	int record;	     /* a barrier and a record dir: rank 0 tells
				 * srun the launch timeline (the step's
				 * record) */
};

/* argv[1..argc) into o's command-line part (the rest zeroed). 0, or -1
 * with "bad argument 'ARG'" in err, naming the option whose value is
 * missing or wrong, or the unknown word (a setting's old flag among
 * them: a helper of protocol 2 takes no setting from argv). */
int te_rdzv_args_parse(int argc, char **argv, struct te_rdzv_opts *o, char *err,
		       size_t errlen);

/* The settings part of o from the effective settings cfg (decoded), for
 * the step o->job, o->step. */
void te_rdzv_opts_from_config(struct te_rdzv_opts *o,
			      const struct te_config *cfg);

/* The same from the encoded settings enc (the value of TRAINENV_SETTINGS
 * in the helper's environment, NULL when unset): 0, or -1 with one line
 * in err when there are none or te_config_decode() refuses them. */
int te_rdzv_opts_settings(struct te_rdzv_opts *o, const char *enc, char *err,
			  size_t errlen);

#endif
