/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Node health: the GPU checks' verdicts from what NVML said of each GPU
 * (read by pmix/nvml_load.c, which loads NVML at run time): the job's
 * GPUs present, no volatile uncorrectable ECC error, no page retirement
 * or row remapping pending, no remapping failed, no memory held by a
 * process not of the job, the NVLink links the site wants up. Pure, but
 * for reading a process's owner. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

#include "health/health.h"
#include "util/strutil.h"
#include "util/sysutil.h"

#define PROBLEMS_MAX 160
#define MPS_SERVER "nvidia-cuda-mps-server"

const char *te_health_nvml_rc_text(int rc)
{
	switch (rc) {
	case 0:
		return "success";
	case 1:
		return "NVML not initialized";
	case 2:
		return "invalid argument";
	case 3:
		return "not supported";
	case 4:
		return "no permission";
	case 7:
		return "more than fit";
	case 9:
		return "driver not loaded";
	case 10:
		return "timeout";
	case 12:
		return "NVML function missing";
	case 15:
		return "GPU is lost";
	case 17:
		return "operating system error";
	default:
		return "NVML error";
	}
}

static void problem(char *list, size_t len, const char *what)
{
	te_appendf(list, len, "%s%s", list[0] ? ", " : "", what);
}

/* A query's failure (not "not supported") as a problem. */
static int query_failed(int rc, const char *what, char *probs, size_t len)
{
	char why[96];

	if (rc == TE_NVML_SUCCESS || rc == TE_NVML_NOT_SUPPORTED)
		return rc != TE_NVML_SUCCESS;
	te_snprintf(why, sizeof(why), "%s unreadable (%s, %d)", what,
		    te_health_nvml_rc_text(rc), rc);
	problem(probs, len, why);
	return 1;
}

/* A process's name, the user's choice, as it may reach a drain reason:
 * letters, digits, '.', '_', '-' kept, anything else '?' (no blank, no
 * quote, no ':' that could pass for another reason's words). */
static void comm_word(char *out, size_t len, const char *comm)
{
	size_t i;

	for (i = 0; i + 1 < len && comm[i]; i++) {
		char c = comm[i];

		out[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' ||
			  c == '-')
				 ? c
				 : '?';
	}
	out[i] = '\0';
}

/* The processes on g not of the job. */
static void gpu_procs(const struct te_health_gpu *g, long allowed_uid,
		      char *probs, size_t len, char *value, size_t vlen)
{
	char why[128];
	int i;

	if (allowed_uid == TE_HEALTH_NO_JOB)
		return;
	if (g->procs_rc == TE_NVML_INSUFFICIENT_SIZE) {
		problem(probs, len, "more than 32 processes hold memory");
		return;
	}
	if (query_failed(g->procs_rc, "processes", probs, len))
		return;
	for (i = 0; i < g->n_procs && i < TE_HEALTH_GPU_PROCS_MAX; i++) {
		const struct te_health_gpu_proc *p = &g->procs[i];
		char comm[16];

		comm_word(comm, sizeof(comm), p->comm);
		/* the MPS server by its binary, run by root or the job */
		if (p->mps && (p->uid == 0 || p->uid == allowed_uid))
			continue;
		if (p->uid >= 0 && p->uid == allowed_uid)
			continue;
		if (p->uid >= 0)
			te_snprintf(why, sizeof(why),
				    "memory held by pid %u (uid %ld, %s, %llu "
				    "MiB), not of this job",
				    p->pid, p->uid, comm[0] ? comm : "?",
				    p->mem_bytes >> 20);
		else
			te_snprintf(why, sizeof(why),
				    "memory held by pid %u (not in this "
				    "node's /proc, %llu MiB), not of this job",
				    p->pid, p->mem_bytes >> 20);
		problem(probs, len, why);
		if (!value[0])
			te_snprintf(value, vlen, "pid %u", p->pid);
	}
}

/* g's NVLink links against the site's count (links_want; 0: not
 * checked): fewer up fails, naming the links down; a GPU without NVLink
 * fails too, since the site expects it. */
static void gpu_links(const struct te_health_gpu *g, char *probs, size_t len,
		      char *value, size_t vlen)
{
	char why[128], list[80] = "";
	unsigned i, down = 0;

	if (!g->links_want)
		return;
	if (g->links_rc != TE_NVML_NOT_SUPPORTED &&
	    query_failed(g->links_rc, "NVLink", probs, len))
		return;
	if (g->links_rc == TE_NVML_NOT_SUPPORTED || !g->n_links_seen) {
		te_snprintf(why, sizeof(why), "no NVLink (want %u links up)",
			    g->links_want);
		problem(probs, len, why);
		if (!value[0])
			te_strlcpy(value, "nvlink none", vlen);
		return;
	}
	if (g->n_links_up >= g->links_want)
		return;
	for (i = 0; i < TE_HEALTH_NVLINK_MAX; i++)
		if (g->links_down & (1ul << i))
			te_appendf(list, sizeof(list), "%s%u",
				   down++ ? ", " : "", i);
	if (down)
		te_snprintf(
			why, sizeof(why),
			"nvlink %u of %u links down (link%s %s; want %u up)",
			down, g->n_links_seen, down > 1 ? "s" : "", list,
			g->links_want);
	else
		te_snprintf(why, sizeof(why), "nvlink %u links up (want %u)",
			    g->n_links_up, g->links_want);
	problem(probs, len, why);
	if (!value[0])
		te_snprintf(value, vlen, "nvlink %u up", g->n_links_up);
}

