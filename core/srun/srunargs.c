/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What srun was asked for on its command line, read by the srun side of
 * the plugin before srun has told anyone (SPANK gives no access to srun's
 * own options); the allocator side reads sbatch's and salloc's the same
 * way. The options of each Slurm release are srunargs_table.c's. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "settings/settings.h"
#include "srun/srunargs.h"
#include "srun/srunargs_int.h"

/* The release whose options the walk knows, as srunargs_table.c writes
 * releases (YYMMuu); 0 is before 22.05, so 22.05's. */
static unsigned walk_release;

void te_srun_argv_set_release(unsigned slurm_version)
{
	unsigned micro = slurm_version & 0xff;

	walk_release = ((slurm_version >> 16) & 0xff) * 10000 +
		       ((slurm_version >> 8) & 0xff) * 100 +
		       (micro > 99 ? 99 : micro);
}

/* Whose options: sbatch's or salloc's when ARGV0 is one of those, else
 * srun's (the allocator side of the plugin reads their command line). */
static unsigned program_of(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	base = base ? base + 1 : argv0 ? argv0 : "";
	if (!strcmp(base, "sbatch"))
		return TE_SO_SBATCH;
	if (!strcmp(base, "salloc"))
		return TE_SO_SALLOC;
	return TE_SO_SRUN;
}

static int in_release(const struct te_so *o, unsigned prog)
{
	return (o->progs & prog) && o->since <= walk_release &&
	       (!o->until || walk_release < o->until);
}

/* The plugin's own options, which SPANK adds to the program's: --train and
 * --train-NAME (core/settings/settings.c) take a value, --train-explain does not. */
static const struct te_so plugin_value = { "train", 0, TE_SO_VALUE, 0, 0, 0 };
static const struct te_so plugin_flag = {
	"train-explain", 0, TE_SO_FLAG, 0, 0, 0
};

/* Counts NAME as a candidate for "--WORD" (LEN bytes) as getopt_long does:
 * an exact name is the option (*exact), else each name that WORD
 * abbreviates is one more candidate. */
static void candidate(const char *name, const struct te_so *o, const char *word,
		      size_t len, const struct te_so **exact,
		      const struct te_so **hit, int *n)
{
	if (*exact || strncmp(name, word, len))
		return;
	if (!name[len])
		*exact = o;
	*hit = o;
	(*n)++;
}

/* The option that getopt_long takes "--WORD" (LEN bytes, before any "=")
 * for: its exact name, else the one option WORD abbreviates. NULL for an
 * unknown option and for an ambiguous one (the program refuses both). */
static const struct te_so *long_option(const char *word, size_t len,
				       unsigned prog)
{
	const struct te_so *exact = NULL, *hit = NULL;
	char name[64];
	size_t i;
	int n = 0;

	for (i = 0; i < te_so_count; i++)
		if (in_release(&te_so_table[i], prog))
			candidate(te_so_table[i].name, &te_so_table[i], word,
				  len, &exact, &hit, &n);
	for (i = 0; i < TE_S_COUNT; i++) {
		if (te_settings[i].flags & TE_F_NO_OPTION)
			continue;
		te_option_name((int)i, name, sizeof(name));
		candidate(name, &plugin_value, word, len, &exact, &hit, &n);
	}
	candidate(plugin_flag.name, &plugin_flag, word, len, &exact, &hit, &n);
	return exact ? exact : n == 1 ? hit : NULL;
}

static const struct te_so *short_option(char letter, unsigned prog)
{
	size_t i;

	for (i = 0; i < te_so_count; i++)
		if (te_so_table[i].letter == letter &&
		    in_release(&te_so_table[i], prog))
			return &te_so_table[i];
	return NULL;
}

/* Walks the program's own options (up to "--" or the command) as its
 * getopt_long does and looks for the option NAME, however it is given (its
 * short letter, an abbreviation). Returns 1 when it is there, with *value
 * its value (NULL for a flag or a missing value); the last one wins, as in
 * srun. An unknown option is taken for a flag. *cmd: the index of the
 * command's first word, or argc when there is none. */
static int walk_options(int argc, char *const *argv, const char *name,
			const char **value, int *cmd)
{
	unsigned prog = program_of(argc > 0 ? argv[0] : NULL);
	int i, found = 0;

	*value = NULL;
	for (i = 1; i < argc && argv[i]; i++) {
		const char *a = argv[i];
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;
		const struct te_so *o;

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strncmp(a, "--", 2)) {
			const char *eq = strchr(a, '=');
			size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
			int takes;

			o = long_option(a + 2, len, prog);
			takes = !eq && o && o->kind == TE_SO_VALUE;
			if (o && !strcmp(o->name, name)) {
				found = 1;
				*value = eq ? eq + 1 : takes ? next : NULL;
			}
			if (takes)
				i++;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			const char *c;

			for (c = a + 1; *c; c++) {
				int kind;

				o = short_option(*c, prog);
				kind = o ? o->kind : TE_SO_FLAG;
				if (o && !strcmp(o->name, name)) {
					found = 1;
					*value = kind == TE_SO_FLAG    ? NULL
						 : c[1]		       ? c + 1
						 : kind == TE_SO_VALUE ? next
								       : NULL;
				}
				if (kind == TE_SO_FLAG)
					continue;
				/* the rest of the word is the value; a
				 * required one is the next word when none */
				if (kind == TE_SO_VALUE && !c[1])
					i++;
				break;
			}
			continue;
		}
		break; /* the command starts here */
	}
	*cmd = i < argc && argv[i] ? i : argc;
	return found;
}

static int own_option(int argc, char *const *argv, const char *name,
		      const char **value)
{
	int cmd;

	return walk_options(argc, argv, name, value, &cmd);
}

const char *te_srun_option_value(int argc, char *const *argv, const char *name)
{
	const char *v;

	return own_option(argc, argv, name, &v) ? v : NULL;
}

int te_srun_command(int argc, char *const *argv)
{
	const char *v;
	int cmd;

	walk_options(argc, argv, "", &v, &cmd);
	return cmd < argc ? cmd : -1;
}

int te_srun_asks_pty(int argc, char *const *argv)
{
	const char *v;

	return own_option(argc, argv, "pty", &v);
}

/* Slurm 22.05 (src/srun/libsrun/fname.c, launch.c): srun reads its own
 * stdin for --input all (any word starting "all", case aside, or "-"), for
 * a task number, and by default; "none", a file name or a per-task pattern
 * is opened by srun or the nodes instead. */
int te_srun_reads_stdin(int argc, char *const *argv)
{
	const char *v;
	size_t i;

	if (!own_option(argc, argv, "input", &v) || !v)
		return 1;
	if (!strncasecmp(v, "all", 3) || v[0] == '-')
		return 1;
	for (i = 0; v[i]; i++)
		if (v[i] < '0' || v[i] > '9')
			return 0;
	return 1; /* a task number */
}

int te_srun_asks_signal(int argc, char *const *argv)
{
	const char *v;

	return own_option(argc, argv, "signal", &v);
}

int te_srun_asks(int argc, char *const *argv, const char *name)
{
	const char *v;

	return own_option(argc, argv, name, &v);
}
