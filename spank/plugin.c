/* The SPANK entry points. Each callback only looks at the context and calls
 * into the file for that context; nothing else lives here. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "strutil.h"

SPANK_PLUGIN(trainenv, 1);

struct te_plugin te_plug;

static int context_wanted(spank_context_t c)
{
	return c == S_CTX_LOCAL || c == S_CTX_ALLOCATOR || c == S_CTX_REMOTE;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t c = spank_context();

	if (!context_wanted(c))
		return 0;
	memset(&te_plug, 0, sizeof(te_plug));
	te_plug.ctx = c;
	te_policy_init(&te_plug.pol);
	te_plug.policy_ok = te_policy_args(&te_plug.pol, ac, av,
					   te_plug.policy_err,
					   sizeof(te_plug.policy_err)) == 0;
	if (te_options_register(sp) < 0)
		return c == S_CTX_REMOTE ? 0 : -1;
	if (te_plug.policy_ok)
		return 0;
	slurm_error(TE_PREFIX "%s", te_plug.policy_err);
	/* In slurmstepd a failure here would fail the step launch in a way
	 * that can drain the node: remember it and fail the tasks instead. */
	return c == S_CTX_REMOTE ? 0 : -1;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	switch (spank_context()) {
	case S_CTX_LOCAL:
		return te_local_post_opt(sp);
	case S_CTX_ALLOCATOR:
		return te_alloc_post_opt(sp);
	case S_CTX_REMOTE:
		return te_remote_post_opt(sp);
	default:
		return 0;
	}
}

int slurm_spank_local_user_init(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_LOCAL)
		return te_local_user_init(sp);
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_REMOTE)
		return te_remote_user_init(sp);
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_REMOTE)
		return te_remote_task_init(sp);
	return 0;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	if (spank_context() == S_CTX_REMOTE)
		return te_remote_task_exit(sp);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	int rc = 0;

	switch (spank_context()) {
	case S_CTX_LOCAL:
		rc = te_local_exit(sp);
		break;
	case S_CTX_REMOTE:
		rc = te_remote_exit(sp);
		break;
	default:
		break;
	}
	te_options_free();
	return rc;
}

void te_explain_print(const struct te_config *cfg)
{
	char line[TE_VALUE_MAX + 2 * TE_ORIGIN_MAX];
	int i;

	for (i = 0; i < TE_S_COUNT; i++) {
		te_explain_line(cfg, i, line, sizeof(line));
		fprintf(stderr, TE_PREFIX "%s\n", line);
	}
	fflush(stderr);
}

int te_inherited_config(te_getenv_fn getenv_fn, void *ctx,
			struct te_config *out)
{
	const char *s = getenv_fn(ctx, TE_SETTINGS_ENV);
	char err[TE_ERR_MAX];

	if (!s || te_config_decode(out, s, err, sizeof(err)) < 0)
		return -1;
	return 0;
}
