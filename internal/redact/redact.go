package redact

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// Placeholder replaces a Secret value in output.
const Placeholder = "<redacted>"

// LastApplied is kubectl's client-side apply annotation, which holds a
// whole copy of the Secret it applied.
const LastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// MinLen is the length below which a form of a value is not searched for
// in output.
const MinLen = 6

// Set is the Secret values seen by this process. The zero value is ready;
// it is safe for concurrent use.
type Set struct {
	mu       sync.RWMutex
	forms    map[string]bool
	replacer *strings.Replacer
	off      bool
}

// setKey is the context key of a run's Set.
type setKey struct{}

// NewContext returns a copy of ctx that carries s: the run's Set, which
// what reads objects adds the Secrets it reads to (internal/kube).
func NewContext(ctx context.Context, s *Set) context.Context {
	return context.WithValue(ctx, setKey{}, s)
}

// FromContext is the Set ctx carries, or nil (whose AddSecret does
// nothing).
func FromContext(ctx context.Context) *Set {
	s, _ := ctx.Value(setKey{}).(*Set)
	return s
}

// Disable stops replacing values in output (--show-secret-values).
func (s *Set) Disable() {
	s.mu.Lock()
	s.off = true
	s.mu.Unlock()
}

// Len is the number of forms known.
func (s *Set) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.forms)
}

// AddSecret remembers the values of a Secret's content: data (base64),
// stringData (clear) and the data and stringData of the copy kubectl's
// client-side apply keeps in an annotation. Content of any other shape
// adds nothing.
func (s *Set) AddSecret(content map[string]any) {
	if s == nil || content == nil {
		return
	}
	var forms []string
	if data, ok := content["data"].(map[string]any); ok {
		for _, v := range data {
			if b64, ok := v.(string); ok {
				forms = append(forms, b64)
				if clear, err := base64.StdEncoding.DecodeString(b64); err == nil {
					forms = append(forms, clearForms(string(clear))...)
				}
			}
		}
	}
	if sd, ok := content["stringData"].(map[string]any); ok {
		for _, v := range sd {
			if clear, ok := v.(string); ok {
				forms = append(forms, clearForms(clear)...)
				forms = append(forms, base64.StdEncoding.EncodeToString([]byte(clear)))
			}
		}
	}
	if meta, ok := content["metadata"].(map[string]any); ok {
		if ann, ok := meta["annotations"].(map[string]any); ok {
			if la, ok := ann[LastApplied].(string); ok {
				var copyOf map[string]any
				if json.Unmarshal([]byte(la), &copyOf) == nil {
					s.AddSecret(copyOf)
				}
			}
		}
	}
	s.add(forms)
}

