/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The rank environment of a task, from what Slurm knows (rankenv.h). */
#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "launch/rankenv.h"
#include "settings/settings.h"
#include "util/strutil.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* python, python3, python3.11, python3.11-dbg */
static int is_python(const char *b)
{
	if (strncmp(b, "python", 6) != 0)
		return 0;
	for (b += 6; *b; b++) {
		if (!strcmp(b, "-dbg"))
			return 1;
		if (!isdigit((unsigned char)*b) && *b != '.')
			return 0;
	}
	return 1;
}

int te_is_node_launcher(int argc, char *const *argv, const char **what)
{
	const char *b;
	int i;

	if (argc < 1 || !argv || !argv[0])
		return 0;
	b = base_name(argv[0]);
	if (!strcmp(b, "torchrun")) {
		*what = "torchrun";
		return 1;
	}
	if (!strcmp(b, "accelerate") && argc > 1 && argv[1] &&
	    !strcmp(argv[1], "launch")) {
		*what = "accelerate launch";
		return 1;
	}
	if (!is_python(b))
		return 0;
	/* python [interpreter options] -m MODULE: the module must be the
	 * first non-option word, options taking no value aside. */
	for (i = 1; i < argc && argv[i]; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-m") && i + 1 < argc && argv[i + 1]) {
			const char *m = argv[i + 1];

			if (!strcmp(m, "torch.distributed.run")) {
				*what = "python -m torch.distributed.run";
				return 1;
			}
			if (!strcmp(m, "torch.distributed.launch")) {
				*what = "python -m torch.distributed.launch";
				return 1;
			}
			return 0;
		}
		if (!strncmp(a, "-m", 2) &&
		    a[2]) { /* -mtorch.distributed.run */
			if (!strcmp(a + 2, "torch.distributed.run") ||
			    !strcmp(a + 2, "torch.distributed.launch")) {
				*what = "python -m torch.distributed.run";
				return 1;
			}
			return 0;
		}
		if (a[0] != '-' || !strcmp(a, "-c") || !strcmp(a, "-"))
			return 0;
		if (!strcmp(a, "-W") || !strcmp(a, "-X"))
			i++; /* takes a value */
	}
	return 0;
}

enum te_launch te_launcher_decide(int setting_word, int argc, char *const *argv,
				  uint32_t ntasks, uint32_t nnodes,
				  uint32_t gpus, char *why, size_t whylen)
{
	const char *what = NULL;

	if (setting_word == TE_W_LAUNCHER_TASK) {
		te_strlcpy(why, "launcher=task", whylen);
		return TE_LAUNCH_TASK;
	}
	if (setting_word == TE_W_LAUNCHER_TORCHRUN) {
		te_strlcpy(why, "launcher=torchrun", whylen);
		return TE_LAUNCH_TORCHRUN;
	}
	if (te_is_node_launcher(argc, argv, &what)) {
		te_snprintf(why, whylen, "auto: the command is %s", what);
		return TE_LAUNCH_TORCHRUN;
	}
	if (nnodes > 0 && ntasks == nnodes && gpus > 1) {
		te_snprintf(why, whylen,
			    "auto: one task per node with %u "
			    "GPUs",
			    gpus);
		return TE_LAUNCH_TORCHRUN;
	}
	te_strlcpy(why, "auto: one task per rank", whylen);
	return TE_LAUNCH_TASK;
}

uint16_t te_master_port(uint32_t job_id, uint32_t step_id, uint16_t lo,
			uint16_t hi)
{
	uint32_t range;

	if (hi < lo)
		return lo;
	range = (uint32_t)(hi - lo) + 1;
	return (uint16_t)(lo + (uint32_t)(((uint64_t)job_id * 97 + step_id) %
					  range));
}

static int add(struct te_envlist *e, const char *name, unsigned long long v)
{
	if (e->n >= TE_RANKENV_MAX)
		return -1;
	te_strlcpy(e->name[e->n], name, sizeof(e->name[0]));
	te_snprintf(e->value[e->n], sizeof(e->value[0]), "%llu", v);
	e->n++;
	return 0;
}

static int add_str(struct te_envlist *e, const char *name, const char *v)
{
	if (e->n >= TE_RANKENV_MAX ||
	    te_strlcpy(e->value[e->n], v, sizeof(e->value[0])) >=
		    sizeof(e->value[0]))
		return -1;
	te_strlcpy(e->name[e->n], name, sizeof(e->name[0]));
	e->n++;
	return 0;
}

