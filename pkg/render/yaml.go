package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"
)

// YAML output is what sigs.k8s.io/yaml's JSONToYAML makes of the JSON
// output, byte for byte, but streamed: JSONToYAML reads the whole document
// into generic maps and writes it from them, 5 to 9 times the memory of
// the JSON for a report of a large object (372 MB for a ConfigMap of
// 20,000 keys). Here only small pieces go through it: a large object or
// array is walked in the JSON text, its members sorted as JSONToYAML sorts
// them, and each small member converted on its own, nested in a wrapper
// that puts it at the column it has in the whole document (line folding
// depends on the column).

// smallJSON is the size up to which a value is converted in one piece
// (a variable for the tests).
var smallJSON = 4 << 10

// writeYAML writes the YAML of one JSON document.
func writeYAML(w io.Writer, doc []byte) error {
	y := &yamlWriter{w: w}
	doc = bytes.TrimSpace(doc)
	if len(doc) <= smallJSON || doc[0] != '{' || isEmptyContainer(doc) {
		b, err := JSONToYAML(doc)
		if err != nil {
			return err
		}
		return y.write(b, 0)
	}
	return y.object(doc, 0)
}

type yamlWriter struct {
	w io.Writer
	// lead replaces the indentation of the next line written: the "- "
	// of a sequence item whose content starts on that line.
	lead string
}

// write writes YAML text whose lines are indented by col or more.
func (y *yamlWriter) write(b []byte, col int) error {
	if y.lead != "" {
		if len(b) < col || strings.TrimLeft(string(b[:col]), " ") != "" {
			return fmt.Errorf("yaml: cannot place %q after %q", b, y.lead)
		}
		if _, err := io.WriteString(y.w, y.lead); err != nil {
			return err
		}
		b, y.lead = b[col:], ""
	}
	_, err := y.w.Write(b)
	return err
}

// object writes the members of a JSON object at column col.
func (y *yamlWriter) object(raw []byte, col int) error {
	members, err := jsonMembers(raw)
	if err != nil {
		return err
	}
	sort.SliceStable(members, func(i, j int) bool { return yamlKeyLess(members[i].key, members[j].key) })
	var batch batch
	for _, m := range members {
		if batch.fits(len(m.rawKey) + len(m.value)) {
			batch.add(m.rawKey, m.value)
			continue
		}
		if err := y.flush(&batch, col, true); err != nil {
			return err
		}
		if batch.fits(len(m.rawKey) + len(m.value)) {
			batch.add(m.rawKey, m.value)
			continue
		}
		if err := y.member(m, col); err != nil {
			return err
		}
	}
	return y.flush(&batch, col, true)
}

// batch gathers small members or items, to convert them together.
type batch struct {
	json []byte
	n    int
}

func (b *batch) fits(size int) bool { return len(b.json)+size <= smallJSON }

func (b *batch) add(key, v []byte) {
	if b.n > 0 {
		b.json = append(b.json, ',')
	}
	if key != nil {
		b.json = append(append(b.json, key...), ':')
	}
	b.json = append(b.json, v...)
	b.n++
}

// flush converts the batch: members of a mapping or items of a sequence.
func (y *yamlWriter) flush(b *batch, col int, members bool) error {
	if b.n == 0 {
		return nil
	}
	err := y.small(b.json, col, members)
	b.json, b.n = b.json[:0], 0
	return err
}

// member writes "key: value" of a large value at column col.
func (y *yamlWriter) member(m jsonMember, col int) error {
	v := m.value
	key, ok := yamlKey(m.rawKey)
	if v[0] != '{' && v[0] != '[' || isEmptyContainer(v) || !ok {
		var b batch
		b.add(m.rawKey, v)
		return y.flush(&b, col, true)
	}
	if err := y.write([]byte(strings.Repeat(" ", col)+key+":\n"), col); err != nil {
		return err
	}
	if v[0] == '{' {
		return y.object(v, col+2)
	}
	// A sequence in a mapping is not indented.
	return y.array(v, col)
}

// array writes the items of a JSON array, "- " at column col.
func (y *yamlWriter) array(raw []byte, col int) error {
	items, err := jsonItems(raw)
	if err != nil {
		return err
	}
	var batch batch
	for _, it := range items {
		if batch.fits(len(it)) {
			batch.add(nil, it)
			continue
		}
		if err := y.flush(&batch, col, false); err != nil {
			return err
		}
		if batch.fits(len(it)) {
			batch.add(nil, it)
			continue
		}
		if err := y.item(it, col); err != nil {
			return err
		}
	}
	return y.flush(&batch, col, false)
}

