/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sbatch/salloc side's entry point (alloc.c), called only from
 * plugin.c's init_post_opt in the S_CTX_ALLOCATOR context: 0 or -1 as
 * SPANK wants. */
#ifndef TE_ALLOC_H
#define TE_ALLOC_H

#include <slurm/spank.h>

int te_alloc_post_opt(spank_t sp);

#endif
