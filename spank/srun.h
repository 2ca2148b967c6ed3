/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The srun side's entry points (srun.c), called only from plugin.c's
 * callbacks in the S_CTX_LOCAL context: 0 or -1 as SPANK wants. */
#ifndef TE_SRUN_H
#define TE_SRUN_H

#include <slurm/spank.h>

/* At slurm_spank_init, before srun reads its options. */
void te_srun_init(void);
int te_srun_post_opt(spank_t sp);
int te_srun_user_init(spank_t sp);
int te_srun_exit(spank_t sp);

#endif
