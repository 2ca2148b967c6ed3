/* The command line of the trainenv-rdzv helper (pmix/rdzv.c), which the
 * plugin's task_init writes (spank/stepd_rdzv.c): parsed into plain
 * options, every value checked.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef TE_RDZV_ARGS_H
#define TE_RDZV_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "launch/launch_verdict.h"
#include "launch/rdzv_core.h"

struct te_rdzv_opts {
	unsigned long job, step;	/* --job, --step */
	uint16_t port_lo, port_hi;	/* --port-range LO-HI (20000-29999) */
	uint16_t port_start;	/* --port-start: MASTER_PORT's first try */
	unsigned barrier;	/* --barrier seconds, 0: off */
	unsigned wait;		/* --wait: seconds for rank 0's data without
				 * barrier (300) */
	int vcheck;		/* --version-check: enum te_w_version_check */
	const char *ckpt;	/* --checkpoint-dir (absolute), in argv */
	int ifname;		/* --ifname */
	int hooks;		/* --test-hooks */
	int lead;		/* --lead: stands for the node's other tasks */
	unsigned tree_width;	/* --tree-width K: children per helper (16) */
	int record;		/* --record: rank 0 tells srun the launch
				 * timeline (the step's record) */
	/* this task failed before the barrier (--failed TEXT, or the test
	 * hook): rank 0 is told and fails the step at once. NULL, or
	 * failed_text. */
	const char *failed;
	char failed_text[TE_FAIL_TEXT_MAX + 1];
};

/* argv[1..argc) into o (defaults first). 0, or -1 with "bad argument
 * 'ARG'" in err, naming the option whose value is missing or wrong, or
 * the unknown word. */
int te_rdzv_args_parse(int argc, char **argv, struct te_rdzv_opts *o,
		       char *err, size_t errlen);

#endif
