package render

import (
	"bytes"
	"encoding/json"
	"strconv"

	goyaml "go.yaml.in/yaml/v2"
)

// JSONToYAML is sigs.k8s.io/yaml's JSONToYAML for any document the API
// can hold. JSONToYAML reads the JSON with a YAML parser, which refuses
// characters YAML does not allow in a stream (C1 controls, DEL, U+FFFE,
// raw as encoding/json leaves them: "yaml: control characters are not
// allowed") and keys longer than 1,024 characters ("did not find expected
// ',' or '}'"). Here the JSON is read as JSON, its numbers typed as go-yaml
// types them, and go-yaml's emitter writes the values: odd characters
// escaped in double quotes, long keys as "? key", the same bytes for
// everything else.
func JSONToYAML(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	out, err := goyaml.Marshal(yamlValue(v))
	if err != nil || !bytes.Contains(out, []byte("<<:")) {
		return out, err
	}
	return quoteMergeKeys(out), nil
}

// quoteMergeKeys quotes the map keys "<<" that go-yaml v2 writes plain,
// which a YAML 1.1 reader takes for a merge: `<<: x` becomes `"<<": x`.
// Lines inside a literal block (a multi-line string) are text, not keys.
func quoteMergeKeys(out []byte) []byte {
	lines := bytes.SplitAfter(out, []byte("\n"))
	block := -1 // the indentation of the line that opened a literal block
	for i, l := range lines {
		indent := len(l) - len(bytes.TrimLeft(l, " "))
		body := bytes.TrimRight(l, "\n")
		if block >= 0 {
			if len(bytes.TrimSpace(body)) == 0 || indent > block {
				continue
			}
			block = -1
		}
		rest := body[indent:]
		for bytes.HasPrefix(rest, []byte("- ")) {
			rest = rest[2:]
		}
		if bytes.HasPrefix(rest, []byte("<<:")) && (len(rest) == 3 || rest[3] == ' ') {
			at := len(body) - len(rest)
			lines[i] = append(append(append([]byte{}, l[:at]...), `"<<"`...), l[at+2:]...)
		}
		if literalBlock(body) {
			block = indent
		}
	}
	return bytes.Join(lines, nil)
}

// literalBlock tells whether a line ends with a literal block indicator
// (|, |-, |+, with an indentation digit), so that the lines below it
// that are indented further are the block's text.
func literalBlock(line []byte) bool {
	i := bytes.LastIndexByte(line, '|')
	if i < 0 || (i > 0 && line[i-1] != ' ') {
		return false
	}
	for _, c := range line[i+1:] {
		if c != '-' && c != '+' && (c < '1' || c > '9') {
			return false
		}
	}
	return true
}

// yamlValue types JSON numbers as go-yaml's parser would have: int, then
// uint64, then float64.
func yamlValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = yamlValue(x)
		}
	case []any:
		for i, x := range t {
			t[i] = yamlValue(x)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			if int64(int(i)) == i {
				return int(i)
			}
			return i
		}
		if u, err := strconv.ParseUint(string(t), 10, 64); err == nil {
			return u
		}
		if f, err := strconv.ParseFloat(string(t), 64); err == nil {
			return f
		}
		return string(t)
	}
	return v
}

// MarshalYAML is sigs.k8s.io/yaml's Marshal through JSONToYAML.
func MarshalYAML(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return JSONToYAML(b)
}
