package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// FightLine writes one line of watch's live view: the object, the path,
// each side with the value it writes, and how often they flipped.
func FightLine(w io.Writer, f v1alpha1.Fight, p *Palette) error {
	w = Terminal(w) // the one way out: see terminal.go
	sides := make([]string, 0, len(f.Managers))
	for _, m := range f.Managers {
		who := m.Manager + " (" + string(m.Operation)
		if m.Subresource != "" {
			who += " /" + string(m.Subresource)
		}
		who += ")"
		sides = append(sides, p.Manager(m.Manager, who)+" writes "+jsonValue(m.Value))
	}
	_, err := fmt.Fprintf(w, "%s  %s %s  %s: %s; %d flips since %s (%.1f/min)\n",
		f.Last.UTC().Format("15:04:05"), p.Red("FIGHT"),
		f.Object.Display(), f.Path.String(),
		strings.Join(sides, " vs "), f.Flips, f.Since.UTC().Format("15:04:05"), f.PerMinute)
	return err
}

// FightJSON writes a fight as one line of JSON (watch -o json).
func FightJSON(w io.Writer, f v1alpha1.Fight) error {
	b, err := marshalPlain(f)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// marshalPlain is json.Marshal without HTML escaping: "<redacted #1>"
// reads as it is.
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func jsonValue(v any) string {
	b, err := marshalPlain(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
