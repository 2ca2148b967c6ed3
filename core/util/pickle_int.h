/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The restricted pickle reader's document, as its parser (pickle.c) makes
 * it and its readers (pickle_get.c) walk it; nothing else includes this. */
#ifndef TE_PICKLE_INT_H
#define TE_PICKLE_INT_H

#include <stdint.h>

#include "util/pickle.h"

struct te_pk_value {
	uint8_t kind;
	uint16_t depth; /* containers: 1 + the deepest item's depth */
	uint32_t n;	/* str/bytes: length; containers: items */
	uint64_t x;	/* int, float bits, bool; str: offset in buf;
			   containers: first item | last item << 32 */
};

struct te_pk_item {
	te_pk_val key, val; /* key: dicts only */
	uint32_t next;	    /* 0: the last (items[0] is never used) */
};

#endif