// item writes one sequence item, "- " at column col.
func (y *yamlWriter) item(it []byte, col int) error {
	if len(it) <= smallJSON || it[0] != '{' && it[0] != '[' || isEmptyContainer(it) {
		var b batch
		b.add(nil, it)
		return y.flush(&b, col, false)
	}
	// The item's content starts on the line of its "- ", after the "- "
	// of the items it is the first of.
	if y.lead == "" {
		y.lead = strings.Repeat(" ", col)
	}
	y.lead += "- "
	if it[0] == '{' {
		return y.object(it, col+2)
	}
	return y.array(it, col+2)
}

// small converts members ("key":value,...) or sequence items (value,...)
// in one piece, nested in wrappers that put them at column col.
func (y *yamlWriter) small(v []byte, col int, members bool) error {
	var doc bytes.Buffer
	depth := col / 2
	if !members {
		depth++ // the sequence sits at the column of its key
	}
	for i := 0; i < depth; i++ {
		doc.WriteString(`{"a":`)
	}
	if members {
		doc.WriteByte('{')
		doc.Write(v)
		doc.WriteByte('}')
	} else {
		doc.WriteByte('[')
		doc.Write(v)
		doc.WriteByte(']')
	}
	for i := 0; i < depth; i++ {
		doc.WriteByte('}')
	}
	b, err := JSONToYAML(doc.Bytes())
	if err != nil {
		return err
	}
	for i := 0; i < depth; i++ {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return fmt.Errorf("yaml: unexpected conversion %q", b)
		}
		b = b[nl+1:]
	}
	return y.write(b, col)
}

// yamlKey is a key as JSONToYAML writes it before ": value", when it fits
// on one line.
func yamlKey(rawKey []byte) (string, bool) {
	b, err := JSONToYAML([]byte(`{` + string(rawKey) + `:null}`))
	if err != nil {
		return "", false
	}
	s, ok := strings.CutSuffix(string(b), ": null\n")
	return s, ok && !strings.Contains(s, "\n") && !strings.HasPrefix(s, "?")
}

func isEmptyContainer(v []byte) bool {
	t := bytes.TrimSpace(v[1 : len(v)-1])
	return len(t) == 0
}

type jsonMember struct {
	key    string
	rawKey []byte
	value  []byte
}

// jsonMembers splits a JSON object into its members, the values left as
// they are in raw.
func jsonMembers(raw []byte) ([]jsonMember, error) {
	var out []jsonMember
	i := skipSpace(raw, 1)
	for i < len(raw) && raw[i] != '}' {
		end, err := jsonEnd(raw, i)
		if err != nil {
			return nil, err
		}
		m := jsonMember{rawKey: raw[i:end]}
		if err := json.Unmarshal(m.rawKey, &m.key); err != nil {
			return nil, err
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, fmt.Errorf("json: expected : at %d", i)
		}
		i = skipSpace(raw, i+1)
		if end, err = jsonEnd(raw, i); err != nil {
			return nil, err
		}
		m.value = raw[i:end]
		out = append(out, m)
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return out, nil
}

// jsonItems splits a JSON array into its items.
func jsonItems(raw []byte) ([][]byte, error) {
	var out [][]byte
	i := skipSpace(raw, 1)
	for i < len(raw) && raw[i] != ']' {
		end, err := jsonEnd(raw, i)
		if err != nil {
			return nil, err
		}
		out = append(out, raw[i:end])
		i = skipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return out, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonEnd returns the end of the (valid) JSON value at i.
func jsonEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, io.ErrUnexpectedEOF
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := jsonEnd(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
	default:
		j := i
		for j < len(b) && !strings.ContainsRune(",}] \n\t\r", rune(b[j])) {
			j++
		}
		return j, nil
	}
	return 0, io.ErrUnexpectedEOF
}

// yamlKeyLess orders keys as go.yaml.in/yaml/v2 sorts map keys (and so
// JSONToYAML's output): letters before other characters, and runs of
// digits by their number, so key2 comes before key10. It follows the
// string case of v2's keyList.Less.
func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var ai, bi int
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		for ai = i; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for bi = i; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}
