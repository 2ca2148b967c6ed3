/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* SrunPortRange: the ports a site lets srun listen on. The value's parser
 * and the slurm.conf lookup are pure (unit-tested, fuzzed); srun's report
 * listener binds inside the range when the site sets one. */
#ifndef TE_PORTRANGE_H
#define TE_PORTRANGE_H

#include <stddef.h>
#include <stdint.h>

#define TE_SLURMCONF_MAX (4 * 1024 * 1024) /* a bigger file is refused */

/* "LO-HI" as slurm.conf's SrunPortRange: decimal ports, 1 <= LO <= HI <=
 * 65535, blanks around allowed. Returns 0, or -1 with why in err. */
int te_port_range_parse(const char *text, uint16_t *lo, uint16_t *hi, char *err,
			size_t errlen);

/* The value slurm.conf text gives KEY (case-insensitive, as Slurm reads
 * keys): the last line "KEY=VALUE" outside comments, the value up to the
 * first blank or '#'. Returns 1 with the value in out, 0 when no line sets
 * KEY, -1 when the value does not fit out. Include lines are not followed. */
int te_slurmconf_value(const char *text, size_t len, const char *key, char *out,
		       size_t outlen);

#endif