// clearForms is a clear value as output may show it: as it is, each of
// its lines (YAML writes a multi-line value as a block), JSON-escaped
// (with and without HTML escapes) and escaped for a terminal line.
func clearForms(v string) []string {
	forms := []string{v}
	if strings.ContainsAny(v, "\n\r") {
		forms = append(forms, strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' })...)
	}
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(v) == nil {
			q := strings.TrimSuffix(b.String(), "\n")
			forms = append(forms, q[1:len(q)-1])
		}
	}
	forms = append(forms, strings.NewReplacer("\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(v))
	return forms
}

func (s *Set) add(forms []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := false
	for _, f := range forms {
		f = strings.TrimSpace(f)
		if len(f) < MinLen || s.forms[f] {
			continue
		}
		if s.forms == nil {
			s.forms = map[string]bool{}
		}
		s.forms[f] = true
		changed = true
	}
	if !changed {
		return
	}
	// Longest first: a value that holds another is replaced whole.
	all := make([]string, 0, len(s.forms))
	for f := range s.forms {
		all = append(all, f)
	}
	sort.Slice(all, func(i, j int) bool {
		if len(all[i]) != len(all[j]) {
			return len(all[i]) > len(all[j])
		}
		return all[i] < all[j]
	})
	pairs := make([]string, 0, 2*len(all))
	for _, f := range all {
		pairs = append(pairs, f, Placeholder)
	}
	s.replacer = strings.NewReplacer(pairs...)
}

// Replace returns text with every known value replaced.
func (s *Set) Replace(text string) string {
	s.mu.RLock()
	r, off := s.replacer, s.off
	s.mu.RUnlock()
	if r == nil || off {
		return text
	}
	// One pass, leftmost match first, the longest value first at one
	// place: no value of the input survives whole. The placeholder and
	// its neighbours can spell a value ("x<" before "redacted>", or a
	// value inside "<redacted>" itself); that is no byte of the value
	// from the input, and replacing it again would only grow the text
	// ("<<redacted>ed>").
	return r.Replace(text)
}

func (s *Set) active() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.replacer != nil && !s.off
}

// Writer returns w with every known value replaced on the way out. Text
// is held back to the end of its line (a value split across two writes is
// still found); Flush writes what is held.
func (s *Set) Writer(w io.Writer) *Writer { return &Writer{set: s, w: w} }

// Writer is a Set's filter over an io.Writer.
type Writer struct {
	mu      sync.Mutex
	set     *Set
	w       io.Writer
	pending []byte
}

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.set.active() {
		if len(w.pending) > 0 {
			if err := w.flushLocked(); err != nil {
				return 0, err
			}
		}
		return w.w.Write(p)
	}
	w.pending = append(w.pending, p...)
	end := bytes.LastIndexAny(w.pending, "\n\r")
	if end < 0 {
		return len(p), nil
	}
	out := w.set.Replace(string(w.pending[:end+1]))
	rest := copy(w.pending, w.pending[end+1:])
	w.pending = w.pending[:rest]
	if _, err := io.WriteString(w.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes the text held back.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	if len(w.pending) == 0 {
		return nil
	}
	out := w.set.Replace(string(w.pending))
	w.pending = w.pending[:0]
	_, err := io.WriteString(w.w, out)
	return err
}

// Fd is the underlying file's descriptor, so that terminal checks
// (printers.IsTerminal, colour) see through the filter.
func (w *Writer) Fd() uintptr {
	if f, ok := w.w.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Transport remembers the Secrets in the apiserver's answers to requests
// on Secrets: single objects, lists, metadata-only lists and watch
// events. Answers about anything else pass untouched and unread.
func (s *Set) Transport(rt http.RoundTripper) http.RoundTripper {
	return &transport{set: s, next: rt}
}

type transport struct {
	set  *Set
	next http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil || !secretsPath(req.URL.Path) || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return resp, err
	}
	if req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1" {
		resp.Body = &watchBody{set: t.set, body: resp.Body}
		return resp, nil
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	t.set.addDocument(b)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{err}))
	}
	return resp, nil
}

// WrappedRoundTripper lets client-go see the transport below.
func (t *transport) WrappedRoundTripper() http.RoundTripper { return t.next }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// secretsPath tells whether a request path is about Secrets: the core
// group's secrets resource, in a namespace or across them.
func secretsPath(p string) bool {
	if !strings.HasPrefix(p, "/api/v1/") {
		return false
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	// api v1 secrets[/NAME] | api v1 namespaces NS secrets[/NAME[/SUB]]
	switch {
	case len(parts) >= 3 && parts[2] == "secrets":
		return true
	case len(parts) >= 5 && parts[2] == "namespaces" && parts[4] == "secrets":
		return true
	}
	return false
}

// addDocument remembers the Secrets of one JSON answer: an object, a list
// of them, or a watch event.
func (s *Set) addDocument(b []byte) {
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil {
		return
	}
	s.addAny(doc)
}

func (s *Set) addAny(doc map[string]any) {
	if items, ok := doc["items"].([]any); ok {
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				s.AddSecret(m)
			}
		}
		return
	}
	if obj, ok := doc["object"].(map[string]any); ok && doc["type"] != nil {
		s.AddSecret(obj)
		return
	}
	s.AddSecret(doc)
}

// watchBody remembers the Secrets of watch events as they pass: the
// apiserver ends each JSON event with a newline, and an event is
// remembered before the bytes that end it are handed on.
type watchBody struct {
	set  *Set
	body io.ReadCloser
	line []byte
}

func (w *watchBody) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	chunk := p[:n]
	for len(chunk) > 0 {
		nl := bytes.IndexByte(chunk, '\n')
		if nl < 0 {
			w.line = append(w.line, chunk...)
			break
		}
		w.line = append(w.line, chunk[:nl]...)
		w.set.addDocument(w.line)
		w.line = w.line[:0]
		chunk = chunk[nl+1:]
	}
	// An event whose newline has not come yet may already be whole for
	// the decoder reading these bytes.
	if l := len(w.line); l > 0 && w.line[l-1] == '}' && json.Valid(w.line) {
		w.set.addDocument(w.line)
		w.line = w.line[:0]
	}
	return n, err
}

func (w *watchBody) Close() error { return w.body.Close() }
