/* Stand-alone `bind` subcommand for tests until the trainenv dispatcher
 * calls te_tool_bind() itself. */
#include "config.h"

#include "tool_bind.h"

int main(int argc, char **argv)
{
	return te_tool_bind(argc, argv);
}
