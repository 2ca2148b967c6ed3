/* srun: check the settings before the step is launched and explain them. */
#include "config.h"

#include "plugin.h"
#include "submit.h"

int te_local_post_opt(spank_t sp)
{
	if (te_submit_resolve() < 0)
		return -1;
	te_submit_explain("step");
	return 0;
}

int te_local_exit(spank_t sp)
{
	return 0;
}
