/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per task: --train-preflight runs trainenv-preflight on the
 * task's GPU as the job user before the rendezvous and reads its verdict
 * (the CUDA runtime is only ever loaded in that program). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "stepd_bind.h"
#include "launch/preflight_proto.h"
#include "stepd_rdzv_client.h"
#include "stepd_preflight.h"
#include "stepd_step.h"
#include "util/strutil.h"
#include "launch/version.h"

/* What the program's run says when its output is not a result. */
static void preflight_spawn_err(const struct te_spawn_out *o, const char *buf,
				char *err, size_t errlen)
{
	static struct te_pf_result r;
	char perr[256];

	if (o->killed) {
		te_snprintf(err, errlen,
			    "no answer within %d s: the check was "
			    "killed (the GPU or its driver hangs?)",
			    TE_PF_TIMEOUT_S);
		return;
	}
	if (o->too_long) {
		te_snprintf(err, errlen, "the check wrote more than %d bytes",
			    TE_PF_OUT_MAX);
		return;
	}
	if (te_pf_parse(buf, o->got, &r, perr, sizeof(perr)) == 0) {
		err[0] = '\0';
		return;
	}
	if (WIFSIGNALED(o->status))
		te_snprintf(err, errlen,
			    "the check (%s) was killed by signal "
			    "%d (%s)",
			    TE_PREFLIGHT_HELPER, WTERMSIG(o->status),
			    strsignal(WTERMSIG(o->status)));
	else if (WEXITSTATUS(o->status))
		te_snprintf(err, errlen,
			    "the check (%s) exited with status %d "
			    "(%s)",
			    TE_PREFLIGHT_HELPER, WEXITSTATUS(o->status), perr);
	else
		te_snprintf(err, errlen,
			    "unreadable output from the check "
			    "(%s): %s",
			    TE_PREFLIGHT_HELPER, perr);
}

/* The check speaks another protocol: 1 with the versions line in err,
 * else 0. One of a protocol answers on stdout (te_protocol_refused); one
 * from before the protocol check (0.1.0) refuses "--protocol" with its
 * usage on its stderr, which is not captured, and exit 2: it is asked
 * --protocol-version with its stderr captured, which it refuses with the
 * same usage, and named from that (te_protocol_asked). Without this the
 * task failed as if its GPU had ("exited with status 2"). */
static int preflight_refused(const char *path, const struct te_spawn_out *so,
			     const char *obuf, char *const envp[], char *err,
			     size_t errlen)
{
	char *argv[] = { (char *)TE_PREFLIGHT_HELPER,
			 (char *)"--protocol-version", NULL };
	char out[512], e[TE_ERR_MAX];
	struct te_spawn_out o;

	if (so->killed || !WIFEXITED(so->status))
		return 0;
	if (te_protocol_refused(path, WEXITSTATUS(so->status), obuf, so->got,
				err, errlen))
		return 1;
	if (!te_protocol_none_silent(WEXITSTATUS(so->status), so->got))
		return 0;
	if (te_spawn_capture(path, argv, envp, TE_PROTOCOL_ASK_MS,
			     TE_SPAWN_STDERR, out, sizeof(out), &o, e,
			     sizeof(e)) < 0 ||
	    o.killed || o.too_long || !WIFEXITED(o.status))
		return 0;
	return te_protocol_asked(path, WEXITSTATUS(o.status), out, o.got, err,
				 errlen);
}

/* trainenv-preflight's command line for the rank's GPU (busid). */
struct pf_cmd {
	char proto[12];
	char hook[TE_PF_ERROR_MAX + 1];
	char *argv[10];
};

static void preflight_cmd(spank_t sp, const struct te_config *c, char *busid,
			  struct pf_cmd *cmd)
{
	int n = 0;

	/* first: a check of another protocol answers and stops */
	te_snprintf(cmd->proto, sizeof(cmd->proto), "%d",
		    te_protocol_version());
	cmd->argv[n++] = (char *)TE_PREFLIGHT_HELPER;
	cmd->argv[n++] = (char *)"--protocol";
	cmd->argv[n++] = cmd->proto;
	cmd->argv[n++] = (char *)"--gpu";
	cmd->argv[n++] = busid;
	if (c->v[TE_S_TEST_HOOKS].word == TE_W_ON &&
	    te_hook_value(te_stepd_getenv(sp, "TRAINENV_TEST_PREFLIGHT_FAIL"),
			  te_step.node, cmd->hook, sizeof(cmd->hook))) {
		cmd->argv[n++] = (char *)"--test-fail";
		cmd->argv[n++] = cmd->hook;
	}
	cmd->argv[n] = NULL;
}

/* The verdict (out) said: 0 when the task goes on, -1 or -2 (line, why)
 * when it fails, as te_stepd_preflight returns. */
