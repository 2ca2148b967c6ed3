/* SPDX-License-Identifier: GPL-2.0-or-later */
/* slurmstepd, per rank (task_init, as the job's user): the environment the
 * hang report's view of NCCL needs (pmix/stacks_nccl.c). NCCL RAS listens
 * at NCCL_RAS_ADDR (default localhost:28028, shared by every job of the
 * user on the node: one step's query could reach another's processes);
 * each step gets its own loopback address. PyTorch's flight recorder
 * answers a byte in its pipe with a dump only when the pipe's variable is
 * set; trainenv points it into the job's dump directory. PyTorch makes the
 * pipe with mkfifo and fails the process group when it cannot: the
 * variable is set only where a FIFO can be made there, and never in a
 * container, whose files are not the node's. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container/apptainer_env.h"
#include "hang/ras.h"
#include "launch/rankenv.h"
#include "report/dumpdir.h"
#include "state.h"
#include "stepd_container.h"
#include "stepd_hangenv.h"
#include "stepd_step.h"
#include "util/strutil.h"

struct hang_vars {
	const char *inherited; /* TE_HANG_VARS_ENV of an enclosing step */
	char set[256];	       /* the names set here */
	char owned[256];       /* and with their values' hashes, for the
				  steps inside this one (te_owned_append) */
};

/* The variable still holds what an enclosing step's trainenv set (a value
 * the job set since, `export NCCL_RAS_ADDR=...; srun ...` inside the
 * step, is the job's own). */
static int inherited_value(spank_t sp, const struct hang_vars *hv,
			   const char *name)
{
	return hv->inherited &&
	       te_owned_is(hv->inherited, name, te_stepd_getenv(sp, name));
}

/* name=value unless the job set it. */
static void set_var(spank_t sp, struct hang_vars *hv, const char *name,
		    const char *value)
{
	if (spank_setenv(sp, name, value, inherited_value(sp, hv, name)) !=
	    ESPANK_SUCCESS)
		return;
	te_appendf(hv->set, sizeof(hv->set), "%s%s", hv->set[0] ? "," : "",
		   name);
	te_owned_append(hv->owned, sizeof(hv->owned), name, value);
}

/* What an enclosing step's trainenv set and this step does not (a step in
 * a container, or without a dump directory): gone, never the job's own
 * (a pipe at a path of the node's, in a container, would fail PyTorch's
 * process group). */
static void unset_inherited(spank_t sp, const struct hang_vars *hv)
{
	static const char *const names[] = { "NCCL_RAS_ADDR",
					     "TORCH_NCCL_DEBUG_INFO_PIPE_FILE",
					     "TORCH_FR_DUMP_TEMP_FILE" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!te_name_in_list(hv->set, names[i]) &&
		    inherited_value(sp, hv, names[i]))
			spank_unsetenv(sp, names[i]);
}

/* A FIFO can be made in dir (PyTorch's mkfifo must not fail there). */
static int fifo_ok(const char *dir)
{
	char probe[TE_DUMP_DIR_PATH_MAX + 48];

	if (te_snprintf(probe, sizeof(probe), "%s/.fr_probe.%ld", dir,
			(long)getpid()) < 0)
		return 0;
	unlink(probe);
	if (mkfifo(probe, 0600) < 0)
		return 0;
	unlink(probe);
	return 1;
}

void te_stepd_hang_env(spank_t sp, int pyxis, const char *dir)
{
	char addr[64], val[TE_DUMP_DIR_PATH_MAX + 32];
	char inh[TE_VALUE_SLOT_SIZE];
	const char *temp, *argv0 = te_step.argc > 0 ? te_step.argv[0] : NULL;
	const char *v = te_stepd_getenv(sp, TE_HANG_VARS_ENV);
	struct hang_vars hv = { .inherited = v ? inh : NULL };
	int contained = pyxis || te_stepd_oci_step(sp) ||
			te_appt_command(argv0);

	if (v) /* the getenv ring's buffer is reused */
		te_strlcpy(inh, v, sizeof(inh));

	if (te_ras_addr_pick(te_step.job_id, te_step.step_id, 0, 0, addr,
			     sizeof(addr)) == 0)
		set_var(sp, &hv, "NCCL_RAS_ADDR", addr);
	if (!contained && dir[0] && fifo_ok(dir)) {
		/* one pipe a step and rank: two steps of the job with a
		 * rank of the same number on a node (a farm of one-rank
		 * steps) must not share one (PyTorch unlinks and makes it:
		 * made twice, the second fails its process group) */
		if (te_snprintf(val, sizeof(val), "%s/%u.fr_pipe_", dir,
				te_step.step_id) == 0)
			set_var(sp, &hv, "TORCH_NCCL_DEBUG_INFO_PIPE_FILE",
				val);
		/* the dump where the job's (or export_dump_dir's) older
		 * variable says, for PyTorch releases that read the newer */
		temp = te_stepd_getenv(sp, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE");
		if (temp && temp[0])
			te_strlcpy(val, temp, sizeof(val));
		else if (te_snprintf(val, sizeof(val), "%s/fr_", dir) < 0)
			val[0] = '\0';
		if (val[0]) {
			set_var(sp, &hv, "TORCH_NCCL_DEBUG_INFO_TEMP_FILE",
				val);
			set_var(sp, &hv, "TORCH_FR_DUMP_TEMP_FILE", val);
		}
	}
	unset_inherited(sp, &hv);
	if (hv.owned[0])
		spank_setenv(sp, TE_HANG_VARS_ENV, hv.owned, 1);
	else
		spank_unsetenv(sp, TE_HANG_VARS_ENV);
}
