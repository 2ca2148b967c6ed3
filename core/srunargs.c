/* What srun was asked for on its command line, read by the srun side of
 * the plugin before srun has told anyone (SPANK gives no access to srun's
 * own options). */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "srunargs.h"

/* srun's options that take a value (Slurm 22.05, src/common/slurm_opt.c):
 * "--name value" consumes the next word. */
static const char *const long_with_value[] = {
	"accel-bind", "account", "acctg-freq", "argv", "array", "batch", "bb",
	"bbf", "bcast-exclude", "begin", "chdir", "cluster",
	"cluster-constraint", "clusters", "comment", "constraint",
	"container", "context", "core-spec", "cores-per-socket", "cpu-bind",
	"cpu-freq", "cpu_bind", "cpus-per-gpu", "cpus-per-task", "deadline",
	"delay-boot", "dependency", "distribution", "environment", "epilog",
	"error", "exclude", "export", "export-file", "extra-node-info", "gid",
	"gpu-bind", "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket",
	"gpus-per-task", "gres", "gres-flags", "het-group", "hint", "input",
	"job-name", "jobid", "kill-on-invalid-dep", "licenses", "mail-type",
	"mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu",
	"mem-per-gpu", "mincpus", "mpi", "msg-timeout", "network", "nodefile",
	"nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu",
	"ntasks-per-node", "ntasks-per-socket", "ntasks-per-tres",
	"open-mode", "output", "pack-group", "partition", "power", "prefer",
	"priority", "profile", "prolog", "qos", "relative", "reservation",
	"signal", "slurmd-debug", "sockets-per-node", "switches",
	"task-epilog", "task-prolog", "tasks-per-node", "thread-spec",
	"threads", "threads-per-core", "time", "time-min", "tmp", "uid",
	"wait", "wait-all-nodes", "wckey", "wrap",
	NULL
};
static const char short_with_value[] = "ABCDFGJLMNSTWabcdeimnopqrtwx";

static int long_takes_value(const char *name, size_t len)
{
	size_t i;

	/* SPANK plugin options with an argument, ours included */
	if (len > 6 && !strncmp(name, "train-", 6))
		return !(len == 13 && !strncmp(name, "train-explain", 13));
	if (len == 5 && !strncmp(name, "train", 5))
		return 1;
	for (i = 0; long_with_value[i]; i++)
		if (strlen(long_with_value[i]) == len &&
		    !strncmp(long_with_value[i], name, len))
			return 1;
	return 0;
}

/* Walks srun's own options (up to "--" or the command) and looks for the
 * long option NAME (exact) or the short option LETTER (0: none). Returns 1
 * when it is there, with *value its value (NULL for a flag or a missing
 * value); the last one wins, as in srun. */
static int own_option(int argc, char *const *argv, const char *name,
		      char letter, const char **value)
{
	size_t nlen = strlen(name);
	int i, found = 0;

	*value = NULL;
	for (i = 1; i < argc && argv[i]; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			break;
		if (!strncmp(a, "--", 2)) {
			const char *eq = strchr(a, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			int takes = !eq && long_takes_value(a + 2, len);

			if (len == nlen && !strncmp(a + 2, name, len)) {
				found = 1;
				*value = eq ? eq + 1 : takes ? argv[i + 1] : NULL;
			}
			if (takes)
				i++;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			const char *c;

			for (c = a + 1; *c; c++) {
				int takes = strchr(short_with_value, *c) != NULL;

				if (letter && *c == letter) {
					found = 1;
					*value = !takes ? NULL :
						 c[1] ? c + 1 : argv[i + 1];
				}
				if (takes) {
					if (!c[1])
						i++;	/* value is the next word */
					break;
				}
			}
			continue;
		}
		break;	/* the command starts here */
	}
	return found;
}

int te_srun_asks_pty(int argc, char *const *argv)
{
	const char *v;

	return own_option(argc, argv, "pty", 0, &v);
}

/* Slurm 22.05 (src/srun/libsrun/fname.c, launch.c): srun reads its own
 * stdin for --input all (any word starting "all", case aside, or "-"), for
 * a task number, and by default; "none", a file name or a per-task pattern
 * is opened by srun or the nodes instead. */
int te_srun_reads_stdin(int argc, char *const *argv)
{
	const char *v;
	size_t i;

	if (!own_option(argc, argv, "input", 'i', &v) || !v)
		return 1;
	if (!strncasecmp(v, "all", 3) || v[0] == '-')
		return 1;
	for (i = 0; v[i]; i++)
		if (v[i] < '0' || v[i] > '9')
			return 0;
	return 1;	/* a task number */
}

int te_srun_asks_signal(int argc, char *const *argv)
{
	const char *v;

	return own_option(argc, argv, "signal", 0, &v);
}
