/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The GPU pre-flight without a GPU: the pipe protocol's parser (strict,
 * bounded, hostile input), the classification of CUDA errors, the
 * decisions the task takes from a result, and the real trainenv-preflight
 * program run against a stand-in CUDA runtime (fake_cudart.c) that works
 * or fails one chosen call. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch/preflight_proto.h"
#include "util/strutil.h"
#include "tap.h"

static int parse(const char *text, struct te_pf_result *r, char *err,
		 size_t errlen)
{
	return te_pf_parse(text, strlen(text), r, err, errlen);
}

#define OK_TEXT                                                          \
	"TRAINENV-PREFLIGHT 1\nRESULT=ok\nGPU=0000:3b:00.0\n"            \
	"LIBRARY=/usr/local/cuda/lib64/libcudart.so.13\nRUNTIME=13000\n" \
	"DRIVER=13010\nFREE=85000000000\nTOTAL=85899345920\nMS=412\nEND\n"

static void test_busid(void)
{
	ok(te_pf_busid_valid("0000:3b:00.0"), "bus id 0000:3b:00.0");
	ok(te_pf_busid_valid("00000001:3B:1f.7"), "8-digit domain, upper case");
	ok(te_pf_busid_valid("0:81:00.0"), "short domain");
	ok(!te_pf_busid_valid("0000:3b:00.8"), "function 8 refused");
	ok(!te_pf_busid_valid("0000:3b:00"), "no function refused");
	ok(!te_pf_busid_valid("000000000:3b:00.0"), "9-digit domain refused");
	ok(!te_pf_busid_valid("0000:3b:00.0 "), "trailing blank refused");
	ok(!te_pf_busid_valid("0000:3g:00.0"), "non-hex refused");
	ok(!te_pf_busid_valid(""), "empty refused");
	ok(!te_pf_busid_valid(NULL), "NULL refused");
	ok(!te_pf_busid_valid("GPU-1234"), "a UUID is no bus id");
}

