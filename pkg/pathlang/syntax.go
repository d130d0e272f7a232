package pathlang

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// The path language, one for every flag and argument that takes a path
// (who-owns --field, handover --field) and for ParsePath:
//
//	path     = [ "." ] element { "." name | bracket }   a leading dot is optional
//	element  = name | bracket
//	name     = characters up to "." or "[" ; "\" escapes the next one
//	           (app\.kubernetes\.io/name, as kubectl's JSONPath writes it)
//	bracket  = "[" ( quoted                  a field name: ["app.kubernetes.io/name"], ['a.b']
//	               | integer                 a list item by position: [0]
//	               | "=" scalar              a set member: [="example.com/keep"], [=443]
//	               | key "=" scalar { "," key "=" scalar }
//	                                         a list item by key: [name=app], [name="app"],
//	                                         [containerPort=80,protocol="TCP"]
//	               | "?(@." key "==" scalar { "&&" "@." key "==" scalar } ")"
//	                                         the same, as a JSONPath filter
//	               | k:{...} | v:... | i:N | f:name
//	                                         an element as metadata.managedFields writes it
//	               | "*" | "**" ) "]"        wildcards (patterns only)
//	key      = name | quoted
//	scalar   = quoted | JSON object or array | word (80, true, null, app)
//	quoted   = "..." with Go's escapes, or '...'
//
// A whole expression may be wrapped in kubectl's JSONPath braces: {.spec}.
// A path written the way managedFields nests it, f:spec.f:containers.
// k:{"name":"app"}.f:image, is read element by element.
//
// In patterns, a name that is exactly "*" is any one element, "**" (or an
// empty name, as JSONPath's "..") any number of elements, none included,
// and elsewhere "*" and "?" in names and values are wildcards; "\*" and
// "\?" stand for themselves. A word is compared with a value's text, so
// [port=80] matches 80 and "80".
//
// The apiserver does not escape dots in field names
// (.metadata.labels.app.kubernetes.io/name): ParsePath reads such a name
// as the longest key the objects it is given have; a pattern matches it by
// reading plain names across the dots of an element.

type segKind uint8

const (
	segField    segKind = iota // a field name (maybe a glob)
	segAny                     // * or [*]: one element of any kind
	segAnyDepth                // **: any number of elements
	segIndex                   // [0]
	segKey                     // [name=app]
	segValue                   // [=x]
)

// text is a name or a string value: lit is the text with every wildcard
// taken literally; glob is set when the text has a wildcard.
type text struct {
	lit  string
	glob []globToken
}

type globToken struct {
	r    rune
	kind uint8 // 0 literal, 1 '*', 2 '?'
}

const (
	tokLit uint8 = iota
	tokStar
	tokAny
)

type scalarKind uint8

const (
	scalarWord   scalarKind = iota // app, 80, true: typed by the object, else by its form
	scalarString                   // "app": a string
	scalarTyped                    // from JSON (k:{...}, v:..., [={"a":1}]): v holds it
)

// scalar is a value as written.
type scalar struct {
	kind scalarKind
	text
	v any
}

type keyPart struct {
	name string
	val  scalar
}

type segment struct {
	kind  segKind
	name  text // segField
	index int
	keys  []keyPart // segKey
	val   scalar    // segValue
	// at is where the segment starts in the source, for errors.
	at int
}

// SyntaxError is a path or pattern that can't be read.
type SyntaxError struct {
	Path string
	Pos  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("path %q: %s at %d (paths look like .spec.replicas, .metadata.labels[\"app.kubernetes.io/name\"], .spec.containers[name=app].image or .spec.containers[0].image)", e.Path, e.Msg, e.Pos)
}

type parser struct {
	src   string
	s     string
	off   int  // offset of s in src, for error positions
	globs bool // wildcards are wildcards
	// literal reads "*" and "?" in names as characters, as the
	// apiserver's paths hold them; otherwise a path refuses them.
	literal bool
	// longest, when set, reads a dotted name of the apiserver's format
	// (it does not escape dots) as the longest key that exists below the
	// segments read so far.
	longest func(read []segment, rest string) string
	out     []segment
}

