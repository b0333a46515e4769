package contract

import (
	"errors"
	"strings"
)

// SplitWords splits a command line the way a shell splits words, with single
// and double quotes and backslash escapes, but expands nothing: start and
// check run without a shell, so a pipe or a variable there would silently
// mean something else. Such characters are refused outside quotes, and a
// $ or ` inside double quotes too, where a shell would still expand them:
// single quotes or a backslash (\$) say the character is meant.
func SplitWords(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		quote  rune
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				if i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]) {
					i++
					cur.WriteRune(rs[i])
				} else {
					cur.WriteRune(r)
				}
			case '$', '`':
				return nil, errors.New("uses " + string(r) + " inside double quotes, where a shell would expand it but perfgate does not: write it in single quotes, or as \\" + string(r) + " to mean the character")
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\':
			if i+1 == len(rs) {
				return nil, errors.New("ends with a backslash: remove it")
			}
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\n' || r == '\r':
			return nil, errors.New("spans lines: write it on one line")
		case strings.ContainsRune("|&;<>()$`*?[]{}~", r):
			return nil, errors.New("uses the shell character " + string(r) + ", but runs without a shell: quote it, or put the pipeline in a script the command runs")
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errors.New("has an unclosed " + string(quote) + " quote: close it")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
