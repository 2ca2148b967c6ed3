/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GPU pre-flight (--train-preflight): the pipe protocol between the
 * checker program trainenv-preflight (run by the plugin's task_init, as
 * the job user, for the rank's GPU) and the plugin, and the decisions the
 * plugin takes from its result. Pure code: unit-tested and fuzzed.
 *
 * The program writes, on its stdout (a pipe), nothing but:
 *
 *   TRAINENV-PREFLIGHT 1
 *   KEY=VALUE            keys below, each at most once
 *   END
 *
 * Keys:
 *   RESULT=ok|fail|unavailable   required. unavailable: no usable CUDA
 *                        runtime or driver on this node (nothing checked)
 *   GPU=BUSID            the GPU checked ("0000:3b:00.0")
 *   LIBRARY=PATH         the CUDA runtime library that was loaded
 *   RUNTIME=N            cudaRuntimeGetVersion() (13000), 0 unknown
 *   DRIVER=N             cudaDriverGetVersion(), 0 none
 *   FREE=N, TOTAL=N      cudaMemGetInfo() in bytes (ok: required)
 *   CALL=NAME            the call that failed (fail, unavailable: required)
 *   CODE=N               its cudaError_t, -1 for none (dlopen)
 *   ERROR=TEXT           cudaGetErrorString() or what went wrong
 *                        (fail, unavailable: required)
 *   MS=N                 how long the check took
 *
 * The reader treats the output as hostile: one bounded buffer, printable
 * ASCII values, known keys only, a check per key, the END line required
 * (a program that died half-way is not believed). */
#ifndef TE_PREFLIGHT_PROTO_H
#define TE_PREFLIGHT_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define TE_PF_HEADER "TRAINENV-PREFLIGHT 1"
#define TE_PF_OUT_MAX 4096 /* whole output */
#define TE_PF_BUSID_MAX 20 /* "dddddddd:bb:dd.f" */
#define TE_PF_CALL_MAX 48
#define TE_PF_ERROR_MAX 300
#define TE_PF_PATH_MAX 512
#define TE_PF_LINE_MAX 900 /* a message line */
#define TE_PF_ENV_MAX 256  /* TRAINENV_PREFLIGHT */
#define TE_PF_TIMEOUT_S 60 /* the plugin kills it after this */
#define TE_PF_ENV "TRAINENV_PREFLIGHT"

enum te_pf_status {
	TE_PF_OK,
	TE_PF_FAILED,
	TE_PF_UNAVAILABLE
};

struct te_pf_result {
	enum te_pf_status status;
	char gpu[TE_PF_BUSID_MAX];
	char library[TE_PF_PATH_MAX];
	int runtime, driver;
	uint64_t free, total;
	int have_mem;
	char call[TE_PF_CALL_MAX];
	int code;
	char error[TE_PF_ERROR_MAX + 1];
	unsigned ms;
};

/* 1 when s is a PCI bus id as CUDA and hwloc write it: hex domain (1-8
 * digits), ':', 2 hex digits, ':', 2 hex digits, '.', 1 digit 0-7. */
int te_pf_busid_valid(const char *s);

/* Parses the program's whole output [buf, buf+len). 0 and r filled, or
 * -1 with one line in err. */
int te_pf_parse(const char *buf, size_t len, struct te_pf_result *r, char *err,
		size_t errlen);

/* Program side: the wire form of r into buf (text cleaned and cut).
 * 0, or -1 when buf is too small or r cannot be written. */
int te_pf_format(const struct te_pf_result *r, char *buf, size_t len);

/* Whether a failed CUDA call means "this node has no usable CUDA" (no
 * runtime, no driver, a driver too old, no device: nothing to check) or
 * a real failure of the rank's GPU. call "dlopen"/"dlsym": the runtime
 * could not be loaded. */
enum te_pf_status te_pf_classify(const char *call, int code);

/* A CUDA version code as text (12040 -> "12.4", 13000 -> "13.0"); "none"
 * for 0 or less. */
void te_pf_version_text(int code, char *buf, size_t len);

/* ---------------------------------------------------------------- decisions */

struct te_pf_input {
	uint32_t rank, local_id; /* global and node-local rank */
	const char *node;
	int verbose; /* preflight=verbose */
	/* the rank's GPU: -1 it could not be told (map_err says why),
	 * 0 none (no GPU of the step on this node), 1 busid */
	int has_gpu;
	const char *busid;
	const char *map_err;
	/* the program: spawn_err set when it could not run, was killed or
	 * its output is not believable; else result */
	const char *spawn_err;
	const struct te_pf_result *result;
};

enum te_pf_action {
	TE_PF_PASS,    /* the GPU works: env set, line when verbose */
	TE_PF_FAIL,    /* the task fails with line; why goes to rank 0 */
	TE_PF_NOTHING, /* nothing to check here: the task runs */
};

struct te_pf_outcome {
	enum te_pf_action action;
	char line[TE_PF_LINE_MAX]; /* without "trainenv: " */
	int print;		   /* line to srun's output (stderr);
					   else only the node's log */
	char env[TE_PF_ENV_MAX];   /* PASS: TRAINENV_PREFLIGHT */
	char why[TE_PF_LINE_MAX];  /* FAIL: for the other ranks */
};

/* Before running the program: 1 when it must run (the rank has a GPU);
 * else 0 and out holds the outcome. */
int te_pf_need_run(const struct te_pf_input *in, struct te_pf_outcome *out);

/* What the task does with the program's result (or spawn error). */
void te_pf_decide(const struct te_pf_input *in, struct te_pf_outcome *out);

#endif
