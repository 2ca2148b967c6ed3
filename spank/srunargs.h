#ifndef TE_SRUNARGS_H
#define TE_SRUNARGS_H

/* 1 when srun's own options (not the command's arguments) ask for --pty. */
int te_srun_asks_pty(int argc, char *const *argv);

#endif
