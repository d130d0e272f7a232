package render

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// JSONToYAML is sigs.k8s.io/yaml's JSONToYAML for any string the API can
// hold. JSONToYAML parses the JSON as YAML, and a YAML parser refuses
// characters YAML does not allow in a stream (C1 controls, DEL, U+FFFE),
// raw as encoding/json leaves them: "yaml: control characters are not
// allowed". Written as JSON escapes, they reach the YAML emitter as
// values, which it writes escaped in a double-quoted scalar, as the
// apiserver's own YAML does.
func JSONToYAML(doc []byte) ([]byte, error) {
	return yaml.JSONToYAML(escapeForYAML(doc))
}

// MarshalYAML is sigs.k8s.io/yaml's Marshal through JSONToYAML.
func MarshalYAML(v interface{}) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return JSONToYAML(b)
}

// yamlPrintable tells whether a YAML 1.1 stream may hold r as it is.
func yamlPrintable(r rune) bool {
	switch {
	case r == 0x09 || r == 0x0A || r == 0x0D:
		return true
	case r >= 0x20 && r <= 0x7E:
		return true
	case r == 0x85:
		return false // NEL is a line break to a YAML reader
	case r >= 0xA0 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return r != 0xFEFF // a byte order mark inside a stream
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// escapeForYAML writes as \uXXXX every character of JSON text that a YAML
// reader refuses. Outside strings JSON is ASCII, so only string contents
// change; the text is returned as it is when nothing needs escaping.
func escapeForYAML(doc []byte) []byte {
	i := 0
	for i < len(doc) {
		if doc[i] < utf8.RuneSelf {
			if !yamlPrintable(rune(doc[i])) {
				break
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(doc[i:])
		if !yamlPrintable(r) || (r == utf8.RuneError && n == 1) {
			break
		}
		i += n
	}
	if i == len(doc) {
		return doc
	}
	out := make([]byte, 0, len(doc)+16)
	out = append(out, doc[:i]...)
	for i < len(doc) {
		r, n := utf8.DecodeRune(doc[i:])
		if r == utf8.RuneError && n == 1 {
			out = append(out, `\ufffd`...)
		} else if yamlPrintable(r) || r > 0xFFFF {
			out = append(out, doc[i:i+n]...)
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
		i += n
	}
	return out
}
