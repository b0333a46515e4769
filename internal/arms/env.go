package arms

// inherited is what an arm gets of perfgate's own environment: enough to
// run a program (PATH, HOME, locale, temp dir, CA certificates), and nothing
// that would make the two arms differ by accident, such as a developer's
// exported service settings or a CI token.
var inherited = []string{
	"PATH", "HOME", "USER", "LOGNAME", "TMPDIR", "TZ",
	"LANG", "LC_ALL", "LC_CTYPE", "SSL_CERT_FILE", "SSL_CERT_DIR",
}

// MinimalEnv is that environment, read with getenv: what an arm starts
// with, and what the contract's config check of a base runs with, so the
// check sees what the arm will.
func MinimalEnv(getenv func(string) string) []string {
	env := make([]string, 0, len(inherited))
	for _, k := range inherited {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}