/* One GPU's problems into probs, its first value into value. */
static void gpu_problems(const struct te_health_gpu *g, long allowed_uid,
			 char *probs, size_t len, char *value, size_t vlen)
{
	char why[96];

	if (!query_failed(g->ecc_rc, "ECC", probs, len) && g->ecc_uncorrected) {
		te_snprintf(why, sizeof(why),
			    "volatile uncorrectable ECC errors %llu",
			    g->ecc_uncorrected);
		problem(probs, len, why);
		te_snprintf(value, vlen, "ECC %llu", g->ecc_uncorrected);
	}
	if (!query_failed(g->retired_rc, "retired pages", probs, len) &&
	    g->retired_pending) {
		problem(probs, len, "retired pages pending");
		if (!value[0])
			te_strlcpy(value, "retired pending", vlen);
	}
	if (!query_failed(g->remap_rc, "remapped rows", probs, len)) {
		if (g->remap_failed) {
			problem(probs, len, "remapped rows failed");
			if (!value[0])
				te_strlcpy(value, "remap failed", vlen);
		}
		if (g->remap_pending) {
			problem(probs, len, "remapped rows pending");
			if (!value[0])
				te_strlcpy(value, "remap pending", vlen);
		}
	}
	gpu_links(g, probs, len, value, vlen);
	gpu_procs(g, allowed_uid, probs, len, value, vlen);
}

/* A healthy GPU's NVLink words: "; nvlink 18 of 18 up", or "". */
static const char *links_text(const struct te_health_gpu *g, char *buf,
			      size_t len)
{
	if (!g->links_want)
		return "";
	te_snprintf(buf, len, "; nvlink %u of %u up", g->n_links_up,
		    g->n_links_seen);
	return buf;
}

void te_health_gpu_results(const struct te_health_gpu *g, int n,
			   unsigned visible, long allowed_uid,
			   struct te_health_set *out)
{
	int i;

	for (i = 0; i < n; i++) {
		char dev[24], probs[PROBLEMS_MAX] = "", value[32] = "",
			      links[48];

		te_snprintf(dev, sizeof(dev), "gpu %u", g[i].index);
		if (g[i].index >= visible) {
			te_health_add(out, "gpu", dev, "missing", TE_HV_FAIL,
				      "%s not found (%u GPUs visible)", dev,
				      visible);
			continue;
		}
		if (g[i].handle_rc) {
			te_health_add(out, "gpu", dev, "", TE_HV_FAIL,
				      "%s unreadable (%s, %d)", dev,
				      te_health_nvml_rc_text(g[i].handle_rc),
				      g[i].handle_rc);
			continue;
		}
		gpu_problems(&g[i], allowed_uid, probs, sizeof(probs), value,
			     sizeof(value));
		if (probs[0])
			te_health_add(out, "gpu", dev, value[0] ? value : "?",
				      TE_HV_FAIL, "%s %s", dev, probs);
		else
			te_health_add(out, "gpu", dev, "ok", TE_HV_PASS,
				      "%s healthy (ECC, retired pages, "
				      "remapped rows%s%s)",
				      dev,
				      allowed_uid == TE_HEALTH_NO_JOB
					      ? "; processes not checked: no "
						"job given"
					      : ", processes",
				      links_text(&g[i], links, sizeof(links)));
	}
}

/* The real uid from a status text ("Uid:\tR\tE\tS\tF"). */
static long status_uid(const char *text)
{
	const char *p = strstr(text, "\nUid:");
	uint64_t v = 0;
	char num[16];
	size_t n = 0;

	if (!p)
		return -1;
	for (p += 5; *p == '\t' || *p == ' '; p++)
		;
	while (*p >= '0' && *p <= '9' && n + 1 < sizeof(num))
		num[n++] = *p++;
	num[n] = '\0';
	if (te_parse_u64(num, 4294967295u, &v) < 0)
		return -1;
	return (long)v;
}

int te_health_proc_owner(const char *proc, unsigned pid, long *uid, char *comm,
			 size_t len)
{
	char path[PATH_MAX], buf[4096];
	size_t l;

	*uid = -1;
	te_strlcpy(comm, "?", len);
	if (te_snprintf(path, sizeof(path), "%s/%u/status", proc, pid) < 0 ||
	    te_read_small(path, buf, sizeof(buf), 0) < 0)
		return -1;
	*uid = status_uid(buf);
	if (te_snprintf(path, sizeof(path), "%s/%u/comm", proc, pid) == 0 &&
	    te_read_small(path, buf, 64, 0) >= 0) {
		l = strlen(buf);
		if (l && buf[l - 1] == '\n')
			buf[--l] = '\0';
		te_clean_text(comm, len, buf, len - 1);
	}
	return *uid < 0 ? -1 : 0;
}

int te_health_proc_is_mps(const char *proc, unsigned pid)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t l;

	if (te_snprintf(path, sizeof(path), "%s/%u/exe", proc, pid) < 0)
		return 0;
	l = readlink(path, target, sizeof(target) - 1);
	if (l <= 0)
		return 0;
	target[l] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	/* through the link itself: the file the process runs, even if its
	 * path was renamed since ("... (deleted)" is not the name) */
	if (strcmp(base, MPS_SERVER) || stat(path, &st) < 0)
		return 0;
	return S_ISREG(st.st_mode) && st.st_uid == 0 &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}
