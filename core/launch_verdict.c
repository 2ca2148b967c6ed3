/* The launch checks' decisions (pure): rank 0's verdict over the nodes'
 * facts, a node against rank 0 without the barrier, the checkpoint probe. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launch_verdict.h"
#include "strutil.h"

#define RANK0_PREFIX "rank0 "

static int is_rank0_error(const char *fact)
{
	return !strncmp(fact, RANK0_PREFIX, strlen(RANK0_PREFIX));
}

/* The checkpoint directory: TE_VERDICT_REJECT when rank 0 could not write
 * there, or when a node could not see or write rank 0's file. */
static int ckpt_verdict(const struct te_launch_checks *c,
			const struct te_coord_req *nodes, size_t n,
			struct te_nodever *bad, char *text, size_t len)
{
	char part[TE_COORD_TEXT_MAX + 1];
	const char *rank0_err = NULL;
	size_t i, nbad = 0;

	for (i = 0; i < n; i++) {
		if (is_rank0_error(nodes[i].ckpt)) {
			rank0_err = nodes[i].ckpt + strlen(RANK0_PREFIX);
		} else if (strcmp(nodes[i].ckpt, "ok")) {
			bad[nbad].host = nodes[i].host;
			bad[nbad].ver = nodes[i].ckpt;
			nbad++;
		}
	}
	if (rank0_err) {
		te_snprintf(text, len, "checkpoint dir %s: rank 0 (node %s) "
			    "cannot write there: %s", c->ckpt, c->rank0_host,
			    rank0_err);
		return TE_VERDICT_REJECT;
	}
	if (!nbad)
		return TE_VERDICT_OK;
	te_group_by_value(bad, nbad, 1, part, sizeof(part));
	te_snprintf(text, len, "checkpoint dir %s is not one shared directory "
		    "writable from every node (rank 0 is on %s): %s", c->ckpt,
		    c->rank0_host, part);
	return TE_VERDICT_REJECT;
}

/* "NCCL differs across nodes: ...; CUDA driver differs ..." into vers, ""
 * when every version agrees. */
static void version_differences(const struct te_coord_req *nodes, size_t n,
				struct te_nodever *nv, char *vers, size_t len)
{
	static const char *const what[4] = { "trainenv", "NCCL",
					     "CUDA driver", "CUDA runtime" };
	char part[TE_COORD_TEXT_MAX + 1];
	size_t i;
	int c;

	vers[0] = '\0';
	for (c = 0; c < 4; c++) {
		for (i = 0; i < n; i++) {
			nv[i].host = nodes[i].host;
			nv[i].ver = c == 0 ? nodes[i].ver.trainenv :
				    c == 1 ? nodes[i].ver.nccl :
				    c == 2 ? nodes[i].ver.cuda :
					     nodes[i].ver.cudart;
		}
		if (te_version_summary(what[c], nv, n, part, sizeof(part)) > 1)
			te_appendf(vers, len, "%s%s", vers[0] ? "; " : "",
				   part);
	}
}

int te_launch_verdict(const struct te_launch_checks *c,
		      const struct te_coord_req *nodes, size_t n, char *text,
		      size_t len)
{
	struct te_nodever *nv = calloc(n ? n : 1, sizeof(*nv));
	char vers[TE_COORD_TEXT_MAX + 1];
	int rc = TE_VERDICT_OK;

	text[0] = '\0';
	if (!nv) {
		te_snprintf(text, len, "launch checks: out of memory");
		return TE_VERDICT_WARN;
	}
	if (c->ckpt)
		rc = ckpt_verdict(c, nodes, n, nv, text, len);
	if (c->vcheck != TE_W_VCHECK_OFF) {
		version_differences(nodes, n, nv, vers, sizeof(vers));
		if (vers[0] && rc == TE_VERDICT_OK) {
			if (c->vcheck == TE_W_VCHECK_FAIL) {
				te_snprintf(text, len, "version mismatch "
					    "(version-check=fail): %s", vers);
				rc = TE_VERDICT_REJECT;
			} else {
				te_snprintf(text, len, "version mismatch: %s",
					    vers);
				rc = TE_VERDICT_WARN;
			}
		} else if (vers[0] && c->vcheck == TE_W_VCHECK_FAIL) {
			te_appendf(text, len, "; version mismatch: %s", vers);
		}
	}
	free(nv);
	return rc;
}

int te_versions_equal(const struct te_versions *a, const struct te_versions *b)
{
	return !strcmp(a->trainenv, b->trainenv) && !strcmp(a->nccl, b->nccl) &&
	       !strcmp(a->cuda, b->cuda) && !strcmp(a->cudart, b->cudart);
}

int te_rank0_versions_verdict(int vcheck, const char *host,
			      const struct te_versions *mine, const char *host0,
			      const struct te_versions *v0, char *text,
			      size_t len)
{
	text[0] = '\0';
	if (vcheck == TE_W_VCHECK_OFF || te_versions_equal(mine, v0))
		return TE_VERDICT_OK;
	te_snprintf(text, len, "version mismatch: node %s has trainenv %s, "
		    "NCCL %s, CUDA driver %s, CUDA runtime %s; rank 0's node "
		    "%s has trainenv %s, NCCL %s, CUDA driver %s, CUDA runtime "
		    "%s (without --train-barrier each node is only compared "
		    "with rank 0's)", host, mine->trainenv, mine->nccl,
		    mine->cuda, mine->cudart, host0, v0->trainenv, v0->nccl,
		    v0->cuda, v0->cudart);
	return vcheck == TE_W_VCHECK_FAIL ? TE_VERDICT_REJECT : TE_VERDICT_WARN;
}

/* ---------------------------------------------------------------- checkpoint */

int te_ckpt_probe_name(unsigned long job, unsigned long step,
		       const char *token, char *name, size_t len)
{
	return te_snprintf(name, len, ".trainenv-ckpt-%lu.%lu-%.16s", job, step,
			   token);
}

int te_ckpt_probe_parse(const char *info, struct te_ckpt_probe *p, char *out,
			size_t outlen)
{
	if (!strncmp(info, "error ", 6)) {
		te_snprintf(out, outlen, RANK0_PREFIX "%s", info + 6);
		return -1;
	}
	/* %127s %33s: the sizes of struct te_ckpt_probe */
	if (sscanf(info, "%127s %33s", p->name, p->token) != 2 ||
	    strncmp(p->name, ".trainenv-ckpt-", 15) || strchr(p->name, '/') ||
	    !te_token_valid(p->token)) {
		te_snprintf(out, outlen, "rank 0's checkpoint file name is "
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