static int preflight_report(spank_t sp, const struct te_pf_outcome *out,
			    int unstarted, char *line, size_t linelen,
			    char *why, size_t whylen)
{
	if (out->action == TE_PF_FAIL) {
		te_strlcpy(line, out->line, linelen);
		te_strlcpy(why, out->why, whylen);
		if (!unstarted)
			return -1;
		te_appendf(line, linelen,
			   " (the check could not be started: "
			   "trainenv's installation or helper-dir, not the "
			   "node)");
		return -2;
	}
	if (out->action == TE_PF_PASS)
		spank_setenv(sp, TE_PF_ENV, out->env, 1);
	if (out->line[0] && out->print) {
		fprintf(stderr, TE_PREFIX "%s\n", out->line);
		fflush(stderr);
	}
	if (out->line[0])
		slurm_info(TE_PREFIX "%s", out->line);
	return 0;
}

/* --train-preflight: checks this rank's GPU before the rendezvous, as the
 * job user, with trainenv-preflight (the CUDA runtime is only loaded in
 * that program, never here). 0: the GPU works, or there is nothing to
 * check on this node (said once for the step); -1: the task must fail,
 * with line (the task's own error) and why (for the other ranks): the
 * GPU failed its check, a node fault; -2: the same, but the check could
 * not be started at all (no such program, not executable, its loader
 * failed: exit 126 or 127), which is the installation's or the
 * configuration's fault, never the node's: the caller must not exit with
 * TE_EXIT_NODE_FAULT, which --train-requeue takes for a bad node. */
int te_stepd_preflight(spank_t sp, uint32_t local_id, uint32_t global_id,
		       char *line, size_t linelen, char *why, size_t whylen)
{
	static char obuf[TE_PF_OUT_MAX + 1];
	static struct te_pf_result res;
	const struct te_config *c = &te_plug.cfg;
	struct te_pf_input in = {
		.rank = global_id,
		.local_id = local_id,
		.node = te_step.node,
		.verbose = c->v[TE_S_PREFLIGHT].word == TE_W_PREFLIGHT_VERBOSE,
	};
	struct te_pf_outcome out;
	struct te_bind_gpu_env e;
	struct te_spawn_out so;
	char bufs[3][1024], busid[TE_BIND_BUSID_LEN], merr[TE_ERR_MAX];
	char path[TE_VALUE_MAX + 32], serr[TE_ERR_MAX], perr[8], **envp = NULL;
	struct pf_cmd cmd;
	int unstarted = 0;

	if (c->v[TE_S_PREFLIGHT].word != TE_W_PREFLIGHT_ON &&
	    c->v[TE_S_PREFLIGHT].word != TE_W_PREFLIGHT_VERBOSE)
		return 0;
	te_stepd_gpu_env(sp, &e, bufs);
	merr[0] = '\0';
	in.has_gpu = te_bindstep_gpu(local_id, &e, busid, sizeof(busid), merr,
				     sizeof(merr));
	in.busid = busid;
	in.map_err = merr;
	if (!te_pf_need_run(&in, &out))
		goto report; /* no GPU here: the program is not run */
	serr[0] = '\0';
	if (te_helper_path(TE_PREFLIGHT_HELPER, path, sizeof(path)) < 0) {
		te_snprintf(serr, sizeof(serr), "helper-dir is too long");
		unstarted = 1;
	} else if (spank_get_item(sp, S_JOB_ENV, &envp) != ESPANK_SUCCESS ||
		   !envp) {
		te_snprintf(serr, sizeof(serr),
			    "cannot read the task's "
			    "environment for the check");
		unstarted = 1;
	} else {
		preflight_cmd(sp, c, busid, &cmd);
		if (te_spawn_capture(
			    path, cmd.argv, envp, TE_PF_TIMEOUT_S * 1000, 0,
			    obuf, sizeof(obuf), &so, serr, sizeof(serr)) < 0) {
			char m[TE_ERR_MAX];

			te_snprintf(m, sizeof(m), "cannot run the check: %s",
				    serr);
			te_strlcpy(serr, m, sizeof(serr));
			unstarted = 1;
		} else if (preflight_refused(path, &so, obuf, envp, serr,
					     sizeof(serr))) {
			/* the installation's fault, not the node's: one
			 * line, and no node-fault exit */
			te_snprintf(line, linelen, "node %s: %s", te_step.node,
				    serr);
			te_strlcpy(why, line, whylen);
			return -2;
		} else {
			/* the shell's convention, which ld.so follows for
			 * a library it cannot load */
			unstarted = !so.killed && WIFEXITED(so.status) &&
				    (WEXITSTATUS(so.status) == 126 ||
				     WEXITSTATUS(so.status) == 127);
			preflight_spawn_err(&so, obuf, serr, sizeof(serr));
			if (!serr[0] && te_pf_parse(obuf, so.got, &res, perr,
						    sizeof(perr)) < 0)
				te_snprintf(serr, sizeof(serr),
					    "unreadable "
					    "output from the check");
		}
	}
	in.spawn_err = serr[0] ? serr : NULL;
	in.result = serr[0] ? NULL : &res;
	te_pf_decide(&in, &out);
report:
	return preflight_report(sp, &out, unstarted, line, linelen, why,
				whylen);
}