func (p *parser) errf(at int, format string, args ...any) error {
	return &SyntaxError{Path: p.src, Pos: p.off + at, Msg: fmt.Sprintf(format, args...)}
}

// syntax is what parseSegments reads.
type syntax uint8

const (
	syntaxPath    syntax = iota // a path someone typed: no wildcards
	syntaxServer                // a path the apiserver wrote: * and ? are characters
	syntaxPattern               // a pattern: wildcards
)

// parseSegments reads a path or a pattern.
func parseSegments(src string, kind syntax, longest func([]segment, string) string) ([]segment, error) {
	p := &parser{src: src, s: src, globs: kind == syntaxPattern, literal: kind == syntaxServer, longest: longest}
	if t := strings.TrimSpace(p.s); len(t) >= 2 && t[0] == '{' && t[len(t)-1] == '}' {
		p.off = strings.Index(p.s, "{") + 1
		p.s = t[1 : len(t)-1]
	}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.out, nil
}

func (p *parser) parse() error {
	s := p.s
	if s == "" || s == "." {
		return nil
	}
	i := 0
	if rest := strings.TrimPrefix(s, "."); strings.HasPrefix(rest, "f:") {
		return p.fieldsV1(len(s) - len(rest))
	}
	if s[0] != '.' && s[0] != '[' {
		// No leading dot: the first name starts here.
		j, err := p.name(0)
		if err != nil {
			return err
		}
		i = j
	}
	for i < len(s) {
		switch s[i] {
		case '.':
			j, err := p.name(i + 1)
			if err != nil {
				return err
			}
			i = j
		case '[':
			j, err := p.bracket(i)
			if err != nil {
				return err
			}
			i = j
		default:
			return p.errf(i, "unexpected %q after ]: write a . before a field name", s[i])
		}
	}
	return nil
}

// name reads a field name starting at i and returns the index after it.
func (p *parser) name(i int) (int, error) {
	s := p.s
	if p.longest != nil {
		if k := p.longest(p.out, s[i:]); k != "" {
			p.out = append(p.out, segment{kind: segField, name: text{lit: k}, at: i})
			return i + len(k), nil
		}
	}
	if strings.HasPrefix(s[i:], "k:{") {
		// An element as managedFields writes it, after a dot.
		end, err := p.jsonEnd(i + 2)
		if err != nil {
			return 0, err
		}
		return end, p.element(s[i:end], i)
	}
	t, j, err := p.word(s, i, func(c byte) bool { return c == '.' || c == '[' })
	if err != nil {
		return 0, err
	}
	if j == i {
		if p.globs && j < len(s) && s[j] == '.' && i > 0 && s[i-1] == '.' {
			// "..": JSONPath's recursive descent, any depth.
			p.out = append(p.out, segment{kind: segAnyDepth, at: i})
			return j, nil
		}
		if j < len(s) {
			return 0, p.errf(j, "a field name is missing before %q", s[j])
		}
		return 0, p.errf(j, "a field name is missing at the end")
	}
	raw := s[i:j]
	switch {
	case p.globs && raw == "**":
		p.out = append(p.out, segment{kind: segAnyDepth, at: i})
	case p.globs && raw == "*":
		p.out = append(p.out, segment{kind: segAny, at: i})
	default:
		p.out = append(p.out, segment{kind: segField, name: t, at: i})
	}
	return j, nil
}

// word reads unquoted text of s from i up to a byte stop accepts: "\"
// escapes the next character, and in patterns "*" and "?" are wildcards.
// It returns the index after it.
func (p *parser) word(s string, i int, stop func(byte) bool) (text, int, error) {
	var lit strings.Builder
	var glob []globToken
	wild := false
	j := i
	for j < len(s) && !stop(s[j]) {
		r, size := utf8.DecodeRuneInString(s[j:])
		kind := tokLit
		switch {
		case r == '\\':
			if j+1 >= len(s) {
				return text{}, 0, p.errf(j, "a \\ at the end")
			}
			r, size = utf8.DecodeRuneInString(s[j+1:])
			size++
		case (r == '*' || r == '?') && !p.globs && !p.literal:
			return text{}, 0, p.errf(j, "%c is a wildcard, and a path names one field: list the fields a pattern matches with who-owns --field; write a * or ? that is part of a name as \\%c or in quotes", r, r)
		case p.globs && r == '*':
			kind, wild = tokStar, true
		case p.globs && r == '?':
			kind, wild = tokAny, true
		}
		lit.WriteRune(r)
		glob = append(glob, globToken{r: r, kind: kind})
		j += size
	}
	t := text{lit: lit.String()}
	if wild {
		t.glob = glob
	}
	return t, j, nil
}

