/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The launch checks' decisions (pure): a node against rank 0 without the
 * barrier, the checkpoint probe. Rank 0's verdict over the whole job is
 * the launch tree's (te_tree_verdict, core/launch/launch_tree_report.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "launch/launch_verdict.h"
#include "util/strutil.h"
#include "launch/version.h"

/* One GPU component: equal, or a node without a GPU on either side. */
static int gpu_part_equal(const char *a, const char *b)
{
	return !te_version_compared(a) || !te_version_compared(b) ||
	       !strcmp(a, b);
}

int te_versions_equal(const struct te_versions *a, const struct te_versions *b)
{
	return a->protocol == b->protocol &&
	       !strcmp(a->trainenv, b->trainenv) &&
	       gpu_part_equal(a->nccl, b->nccl) &&
	       gpu_part_equal(a->cuda, b->cuda) &&
	       gpu_part_equal(a->cudart, b->cudart);
}

int te_rank0_versions_verdict(int vcheck, const char *host,
			      const struct te_versions *mine, const char *host0,
			      const struct te_versions *v0, char *text,
			      size_t len)
{
	text[0] = '\0';
	/* whatever --version-check says: the two sides cannot be trusted
	 * to read each other's data */
	if (mine->protocol != v0->protocol) {
		te_snprintf(
			text, len,
			"node %s speaks protocol %d (trainenv %s), "
			"rank 0's node %s protocol %d (trainenv %s): " TE_PROTOCOL_ADVICE,
			host, mine->protocol, mine->trainenv, host0,
			v0->protocol, v0->trainenv);
		return TE_VERDICT_REJECT;
	}
	if (vcheck == TE_W_VCHECK_OFF || te_versions_equal(mine, v0))
		return TE_VERDICT_OK;
	te_snprintf(text, len,
		    "version mismatch: node %s has trainenv %s, "
		    "NCCL %s, CUDA driver %s, CUDA runtime %s; rank 0's node "
		    "%s has trainenv %s, NCCL %s, CUDA driver %s, CUDA runtime "
		    "%s (without --train-barrier each node is only compared "
		    "with rank 0's)",
		    host, mine->trainenv, mine->nccl, mine->cuda, mine->cudart,
		    host0, v0->trainenv, v0->nccl, v0->cuda, v0->cudart);
	return vcheck == TE_W_VCHECK_FAIL ? TE_VERDICT_REJECT : TE_VERDICT_WARN;
}

/* ---------------------------------------------------------------- checkpoint */

int te_ckpt_probe_name(unsigned long job, unsigned long step, const char *token,
		       char *name, size_t len)
{
	return te_snprintf(name, len, ".trainenv-ckpt-%lu.%lu-%.16s", job, step,
			   token);
}

int te_ckpt_probe_parse(const char *info, struct te_ckpt_probe *p, char *out,
			size_t outlen)
{
	if (!strncmp(info, "error ", 6)) {
		te_snprintf(out, outlen, TE_CKPT_RANK0_PREFIX "%s", info + 6);
		return -1;
	}
	/* %127s %33s: the sizes of struct te_ckpt_probe */
	if (sscanf(info, "%127s %33s", p->name, p->token) != 2 ||
	    strncmp(p->name, ".trainenv-ckpt-", 15) || strchr(p->name, '/') ||
	    !te_token_valid(p->token)) {
		te_snprintf(out, outlen,
			    "rank 0's checkpoint file name is "
			    "unreadable");
		return -1;
	}
	return 0;
}

const char *te_ckpt_probe_content(const char *content, const char *token)
{
	size_t l = strlen(token);

	if (!strncmp(content, token, l) &&
	    (content[l] == '\0' || !strcmp(content + l, "\n")))
		return "ok";
	return "rank 0's probe file has other content there (another "
	       "directory?)";
}
