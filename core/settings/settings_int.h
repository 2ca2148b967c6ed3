/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* trainenv settings, private to core/: the value checks that policy.c and
 * resolve.c share with value.c. */
#ifndef TE_SETTINGS_INT_H
#define TE_SETTINGS_INT_H

#include <stddef.h>

#include "settings/settings.h"

/* te_value_parse(); pol (may be NULL) only shapes the "accepted:" text of an
 * error, so that a user is told the site's bounds, not the hard limits. */
int te_value_parse_pol(int id, const char *text, int from_env,
		       const struct te_policy *pol, struct te_value *v,
		       char *err, size_t errlen);

/* Site bounds (pol may be NULL: none) for a number; a word ("off") is not a
 * number and is always within them. */
int te_value_check_bounds(const struct te_policy *pol, int id,
			  const struct te_value *v, char *err, size_t errlen);

#endif
