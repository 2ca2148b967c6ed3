/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* srun's, sbatch's and salloc's options per Slurm release, private to
 * core/ (srunargs_table.c holds them, srunargs.c walks a command line). */
#ifndef TE_SRUNARGS_INT_H
#define TE_SRUNARGS_INT_H

#include <stddef.h>

/* What an option does with a value (getopt_long's has_arg). */
enum te_so_kind {
	TE_SO_FLAG,  /* no_argument */
	TE_SO_VALUE, /* required_argument: "--opt=v", "--opt v", "-xv", "-x v" */
	TE_SO_OPTIONAL, /* optional_argument: only "--opt=v" and "-xv" */
};

/* Which programs have it. */
#define TE_SO_SRUN 1u
#define TE_SO_SBATCH 2u
#define TE_SO_SALLOC 4u

/* Releases are YYMM numbers (22.05 is 2205). */
struct te_so {
	const char *name;    /* long name, without "--" */
	char letter;	     /* its short option, 0 for none */
	unsigned char kind;  /* enum te_so_kind */
	unsigned char progs; /* TE_SO_SRUN | ... */
	unsigned since;	     /* first release with this row, 0: 22.05 */
	unsigned until;	     /* first release without it, 0: still there */
};

extern const struct te_so te_so_table[];
extern const size_t te_so_count;

#endif
