/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What srun, sbatch and salloc share: resolve the settings from the site
 * policy, the user's options and the submitting environment, refuse bad
 * values before anything is allocated, print --train-explain. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "srun/exportenv.h"
#include "state.h"
#include "util/strutil.h"
#include "submit.h"
#include "launch/version.h"

static const char *own_getenv(void *ctx, const char *name)
{
	return getenv(name);
}

/* ctx: srun's --export list, or NULL for the whole environment. */
static const char *submit_getenv(void *ctx, const char *name)
{
	/* the encoded settings of an enclosing step hold every setting */
	static char settings[TE_SETTINGS_ENV_MAX + 2];

	if (!ctx)
		return getenv(name);
	if (strcmp(name, TE_SETTINGS_ENV) == 0)
		return te_export_getenv(ctx, name, own_getenv, NULL, settings,
					sizeof(settings));
	return te_export_getenv(ctx, name, own_getenv, NULL, te_value_slot(),
				TE_VALUE_SLOT_SIZE);
}

int te_submit_resolve_export(const char *export_spec, int again)
{
	static struct te_config inherited, cfg;
	char err[TE_ERR_MAX];
	void *ctx = (void *)export_spec;
	int have_inh, i;

	if (!te_plug.policy_ok)
		return -1; /* reported by slurm_spank_init */
	have_inh = te_inherited_config(submit_getenv, ctx, &inherited) == 0;
	if (te_resolve(&te_plug.pol, (const char *const *)te_plug.opt,
		       submit_getenv, ctx, have_inh ? &inherited : NULL, &cfg,
		       err, sizeof(err)) < 0) {
		slurm_error(TE_PREFIX "%s", err);
		return -1;
	}
	te_plug.cfg = cfg;
	te_plug.resolved = 1;
	for (i = 0; !again && i < te_plug.cfg.nwarn; i++)
		fprintf(stderr, TE_PREFIX "warning: %s\n", te_plug.cfg.warn[i]);
	return 0;
}

int te_submit_resolve(void)
{
	return te_submit_resolve_export(NULL, 0);
}

int te_submit_train_on(void)
{
	return te_plug.resolved && te_plug.cfg.v[TE_S_TRAIN].word == TE_W_ON;
}

/* Prints every effective setting, one line each, to stderr. */
static void explain_print(const struct te_config *cfg)
{
	char line[TE_VALUE_MAX + 2 * TE_ORIGIN_MAX];
	int i;

	for (i = 0; i < TE_S_COUNT; i++) {
		te_explain_line(cfg, i, line, sizeof(line));
		fprintf(stderr, TE_PREFIX "%s\n", line);
	}
	fflush(stderr);
}

void te_submit_explain(const char *what)
{
	char version[128];

	if (!te_plug.explain)
		return;
	te_version_line(version, sizeof(version));
	fprintf(stderr, TE_PREFIX "%s\n", version);
	fprintf(stderr,
		TE_PREFIX
		"effective settings for this %s "
		"(precedence: enforced > option > environment > admin default "
		"> built-in):\n",
		what);
	explain_print(&te_plug.cfg);
	if (!te_submit_train_on())
		fprintf(stderr,
			TE_PREFIX "trainenv is off for this %s: no "
				  "other setting is applied\n",
			what);
}
