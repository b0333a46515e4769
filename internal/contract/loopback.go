package contract

import (
	"fmt"
	"net/url"
	"strings"

	loadengine "github.com/perfgate/perfgate/internal/load"
)

// IsLoopback reports whether host (a name or an address, without a port)
// is this machine's loopback: perfgate only probes and loads arms there.
// The rule is the load engine's (load.IsLoopback), which the plan reads too.
func IsLoopback(host string) bool { return loadengine.IsLoopback(host) }

// LoopbackURL checks that raw, with @PORT@ standing for a port, is a URL of
// one of schemes on a loopback host. The error says what is wrong in words
// a refusal can quote after the key's name.
func LoopbackURL(raw string, schemes ...string) error {
	u, err := url.Parse(strings.ReplaceAll(raw, PortPlaceholder, "1"))
	if err != nil || u.Host == "" {
		return fmt.Errorf("is not a URL; write %s://127.0.0.1:@PORT@…", schemes[0])
	}
	ok := false
	for _, s := range schemes {
		ok = ok || u.Scheme == s
	}
	if !ok {
		return fmt.Errorf("has scheme %q; write %s", u.Scheme, strings.Join(schemes, ":// or ")+"://")
	}
	if u.User != nil {
		return fmt.Errorf("holds a user name or password, which perfgate would print; put a credential in a secret plan variable instead")
	}
	if !IsLoopback(u.Hostname()) {
		return fmt.Errorf("names %s, which is not loopback: perfgate only reaches arms on 127.0.0.1 (or ::1)", u.Hostname())
	}
	return nil
}

// UnknownPlaceholder returns the first @NAME@ in s that is not one of
// allowed, or "".
func UnknownPlaceholder(s string, allowed ...string) string {
	for _, ph := range placeholder.FindAllString(s, -1) {
		known := false
		for _, a := range allowed {
			known = known || ph == a
		}
		if !known {
			return ph
		}
	}
	return ""
}