// closing finds the "]" that closes the "[" at i, outside quotes.
func (p *parser) closing(i int) (int, error) {
	end, quote := scanTop(p.s, i+1, func(j int) int {
		if p.s[j] == ']' {
			return -1
		}
		return 0
	})
	switch {
	case quote != 0:
		return 0, p.errf(i, "unclosed %c in [", quote)
	case end == len(p.s):
		return 0, p.errf(i, "unclosed [")
	}
	return end, nil
}

// scanTop calls at for each byte of s from i on that lies outside quotes
// and outside the braces and brackets of JSON values; at returns how many
// more bytes to skip, or -1 to stop there. scanTop returns where it
// stopped (len(s) when it did not) and the quote left open.
func scanTop(s string, i int, at func(j int) int) (int, byte) {
	var quote byte
	depth := 0
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '{' || c == '[':
			depth++
		case (c == '}' || c == ']') && depth > 0:
			depth--
		default:
			n := at(i)
			if n < 0 {
				return i, 0
			}
			i += n
		}
	}
	return len(s), quote
}

// bracket reads [...] at i and returns the index after it.
func (p *parser) bracket(i int) (int, error) {
	end, err := p.closing(i)
	if err != nil {
		return 0, err
	}
	in := p.s[i+1 : end]
	lead := len(in) - len(strings.TrimLeft(in, " "))
	at := i + 1 + lead
	t := strings.TrimSpace(in)
	switch {
	case t == "":
		return 0, p.errf(at, "empty []: write [0], [name=VALUE] or [\"field.name\"]")
	case t == "*" || t == "**":
		if !p.globs {
			return 0, p.errf(at, "[%s] is a wildcard: a path names one field (list the matching ones with who-owns --field)", t)
		}
		kind := segAny
		if t == "**" {
			kind = segAnyDepth
		}
		p.out = append(p.out, segment{kind: kind, at: at})
	case t[0] == '"' || t[0] == '\'':
		name, n, err := p.quoted(t, at)
		if err != nil {
			return 0, err
		}
		if rest := strings.TrimSpace(t[n:]); rest != "" {
			if rest[0] != '=' {
				return 0, p.errf(at+n, "unexpected text after the quoted name")
			}
			// ["a b"=x]: a key with a quoted name.
			return end + 1, p.keys(in, i+1)
		}
		p.out = append(p.out, segment{kind: segField, name: name, at: at})
	case t[0] == '=':
		v, err := p.scalar(strings.TrimSpace(t[1:]), at+1)
		if err != nil {
			return 0, err
		}
		p.out = append(p.out, segment{kind: segValue, val: v, at: at})
	case strings.HasPrefix(t, "?(") && strings.HasSuffix(t, ")"):
		return end + 1, p.filter(t[2:len(t)-1], at+2)
	case len(t) > 2 && t[1] == ':' && strings.ContainsRune("kvif", rune(t[0])):
		return end + 1, p.element(t, at)
	case isIndex(t):
		n, err := strconv.Atoi(t)
		if err != nil {
			return 0, p.errf(at, "index %s is out of range", t)
		}
		p.out = append(p.out, segment{kind: segIndex, index: n, at: at})
	case t[0] == '-' && isIndex(t[1:]):
		return 0, p.errf(at, "negative index %s: positions count from 0", t)
	default:
		return end + 1, p.keys(in, i+1)
	}
	return end + 1, nil
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// keys reads name=value,name=value.
func (p *parser) keys(in string, at int) error {
	seg := segment{kind: segKey, at: at}
	for _, part := range splitUnquoted(in, ",") {
		k, v, err := p.keyValue(part.s, "=", at+part.at)
		if err != nil {
			return err
		}
		seg.keys = append(seg.keys, keyPart{name: k, val: v})
	}
	p.out = append(p.out, seg)
	return nil
}

// keyValue reads one name=value (op "=") or @.name=="value" (op "==").
func (p *parser) keyValue(s, op string, at int) (string, scalar, error) {
	t := strings.TrimSpace(s)
	at += strings.Index(s, t)
	var name string
	rest := ""
	if t != "" && (t[0] == '"' || t[0] == '\'') {
		q, n, err := p.quoted(t, at)
		if err != nil {
			return "", scalar{}, err
		}
		if len(q.glob) > 0 {
			return "", scalar{}, p.errf(at, "a key name can't be a pattern")
		}
		name, rest = q.lit, strings.TrimSpace(t[n:])
		if !strings.HasPrefix(rest, op) {
			return "", scalar{}, p.errf(at+n, "key %s has no value (write [%s=VALUE])", strconv.Quote(name), strconv.Quote(name))
		}
		rest = rest[len(op):]
	} else {
		k, v, ok := strings.Cut(t, op)
		k = strings.TrimSpace(k)
		if !ok {
			return "", scalar{}, p.errf(at, "key %q has no value (write [%s=VALUE], [N] or [\"field.name\"])", t, t)
		}
		if k == "" {
			return "", scalar{}, p.errf(at, "a key name is missing before %s", op)
		}
		name, rest = k, v
	}
	v, err := p.scalar(strings.TrimSpace(rest), at+len(t)-len(rest))
	return name, v, err
}

// filter reads a JSONPath filter: @.name=="app" && @.port==80.
func (p *parser) filter(in string, at int) error {
	seg := segment{kind: segKey, at: at}
	for _, part := range splitUnquoted(in, "&&") {
		t := strings.TrimSpace(part.s)
		if !strings.HasPrefix(t, "@.") {
			return p.errf(at+part.at, "filters are written ?(@.name==\"app\"), not %q", t)
		}
		k, v, err := p.keyValue(t[2:], "==", at+part.at+2)
		if err != nil {
			return err
		}
		seg.keys = append(seg.keys, keyPart{name: k, val: v})
	}
	p.out = append(p.out, seg)
	return nil
}

// element reads an element as managedFields writes it: k:{...}, v:...,
// i:N or f:name.
func (p *parser) element(s string, at int) error {
	if strings.HasPrefix(s, "f:") {
		p.out = append(p.out, segment{kind: segField, name: text{lit: s[2:]}, at: at})
		return nil
	}
	pe, err := fieldpath.DeserializePathElement(s)
	if err != nil {
		return p.errf(at, "%s is not a managedFields element: %v", s, err)
	}
	if pe.Key != nil && len(*pe.Key) == 0 {
		return p.errf(at, "%s: a key needs at least one field", s)
	}
	p.out = append(p.out, elementSegment(pe, at))
	return nil
}

// elementSegment is the segment that matches exactly pe.
func elementSegment(pe fieldpath.PathElement, at int) segment {
	switch {
	case pe.FieldName != nil:
		return segment{kind: segField, name: text{lit: *pe.FieldName}, at: at}
	case pe.Index != nil:
		return segment{kind: segIndex, index: *pe.Index, at: at}
	case pe.Value != nil:
		return segment{kind: segValue, val: scalar{kind: scalarTyped, v: (*pe.Value).Unstructured()}, at: at}
	}
	seg := segment{kind: segKey, at: at}
	for _, f := range *pe.Key {
		seg.keys = append(seg.keys, keyPart{name: f.Name, val: scalar{kind: scalarTyped, v: f.Value.Unstructured()}})
	}
	return seg
}

// fieldsV1 reads a path written as managedFields nests it:
// f:spec.f:containers.k:{"name":"app"}.f:image. A field name runs to the
// next ".f:", ".k:", ".v:" or ".i:", so it may hold dots.
func (p *parser) fieldsV1(i int) error {
	s := p.s
	for i < len(s) {
		if len(s)-i < 2 || s[i+1] != ':' || !strings.ContainsRune("fkvi", rune(s[i])) {
			return p.errf(i, "expected f:, k:, v: or i: (the path started as managedFields writes it)")
		}
		var end int
		switch s[i] {
		case 'f':
			end = len(s)
			for _, sep := range []string{".f:", ".k:", ".v:", ".i:"} {
				if j := strings.Index(s[i+2:], sep); j >= 0 && i+2+j < end {
					end = i + 2 + j
				}
			}
		case 'i':
			end = i + 2
			for end < len(s) && s[end] >= '0' && s[end] <= '9' {
				end++
			}
		default:
			var err error
			if end, err = p.jsonEnd(i + 2); err != nil {
				return err
			}
		}
		if err := p.element(s[i:end], i); err != nil {
			return err
		}
		i = end
		if i < len(s) {
			if s[i] != '.' {
				return p.errf(i, "expected . between elements")
			}
			i++
		}
	}
	return nil
}

// jsonEnd returns the end of the JSON value that starts at i.
func (p *parser) jsonEnd(i int) (int, error) {
	s := p.s
	depth := 0
	inString := false
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case inString && c == '\\':
			j++
		case inString && c == '"':
			inString = false
			if depth == 0 {
				return j + 1, nil
			}
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
			if depth < 0 {
				return j, nil
			}
		case depth == 0 && c == '.' && j > i && !isNumberByte(s[j-1]):
			return j, nil
		case depth == 0 && c == '.' && j+1 < len(s) && !isNumberByte(s[j+1]):
			return j, nil
		}
	}
	if inString || depth > 0 {
		return 0, p.errf(i, "unclosed JSON value")
	}
	return len(s), nil
}

