/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The --train-* options: one table built from the settings, registered with
 * spank_option_register() in every context (the static spank_options table is
 * ignored in sbatch/salloc). The callback only records the text; checking
 * against the site policy happens at once on the submit side so that a bad
 * value stops srun/sbatch before anything is allocated. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_spares.h"
#include "options.h"
#include "state.h"
#include "util/strutil.h"
#include "launch/version.h"
#include "health/health_prolog.h"

#define TE_OPT_EXPLAIN TE_S_COUNT
#define TE_OPT_HEALTH (TE_S_COUNT + 1)
#define TE_NOPTS (TE_S_COUNT + 2)

static char opt_names[TE_NOPTS][64];
static char opt_usage[TE_NOPTS][512];
static struct spank_option opts[TE_NOPTS];

static int opt_cb(int val, const char *optarg, int remote);

/* --train-health: checked against the site's health keys where the user
 * typed it (a key that would weaken the site's check stops srun or
 * sbatch at once), kept for the step's tasks, which run the checks as
 * the user (stepd_health.c). */
static int health_opt(const char *optarg, int remote)
{
	static struct te_health_job_policy jp;
	char err[TE_ERR_MAX];

	if (!optarg)
		return -1;
	if (!remote && !strcmp(optarg, "help")) {
		te_print_help();
		exit(0);
	}
	if (!remote && te_plug.policy_ok &&
	    te_health_job_policy(te_plug.pol.health.items, optarg, &jp, err,
				 sizeof(err)) < 0) {
		slurm_error(TE_PREFIX "%s", err);
		return -1;
	}
	free(te_plug.health_opt);
	te_plug.health_opt = strndup(optarg, TE_HEALTH_ITEMS_MAX + 1);
	return te_plug.health_opt ? 0 : -1;
}

void te_print_help(void)
{
	char acc[256], name[64], version[128];
	int i;

	te_version_line(version, sizeof(version));
	printf("%s: distributed training job environment for Slurm\n\n"
	       "Options (srun, sbatch, salloc):\n",
	       version);
	for (i = 0; i < TE_S_COUNT; i++) {
		if (te_settings[i].flags & TE_F_NO_OPTION)
			continue;
		te_option_name(i, name, sizeof(name));
		te_setting_accepted(i, te_plug.policy_ok ? &te_plug.pol : NULL,
				    acc, sizeof(acc));
		printf("  --%s=%s\n      %s\n      accepted: %s\n", name,
		       te_settings[i].arginfo, te_settings[i].help, acc);
	}
	printf("  --%s=ITEM[;ITEM...]\n      your own node health checks, run "
	       "as you before each task;\n      the site's made stricter "
	       "(ib,eth,gpu; ib_rate=GBPS; "
	       "eth=IF[:MBPS]; ib_action=, eth_action=,\n      gpu_action= "
	       "exclude|warn); the checkpoint directory's storage check\n"
	       "      at launch (storage=SIZE; storage_fraction=F; "
	       "storage_action=exclude|warn);\n      never weaker than the "
	       "site's\n",
	       TE_HEALTH_OPTION + 2);
	printf("  --train-explain\n      print every trainenv setting with "
	       "its value and where it came from\n\n"
	       "Site policy (plugstack.conf arguments or conf=FILE lines):\n"
	       "  NAME=VALUE      site default for --train-NAME\n"
	       "  NAME.min=N      lowest value a user may ask for\n"
	       "  NAME.max=N      highest value a user may ask for\n"
	       "  enforce=NAME,.. the site value is final\n"
	       "Precedence: enforced > option > job environment > site default"
	       " > built-in.\nSee trainenv(8).\n");
	fflush(stdout);
}

int te_options_register(spank_t sp)
{
	int i;

	for (i = 0; i < TE_NOPTS; i++) {
		struct spank_option *o = &opts[i];
		spank_err_t rc;

		if (i < TE_S_COUNT) {
			if (te_settings[i].flags & TE_F_NO_OPTION)
				continue;
			te_option_name(i, opt_names[i], sizeof(opt_names[i]));
			te_snprintf(opt_usage[i], sizeof(opt_usage[i]),
				    "[trainenv] %s", te_settings[i].help);
			o->arginfo = (char *)te_settings[i].arginfo;
			o->has_arg = 1;
		} else if (i == TE_OPT_HEALTH) {
			te_strlcpy(opt_names[i], TE_HEALTH_OPTION + 2,
				   sizeof(opt_names[i]));
			te_strlcpy(opt_usage[i],
				   "[trainenv] your own node health checks, "
				   "run as you before each task: "
				   "ib,eth,gpu;ib_rate=GBPS;eth=IF[:MBPS];"
				   "CHECK_action=exclude|warn;storage=SIZE",
				   sizeof(opt_usage[i]));
			o->arginfo = (char *)"ITEM[;ITEM...]";
			o->has_arg = 1;
		} else {
			te_strlcpy(opt_names[i], "train-explain",
				   sizeof(opt_names[i]));
			te_strlcpy(opt_usage[i],
				   "[trainenv] print every "
				   "trainenv setting, its value and where it "
				   "came from",
				   sizeof(opt_usage[i]));
			o->arginfo = NULL;
			o->has_arg = 0;
		}
		o->name = opt_names[i];
		o->usage = opt_usage[i];
		o->val = i;
		o->cb = opt_cb;
		rc = spank_option_register(sp, o);
		if (rc != ESPANK_SUCCESS) {
			slurm_error(TE_PREFIX "cannot register --%s: %s",
				    opt_names[i], spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

static int opt_cb(int val, const char *optarg, int remote)
{
	char err[TE_ERR_MAX];

	if (val < 0 || val >= TE_NOPTS)
		return -1;
	if (val == TE_OPT_EXPLAIN) {
		te_plug.explain = 1;
		return 0;
	}
	if (val == TE_OPT_HEALTH)
		return health_opt(optarg, remote);
	if (!remote && optarg && strcmp(optarg, "help") == 0) {
		te_print_help();
		exit(0);
	}
	if (!remote && te_plug.policy_ok &&
	    te_check_user_value(&te_plug.pol, val, optarg, err, sizeof(err)) <
		    0) {
		slurm_error(TE_PREFIX "--%s: %s", opt_names[val], err);
		return -1;
	}
	if (val == TE_S_SPARES && !remote && spank_context() == S_CTX_ALLOCATOR)
		te_alloc_spares_option(optarg);
	free(te_plug.opt[val]);
	/* Longer text is refused by te_resolve; no need to keep more. */
	te_plug.opt[val] = optarg ? strndup(optarg, TE_VALUE_MAX + 1) : NULL;
	if (optarg && !te_plug.opt[val])
		return -1;
	return 0;
}

void te_options_free(void)
{
	int i;

	for (i = 0; i < TE_S_COUNT; i++) {
		free(te_plug.opt[i]);
		te_plug.opt[i] = NULL;
	}
	free(te_plug.health_opt);
	te_plug.health_opt = NULL;
}
