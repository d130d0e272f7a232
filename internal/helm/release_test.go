package helm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
)

var update = flag.Bool("update", false, "rewrite the encoded fixtures from testdata/release.json")

// encode is Helm's encodeRelease (pkg/storage/driver/util.go): the JSON,
// gzipped at gzip.BestCompression, in standard base64.
func encode(t *testing.T, js []byte) string {
	t.Helper()
	s, err := testkit.HelmPadded(string(js), 0, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// source is testdata/release.json as json.Marshal writes it (compact).
func source(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "release.json"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestUpdateFixtures(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite the fixtures")
	}
	js := source(t)
	files := map[string]string{
		"release.gzip.b64":  encode(t, js),
		"release.plain.b64": base64.StdEncoding.EncodeToString(js),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join("testdata", name), []byte(body+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

type view struct {
	Name, Namespace string
	Version         int
	Status          Status
	ApplyMethod     ApplyMethod
	ServerSide      bool
	Kinds           int
}

func viewOf(r *Release) view {
	return view{Name: r.Name, Namespace: r.Namespace, Version: r.Version, Status: r.Status(), ApplyMethod: r.ApplyMethod,
		ServerSide: r.ServerSide(), Kinds: strings.Count(r.Manifest, "\nkind: ")}
}

func TestDecode(t *testing.T) {
	fromSource := view{Name: "web", Namespace: "shop", Version: 3, Status: Deployed, ApplyMethod: ServerSideApply, ServerSide: true, Kinds: 3}
	tests := []struct {
		name string
		data string
		want view
	}{
		{"gzipped, as Helm writes releases", fixture(t, "release.gzip.b64"), fromSource},
		{"uncompressed, as Helm wrote them before it compressed", fixture(t, "release.plain.b64"), fromSource},
		{"written by helm 4.2.4 on the test bed", fixture(t, "helm-4.2.4.b64"), view{Name: "demo", Namespace: "helm-demo", Version: 1, Status: Deployed, ApplyMethod: ServerSideApply, ServerSide: true, Kinds: 3}},
		{"a Helm 3 release: no apply method, so client-side", encode(t, []byte(`{"name":"old","info":{"status":"superseded"},"manifest":"","version":7,"namespace":"default"}`)),
			view{Name: "old", Namespace: "default", Version: 7, Status: "superseded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Decode(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, viewOf(r)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	gz := encode(t, source(t))
	raw, _ := base64.StdEncoding.DecodeString(gz)
	tests := []struct {
		name, data, want string
	}{
		{"not base64", "not base64!", "not base64"},
		{"the Secret's base64 not taken off: Helm's base64 of base64", base64.StdEncoding.EncodeToString([]byte(gz)), "not a release's JSON"},
		{"gzip cut short", base64.StdEncoding.EncodeToString(raw[:len(raw)/2]), "not gzip"},
		{"gzip magic, then garbage", base64.StdEncoding.EncodeToString([]byte{0x1f, 0x8b, 0x08, 0xff, 0x00}), "not gzip"},
		{"JSON of something else", encode(t, []byte(`{"kind":"ConfigMap"}`)), "not a Helm release: it has no name"},
		{"a broken JSON that holds a secret", encode(t, []byte(`{"name":"web","config":{"password":"user-supplied-s3cret"`)), "not a release's JSON"},
		{"no data", "", "not a release's JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error quotes the release's content: %v", err)
			}
		})
	}
}

// TestDecodeBounded: a release that decompresses past the bound is
// refused rather than read into memory.
func TestDecodeBounded(t *testing.T) {
	defer func(n int) { maxRelease = n }(maxRelease)
	maxRelease = 1000
	big := `{"name":"web","manifest":"` + strings.Repeat("a", 2000) + `"}`
	if _, err := Decode(encode(t, []byte(big))); err == nil || !strings.Contains(err.Error(), "larger than 1000 bytes") {
		t.Fatalf("got %v, want the bound refused", err)
	}
	if _, err := Decode(encode(t, []byte(`{"name":"web"}`))); err != nil {
		t.Fatalf("a small release: %v", err)
	}
}

func TestObjectName(t *testing.T) {
	if got, want := ObjectName("web", 12), "sh.helm.release.v1.web.v12"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestDecodeBomb: a release that decompresses to far more than Helm's
// storage could hold is refused at the bound, with the bound's words.
func TestDecodeBomb(t *testing.T) {
	tests := []struct {
		name string
		pad  int
		want string
	}{
		{"just under the bound: read", maxRelease - 100, ""},
		{"just over the bound", maxRelease, "larger than 16 MiB once decompressed, more than Helm's storage can hold (1 MiB compressed): not a release Helm wrote"},
		{"a 64 MiB bomb", 64 << 20, "larger than 16 MiB once decompressed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := testkit.HelmPadded(`{"name":"web","manifest":"`, tt.pad, `"}`)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Decode(data)
			if tt.want == "" && err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// endless reads zeros for ever, counting them.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.n += len(p)
	return len(p), nil
}

// TestCapReader: the bound is checked while reading, so an endless
// stream stops just past it.
func TestCapReader(t *testing.T) {
	src := &endless{}
	b, err := io.ReadAll(&capReader{r: src, left: 1000})
	if !errors.Is(err, errTooLarge) {
		t.Fatalf("got %v, want errTooLarge", err)
	}
	if src.n != 1001 || len(b) != 1001 {
		t.Errorf("read %d bytes of the source, returned %d; want 1001 (one past the bound)", src.n, len(b))
	}
	b, err = io.ReadAll(&capReader{r: strings.NewReader("abc"), left: 3})
	if err != nil || string(b) != "abc" {
		t.Errorf("exactly the bound: %q, %v", b, err)
	}
}

func TestCheckDocuments(t *testing.T) {
	doc := "---\n# Source: web/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
	tests := []struct {
		name     string
		manifest string
		want     string
	}{
		{"a chart's render", strings.Repeat(doc, 3), ""},
		{"the bound", strings.Repeat(doc, MaxObjects), ""},
		{"one past the bound", strings.Repeat(doc, MaxObjects+1), "its manifest has 3001 documents, more than the 3000 objects kubectl-ssa reads of a release (charts render a few hundred)"},
		{"separators without objects count too", strings.Repeat("---\n", MaxObjects+1), "its manifest has 3001 documents"},
		{"--- inside a line or a block is no separator", "data: |\n  ---\n  ---\nx: a---\n" + strings.Repeat("----\n", MaxObjects+1), ""},
		{"a separator with a comment, and CRLF", strings.Repeat("--- # c\r\n---\r\n", MaxObjects/2+1), "its manifest has 3002 documents"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckDocuments(tt.manifest)
			if tt.want == "" && err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
