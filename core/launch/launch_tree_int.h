/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the launch tree's files (core/launch_tree*.c) share. */
#ifndef TE_LAUNCH_TREE_INT_H
#define TE_LAUNCH_TREE_INT_H

#include "launch/launch_tree.h"

#define NONE UINT32_MAX
#define MAGIC_HEAD "TEBAR1 "
/* a line we write stays below what a reader takes (TE_COORD_LINE_MAX) */
#define LINE_BUDGET (TE_COORD_LINE_MAX - 16)

/* Adds count nodes with value (hosts: the first of them) to groups[*n],
 * at most max groups; nodes of a group left out go to *more. */
void te_tree_group_add(struct te_tree_group *groups, uint32_t *n, uint32_t max,
		       uint32_t *more, const char *value, uint32_t count,
		       const struct te_tree_host *hosts, uint32_t nhosts);
/* Adds f[0..n) to s's storage figures, those past TE_TREE_STOR_MAX
 * counted in stor_more. */
void te_tree_stor_add(struct te_tree_sum *s, const struct te_tree_stor *f,
		      uint32_t n);
/* A decimal number of at most 10 digits, <= max; *p moves past it. */
int te_tree_num(const char **p, uint64_t max, uint64_t *v);

#endif
