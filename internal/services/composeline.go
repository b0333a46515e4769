package services

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// compose-go reports a line for YAML syntax errors only; its schema and
// project checks name a path ("services.cache.imagee"), a service and a
// value, or only a value ("Invalid hostPort: abc"). A refusal must name the
// line to fix, so the line is found here: from the parser's own message,
// or by walking the YAML node tree of the compose files to the key the
// message names.

var (
	// "yaml: while parsing ... at line 1, column 3: line 7, column 4: did
	// not find expected key": the "at line" is where the enclosing node
	// began; the last plain "line N" is where parsing failed.
	yamlLineRe = regexp.MustCompile(`(at )?line (\d+)`)
	// "validating /x/compose.yaml: services.cache.imagee false schema",
	// "validating /x/compose.yaml:  additional properties 'servicess' not allowed".
	validatingRe = regexp.MustCompile(`validating (\S+?): (\S*) (.*)`)
	additionalRe = regexp.MustCompile(`additional propert(?:y|ies) '([^']+)'`)
	parseFileRe  = regexp.MustCompile(`failed to parse (\S+?): `)
	// `service "cache" depends on undefined service "nope"`.
	dependsRe = regexp.MustCompile(`service "([^"]+)" (?:depends on undefined service|cannot depend on job) "([^"]+)"`)
	// `service "cache" refers to undefined network nonet` (volume, secret,
	// config, model alike).
	refersRe = regexp.MustCompile(`service "([^"]+)" refers to undefined (network|volume|secret|config|model|build secret) (\S+)`)
	// "error while interpolating services.cache.ports.[].target: ...",
	// "services.db.scale: must be ...".
	pathRe    = regexp.MustCompile(`(?:^|[ :])(services(?:\.[^\s:.]+)+)`)
	serviceRe = regexp.MustCompile(`service "([^"]+)"`)
	// The port parser names only the value: "Invalid hostPort: abc".
	portValueRe = regexp.MustCompile(`(?i)invalid (?:hostPort|containerPort|proto|ip address|port specification|ranges specified for container and host Ports): "?([^"\s]+)"?`)
)

// composeLine names the compose file (one of files, absolute, in the order
// compose merges them) and the line that err, a compose-go load error,
// is about. ok is false when no file of files parses as YAML.
func composeLine(files []string, err error) (file string, line int, ok bool) {
	msg := err.Error()
	docs := map[string]*yaml.Node{}
	for _, f := range files {
		if n := yamlDoc(f); n != nil {
			docs[f] = n
		}
	}
	named := func(re *regexp.Regexp) string {
		if m := re.FindStringSubmatch(msg); m != nil {
			for _, f := range files {
				if f == m[1] {
					return f
				}
			}
		}
		return ""
	}
	if f := named(parseFileRe); f != "" {
		return f, syntaxLine(f, err), true
	}
	// Where the message names its file, only that file is searched.
	only := named(validatingRe)
	var path []string
	if m := validatingRe.FindStringSubmatch(msg); m != nil {
		if m[2] != "" {
			path = strings.Split(m[2], ".")
		}
		if a := additionalRe.FindStringSubmatch(m[3]); a != nil {
			path = append(path, a[1])
		}
	} else if m := dependsRe.FindStringSubmatch(msg); m != nil {
		path = []string{"services", m[1], "depends_on", m[2]}
	} else if m := refersRe.FindStringSubmatch(msg); m != nil {
		key := m[2] + "s"
		if m[2] == "build secret" {
			key = "build"
		}
		path = []string{"services", m[1], key, m[3]}
	} else if m := portValueRe.FindStringSubmatch(msg); m != nil {
		path = []string{"services", "*", "ports", m[1]}
	} else if m := pathRe.FindStringSubmatch(msg); m != nil {
		path = strings.Split(m[1], ".")
	} else if m := serviceRe.FindStringSubmatch(msg); m != nil {
		path = []string{"services", m[1]}
	}
	best, bestDepth := "", -1
	for _, f := range files {
		if docs[f] == nil || (only != "" && f != only) {
			continue
		}
		l, depth := find(docs[f], path)
		if depth > bestDepth {
			best, line, bestDepth = f, l, depth
		}
	}
	if best == "" {
		if only != "" {
			return only, 1, true
		}
		return "", 0, false
	}
	return best, max(line, 1), true
}

// composeMessage is a compose-go load error in the tree's own words: its
// files named relative to the tree's folder dir (a base tree is exported
// to a scratch folder), and the schema's "false schema", which is how it
// says a key is unknown, said plainly.
func composeMessage(dir string, err error) string {
	msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	return strings.Replace(msg, " false schema", ": not a key the compose specification has", 1)
}

// syntaxLine is the line of a YAML syntax error in file: the last line
// the parser's message names that is not only where an enclosing node
// began.
func syntaxLine(file string, err error) int {
	line := 1
	plain := false
	for _, m := range yamlLineRe.FindAllStringSubmatch(err.Error(), -1) {
		n, _ := strconv.Atoi(m[2])
		if m[1] == "" || !plain {
			line, plain = n, m[1] == ""
		}
	}
	// go.yaml.in/yaml/v4 v4.0.0-rc.4 counts the parser's lines from 0
	// (its scanner's and its composer's from 1): a block mapping missing a
	// key on line 8 says "line 7". Its error types are internal, so the
	// parser's is told by its name.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if fmt.Sprintf("%T", e) == "libyaml.ParserError" {
			line++
			break
		}
	}
	// An error at the end of the file names the line after its last.
	if data, rerr := os.ReadFile(file); rerr == nil {
		line = min(line, max(1, bytes.Count(data, []byte("\n"))))
	}
	return max(line, 1)
}