static void test_parse(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "", "empty output" },
		{ "TRAINENV-PREFLIGHT 2\nRESULT=ok\nEND\n", "other version" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nGPU=0000:3b:00.0\nFREE=1\n"
		  "TOTAL=2\n",
		  "no END (stopped half-way)" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nGPU=0000:3b:00.0\nFREE=1\n"
		  "TOTAL=2\nEND",
		  "END not terminated" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nGPU=0000:3b:00.0\nFREE=1\n"
		  "TOTAL=2\nEND\nRESULT=fail\n",
		  "text after END" },
		{ "TRAINENV-PREFLIGHT 1\nEND\n", "no RESULT" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=maybe\nEND\n",
		  "unknown RESULT" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nEND\n",
		  "ok without memory" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nGPU=0000:3b:00.0\nFREE=3\n"
		  "TOTAL=2\nEND\n",
		  "FREE above TOTAL" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=fail\nCALL=cudaMalloc\nEND\n",
		  "fail without ERROR" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=unavailable\nERROR=x\nEND\n",
		  "unavailable without CALL" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nRESULT=ok\nEND\n",
		  "a key twice" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nSHELL=/bin/sh\nEND\n",
		  "unknown key" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nno equals sign\nEND\n",
		  "a line that is not KEY=VALUE" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=fail\nCALL=cuda Malloc\n"
		  "ERROR=x\nEND\n",
		  "a blank in CALL" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=fail\nCALL=cudaMalloc\n"
		  "ERROR=\nEND\n",
		  "empty ERROR" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=fail\nCALL=cudaMalloc\n"
		  "ERROR=a\033[31mred\nEND\n",
		  "an escape sequence in ERROR" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nGPU=0000:3b:00.0\n"
		  "FREE=-1\nTOTAL=2\nEND\n",
		  "a negative FREE" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nGPU=0000:3b:00.0\n"
		  "FREE=1\nTOTAL=99999999999999999999\nEND\n",
		  "a huge TOTAL" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=fail\nCALL=x\nCODE=-2\n"
		  "ERROR=x\nEND\n",
		  "CODE below -1" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=fail\nCALL=x\nCODE=0x2\n"
		  "ERROR=x\nEND\n",
		  "a hex CODE" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nGPU=../../etc\nEND\n",
		  "a GPU that is no bus id" },
		{ "TRAINENV-PREFLIGHT 1\nRESULT=ok\nLIBRARY=libcudart.so\nEND\n",
		  "a relative LIBRARY" },
		{ "TRAINENV-PREFLIGHT 1\r\nRESULT=ok\nEND\n",
		  "CR in the header" },
	};
	struct te_pf_result r;
	char err[256], big[TE_PF_OUT_MAX + 100], *p;
	size_t i;

	is_int(parse(OK_TEXT, &r, err, sizeof(err)), 0, "a success parses");
	ok(r.status == TE_PF_OK, "RESULT=ok");
	is_str(r.gpu, "0000:3b:00.0", "GPU");
	is_int(r.runtime, 13000, "RUNTIME");
	is_int(r.driver, 13010, "DRIVER");
	ok(r.free == 85000000000ULL && r.total == 85899345920ULL && r.have_mem,
	   "FREE and TOTAL");
	is_int(r.ms, 412, "MS");
	is_str(r.library, "/usr/local/cuda/lib64/libcudart.so.13", "LIBRARY");
	is_int(r.code, -1, "no CODE: -1");

	is_int(parse("TRAINENV-PREFLIGHT 1\nRESULT=fail\nGPU=0000:3b:00.0\n"
		     "CALL=cudaMalloc\nCODE=2\nERROR=out of memory\nEND\n",
		     &r, err, sizeof(err)),
	       0, "a failure parses");
	ok(r.status == TE_PF_FAILED && !strcmp(r.call, "cudaMalloc") &&
		   r.code == 2 && !strcmp(r.error, "out of memory"),
	   "failure: CALL, CODE, ERROR");
	is_int(parse("TRAINENV-PREFLIGHT 1\nRESULT=unavailable\nCALL=dlopen\n"
		     "CODE=-1\nERROR=no libcudart\nEND\n",
		     &r, err, sizeof(err)),
	       0, "unavailable parses");
	ok(r.status == TE_PF_UNAVAILABLE, "RESULT=unavailable");

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		is_int(parse(bad[i].text, &r, err, sizeof(err)), -1,
		       "refused: %s", bad[i].why);
		ok(err[0] != '\0', "  with a reason (%s)", err);
	}
	/* an embedded NUL */
	is_int(te_pf_parse("TRAINENV-PREFLIGHT 1\nRESULT=ok\0\nEND\n", 33, &r,
			   err, sizeof(err)),
	       -1, "refused: a NUL byte");
	/* too long as a whole, and one line too long */
	memset(big, 'x', sizeof(big));
	is_int(te_pf_parse(big, sizeof(big), &r, err, sizeof(err)), -1,
	       "refused: output over %d bytes", TE_PF_OUT_MAX);
	p = big;
	p += sprintf(p, "TRAINENV-PREFLIGHT 1\nERROR=");
	memset(p, 'e', 800);
	strcpy(p + 800, "\nEND\n");
	is_int(parse(big, &r, err, sizeof(err)), -1,
	       "refused: an 800-character line");
}

static void test_format(void)
{
	struct te_pf_result r, back;
	char buf[TE_PF_OUT_MAX], err[256];

	memset(&r, 0, sizeof(r));
	r.status = TE_PF_FAILED;
	strcpy(r.gpu, "0000:81:00.0");
	strcpy(r.library, "/usr/lib/libcudart.so");
	r.runtime = 12040;
	r.driver = 12080;
	strcpy(r.call, "cudaMemset");
	r.code = 700;
	strcpy(r.error, "an illegal\nmemory access\033");
	r.ms = 7;
	is_int(te_pf_format(&r, buf, sizeof(buf)), 0, "format a failure");
	is_int(te_pf_parse(buf, strlen(buf), &back, err, sizeof(err)), 0,
	       "what the program writes parses (%s)", err);
	is_str(back.error, "an illegal?memory access?",
	       "control characters in ERROR become '?'");
	ok(back.status == TE_PF_FAILED && back.code == 700 &&
		   !strcmp(back.call, "cudaMemset") && back.runtime == 12040,
	   "round trip keeps call, code, versions");
	strcpy(r.call, "bad call");
	is_int(te_pf_format(&r, buf, sizeof(buf)), -1,
	       "format refuses a bad call name");
	is_int(te_pf_format(&r, buf, 16), -1, "format refuses a small buffer");
}

static void test_classify(void)
{
	ok(te_pf_classify("dlopen", -1) == TE_PF_UNAVAILABLE,
	   "no runtime: unavailable");
	ok(te_pf_classify("dlsym", -1) == TE_PF_UNAVAILABLE,
	   "an incomplete runtime: unavailable");
	ok(te_pf_classify("cudaDeviceGetByPCIBusId", 35) == TE_PF_UNAVAILABLE,
	   "insufficient driver (35): unavailable");
	ok(te_pf_classify("cudaDeviceGetByPCIBusId", 100) == TE_PF_UNAVAILABLE,
	   "no device (100): unavailable");
	ok(te_pf_classify("cudaSetDevice", 34) == TE_PF_UNAVAILABLE,
	   "stub libcuda (34): unavailable");
	ok(te_pf_classify("cudaFree", 803) == TE_PF_UNAVAILABLE,
	   "driver/kernel module mismatch (803): unavailable");
	ok(te_pf_classify("cudaMalloc", 2) == TE_PF_FAILED,
	   "out of memory (2): a failure");
	ok(te_pf_classify("cudaDeviceGetByPCIBusId", 101) == TE_PF_FAILED,
	   "the rank's GPU invisible to CUDA (101): a failure");
	ok(te_pf_classify("cudaDeviceSynchronize", 700) == TE_PF_FAILED,
	   "illegal address (700): a failure");
	ok(te_pf_classify("cudaFree", 46) == TE_PF_FAILED,
	   "devices busy/unavailable (46): a failure");
}

