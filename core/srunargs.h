/* What srun was asked for on its own command line (srunargs.c). */
#ifndef TE_SRUNARGS_H
#define TE_SRUNARGS_H

/* 1 when srun's own options (not the command's arguments) ask for --pty. */
int te_srun_asks_pty(int argc, char *const *argv);

/* 1 when srun itself will read its stdin (its --input option is absent,
 * "all" or a task number), 0 when the input is "none" or a file. */
int te_srun_reads_stdin(int argc, char *const *argv);

/* 1 when srun's own options ask for --signal. */
int te_srun_asks_signal(int argc, char *const *argv);

#endif
