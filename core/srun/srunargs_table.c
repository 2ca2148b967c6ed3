/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* srun's, sbatch's and salloc's command-line options per Slurm release, for
 * srunargs.c's walk of a command line: which take a value, which take one
 * only after "=", their short letters.
 *
 * Written from Slurm's src/common/slurm_opt.c at the tags slurm-22-05-8-1,
 * 23-02-8-1, 23-11-11-1, 24-05-8-1, 24-11-7-1, 25-05-8-1, 25-11-7-1 and
 * 26-05-3-1 (every micro release in between looked at too): a program has
 * an option of its common_options[] when the option has set_func (all
 * three) or set_func_srun, _sbatch or _salloc; has_arg gives the kind and a
 * character val the short letter. Options with no name (environment or
 * REST only: argv, environment) are not here.
 *
 * Columns: long name, short letter, kind (FLAG: no value; VAL: a value,
 * from the next word when not attached; OPT: a value only when attached,
 * "--opt=v", "-xv"), programs (S srun, B sbatch, A salloc), then since and
 * until: the releases as YYMMuu (23.02.5 is 230205), since the first with
 * the row (0: 22.05 and before), until the first without it (0: none yet).
 * A release newer than the newest here has the rows whose until is 0.
 *
 * What changed since 22.05 (srun's unless said):
 * 23.02  new: autocomplete, container-id, extra, tres-per-task (values);
 *        --pty takes an optional value; 23.02.5: srun and salloc lose
 *        --uid and --gid (sbatch keeps them)
 * 23.11  new: treewidth (srun), tres-bind (values), external-launcher (flag);
 *        sbatch loses --export-file
 * 24.05  new: segment (value), stepmgr (flag); external-launcher takes an
 *        optional value; power is gone; sbatch and salloc get resv-ports
 *        (optional) and sbatch --export-file again
 * 24.11  new: oom-kill-step (optional); salloc loses --get-user-env
 * 25.05  new: wait-for-children (srun), external (sbatch) (flags);
 *        sbatch's --get-user-env is a flag
 * 25.11  new: resources (value), consolidate-segments, spread-segments
 *        (flags); sbatch's --requeue takes an optional value
 * 26.05  new: container-type, mem-update, ignore-signals (srun) (values),
 *        async, parsable (srun) (flags)
 */
#include "config.h"

#include "srun/srunargs_int.h"

#define FLAG TE_SO_FLAG
#define VAL TE_SO_VALUE
#define OPT TE_SO_OPTIONAL
#define S TE_SO_SRUN
#define B TE_SO_SBATCH
#define A TE_SO_SALLOC
#define ALL (S | B | A)

const struct te_so te_so_table[] = {
	{ "accel-bind", 0, VAL, S, 0, 0 },
	{ "account", 'A', VAL, ALL, 0, 0 },
	{ "acctg-freq", 0, VAL, ALL, 0, 0 },
	{ "array", 'a', VAL, B, 0, 0 },
	{ "async", 0, FLAG, S, 260500, 0 },
	{ "autocomplete", 0, VAL, ALL, 230200, 0 },
	{ "batch", 0, VAL, B, 0, 0 },
	{ "bb", 0, VAL, ALL, 0, 0 },
	{ "bbf", 0, VAL, ALL, 0, 0 },
	{ "bcast", 0, OPT, S, 0, 0 },
	{ "bcast-exclude", 0, VAL, S, 0, 0 },
	{ "begin", 'b', VAL, ALL, 0, 0 },
	{ "bell", 0, FLAG, A, 0, 0 },
	{ "chdir", 'D', VAL, ALL, 0, 0 },
	{ "cluster", 0, VAL, ALL, 0, 0 },
	{ "cluster-constraint", 0, VAL, ALL, 0, 0 },
	{ "clusters", 'M', VAL, ALL, 0, 0 },
	{ "comment", 0, VAL, ALL, 0, 0 },
	{ "compress", 0, OPT, S, 0, 0 },
	{ "consolidate-segments", 0, FLAG, ALL, 251100, 0 },
	{ "constraint", 'C', VAL, ALL, 0, 0 },
	{ "container", 0, VAL, ALL, 0, 0 },
	{ "container-id", 0, VAL, ALL, 230200, 0 },
	{ "container-type", 0, VAL, ALL, 260500, 0 },
	{ "context", 0, VAL, ALL, 0, 0 },
	{ "contiguous", 0, FLAG, ALL, 0, 0 },
	{ "core-spec", 'S', VAL, ALL, 0, 0 },
	{ "cores-per-socket", 0, VAL, ALL, 0, 0 },
	{ "cpu-bind", 0, VAL, S, 0, 0 },
	{ "cpu-freq", 0, VAL, ALL, 0, 0 },
	{ "cpu_bind", 0, VAL, S, 0, 0 },
	{ "cpus-per-gpu", 0, VAL, ALL, 0, 0 },
	{ "cpus-per-task", 'c', VAL, ALL, 0, 0 },
	{ "deadline", 0, VAL, ALL, 0, 0 },
	{ "debugger-test", 0, FLAG, S, 0, 0 },
	{ "delay-boot", 0, VAL, ALL, 0, 0 },
	{ "dependency", 'd', VAL, ALL, 0, 0 },
	{ "disable-status", 'X', FLAG, S, 0, 0 },
	{ "distribution", 'm', VAL, ALL, 0, 0 },
	{ "epilog", 0, VAL, S, 0, 0 },
	{ "error", 'e', VAL, S | B, 0, 0 },
	{ "exact", 0, FLAG, S, 0, 0 },
	{ "exclude", 'x', VAL, ALL, 0, 0 },
	{ "exclusive", 0, OPT, ALL, 0, 0 },
	{ "export", 0, VAL, S | B, 0, 0 },
	/* dropped in 23.11 only */
	{ "export-file", 0, VAL, B, 0, 231100 },
	{ "export-file", 0, VAL, B, 240500, 0 },
	{ "external", 0, FLAG, B, 250500, 0 },
	/* a flag in 23.11 */
	{ "external-launcher", 0, FLAG, S, 231100, 240500 },
	{ "external-launcher", 0, OPT, S, 240500, 0 },
	{ "extra", 0, VAL, ALL, 230200, 0 },
	{ "extra-node-info", 'B', VAL, ALL, 0, 0 },
	/* gone from salloc in 24.11, a flag for sbatch from 25.05 */
	{ "get-user-env", 0, OPT, A, 0, 241100 },
	{ "get-user-env", 0, OPT, B, 0, 250500 },
	{ "get-user-env", 0, FLAG, B, 250500, 0 },
	/* gone from srun and salloc in 23.02.5 */
	{ "gid", 0, VAL, B, 0, 0 },
	{ "gid", 0, VAL, S | A, 0, 230205 },
	{ "gpu-bind", 0, VAL, ALL, 0, 0 },
	{ "gpu-freq", 0, VAL, ALL, 0, 0 },
	{ "gpus", 'G', VAL, ALL, 0, 0 },
	{ "gpus-per-node", 0, VAL, ALL, 0, 0 },
	{ "gpus-per-socket", 0, VAL, ALL, 0, 0 },
	{ "gpus-per-task", 0, VAL, ALL, 0, 0 },
	{ "gres", 0, VAL, ALL, 0, 0 },
	{ "gres-flags", 0, VAL, ALL, 0, 0 },
	{ "help", 'h', FLAG, ALL, 0, 0 },
	{ "het-group", 0, VAL, S, 0, 0 },
	{ "hint", 0, VAL, ALL, 0, 0 },
	{ "hold", 'H', FLAG, ALL, 0, 0 },
	{ "ignore-pbs", 0, FLAG, B, 0, 0 },
	{ "ignore-signals", 0, VAL, S, 260500, 0 },
	{ "immediate", 'I', OPT, S | A, 0, 0 },
	{ "input", 'i', VAL, S | B, 0, 0 },
	{ "interactive", 0, FLAG, S, 0, 0 },
	{ "job-name", 'J', VAL, ALL, 0, 0 },
	{ "jobid", 0, VAL, S, 0, 0 },
	{ "kill-command", 'K', OPT, A, 0, 0 },
	{ "kill-on-bad-exit", 'K', OPT, S, 0, 0 },
	{ "kill-on-invalid-dep", 0, VAL, B, 0, 0 },
	{ "label", 'l', FLAG, S, 0, 0 },
	{ "licenses", 'L', VAL, ALL, 0, 0 },
	{ "mail-type", 0, VAL, ALL, 0, 0 },
	{ "mail-user", 0, VAL, ALL, 0, 0 },
	{ "mcs-label", 0, VAL, ALL, 0, 0 },
	{ "mem", 0, VAL, ALL, 0, 0 },
	{ "mem-bind", 0, VAL, ALL, 0, 0 },
	{ "mem-per-cpu", 0, VAL, ALL, 0, 0 },
	{ "mem-per-gpu", 0, VAL, ALL, 0, 0 },
	{ "mem-update", 0, VAL, ALL, 260500, 0 },
	{ "mincpus", 0, VAL, ALL, 0, 0 },
	{ "mpi", 0, VAL, S, 0, 0 },
	{ "msg-timeout", 0, VAL, S, 0, 0 },
	{ "multi-prog", 0, FLAG, S, 0, 0 },
	{ "network", 0, VAL, ALL, 0, 0 },
	{ "nice", 0, OPT, ALL, 0, 0 },
	{ "no-allocate", 'Z', FLAG, S, 0, 0 },
	{ "no-bell", 0, FLAG, A, 0, 0 },
	{ "no-kill", 'k', OPT, ALL, 0, 0 },
	{ "no-requeue", 0, FLAG, B, 0, 0 },
	{ "no-shell", 0, FLAG, A, 0, 0 },
	{ "nodefile", 'F', VAL, ALL, 0, 0 },
	{ "nodelist", 'w', VAL, ALL, 0, 0 },
	{ "nodes", 'N', VAL, ALL, 0, 0 },
	{ "ntasks", 'n', VAL, ALL, 0, 0 },
	{ "ntasks-per-core", 0, VAL, ALL, 0, 0 },
	{ "ntasks-per-gpu", 0, VAL, ALL, 0, 0 },
	{ "ntasks-per-node", 0, VAL, ALL, 0, 0 },
	{ "ntasks-per-socket", 0, VAL, ALL, 0, 0 },
	{ "ntasks-per-tres", 0, VAL, ALL, 0, 0 },
	{ "oom-kill-step", 0, OPT, ALL, 241100, 0 },
	{ "open-mode", 0, VAL, S | B, 0, 0 },
	{ "output", 'o', VAL, S | B, 0, 0 },
	{ "overcommit", 'O', FLAG, ALL, 0, 0 },
	{ "overlap", 0, OPT, S, 0, 0 },
	{ "oversubscribe", 's', FLAG, ALL, 0, 0 },
	{ "pack-group", 0, VAL, S, 0, 0 },
	{ "parsable", 0, FLAG, B, 0, 0 },
	{ "parsable", 0, FLAG, S, 260500, 0 },
	{ "partition", 'p', VAL, ALL, 0, 0 },
	/* gone in 24.05 */
	{ "power", 0, VAL, ALL, 0, 240500 },
	{ "prefer", 0, VAL, ALL, 0, 0 },
	{ "preserve-env", 'E', FLAG, S, 0, 0 },
	{ "priority", 0, VAL, ALL, 0, 0 },
	{ "profile", 0, VAL, ALL, 0, 0 },
	{ "prolog", 0, VAL, S, 0, 0 },
	{ "propagate", 0, OPT, S | B, 0, 0 },
	/* --pty[=...] from 23.02 */
	{ "pty", 0, FLAG, S, 0, 230200 },
	{ "pty", 0, OPT, S, 230200, 0 },
	{ "qos", 'q', VAL, ALL, 0, 0 },
	{ "quiet", 'Q', FLAG, ALL, 0, 0 },
	{ "quit-on-interrupt", 0, FLAG, S, 0, 0 },
	{ "reboot", 0, FLAG, ALL, 0, 0 },
	{ "relative", 'r', VAL, S, 0, 0 },
	/* --requeue[=...] from 25.11 */
	{ "requeue", 0, FLAG, B, 0, 251100 },
	{ "requeue", 0, OPT, B, 251100, 0 },
	{ "reservation", 0, VAL, ALL, 0, 0 },
	{ "resources", 0, VAL, ALL, 251100, 0 },
	/* srun had it already */
	{ "resv-ports", 0, OPT, S, 0, 0 },
	{ "resv-ports", 0, OPT, B | A, 240500, 0 },
	{ "segment", 0, VAL, ALL, 240500, 0 },
	{ "send-libs", 0, OPT, S, 0, 0 },
	{ "signal", 0, VAL, ALL, 0, 0 },
	{ "slurmd-debug", 0, VAL, S, 0, 0 },
	{ "sockets-per-node", 0, VAL, ALL, 0, 0 },
	{ "spread-job", 0, FLAG, ALL, 0, 0 },
	{ "spread-segments", 0, FLAG, ALL, 251100, 0 },
	{ "stepmgr", 0, FLAG, ALL, 240500, 0 },
	{ "switches", 0, VAL, ALL, 0, 0 },
	{ "task-epilog", 0, VAL, S, 0, 0 },
	{ "task-prolog", 0, VAL, S, 0, 0 },
	{ "tasks-per-node", 0, VAL, ALL, 0, 0 },
	{ "test-only", 0, FLAG, S | B, 0, 0 },
	{ "thread-spec", 0, VAL, ALL, 0, 0 },
	{ "threads", 'T', VAL, S, 0, 0 },
	{ "threads-per-core", 0, VAL, ALL, 0, 0 },
	{ "time", 't', VAL, ALL, 0, 0 },
	{ "time-min", 0, VAL, ALL, 0, 0 },
	{ "tmp", 0, VAL, ALL, 0, 0 },
	{ "treewidth", 0, VAL, S, 231100, 0 },
	{ "tres-bind", 0, VAL, ALL, 231100, 0 },
	{ "tres-per-task", 0, VAL, ALL, 230200, 0 },
	/* gone from srun and salloc in 23.02.5 */
	{ "uid", 0, VAL, B, 0, 0 },
	{ "uid", 0, VAL, S | A, 0, 230205 },
	{ "unbuffered", 'u', FLAG, S, 0, 0 },
	{ "usage", 0, FLAG, ALL, 0, 0 },
	{ "use-min-nodes", 0, FLAG, ALL, 0, 0 },
	{ "verbose", 'v', FLAG, ALL, 0, 0 },
	{ "version", 'V', FLAG, ALL, 0, 0 },
	/* sbatch's --wait, -W is a flag */
	{ "wait", 'W', VAL, S, 0, 0 },
	{ "wait", 'W', FLAG, B, 0, 0 },
	{ "wait-all-nodes", 0, VAL, B | A, 0, 0 },
	{ "wait-for-children", 0, FLAG, S, 250500, 0 },
	{ "wckey", 0, VAL, ALL, 0, 0 },
	{ "whole", 0, FLAG, S, 0, 0 },
	{ "wrap", 0, VAL, B, 0, 0 },
	/* unnamed in a Slurm built without X11 */
	{ "x11", 0, OPT, S | A, 0, 0 },
};

const size_t te_so_count = sizeof(te_so_table) / sizeof(te_so_table[0]);