static void test_decide(void)
{
	struct te_pf_input in = { .rank = 3,
				  .local_id = 1,
				  .node = "n2",
				  .has_gpu = 1,
				  .busid = "0000:3b:00.0" };
	struct te_pf_outcome o;
	struct te_pf_result r;
	char err[64];

	is_int(te_pf_need_run(&in, &o), 1, "a rank with a GPU runs the check");
	in.has_gpu = 0;
	is_int(te_pf_need_run(&in, &o), 0,
	       "a rank without GPU does not run it");
	ok(o.action == TE_PF_NOTHING, "  nothing to check: the task runs");
	like(o.line,
	     "preflight: nothing to check on node n2: the step has no GPU there",
	     "  says so");
	is_int(o.print, 0, "  rank 3: only in the node's log");
	in.rank = 0;
	in.local_id = 0;
	te_pf_need_run(&in, &o);
	is_int(o.print, 1, "  rank 0: in srun's output (once for the step)");
	in.has_gpu = -1;
	in.map_err = "cannot read topology file x";
	te_pf_need_run(&in, &o);
	ok(o.action == TE_PF_NOTHING && o.print,
	   "unknown GPU: a warning from the node's first task");
	like(o.line, "warning: preflight: nothing checked for rank 0 (node n2)",
	     "  naming the rank");
	in.local_id = 1;
	te_pf_need_run(&in, &o);
	is_int(o.print, 0, "  the node's other tasks: log only");

	in.rank = 3;
	in.has_gpu = 1;
	parse(OK_TEXT, &r, err, sizeof(err));
	in.result = &r;
	te_pf_decide(&in, &o);
	ok(o.action == TE_PF_PASS, "a working GPU passes");
	is_str(o.env,
	       "gpu=0000:3b:00.0 free=85000000000 total=85899345920 "
	       "runtime=13000 driver=13010",
	       "  TRAINENV_PREFLIGHT");
	is_int(o.print, 0, "  silent without verbose");
	is_str(o.line,
	       "preflight: rank 3 (node n2) GPU 0000:3b:00.0: ok, "
	       "79.2 GiB free of 80.0 GiB, CUDA runtime 13.0, driver 13.1 "
	       "(412 ms)",
	       "  the verbose line");
	in.verbose = 1;
	te_pf_decide(&in, &o);
	is_int(o.print, 1, "  printed with verbose");

	parse("TRAINENV-PREFLIGHT 1\nRESULT=fail\nGPU=0000:3b:00.0\n"
	      "CALL=cudaMalloc\nCODE=2\nERROR=out of memory\nEND\n",
	      &r, err, sizeof(err));
	te_pf_decide(&in, &o);
	ok(o.action == TE_PF_FAIL && o.print, "a failing GPU fails the task");
	is_str(o.line,
	       "preflight: rank 3 (node n2) GPU 0000:3b:00.0: "
	       "cudaMalloc: out of memory",
	       "  naming rank, node, GPU, call, error");
	is_str(o.why, "preflight: GPU 0000:3b:00.0: cudaMalloc: out of memory",
	       "  and what the other ranks hear");

	parse("TRAINENV-PREFLIGHT 1\nRESULT=unavailable\nRUNTIME=13000\n"
	      "CALL=cudaDeviceGetByPCIBusId\nCODE=35\nERROR=CUDA driver "
	      "version is insufficient for CUDA runtime version\nEND\n",
	      &r, err, sizeof(err));
	te_pf_decide(&in, &o);
	ok(o.action == TE_PF_NOTHING && !o.print,
	   "no driver: nothing to check, rank 3 only logs it");
	like(o.line,
	     "nothing to check on node n2: no usable CUDA runtime or "
	     "driver (cudaDeviceGetByPCIBusId: CUDA driver version is "
	     "insufficient",
	     "  saying why");
	in.rank = 0;
	te_pf_decide(&in, &o);
	is_int(o.print, 1, "  rank 0 prints it");

	in.rank = 5;
	in.result = NULL;
	in.spawn_err = "no answer within 60 s: the check was killed";
	te_pf_decide(&in, &o);
	ok(o.action == TE_PF_FAIL, "a hung check fails the task");
	like(o.line, "GPU 0000:3b:00.0: no answer within 60 s", "  saying so");
	in.spawn_err = "bad\033[2Jtext\n";
	te_pf_decide(&in, &o);
	ok(strchr(o.line, '\033') == NULL && strchr(o.line, '\n') == NULL,
	   "  control characters never reach the message");
}

/* ---------------------------------------------------------------- program */

static char fakedir[256];

/* Runs trainenv-preflight with the stand-in runtime first in
 * LD_LIBRARY_PATH and extra environment; its stdout into out. */
