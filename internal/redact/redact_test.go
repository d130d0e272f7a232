package redact

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const planted = "S3CR3T-planted\nline-two-of-it"

var planted64 = base64.StdEncoding.EncodeToString([]byte(planted))

func secret() map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "s", "annotations": map[string]any{
			LastApplied: `{"stringData":{"other":"from-the-annotation"}}`,
		}},
		"data":       map[string]any{"password": planted64, "short": base64.StdEncoding.EncodeToString([]byte("ab"))},
		"stringData": map[string]any{"token": "tok<en>&more"},
	}
}

func TestReplaceEveryForm(t *testing.T) {
	s := &Set{}
	s.AddSecret(secret())
	for _, text := range []string{
		planted, planted64, "S3CR3T-planted", "line-two-of-it", `S3CR3T-planted\nline-two-of-it`,
		"tok<en>&more", `tok\u003cen\u003e\u0026more`, base64.StdEncoding.EncodeToString([]byte("tok<en>&more")),
		"from-the-annotation",
	} {
		got := s.Replace("x " + text + " y")
		if got != "x "+Placeholder+" y" && !strings.Contains(got, Placeholder) {
			t.Errorf("%q: got %q", text, got)
		}
		for _, part := range []string{"S3CR3T", "line-two", "tok<en>", "from-the-annotation", planted64} {
			if strings.Contains(got, part) {
				t.Errorf("%q: %q is still there: %q", text, part, got)
			}
		}
	}
	// Short values are the views' business: "ab" stays.
	if got := s.Replace("ab cd"); got != "ab cd" {
		t.Errorf("a short value was replaced: %q", got)
	}
}

func TestOtherKindsAddNothing(t *testing.T) {
	s := &Set{}
	s.AddSecret(nil)
	s.AddSecret(map[string]any{"data": "not a map", "stringData": []any{"x"}})
	if s.Len() != 0 {
		t.Errorf("%d forms", s.Len())
	}
}

// A value split across writes is still replaced; without values the
// writer passes everything through at once.
func TestWriter(t *testing.T) {
	s := &Set{}
	var out bytes.Buffer
	w := s.Writer(&out)
	fmt.Fprint(w, "before any secret, no newline")
	if out.String() != "before any secret, no newline" {
		t.Fatalf("held back without values: %q", out.String())
	}
	s.AddSecret(secret())
	out.Reset()
	fmt.Fprint(w, "a: S3CR3T-pla")
	fmt.Fprint(w, "nted\nb: ok\nc: "+planted64[:5])
	fmt.Fprint(w, planted64[5:])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "a: <redacted>\nb: ok\nc: <redacted>"
	if out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
	s.Disable()
	out.Reset()
	fmt.Fprint(w, "S3CR3T-planted\n")
	if out.String() != "S3CR3T-planted\n" {
		t.Errorf("--show-secret-values: got %q", out.String())
	}
}

func TestSecretsPath(t *testing.T) {
	for p, want := range map[string]bool{
		"/api/v1/secrets":                         true,
		"/api/v1/namespaces/ns/secrets":           true,
		"/api/v1/namespaces/ns/secrets/s":         true,
		"/api/v1/namespaces/secrets/configmaps/x": false,
		"/api/v1/namespaces/ns/configmaps/s":      false,
		"/apis/apps/v1/namespaces/ns/secrets":     false,
		"/api/v1/namespaces/secrets":              false,
	} {
		if got := secretsPath(p); got != want {
			t.Errorf("%s: got %v", p, got)
		}
	}
}

// The transport reads Secrets out of single answers, lists and watch
// events, and leaves the body as it was for the client.
func TestTransport(t *testing.T) {
	obj := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"` + planted64 + `"}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("watch") == "true":
			fmt.Fprintf(w, `{"type":"ADDED","object":{"kind":"Secret","stringData":{"k":"watched-value-1"}}}`+"\n")
			fmt.Fprintf(w, `{"type":"MODIFIED","object":{"kind":"Secret","stringData":{"k":"watched-value-2"}}}`)
		case strings.HasSuffix(r.URL.Path, "/secrets"):
			fmt.Fprintf(w, `{"kind":"SecretList","items":[%s,{"stringData":{"k":"listed-value"}}]}`, obj)
		case strings.HasSuffix(r.URL.Path, "/configmaps/c"):
			fmt.Fprint(w, `{"kind":"ConfigMap","data":{"k":"configmap-value"}}`)
		default:
			fmt.Fprint(w, obj)
		}
	}))
	defer srv.Close()
	s := &Set{}
	c := &http.Client{Transport: s.Transport(http.DefaultTransport)}
	for _, path := range []string{"/api/v1/namespaces/n/secrets/s", "/api/v1/namespaces/n/secrets", "/api/v1/namespaces/n/secrets?watch=true", "/api/v1/namespaces/n/configmaps/c"} {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: body %q, %v", path, b, err)
		}
	}
	got := s.Replace(planted + " listed-value watched-value-1 watched-value-2 configmap-value")
	if want := "<redacted> <redacted> <redacted> <redacted> configmap-value"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzWriter: however output is cut into writes, a known value of
// MinLen or more bytes never reaches the underlying writer.
func FuzzWriter(f *testing.F) {
	f.Add("S3CR3T-value", "before S3CR3T-value after\nnext", uint8(3))
	f.Add("multi\nline-value", "x multi\nline-value y", uint8(1))
	f.Fuzz(func(t *testing.T, value, text string, cut uint8) {
		if len(strings.TrimSpace(value)) < MinLen || strings.ContainsAny(value, "\n\r\x00") {
			return
		}
		s := &Set{}
		s.AddSecret(map[string]any{"stringData": map[string]any{"k": value}})
		var out bytes.Buffer
		w := s.Writer(&out)
		full := text + value + text
		step := int(cut)%7 + 1
		for i := 0; i < len(full); i += step {
			end := min(i+step, len(full))
			if _, err := w.Write([]byte(full[i:end])); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		// The value's bytes from the input never reach the output: an
		// occurrence that the placeholder helps spell is none of them.
		if strings.Contains(strings.ReplaceAll(out.String(), Placeholder, "\x00"), strings.TrimSpace(value)) {
			t.Fatalf("%q written through: %q", value, out.String())
		}
	})
}

// TestReplaceOnePass: a value the placeholder spells with its neighbours,
// or holds itself, is not replaced again and again.
func TestReplaceOnePass(t *testing.T) {
	for _, c := range []struct{ value, text, want string }{
		{"0000000<", "00000000000000<x", "0000000<redacted>x"},
		{"redact", "a redact b", "a <redacted> b"},
		{"S3CR3T-value", "S3CR3T-valueS3CR3T-value", "<redacted><redacted>"},
	} {
		s := &Set{}
		s.AddSecret(map[string]any{"stringData": map[string]any{"k": c.value}})
		if got := s.Replace(c.text); got != c.want {
			t.Errorf("%q in %q: got %q, want %q", c.value, c.text, got, c.want)
		}
	}
}