func isNumberByte(c byte) bool { return c >= '0' && c <= '9' }

// scalar reads a value: quoted, a JSON object or array, or a bare word.
func (p *parser) scalar(s string, at int) (scalar, error) {
	if s == "" {
		return scalar{}, p.errf(at, "a value is missing")
	}
	switch s[0] {
	case '"', '\'':
		t, n, err := p.quoted(s, at)
		if err != nil {
			return scalar{}, err
		}
		if n != len(s) {
			return scalar{}, p.errf(at+n, "unexpected text after the quoted value")
		}
		return scalar{kind: scalarString, text: t}, nil
	case '{', '[':
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return scalar{}, p.errf(at, "value %s is not JSON: %v", s, err)
		}
		return scalar{kind: scalarTyped, v: normalizeJSON(v)}, nil
	}
	t, _, err := p.word(s, 0, func(byte) bool { return false })
	if err != nil {
		return scalar{}, err
	}
	return scalar{kind: scalarWord, text: t}, nil
}

// normalizeJSON turns the float64 numbers encoding/json decodes into int64
// where they are whole, as the apiserver's decoder does.
func normalizeJSON(v any) any {
	switch t := v.(type) {
	case float64:
		if i := int64(t); float64(i) == t && t >= -1<<53 && t <= 1<<53 {
			return i
		}
	case map[string]any:
		for k, c := range t {
			t[k] = normalizeJSON(c)
		}
	case []any:
		for i, c := range t {
			t[i] = normalizeJSON(c)
		}
	}
	return v
}

