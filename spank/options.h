/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The --train-* options (options.c): registered in every context from
 * slurm_spank_init (plugin.c); their callback records the user's texts in
 * te_plug.opt (state.h). */
#ifndef TE_OPTIONS_H
#define TE_OPTIONS_H

#include <slurm/spank.h>

/* 0, or -1 when an option cannot be registered (said). */
int te_options_register(spank_t sp);
/* Frees the option texts (slurm_spank_exit). */
void te_options_free(void);
/* --train-*=help: the usage, on stdout. */
void te_print_help(void);

#endif
