/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per rank: what the hang report needs from NCCL and PyTorch
 * (stepd_hangenv.c). */
#ifndef TE_STEPD_HANGENV_H
#define TE_STEPD_HANGENV_H

#include <slurm/spank.h>

/* The variables trainenv set this way for a rank: a step started inside a
 * rank (srun in a rank's script) inherits them, and sets its own. */
#define TE_HANG_VARS_ENV "TRAINENV_HANG_VARS"

/* For a rank of a step (trainenv on), unless the job set them itself:
 * NCCL_RAS_ADDR, the step's own loopback address (te_ras_addr_pick), so
 * that the hang report asks RAS of this step and no other; and, when the
 * job's dump directory is known (--train-nccl-dump-dir) and the rank runs
 * on the node itself (pyxis: in a pyxis container; OCI and Apptainer are
 * found here), PyTorch's flight recorder pipe
 * TORCH_NCCL_DEBUG_INFO_PIPE_FILE=DIR/STEP.fr_pipe_ and its dump path
 * (TORCH_FR_DUMP_TEMP_FILE the same as TORCH_NCCL_DEBUG_INFO_TEMP_FILE,
 * else DIR/fr_). dump_dir: the job's dump directory as the dump
 * directory's export opened it ("": none). Never waits on the network;
 * touches only the dump directory. */
void te_stepd_hang_env(spank_t sp, int pyxis, const char *dump_dir);

#endif
