/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The plugin's state (state.h): defined here, in a file that calls none
 * of the plugin's others, so that every file may use it without an arrow
 * back to the one that fills it (plugin.c, options.c, the contexts). */
#include "config.h"

#include "state.h"
#include "util/strutil.h"

struct te_plugin te_plug;

int te_helper_path(const char *name, char *path, size_t len)
{
	const struct te_value *d = &te_plug.cfg.v[TE_S_HELPER_DIR];

	return te_snprintf(path, len, "%s/%s",
			   d->set ? d->text : TE_PKGLIBEXECDIR, name);
}
