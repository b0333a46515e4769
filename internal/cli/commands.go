package cli

// table is every command perfgate has. It is written out, not filled by
// each file's init, so a reader sees the whole set in one place and a test
// can walk it.
func table() []command {
	return []command{
		{Name: "ab", Summary: "run the A/B gate over two arms given as commands or an arms file", Run: runAB},
		{Name: "action", Summary: "the GitHub Action's entrypoint: COMMAND \"ARGS\"", Hidden: true, Run: runAction},
		{Name: "attempts next", Summary: "after an attempt: retry on a fresh runner, or final (prints which and why)", Run: runAttemptsNext},
		{Name: "base", Summary: "pick the commit the change is judged against and write base.md", Run: runBase},
		{Name: "capacity-target", Summary: "run the bundled worker-pool target whose capacity is workers/service (docs/experiment.md)", Hidden: true, Run: runCapacityTarget},
		{Name: "check", Summary: "check a repository's gate contract offline: gate file, both arms' configs, the compose plan, base resolution, the plans", Run: runCheck},
		{Name: "compare", Summary: "judge a JSON report again offline, tolerances overridable", Run: runCompare},
		{Name: "demo", Summary: "the whole gate over a repository it builds around the bundled example service; the head carries a regression", Run: runDemo},
		{Name: "demo-service", Summary: "the demo repository's service: the example service over its perf config and its dependency's settings", Hidden: true, Run: runDemoService},
		{Name: "demo-dependency", Summary: "the demo repository's compose dependency: a settings server", Hidden: true, Run: runDemoDependency},
		{Name: "example-service", Summary: "run the bundled example service (used by `perfgate demo`; knobs in docs/example-service.md)", Hidden: true, Run: runExampleService},
		{Name: "experiment", Summary: "run a plan's capacity experiment: the knee, the first resource to run out, a user population, a client ramp (docs/experiment.md)", Run: runExperiment},
		{Name: "load", Summary: "drive one target open loop with a plan's requests and report latency", Run: runLoad},
		{Name: "merge", Summary: "merge the shard reports of one experiment exactly (HDR histograms merge) and judge the whole; --side-by-side sets repeated runs beside each other", Run: runMerge},
		{Name: "pack", Summary: "put the built arms into one archive for the attempt jobs", Run: runPack},
		{Name: "unpack", Summary: "restore the built arms from the archive `perfgate pack` wrote", Run: runUnpack},
		{Name: "prepare", Summary: "resolve the base, export its tree and build both arms with their own contracts", Run: runPrepare},
		{Name: "release-note", Summary: "print the release-notes line naming the gate's base (exit 2 if none)", Run: runReleaseNote},
		{Name: "run", Summary: "the gate over the arms `perfgate prepare` built: own contracts, own services, config check, A/B", Run: runRun},
		{Name: "services plan", Summary: "compare two trees' compose services: which groups the base shares, which it copies", Run: runServicesPlan},
		{Name: "services up", Summary: "start the head's services and the base's copies (127.0.0.2), wait until healthy", Run: runServicesUp},
		{Name: "services down", Summary: "remove every container, network and volume of a run, by its label", Run: runServicesDown},
		{Name: "verdict", Summary: "the final verdict over every attempt's report folder (perf-report-attempt-<n>)", Run: runVerdict},
		{Name: "version", Summary: "print perfgate's version", Run: runVersion},
	}
}

// lookup finds a command by its name ("services plan" has a space).
func lookup(name string) (command, bool) {
	for _, c := range table() {
		if c.Name == name {
			return c, true
		}
	}
	return command{}, false
}