static int run_program(const char *busid, const char *extra_env,
		       const char *test_fail, char *out, size_t len)
{
	char cmd[1024];
	FILE *f;
	size_t n;
	int st;

	te_snprintf(cmd, sizeof(cmd),
		    "env LD_LIBRARY_PATH=%s %s %s/"
		    "trainenv-preflight --gpu '%s'%s%s%s 2>/dev/null",
		    fakedir, extra_env, TE_BUILDDIR, busid,
		    test_fail ? " --test-fail '" : "",
		    test_fail ? test_fail : "", test_fail ? "'" : "");
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_program(void)
{
	char out[TE_PF_OUT_MAX + 1], err[256], lib[512];
	struct te_pf_result r;

	te_snprintf(lib, sizeof(lib), "%s/tests/unit/.libs/libfakecudart.so",
		    TE_BUILDDIR);
	te_snprintf(fakedir, sizeof(fakedir), "/tmp/te-fakecudart.%ld",
		    (long)getpid());
	if (access(lib, R_OK) < 0 ||
	    access(TE_BUILDDIR "/trainenv-preflight", X_OK) < 0) {
		tap_skip(
			"the stand-in runtime or trainenv-preflight is not built");
		return;
	}
	mkdir(fakedir, 0700);
	{
		char link[300];

		te_snprintf(link, sizeof(link), "%s/libcudart.so", fakedir);
		unlink(link);
		ok(symlink(lib, link) == 0, "stand-in libcudart.so in %s",
		   fakedir);
	}

	is_int(run_program("0000:3b:00.0", "", NULL, out, sizeof(out)), 0,
	       "the program runs and exits 0");
	is_int(te_pf_parse(out, strlen(out), &r, err, sizeof(err)), 0,
	       "its output parses (%s)", err);
	ok(r.status == TE_PF_OK && r.total == 80ULL << 30 && r.free < r.total,
	   "a working GPU: RESULT=ok with free and total memory");
	ok(r.runtime == 12040 && r.driver == 12080,
	   "runtime and driver versions");
	like(r.library, "te-fakecudart", "LIBRARY names what was loaded");

	run_program("0000:3b:00.0", "TE_FAKE_CUDART_FAIL=cudaMalloc:2", NULL,
		    out, sizeof(out));
	te_pf_parse(out, strlen(out), &r, err, sizeof(err));
	ok(r.status == TE_PF_FAILED && !strcmp(r.call, "cudaMalloc") &&
		   r.code == 2 && !strcmp(r.error, "out of memory"),
	   "cudaMalloc fails: RESULT=fail, the call and cudaGetErrorString");
	run_program("0000:3b:00.0",
		    "TE_FAKE_CUDART_FAIL=cudaDeviceSynchronize:700", NULL, out,
		    sizeof(out));
	te_pf_parse(out, strlen(out), &r, err, sizeof(err));
	ok(r.status == TE_PF_FAILED && !strcmp(r.call, "cudaDeviceSynchronize"),
	   "an error seen at synchronize: its call named");
	run_program("0000:3b:00.0",
		    "TE_FAKE_CUDART_FAIL=cudaDeviceGetByPCIBusId:100", NULL,
		    out, sizeof(out));
	te_pf_parse(out, strlen(out), &r, err, sizeof(err));
	ok(r.status == TE_PF_UNAVAILABLE && r.code == 100,
	   "no CUDA device: RESULT=unavailable");
	run_program("0000:3b:00.0", "TE_FAKE_CUDART_NOISE=1", NULL, out,
		    sizeof(out));
	is_int(te_pf_parse(out, strlen(out), &r, err, sizeof(err)), 0,
	       "a runtime that prints on stdout does not garble the result");
	run_program("0000:3b:00.0", "", "out of memory", out, sizeof(out));
	te_pf_parse(out, strlen(out), &r, err, sizeof(err));
	ok(r.status == TE_PF_FAILED && !strcmp(r.call, "cudaMalloc") &&
		   !strcmp(r.error, "out of memory"),
	   "--test-fail reports cudaMalloc failing with the text");
	is_int(run_program("not-a-bus-id", "", NULL, out, sizeof(out)), 2,
	       "a bad bus id: usage, exit 2");
	is_str(out, "", "  and nothing on stdout");
	{
		char link[300];

		te_snprintf(link, sizeof(link), "%s/libcudart.so", fakedir);
		unlink(link);
		rmdir(fakedir);
	}
}

int main(void)
{
	test_busid();
	test_parse();
	test_format();
	test_classify();
	test_decide();
	test_program();
	return tap_done();
}
