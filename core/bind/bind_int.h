/* bind's private header (core/bind*.c): helpers its parts share.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef TE_BIND_INT_H
#define TE_BIND_INT_H

#include <stddef.h>

#include <hwloc.h>

/* Appends to a note, "; "-separated; a note that no longer fits ends with
 * "..." rather than being cut mid-word silently. */
__attribute__((format(printf, 3, 4)))
void te_bind_note_add(char *note, size_t len, const char *fmt, ...);
/* For messages only: a set as text, "..." when long. */
const char *te_bind_set_str(hwloc_const_bitmap_t set, char *buf, size_t len);

#endif
