-- SPDX-License-Identifier: GPL-2.0-or-later
-- cli_filter.lua snippet (CliFilterPlugins=lua): a job that asks for
-- trainenv's spares (--train-spares=K, on the command line or in the
-- #SBATCH lines) also gets --no-kill, so that a node lost does not end the
-- whole job and trainenv can start the step again on a spare (trainenv(8),
-- RESTART INSIDE THE ALLOCATION). Merge into the site's cli_filter.lua;
-- not exercised by trainenv's test suite (Debian's Slurm is built without
-- lua cli_filter in the test roots).
local function train_spares(options)
	-- 23.02 and later: options.spank[PLUGIN][OPTION]
	if options.spank ~= nil and options.spank.trainenv ~= nil then
		return options.spank.trainenv["train-spares"]
	end
	return nil
end

function slurm_cli_pre_submit(options, offset)
	local spares = train_spares(options)
	if spares ~= nil and spares ~= "off" then
		options["no-kill"] = "set"
	end
	return slurm.SUCCESS
end

function slurm_cli_setup_defaults(options, early_pass)
	return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, jobid, stepid)
	return slurm.SUCCESS
end
