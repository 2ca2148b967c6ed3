/* placeholder: replaced by the dispatch file */
#include <slurm/spank.h>
SPANK_PLUGIN(trainenv, 1);
int slurm_spank_init(spank_t sp, int ac, char **av) { return 0; }