int te_rank_env(const struct te_step_facts *f, enum te_launch mode,
		struct te_envlist *e)
{
	int rc = 0;

	e->n = 0;
	if (mode == TE_LAUNCH_TASK) {
		rc |= add(e, "RANK", f->global_id);
		rc |= add(e, "WORLD_SIZE", f->ntasks);
		rc |= add(e, "LOCAL_RANK", f->local_id);
		rc |= add(e, "LOCAL_WORLD_SIZE", f->local_tasks);
		rc |= add(e, "NODE_RANK", f->node_id);
		rc |= add(e, "GROUP_RANK", f->node_id);
		if (f->master_addr)
			rc |= add_str(e, "MASTER_ADDR", f->master_addr);
		rc |= add(e, "MASTER_PORT", f->master_port);
	} else {
		rc |= add(e, "PET_NNODES", f->ntasks);
		rc |= add(e, "PET_NODE_RANK", f->global_id);
		if (f->gpus)
			rc |= add(e, "PET_NPROC_PER_NODE", f->gpus);
		if (f->master_addr)
			rc |= add_str(e, "PET_MASTER_ADDR", f->master_addr);
		rc |= add(e, "PET_MASTER_PORT", f->master_port);
		if (f->rdzv_timeout) {
			char conf[96];

			/* static rendezvous reads "timeout", c10d
			 * "join_timeout"; each ignores the other. */
			te_snprintf(conf, sizeof(conf),
				    "timeout=%llu,join_timeout=%llu",
				    (unsigned long long)f->rdzv_timeout,
				    (unsigned long long)f->rdzv_timeout);
			rc |= add_str(e, "PET_RDZV_CONF", conf);
		}
	}
	return rc ? -1 : 0;
}

static int host_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.';
}

int te_hostlist_first(const char *list, char *out, size_t outlen)
{
	size_t o = 0;
	const char *p = list;

	if (!list || !*list || !outlen)
		return -1;
	while (*p && *p != ',') {
		if (*p == '[') {
			/* copy the first number of the first range */
			size_t digits = 0;

			p++;
			while (isdigit((unsigned char)*p)) {
				if (o + 1 >= outlen)
					return -1;
				out[o++] = *p++;
				digits++;
			}
			if (!digits)
				return -1;
			while (*p && *p != ']') {
				if (!isdigit((unsigned char)*p) && *p != '-' &&
				    *p != ',')
					return -1;
				p++;
			}
			if (*p != ']')
				return -1;
			p++;
			continue;
		}
		if (!host_char(*p) || o + 1 >= outlen)
			return -1;
		out[o++] = *p++;
	}
	if (!o)
		return -1;
	out[o] = '\0';
	return 0;
}

int te_devlist_count(const char *list)
{
	int n = 0;
	const char *p;

	if (!list || !*list || !strcmp(list, "NoDevFiles"))
		return 0;
	for (p = list;; p++) {
		const char *start = p;

		while (*p && *p != ',') {
			if (!isalnum((unsigned char)*p) && *p != '-' &&
			    *p != '/' && *p != ':')
				return -1;
			p++;
		}
		if (p == start || n >= 4096)
			return -1;
		n++;
		if (!*p)
			break;
	}
	return n;
}

int te_name_in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p = list;

	if (!list || !n)
		return 0;
	while ((p = strstr(p, name))) {
		if ((p == list || p[-1] == ',') &&
		    (p[n] == ',' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

int te_owned_append(char *list, size_t len, const char *name, const char *value)
{
	size_t used = strnlen(list, len);
	int n;

	if (used >= len)
		return -1;
	n = snprintf(list + used, len - used, "%s%s=%08x", used ? "," : "",
		     name, (unsigned)fnv1a(value));
	if (n < 0 || (size_t)n >= len - used) {
		list[used] = '\0';
		return -1;
	}
	return 0;
}

int te_owned_is(const char *list, const char *name, const char *value)
{
	size_t n = strlen(name);
	const char *p = list;
	char want[9];

	if (!list || !n || !value)
		return 0;
	snprintf(want, sizeof(want), "%08x", (unsigned)fnv1a(value));
	for (; (p = strstr(p, name)); p += n) {
		if (p != list && p[-1] != ',')
			continue;
		if (p[n] == ',' || p[n] == '\0')
			return 1; /* a release before the hash */
		if (p[n] == '=' && !strncmp(p + n + 1, want, 8) &&
		    (p[n + 9] == ',' || p[n + 9] == '\0'))
			return 1;
	}
	return 0;
}
