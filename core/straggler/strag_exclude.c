/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Leaving a straggler out at the next checkpoint (strag_exclude.h): the
 * decision, its line, and the checkpoint's moment. Pure. */
#include "config.h"

#include <inttypes.h>
#include <string.h>

#include "straggler/strag_exclude.h"
#include "util/strutil.h"

static int not_excluded(struct te_strag_excl_plan *plan, const char *node,
			const char *why)
{
	plan->exclude = 0;
	te_snprintf(plan->line, sizeof(plan->line),
		    "straggler: %s is not excluded: %s", node, why);
	return 0;
}

int te_strag_exclude_decide(const struct te_strag_excl_facts *f,
			    const char *node, struct te_strag_excl_plan *plan)
{
	char why[TE_STRAG_EXCL_LINE_MAX - 64];

	memset(plan, 0, sizeof(*plan));
	if (!node || !node[0])
		node = "?";
	if (!f->spares)
		return not_excluded(plan, node,
				    "the job has no spare node to put in its "
				    "place (--train-spares)");
	if (f->restarts >= f->budget) {
		te_snprintf(why, sizeof(why),
			    "the restart budget is spent (%u of %" PRIu64
			    " restarts done)",
			    f->restarts, f->budget);
		return not_excluded(plan, node, why);
	}
	if (!f->spares_left && !f->shrink_nodes)
		return not_excluded(plan, node,
				    "no spare node is left (--train-spares=K "
				    "all used)");
	if (f->no_shield) {
		te_snprintf(why, sizeof(why), "the step cannot start again: %s",
			    f->no_shield);
		return not_excluded(plan, node, why);
	}
	if (!f->checkpoint_dir || !f->checkpoint_dir[0])
		return not_excluded(plan, node,
				    "no checkpoint directory to wait for "
				    "(--train-checkpoint-dir)");
	/* a directory too long for the line would name another: refused */
	if (f->spares_left)
		why[0] = '\0';
	else /* the relaunch shrinks the step, as for a failed node */
		te_snprintf(why, sizeof(why),
			    "; no spare is left: the step starts again on "
			    "the %u node%s left (--train-shrink)",
			    f->shrink_nodes, f->shrink_nodes == 1 ? "" : "s");
	if (te_snprintf(plan->line, sizeof(plan->line),
			"straggler: %s is excluded at the next checkpoint in "
			"%s%s",
			node, f->checkpoint_dir, why) < 0)
		return not_excluded(plan, node,
				    "the checkpoint directory's name is too "
				    "long to say");
	plan->exclude = 1;
	return 1;
}

void te_strag_exclude_watch_init(struct te_strag_excl_watch *w)
{
	w->base = -1;
	w->last = -1;
	w->since = 0;
}

int te_strag_exclude_due(struct te_strag_excl_watch *w, int64_t newest_ns,
			 int64_t mono_ns)
{
	if (newest_ns < 0)
		return 0; /* not readable this time: nothing learnt */
	if (w->base < 0) {
		/* the first look: what is there is no newer checkpoint */
		w->base = w->last = newest_ns;
		w->since = mono_ns;
		return 0;
	}
	if (newest_ns != w->last) {
		w->last = newest_ns;
		w->since = mono_ns;
		return 0;
	}
	return newest_ns > w->base &&
	       mono_ns - w->since >= TE_STRAG_EXCL_SETTLE_NS;
}

size_t te_strag_exclude_why(const char *naming, char *why, size_t len)
{
	size_t n, cut;

	if (!len)
		return 0;
	if (!naming)
		naming = "";
	n = strlen(naming);
	if (n < len) {
		memcpy(why, naming, n + 1);
		return n;
	}
	/* cut before the last word that does not fit, with "..." */
	if (len < 4) {
		why[0] = '\0';
		return 0;
	}
	cut = len - 4;
	while (cut > 0 && naming[cut] != ' ')
		cut--;
	if (!cut)
		cut = len - 4;
	memcpy(why, naming, cut);
	memcpy(why + cut, "...", 4);
	return cut + 3;
}
