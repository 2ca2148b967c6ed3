/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loading the CUDA runtime with dlopen (see cudart_load.h). */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart_load.h"

static const char *const names[] = { "libcudart.so", "libcudart.so.13",
				     "libcudart.so.12", "libcudart.so.11.0",
				     NULL };

/* The file a handle came from: the path of one of its symbols. */
static void loaded_from(void *h, char *path, size_t len)
{
	Dl_info info;
	void *sym = dlsym(h, "cudaRuntimeGetVersion");

	if (!len)
		return;
	path[0] = '\0';
	if (sym && dladdr(sym, &info) && info.dli_fname &&
	    strlen(info.dli_fname) < len)
		strcpy(path, info.dli_fname);
}

void *te_cudart_open(char *path, size_t pathlen, char *err, size_t errlen)
{
	const char *home = getenv("CUDA_HOME");
	const char *dirs[3] = { NULL, NULL, "/usr/local/cuda/lib64" };
	char file[1100];
	int d, i;

	/* a CUDA_HOME too long for a path is no directory of ours */
	if (home && home[0] == '/' && strlen(home) < 1000)
		dirs[1] = home;
	for (d = 0; d < 3; d++) {
		if (d > 0 && !dirs[d])
			continue;
		for (i = 0; names[i]; i++) {
			void *h;

			if (d == 0)
				snprintf(file, sizeof(file), "%s", names[i]);
			else if (d == 1)
				snprintf(file, sizeof(file), "%s/lib64/%s",
					 dirs[d], names[i]);
			else
				snprintf(file, sizeof(file), "%s/%s", dirs[d],
					 names[i]);
			h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
			if (h) {
				loaded_from(h, path, pathlen);
				if (pathlen && !path[0] && file[0] == '/' &&
				    strlen(file) < pathlen)
					strcpy(path, file);
				return h;
			}
		}
	}
	snprintf(err, errlen,
		 "the CUDA runtime cannot be loaded: no "
		 "libcudart.so, .so.13, .so.12 or .so.11.0 in the loader's "
		 "path%s%s%s or /usr/local/cuda/lib64",
		 dirs[1] ? ", " : "", dirs[1] ? dirs[1] : "",
		 dirs[1] ? "/lib64" : "");
	return NULL;
}

int te_cudart_version(void)
{
	char path[8], err[8];
	void *h = te_cudart_open(path, 0, err, sizeof(err));
	int (*get)(int *);
	int v = 0;

	if (!h)
		return 0;
	get = (int (*)(int *))dlsym(h, "cudaRuntimeGetVersion");
	if (!get || get(&v) != 0 || v < 0)
		v = 0;
	dlclose(h);
	return v;
}