// quoted reads a quoted string at the start of s: "..." with Go's (and so
// JSON's) escapes, or '...' where \' and \\ are escapes. It returns the
// bytes read.
func (p *parser) quoted(s string, at int) (text, int, error) {
	q := s[0]
	var lit strings.Builder
	var glob []globToken
	wild := false
	for j := 1; j < len(s); {
		c := s[j]
		if c == q {
			t := text{lit: lit.String()}
			if wild {
				t.glob = glob
			}
			return t, j + 1, nil
		}
		var r rune
		kind := tokLit
		switch {
		case c == '\\' && j+1 < len(s):
			switch e := s[j+1]; {
			case e == '*' || e == '?' || e == '/' || e == '\'' || e == '"':
				r = rune(e)
				j += 2
			case q == '\'' && e == '\\':
				r = '\\'
				j += 2
			default:
				v, mb, tail, err := strconv.UnquoteChar(s[j:], q)
				if err != nil {
					return text{}, 0, p.errf(at+j, "bad escape %q", s[j:min(j+2, len(s))])
				}
				j = len(s) - len(tail)
				if !mb && v >= utf8.RuneSelf {
					// \xNN is one byte, not a rune: keep it as Go does.
					lit.WriteByte(byte(v))
					glob = append(glob, globToken{r: v, kind: tokLit})
					continue
				}
				r = v
			}
		default:
			var size int
			r, size = utf8.DecodeRuneInString(s[j:])
			if r == utf8.RuneError && size == 1 {
				// An invalid byte stands for itself.
				lit.WriteByte(c)
				glob = append(glob, globToken{r: rune(c), kind: tokLit})
				j++
				continue
			}
			j += size
			if p.globs && r == '*' {
				kind, wild = tokStar, true
			} else if p.globs && r == '?' {
				kind, wild = tokAny, true
			}
		}
		lit.WriteRune(r)
		glob = append(glob, globToken{r: r, kind: kind})
	}
	return text{}, 0, p.errf(at, "unclosed %c", q)
}