// yamlDoc is file's YAML node tree; nil when file cannot be read or is
// not YAML (compose-go's own load then says why, with its line).
func yamlDoc(file string) *yaml.Node {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var n yaml.Node
	if yaml.Unmarshal(data, &n) != nil {
		return nil
	}
	return &n
}

// serviceLine is the line in files of path below service svc (a key such
// as "network_mode", or "ports" and portEntry(published)), for the
// refusals this package makes itself. Compose merges files in order and
// the last one that sets a key wins, so that file is named; a port list is
// merged rather than replaced, and the last file naming the port is named
// too. When no file holds path (the key came from extends, the port from
// a variable), it is the line of the service in the last file naming it;
// ("", 0) when no file names the service.
func serviceLine(files []string, svc string, path ...string) (file string, line int) {
	full := append([]string{"services", svc}, path...)
	for i := len(files) - 1; i >= 0; i-- {
		n := yamlDoc(files[i])
		l, depth := find(n, full)
		if depth == len(full) {
			return files[i], l
		}
		if depth >= 2 && file == "" {
			// Not find's deepest line (a ports key that lacks the port):
			// the service's, as the fallback says.
			file = files[i]
			line, _ = find(n, full[:2])
		}
	}
	return file, line
}

// portEntry is serviceLine's path segment for the port entry that
// publishes published: holds finds it inside a short-syntax port
// ("127.0.0.1:16379:6379") and as a long-syntax port's published value.
func portEntry(published string) string {
	return ":" + published + ":"
}

// find walks n along path and returns the line of the deepest node it
// reached and how many segments matched. In a mapping a segment is a key
// ("*" any key); in a sequence it is an index, "[]" for any item, or a
// value an item holds: a scalar containing it (a port "127.0.0.1:abc:6379",
// a depends_on list's "nope") or a mapping with a scalar equal to it (a
// long-syntax volume whose source is "novol", a port whose published is
// "16379").
func find(n *yaml.Node, path []string) (line, depth int) {
	if n == nil {
		return 0, -1
	}
	for n.Kind == yaml.DocumentNode || n.Kind == yaml.AliasNode {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return n.Line, 0
		}
	}
	if len(path) == 0 {
		return n.Line, 0
	}
	seg, rest := path[0], path[1:]
	line, depth = n.Line, 0
	try := func(child *yaml.Node, at int) {
		l, d := find(child, rest)
		if d+1 > depth {
			line, depth = l, d+1
			if d <= 0 {
				// Nothing matched below: the key or item itself.
				line = at
			}
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == seg || seg == "*" {
				if len(rest) == 0 {
					// The key's own line: a value may start on the next.
					return k.Line, 1
				}
				try(v, k.Line)
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(seg); err == nil {
			if i >= 0 && i < len(n.Content) {
				try(n.Content[i], n.Content[i].Line)
			}
			break
		}
		for _, item := range n.Content {
			if seg == "[]" || holds(item, seg) {
				try(item, item.Line)
				if depth == len(path) {
					break
				}
			}
		}
	}
	return line, depth
}

func holds(item *yaml.Node, value string) bool {
	switch item.Kind {
	case yaml.ScalarNode:
		return strings.Contains(item.Value, value) || strings.Contains(":"+item.Value+":", value)
	case yaml.MappingNode:
		for i := 1; i < len(item.Content); i += 2 {
			if v := item.Content[i]; v.Kind == yaml.ScalarNode && v.Value == strings.Trim(value, ":") {
				return true
			}
		}
	}
	return false
}

// files are the tree's compose files as absolute paths.
func (l *loaded) files() []string {
	out := make([]string, len(l.tree.Files))
	for i, f := range l.tree.Files {
		if filepath.IsAbs(f) {
			out[i] = f
		} else {
			out[i] = filepath.Join(l.dir, f)
		}
	}
	return out
}

// PortLine names the base tree's compose file and line of service svc's
// port that publishes published, relative to the tree, for a refusal
// about that port (perfgate check's config rewrite); ("", 0) when the base
// was not loaded or no file names it.
func (p *Plan) PortLine(svc, published string) (file string, line int) {
	if p.base == nil {
		return "", 0
	}
	f, l := serviceLine(p.base.files(), svc, "ports", portEntry(published))
	if f == "" {
		return "", 0
	}
	return relTo(p.base.dir, f), l
}

// CheckTree loads one tree's compose files as Diff loads each, refusing
// what Diff would refuse of a single tree's files (with their lines), and
// returns its service names: perfgate check's look at the head's files
// when no event resolves to a base to diff them with.
func CheckTree(ctx context.Context, t Tree, arm string) ([]string, error) {
	l, err := load(ctx, t, arm)
	if err != nil {
		return nil, err
	}
	return l.names(), nil
}
