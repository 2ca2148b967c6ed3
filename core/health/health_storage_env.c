/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health's storage check, what the plugin tells trainenv-rdzv
 * (health_storage.h): the job's merged storage keys as one environment
 * value, and its strict reader in the helper. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "health/health_prolog.h"
#include "health/health_storage.h"
#include "util/strutil.h"

void te_storage_opts_for(const char *site_items, const char *user,
			 const char *node, struct te_storage_opts *o)
{
	struct te_health_job_policy jp;
	char err[512];

	memset(o, 0, sizeof(*o));
	/* a user's text srun would have refused (a modified srun, or an
	 * older site policy) leaves the site's check as it is: never off
	 * (review F6) */
	if (te_health_job_policy(site_items, user, &jp, err, sizeof(err)) == -1)
		return;
	o->bytes = jp.merged.storage_bytes;
	o->permille = jp.merged.storage_permille;
	o->exclude = jp.merged.storage_action == TE_HA_EXCLUDE;
	o->bound_s = jp.merged.timeout_s;
	if (node && !strcmp(node, jp.merged.storage_delay_node))
		o->delay_ms_mib = jp.merged.storage_delay_ms;
}

int te_storage_env_format(const struct te_storage_opts *o, char *buf,
			  size_t len)
{
	return te_snprintf(buf, len, "%s=%llu %u %d %u %u", TE_STORAGE_ENV,
			   (unsigned long long)o->bytes, o->permille,
			   o->exclude ? 1 : 0, o->bound_s, o->delay_ms_mib);
}

int te_storage_env_parse(const char *val, struct te_storage_opts *o)
{
	unsigned long long bytes;
	unsigned permille, bound, delay;
	int exclude, n = 0;

	memset(o, 0, sizeof(*o));
	if (!val)
		return 0;
	if (sscanf(val, "%llu %u %d %u %u%n", &bytes, &permille, &exclude,
		   &bound, &delay, &n) != 5 ||
	    val[n] ||
	    (bytes &&
	     (bytes < TE_STORAGE_SIZE_MIN || bytes > TE_STORAGE_SIZE_MAX)) ||
	    !permille || permille > 999 || (exclude != 0 && exclude != 1) ||
	    !bound || bound > TE_HEALTH_TIMEOUT_MAX ||
	    delay > TE_STORAGE_DELAY_MAX)
		return -1;
	o->bytes = bytes;
	o->permille = permille;
	o->exclude = exclude;
	o->bound_s = bound;
	o->delay_ms_mib = delay;
	return 0;
}
