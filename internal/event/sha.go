package event

// shortSHALen is how many hex digits a short commit name keeps: 12, as
// `git rev-parse --short=12` gives, enough to stay unique in any
// repository the gate runs on while fitting a summary line.
const shortSHALen = 12

// ShortSHA is a commit hash as messages and summaries print it: its first
// 12 hex digits. Anything shorter (a branch name, say) is kept whole.
func ShortSHA(sha string) string {
	if len(sha) > shortSHALen {
		return sha[:shortSHALen]
	}
	return sha
}
