/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Slurm's C API as the plugin uses it, one shape for every release from
 * 22.05 to 26.05: the only place that knows how the releases differ.
 *
 * A SPANK plugin is built once per Slurm release (Slurm loads it only in
 * the major.minor it was built for), from this one source. Each difference
 * below names the release that brought it. The plugin calls the te_slurm_*
 * forms and never the raw functions whose shape changed; configure builds
 * with -Werror=implicit-function-declaration, so a function a release
 * removed fails the build, never the plugin's load (it is linked with
 * -z now: one missing symbol and no process could load it).
 *
 * tests/unit/test_slurm_releases.sh builds the plugin against every
 * release's headers and checks what it imports against each release. */
#ifndef TE_SLURM_COMPAT_H
#define TE_SLURM_COMPAT_H

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurm_version.h>

#define TE_SLURM_AT_LEAST(major, minor) \
	(SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(major, minor, 0))

/* 23.11: hostlist_t is the struct itself, handled by pointer; before, it
 * was already the pointer. */
#if TE_SLURM_AT_LEAST(23, 11)
typedef hostlist_t *te_hostlist_t;
#else
typedef hostlist_t te_hostlist_t;
#endif

/* 24.11 removed slurm_get_errno(). It only ever returned errno, which
 * every release's API calls set. */
#define te_slurm_errno() (errno)

/* A job's or step's id. 25.11 added the sluid in front of the fields all
 * releases have (zero: not known, look the job up by its number). */
static inline slurm_step_id_t te_slurm_step_id(uint32_t job, uint32_t step)
{
	slurm_step_id_t id;

	memset(&id, 0, sizeof(id));
	id.job_id = job;
	id.step_id = step;
	id.step_het_comp = NO_VAL;
	return id;
}

/* 25.11: slurm_signal_job_step() takes the step's id by pointer. */
static inline int te_slurm_signal_step(uint32_t job, uint32_t step,
				       uint16_t sig)
{
#if TE_SLURM_AT_LEAST(25, 11)
	slurm_step_id_t id = te_slurm_step_id(job, step);

	return (slurm_signal_job_step)(&id, sig);
#else
	return (slurm_signal_job_step)(job, step, sig);
#endif
}

/* 26.05: slurm_load_job() and slurm_requeue() take a slurm_step_id_t (the
 * parentheses keep the SLURM_BACKWARD_COMPAT macros of the same names out
 * of the way, should a site's build define it). */
static inline int te_slurm_load_job(job_info_msg_t **msg, uint32_t job,
				    uint16_t show_flags)
{
#if TE_SLURM_AT_LEAST(26, 5)
	return (slurm_load_job)(msg, te_slurm_step_id(job, NO_VAL), show_flags);
#else
	return (slurm_load_job)(msg, job, show_flags);
#endif
}

static inline int te_slurm_requeue(uint32_t job, uint32_t flags)
{
#if TE_SLURM_AT_LEAST(26, 5)
	return (slurm_requeue)(te_slurm_step_id(job, NO_VAL), flags);
#else
	return (slurm_requeue)(job, flags);
#endif
}

/* 25.11: a job update names its job in job_desc_msg_t.step_id, not job_id. */
static inline void te_slurm_job_desc_set_job(job_desc_msg_t *d, uint32_t job)
{
#if TE_SLURM_AT_LEAST(25, 11)
	d->step_id.job_id = job;
#else
	d->job_id = job;
#endif
}

/* 25.11: slurm_get_job_steps() takes the step's id by pointer. */
static inline int te_slurm_load_step(uint32_t job, uint32_t step,
				     job_step_info_response_msg_t **resp)
{
#if TE_SLURM_AT_LEAST(25, 11)
	slurm_step_id_t id = te_slurm_step_id(job, step);

	return (slurm_get_job_steps)(&id, resp, SHOW_ALL);
#else
	return (slurm_get_job_steps)(0, job, step, resp, SHOW_ALL);
#endif
}

#endif
