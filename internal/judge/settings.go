package judge

// SettingChange is one judging setting the head's plan (or gate file)
// writes differently from the base's: a pull request cannot loosen its own
// gate, so the gate judges with the stricter of the two, or the base's
// where neither is stricter (docs/judge.md, "Which plan judges"). The
// summary and the report list each, so a reviewer sees what the head
// asked for and what it got.
type SettingChange struct {
	// Setting names the setting as the plan writes it, such as
	// "[tolerance] latency" or "[[threshold]] p99 of group hello".
	Setting string `json:"setting"`
	// Base and Head are the two trees' values in the plan's units
	// ("10 %", "20ms", "absent"); Judged is the one the gate used.
	Base   string `json:"base"`
	Head   string `json:"head"`
	Judged string `json:"judged"`
}