type part struct {
	s  string
	at int
}

// splitUnquoted splits s at sep outside quotes and JSON values.
func splitUnquoted(s, sep string) []part {
	var out []part
	start := 0
	scanTop(s, 0, func(i int) int {
		if !strings.HasPrefix(s[i:], sep) {
			return 0
		}
		out = append(out, part{s: s[start:i], at: start})
		start = i + len(sep)
		return len(sep) - 1
	})
	return append(out, part{s: s[start:], at: start})
}

// match tells whether s matches the text: equal, or matching its glob.
func (t text) match(s string) bool {
	if t.glob == nil {
		return t.lit == s
	}
	return matchGlob(t.glob, s)
}

// matchGlob is the two-pointer glob match: on a mismatch it only moves the
// last "*" one character on, so it never backtracks further: at most
// len(g)*len(s) steps, never exponential.
func matchGlob(g []globToken, s string) bool {
	pi, si, star, mark := 0, 0, -1, 0
	for si < len(s) {
		r, size := utf8.DecodeRuneInString(s[si:])
		switch {
		case pi < len(g) && (g[pi].kind == tokAny || g[pi].kind == tokLit && g[pi].r == r):
			pi++
			si += size
		case pi < len(g) && g[pi].kind == tokStar:
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			_, size := utf8.DecodeRuneInString(s[mark:])
			mark += size
			si = mark
		default:
			return false
		}
	}
	for pi < len(g) && g[pi].kind == tokStar {
		pi++
	}
	return pi == len(g)
}

// Glob matches s against a pattern where "*" is any run of characters and
// "?" any one character; nothing else is special. Manager names are
// matched with it.
func Glob(pattern, s string) bool {
	g := make([]globToken, 0, len(pattern))
	for _, r := range pattern {
		kind := tokLit
		switch r {
		case '*':
			kind = tokStar
		case '?':
			kind = tokAny
		}
		g = append(g, globToken{r: r, kind: kind})
	}
	return matchGlob(g, s)
}

// value returns the scalar as a value: a quoted string, a typed JSON value,
// or a word read as JSON reads it (80, 0.5, true, null), else a string.
func (s scalar) value() any {
	switch s.kind {
	case scalarString:
		return s.lit
	case scalarTyped:
		return s.v
	}
	return wordValue(s.lit)
}

func wordValue(w string) any {
	switch w {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if isJSONNumber(w) {
		if i, err := strconv.ParseInt(w, 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(w, 64); err == nil {
			return f
		}
	}
	return w
}

// isJSONNumber tells whether s is a number as JSON writes it.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i > start
	}
	if !digits() {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == len(s)
}

// matches tells whether v matches the scalar: a string matches a quoted
// text, any value a word that matches its text, a typed value an equal one.
func (s scalar) matches(v value.Value) bool {
	switch s.kind {
	case scalarString:
		return v.IsString() && s.match(v.AsString())
	case scalarTyped:
		return value.Equals(value.NewValueInterface(s.v), v)
	}
	if v.IsString() {
		return s.match(v.AsString())
	}
	return s.match(value.ToString(v))
}
