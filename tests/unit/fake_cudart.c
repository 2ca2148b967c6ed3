/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A stand-in for the CUDA runtime (libcudart.so) on machines without a
 * GPU: the calls trainenv-preflight makes, answering as a working 80 GiB
 * GPU would, or failing one chosen call. Tests put a directory holding it
 * as libcudart.so first in LD_LIBRARY_PATH.
 *   TE_FAKE_CUDART_FAIL=CALL:CODE   that call returns CODE
 *   TE_FAKE_CUDART_SLEEP=SECONDS    cudaFree(0) (the context) takes that
 *                                   long: a hanging GPU
 *   TE_FAKE_CUDART_NOISE=1          prints on stdout, as a chatty
 *                                   library might */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int cudaRuntimeGetVersion(int *v);
EXPORT int cudaDriverGetVersion(int *v);
EXPORT int cudaDeviceGetByPCIBusId(int *dev, const char *busid);
EXPORT int cudaSetDevice(int dev);
EXPORT int cudaFree(void *p);
EXPORT int cudaMalloc(void **p, size_t n);
EXPORT int cudaMemset(void *p, int v, size_t n);
EXPORT int cudaDeviceSynchronize(void);
EXPORT int cudaMemGetInfo(size_t *free_b, size_t *total_b);
EXPORT const char *cudaGetErrorString(int e);

static int fails(const char *call)
{
	const char *f = getenv("TE_FAKE_CUDART_FAIL");
	size_t n = strlen(call);

	if (getenv("TE_FAKE_CUDART_NOISE"))
		printf("fake libcudart: %s\n", call);
	if (!f || strncmp(f, call, n) || f[n] != ':')
		return 0;
	return atoi(f + n + 1);
}

int cudaRuntimeGetVersion(int *v)
{
	*v = 12040;
	return fails("cudaRuntimeGetVersion");
}

int cudaDriverGetVersion(int *v)
{
	*v = 12080;
	return fails("cudaDriverGetVersion");
}

int cudaDeviceGetByPCIBusId(int *dev, const char *busid)
{
	*dev = 0;
	return busid ? fails("cudaDeviceGetByPCIBusId") : 1;
}

int cudaSetDevice(int dev)
{
	return fails("cudaSetDevice");
}

int cudaFree(void *p)
{
	const char *s = getenv("TE_FAKE_CUDART_SLEEP");

	if (!p && s)
		sleep((unsigned)atoi(s));
	if (p)
		free(p);
	return fails("cudaFree");
}

int cudaMalloc(void **p, size_t n)
{
	int e = fails("cudaMalloc");

	*p = e ? NULL : malloc(n);
	return e;
}

int cudaMemset(void *p, int v, size_t n)
{
	int e = fails("cudaMemset");

	if (!e)
		memset(p, v, n);
	return e;
}

int cudaDeviceSynchronize(void)
{
	return fails("cudaDeviceSynchronize");
}

int cudaMemGetInfo(size_t *free_b, size_t *total_b)
{
	*total_b = (size_t)80 << 30;
	*free_b = *total_b - ((size_t)600 << 20);
	return fails("cudaMemGetInfo");
}

const char *cudaGetErrorString(int e)
{
	switch (e) {
	case 2:
		return "out of memory";
	case 35:
		return "CUDA driver version is insufficient for CUDA runtime version";
	case 100:
		return "no CUDA-capable device is detected";
	case 101:
		return "invalid device ordinal";
	case 700:
		return "an illegal memory access was encountered";
	default:
		return "fake error";
	}
}
