/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NVML (libnvidia-ml.so.1) loaded with dlopen at run time, as the CUDA
 * runtime is (cudart_load.h): trainenv never links it, and a node
 * without the NVIDIA driver keeps working. What the GPU health checks
 * read. */
#ifndef TE_NVML_LOAD_H
#define TE_NVML_LOAD_H

#include <stddef.h>

#include "health/health.h"

/* The GPU check (a te_health_check_fn's work): loads NVML, reads the
 * GPUs gpus[0..ngpus) (NVML indices; ngpus 0: every GPU NVML shows) and
 * adds their results to out through te_health_gpu_results. No NVML
 * library, or no driver loaded: with ngpus 0 not applicable, else a
 * failure; a library that loads but is not NVML, or a failing call:
 * one failure saying which. allowed_uid: the uid whose processes are the
 * job's. expect: the GPUs the site says the node has (health_gpu_count;
 * 0: not said): fewer visible, or no NVML or driver, fails even without
 * job GPUs. lib: the site's library (health_nvml), or NULL or "": the
 * first libnvidia-ml.so.1 of /usr/lib/x86_64-linux-gnu,
 * /usr/lib/aarch64-linux-gnu, /usr/lib64, /usr/lib; never through
 * LD_LIBRARY_PATH; loaded only when it and its directory belong to root
 * (or the caller) and no one else may write them. Runs in the runner's
 * child: it may hang in the driver. nvlink: the NVLink links each GPU
 * must have up (health_nvlink; 0: not read). pci (NULL: not read): the
 * PCI address of each GPU NVML shows, at most 64, their number in *npci
 * (0 without NVML), to name the GPU of an XID. */
void te_nvml_check(const char *lib, const unsigned *gpus, int ngpus,
		   unsigned expect, unsigned nvlink, long allowed_uid,
		   struct te_health_gpu_pci *pci, int *npci,
		   struct te_health_set *out);

#endif
