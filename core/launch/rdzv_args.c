/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The trainenv-rdzv helper's command line and settings, parsed into plain
 * options. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "launch/launch_tree.h"
#include "launch/rankenv.h"
#include "launch/rdzv_args.h"
#include "launch/rdzv_proto.h"
#include "util/strutil.h"

static int num_arg(const char *s, uint64_t max, uint64_t *v)
{
	return s ? te_parse_u64(s, max, v) : -1;
}

/* The option a with its value v (NULL: none left): 0 or -1. */
static int value_arg(const char *a, const char *v, struct te_rdzv_opts *o)
{
	uint64_t n;

	if (!strcmp(a, "--job") && num_arg(v, UINT32_MAX, &n) == 0)
		o->job = (unsigned long)n;
	else if (!strcmp(a, "--step") && num_arg(v, UINT32_MAX, &n) == 0)
		o->step = (unsigned long)n;
	else if (!strcmp(a, "--failed") && v && *v) {
		te_rdzv_clean_text(o->failed_text, sizeof(o->failed_text), v);
		o->failed = o->failed_text;
	} else
		return -1;
	return 0;
}

int te_rdzv_args_parse(int argc, char **argv, struct te_rdzv_opts *o, char *err,
		       size_t errlen)
{
	int i;

	memset(o, 0, sizeof(*o));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--lead"))
			o->lead = 1;
		else if (value_arg(a, v, o) < 0)
			return te_err(err, errlen, "bad argument '%.40s'", a);
		else
			i++;
	}
	return 0;
}

void te_rdzv_opts_from_config(struct te_rdzv_opts *o,
			      const struct te_config *cfg)
{
	struct te_value dflt;
	const struct te_value *range = &cfg->v[TE_S_PORT_RANGE];
	const struct te_value *ckpt = &cfg->v[TE_S_CHECKPOINT_DIR];
	const struct te_value *barrier = &cfg->v[TE_S_BARRIER];
	const struct te_value *width = &cfg->v[TE_S_LAUNCH_TREE_WIDTH];
	int vcheck = cfg->v[TE_S_VERSION_CHECK].word;

	char e[TE_ERR_MAX];

	/* the row's built-in range when the plugin left it unset */
	if (!(range->set && range->word == TE_W_VALUE) &&
	    te_value_parse(TE_S_PORT_RANGE,
			   te_settings[TE_S_PORT_RANGE].builtin, 0, &dflt, e,
			   sizeof(e)) == 0)
		range = &dflt;
	o->port_lo = (uint16_t)range->num;
	o->port_hi = (uint16_t)range->num2;
	o->port_start = te_master_port((uint32_t)o->job, (uint32_t)o->step,
				       o->port_lo, o->port_hi);
	o->barrier = barrier->set && barrier->word == TE_W_VALUE
			     ? (unsigned)barrier->num
			     : 0;
	o->wait = (unsigned)te_setting_barrier_s(cfg, NULL);
	o->vcheck = vcheck != TE_W_VALUE ? vcheck : TE_W_VCHECK_WARN;
	o->ckpt = NULL;
	if (ckpt->set && ckpt->word == TE_W_VALUE && ckpt->text[0] == '/') {
		te_strlcpy(o->ckpt_text, ckpt->text, sizeof(o->ckpt_text));
		o->ckpt = o->ckpt_text;
	}
	o->ifname = cfg->v[TE_S_SOCKET_IFNAME].word == TE_W_YES;
	o->hooks = cfg->v[TE_S_TEST_HOOKS].word == TE_W_ON;
	o->tree_width = width->set && width->word == TE_W_VALUE
				? (unsigned)width->num
				: (unsigned)te_setting_builtin_num(
					  TE_S_LAUNCH_TREE_WIDTH);
	o->record = (o->barrier > 0 || o->ckpt) && te_record_dir(cfg);
}

int te_rdzv_opts_settings(struct te_rdzv_opts *o, const char *enc, char *err,
			  size_t errlen)
{
	struct te_config *cfg;
	char why[TE_ERR_MAX];
	int rc = 0;

	if (!enc)
		return te_err(err, errlen,
			      "no %s in its environment (the "
			      "plugin sets it for the helper)",
			      TE_SETTINGS_ENV);
	cfg = malloc(sizeof(*cfg));
	if (!cfg)
		return te_err(err, errlen, "out of memory");
	if (te_config_decode(cfg, enc, why, sizeof(why)) < 0)
		rc = te_err(err, errlen, "%s", why);
	else
		te_rdzv_opts_from_config(o, cfg);
	free(cfg);
	return rc;
}
