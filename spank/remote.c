/* slurmstepd: resolve the settings once per step from the node's policy, the
 * options srun passed and the job environment, then prepare every task just
 * before exec. Nothing here may fail the step in a way that drains the node:
 * errors are remembered and fail the tasks, with the reason on the tasks'
 * stderr (which reaches srun) and in the slurmd log. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "plugin.h"
#include "strutil.h"

static char remote_err[TE_ERR_MAX];

/* spank_getenv copies into the caller's buffer: keep a few so that a caller
 * may hold two values at once. A value too long for the buffer is reported
 * as an over-long marker so that the parser refuses it with a clear error. */
static const char *remote_getenv(void *ctx, const char *name)
{
	static char ring[4][TE_VALUE_MAX + 2];
	static unsigned next;
	char *buf = ring[next++ % 4];
	spank_err_t rc;

	rc = spank_getenv((spank_t)ctx, name, buf, (int)sizeof(ring[0]));
	if (rc == ESPANK_SUCCESS)
		return buf;
	if (rc == ESPANK_NOSPACE) {
		memset(buf, 'x', sizeof(ring[0]) - 1);
		buf[sizeof(ring[0]) - 1] = '\0';
		return buf;
	}
	return NULL;
}

static void remote_resolve(spank_t sp)
{
	struct te_config inherited;
	char err[TE_ERR_MAX];
	int have_inh;

	if (te_plug.resolved || remote_err[0])
		return;
	if (!te_plug.policy_ok) {
		te_strlcpy(remote_err, te_plug.policy_err, sizeof(remote_err));
		return;
	}
	have_inh = te_inherited_config(remote_getenv, sp, &inherited) == 0;
	if (te_resolve(&te_plug.pol, (const char *const *)te_plug.opt,
		       remote_getenv, sp, have_inh ? &inherited : NULL,
		       &te_plug.cfg, err, sizeof(err)) < 0) {
		te_strlcpy(remote_err, err, sizeof(remote_err));
		slurm_error(TE_PREFIX "%s", err);
		return;
	}
	te_plug.resolved = 1;
}

int te_remote_user_init(spank_t sp)
{
	remote_resolve(sp);
	return 0;
}

/* Writes the knob into every name it has (current and legacy). A value that
 * came from the environment stays as the user set it; only missing aliases
 * are filled in. */
static int export_knob(spank_t sp, int id)
{
	const struct te_setting *s = &te_settings[id];
	const struct te_value *v = &te_plug.cfg.v[id];
	const char *text;
	int e;

	if (!s->env || !v->set)
		return 0;
	text = te_value_env_text(id, v);
	for (e = 0; s->env[e]; e++) {
		int overwrite = v->src != TE_SRC_ENV;
		spank_err_t rc = spank_setenv(sp, s->env[e], text, overwrite);

		if (rc != ESPANK_SUCCESS && rc != ESPANK_ENV_EXISTS) {
			te_snprintf(remote_err, sizeof(remote_err),
				    "cannot set %s: %s", s->env[e],
				    spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

static int task_fail(spank_t sp)
{
	/* slurm_error() goes to the slurmd log; the task's stderr is what the
	 * user sees in srun's output. */
	slurm_error(TE_PREFIX "%s", remote_err);
	fprintf(stderr, TE_PREFIX "error: %s\n", remote_err);
	fflush(stderr);
	return -1;
}

int te_remote_task_init(spank_t sp)
{
	static char enc[TE_S_COUNT * (3 * TE_VALUE_MAX + 3 * TE_ORIGIN_MAX + 80)];
	int i;

	remote_resolve(sp);
	if (remote_err[0])
		return task_fail(sp);

	if (te_config_encode(&te_plug.cfg, enc, sizeof(enc)) == 0)
		spank_setenv(sp, TE_SETTINGS_ENV, enc, 1);
	if (te_plug.cfg.v[TE_S_TRAIN].word != 0)
		return 0;	/* --train=off */

	/* slurmstepd resets signal dispositions after task_init_privileged,
	 * so this is the place; SIG_IGN survives execve. */
	if (te_plug.cfg.v[TE_S_SIGHUP].word == 0 &&
	    signal(SIGHUP, SIG_IGN) == SIG_ERR) {
		te_snprintf(remote_err, sizeof(remote_err),
			    "cannot ignore SIGHUP: %s", strerror(errno));
		return task_fail(sp);
	}
	for (i = 0; i < TE_S_COUNT; i++)
		if (export_knob(sp, i) < 0)
			return task_fail(sp);
	return 0;
}

int te_remote_exit(spank_t sp)
{
	return 0;
}
