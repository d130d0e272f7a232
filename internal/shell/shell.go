package shell

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Quote quotes a word for a shell when it needs it: as it is when it
// is plain, in single quotes otherwise, and with bash's $'...' when it
// holds control characters, so that a pasted command is never split by a
// newline nor runs an escape sequence.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		plain := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,@+", r)
		return !plain
	}) < 0 {
		return s
	}
	if strings.IndexFunc(s, isControl) < 0 && utf8.ValidString(s) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case isControl(r) || r == utf8.RuneError && size == 1:
			// byte by byte: $'\xc2\x9b' is the two bytes of U+009B
			for _, c := range []byte(s[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

// Join quotes each word and joins them with spaces.
func Join(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }
