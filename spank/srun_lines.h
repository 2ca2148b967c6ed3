/* SPDX-License-Identifier: GPL-2.0-or-later */
/* srun's recovery lines and node lists (srun_lines.c). */
#ifndef TE_SRUN_LINES_H
#define TE_SRUN_LINES_H

#include <stddef.h>
#include <stdint.h>

/* One line on srun's stderr, after "trainenv: ", in one write. */
__attribute__((format(printf, 1, 2))) void te_recovery_say(const char *fmt,
							   ...);
/* "n[1-2],n5" as "n1,n2,n5" (bounded; the compressed form when too
 * long), and how many nodes it names. */
uint32_t te_expand_nodes(const char *list, char *out, size_t len);

#endif
