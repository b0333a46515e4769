// Package verdict is the verdict service's behaviour (perfgate-verdictd,
// docs/verdictd.md): it files each attempt a gate posts, decides whether
// the run is retried or final (the rule itself is internal/attempts', fed
// here with the CPU models that history marks stall-prone), and publishes
// the final verdict as a check run, a pull request comment and a release
// line. It holds the Service interface the HTTP API and the page call, the
// facts an attempt carries (Facts, RunKey), the views the page shows, and
// the two ports it drives: Store and Publisher.
//
// It does not speak HTTP (httpapi), SQL (db), GitHub's API (publish) or
// flags (daemon), and it is not the gate's side of the conversation
// (client): those packages import this one, never the other way round.
package verdict
