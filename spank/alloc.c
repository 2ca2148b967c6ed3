/* sbatch and salloc: check the settings at submission so that a bad value
 * is refused before the job is queued. The options travel to every step of
 * the job (as _SLURM_SPANK_OPTION_trainenv_* variables) and are checked
 * again there against the policy of the node. */
#include "config.h"

#include "plugin.h"
#include "submit.h"

int te_alloc_post_opt(spank_t sp)
{
	if (te_submit_resolve() < 0)
		return -1;
	te_submit_explain("job");
	return 0;
}
