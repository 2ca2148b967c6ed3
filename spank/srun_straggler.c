/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's side of the stragglers (issue 36 item 1): each rank's NCCL loads
 * trainenv's profiler plugin (slurmstepd sets NCCL_PROFILER_PLUGIN,
 * stepd_rdzv.c), which sends srun its waits once a window over the failure
 * report's channel ("straggler" lines, only to an srun that reads them).
 * The report listener's thread hands each line here and closes the
 * detector's window on srun's own clock; the nodes' window numbers only
 * order one node's lines (core/straggler/strag_detect.c). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container/apptainer_env.h"
#include "srun_straggler.h"
#include "srun_strag_exclude.h"
#include "srun/srunargs.h"
#include "state.h"
#include "straggler/straggler.h"
#include "util/strutil.h"
#include "util/sysutil.h"

/* a node is late by this much at least (short collectives all wait a few
 * us: noise there is no straggler) */
#define MIN_GAP_NS 500000u
#define SAID_MAX 16 /* lines a step, then only the record's last */
#define VERDICTS 64 /* named in one window, at most (then once a node) */

static struct {
	struct te_strag_detector *d;
	int64_t window_ms, due;
	unsigned said;
	char last[512];
} sg;

/* A container step whose image does not get trainenv's plugin library
 * (pyxis's does: trainenv's enroot mount entries bind LIBDIR/trainenv in
 * at the node's path, as for the NCCL shim). */
static const char *container_of(int argc, char **argv)
{
	const char *oci = getenv("SLURM_CONTAINER");
	int cmd = te_srun_command(argc, argv);

	if (te_srun_asks(argc, argv, "container") || (oci && *oci))
		return "an OCI container (srun --container)";
	if (cmd >= 0 && te_appt_command(argv[cmd]))
		return "an Apptainer container";
	return NULL;
}

int te_srun_strag_start(int argc, char **argv)
{
	const struct te_config *c = &te_plug.cfg;
	const char *own = getenv("NCCL_PROFILER_PLUGIN"), *box;
	struct te_strag_cfg cfg;

	if (c->v[TE_S_STRAGGLER].word != TE_W_VALUE)
		return 0;
	if (own && *own) {
		fprintf(stderr,
			TE_PREFIX
			"straggler: this job sets its own NCCL "
			"profiler plugin (NCCL_PROFILER_PLUGIN=%.200s) "
			"and NCCL loads one: trainenv's steps aside, "
			"no node is named as a straggler\n",
			own);
		return 0;
	}
	box = container_of(argc, argv);
	if (box) {
		fprintf(stderr,
			TE_PREFIX "straggler: not followed in %s: the image "
				  "has no trainenv NCCL profiler plugin\n",
			box);
		return 0;
	}
	cfg.threshold = (double)c->v[TE_S_STRAGGLER].num / 100.0;
	cfg.k = (unsigned)c->v[TE_S_STRAGGLER_WINDOWS].num;
	cfg.window_s = (unsigned)c->v[TE_S_STRAGGLER_WINDOW].num;
	cfg.min_gap_ns = MIN_GAP_NS;
	sg.d = te_strag_detect_new(&cfg);
	if (!sg.d) {
		fprintf(stderr, TE_PREFIX "warning: straggler: out of memory: "
					  "no node is named as a straggler\n");
		return 0;
	}
	sg.window_ms = (int64_t)cfg.window_s * 1000;
	sg.due = 0; /* set by the first line */
	return 1;
}

void te_srun_strag_report(const struct te_failrep *r)
{
	struct te_strag_summary s;
	char err[128];

	if (!sg.d)
		return;
	if (te_strag_line_parse(r->text, strlen(r->text), &s, err,
				sizeof(err)) < 0 ||
	    strcmp(s.node, r->node)) /* a rank speaks for its own node */
		return;
	te_strag_detect_add(sg.d, &s);
	/* The nodes' windows end together (each counts from its first
	 * communicator, made by all ranks at once) and their lines come
	 * within half a window after (local rank 0's gathering and the
	 * spread of the sends, a quarter each at most): srun's windows
	 * close half a window after the first line, then a window apart,
	 * between two windows' lines. */
	if (!sg.due)
		sg.due = te_now_ms() + sg.window_ms / 2;
}

int64_t te_srun_strag_due(void)
{
	return sg.d ? sg.due : 0;
}

void te_srun_strag_close(int64_t now_ms)
{
	struct te_strag_verdict v[VERDICTS];
	char line[600];
	size_t n, i;

	if (!sg.d)
		return;
	/* srun's windows follow its clock; one late round does not pile up */
	sg.due += sg.window_ms;
	if (sg.due <= now_ms)
		sg.due = now_ms + sg.window_ms;
	n = te_strag_detect_close(sg.d, v, VERDICTS);
	for (i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < i && strcmp(v[k].node, v[i].node); k++)
			;
		if (k < i)
			continue; /* the node once a window, in its first
				     communicator */
		te_strag_verdict_line(&v[i], sg.last, sizeof(sg.last));
		if (sg.said < SAID_MAX) {
			sg.said++;
			te_snprintf(line, sizeof(line), TE_PREFIX "%s\n",
				    sg.last);
			if (write(STDERR_FILENO, line, strlen(line)) < 0)
				line[0] = '\0'; /* nowhere to say it */
		}
		/* the step's first naming: excluded at the next checkpoint,
		 * or one line why not (--train-straggler-exclude) */
		te_srun_strag_excl_named(v[i].node, sg.last);
	}
}

const char *te_srun_strag_last(void)
{
	return sg.last[0] ? sg.last : NULL;
}
