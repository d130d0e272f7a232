package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testTemplate = `# the template's own comment, not copied
apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: ssa
spec:
  version: {{ .TagName }}
  platforms:
  - selector:
      matchLabels:
        os: linux
        arch: amd64
    {{ addURIAndSha "https://example.com/download/{{ .TagName }}/ssa_linux_amd64.tar.gz" .TagName }}
    bin: kubectl-ssa
  - selector:
      matchLabels:
        os: darwin
        arch: arm64
    {{ addURIAndSha "https://example.com/download/v{{ .Version }}/ssa_darwin_arm64.tar.gz" .TagName }}
    bin: kubectl-ssa
`

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// writeDist writes archives (name: content), a checksums.txt listing
// listed (name: content as listed) and metadata.json.
func writeDist(t *testing.T, archives, listed map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	var list bytes.Buffer
	for name, content := range archives {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range listed {
		list.WriteString(sum(content) + "  " + name + "\n")
	}
	files := map[string]string{
		"checksums.txt": list.String(),
		"metadata.json": `{"project_name":"kubectl-ssa","tag":"v0.1.0","version":"0.1.0"}`,
		"tmpl.yaml":     testTemplate,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRun(t *testing.T) {
	both := map[string]string{"ssa_linux_amd64.tar.gz": "linux", "ssa_darwin_arm64.tar.gz": "darwin"}
	tests := []struct {
		name                string
		archives, listed    map[string]string
		args                []string
		want                string // the manifest after the generated header
		wantHeader, wantErr string
	}{
		{
			name:     "every archive, the tag from metadata.json",
			archives: both, listed: both,
			wantHeader: "# Generated from tmpl.yaml by hack/krew-manifest (make krew-manifest) for v0.1.0,\n",
			want: `apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: ssa
spec:
  version: v0.1.0
  platforms:
  - selector:
      matchLabels:
        os: linux
        arch: amd64
    uri: https://example.com/download/v0.1.0/ssa_linux_amd64.tar.gz
    sha256: ` + sum("linux") + `
    bin: kubectl-ssa
  - selector:
      matchLabels:
        os: darwin
        arch: arm64
    uri: https://example.com/download/v0.1.0/ssa_darwin_arm64.tar.gz
    sha256: ` + sum("darwin") + `
    bin: kubectl-ssa
`,
		},
		{
			name:     "-tag wins over metadata.json",
			archives: both, listed: both,
			args:       []string{"-tag", "v0.2.0-rc.1"},
			wantHeader: "for v0.2.0-rc.1,\n",
		},
		{
			name:     "an archive that differs from the list",
			archives: both, listed: map[string]string{"ssa_linux_amd64.tar.gz": "linux", "ssa_darwin_arm64.tar.gz": "tampered"},
			wantErr: "ssa_darwin_arm64.tar.gz has sha256 " + sum("darwin") + ", ",
		},
		{
			name:     "-trust-checksums does not read the archives",
			archives: nil, listed: both,
			args:       []string{"-trust-checksums"},
			wantHeader: "for v0.1.0,\n",
		},
		{
			name:     "an archive the build did not make",
			archives: map[string]string{"ssa_linux_amd64.tar.gz": "linux"}, listed: map[string]string{"ssa_linux_amd64.tar.gz": "linux"},
			wantErr: "ssa_darwin_arm64.tar.gz is not in ",
		},
		{
			name:     "-partial drops the platforms not built",
			archives: map[string]string{"ssa_linux_amd64.tar.gz": "linux"}, listed: map[string]string{"ssa_linux_amd64.tar.gz": "linux"},
			args: []string{"-partial"},
			want: `apiVersion: krew.googlecontainertools.github.com/v1alpha2
kind: Plugin
metadata:
  name: ssa
spec:
  platforms:
  - bin: kubectl-ssa
    selector:
      matchLabels:
        arch: amd64
        os: linux
    sha256: ` + sum("linux") + `
    uri: https://example.com/download/v0.1.0/ssa_linux_amd64.tar.gz
  version: v0.1.0
`,
		},
		{
			name:     "-partial with nothing built",
			archives: nil, listed: map[string]string{},
			args:    []string{"-partial"},
			wantErr: "none of the template's archives was built",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dist := writeDist(t, tt.archives, tt.listed)
			args := append([]string{"-dist", dist, "-template", filepath.Join(dist, "tmpl.yaml")}, tt.args...)
			var out bytes.Buffer
			err := run(args, &out)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			header, body, _ := strings.Cut(out.String(), "Do not edit: change tmpl.yaml.\n")
			if !strings.Contains(header, tt.wantHeader) {
				t.Errorf("header %q lacks %q", header, tt.wantHeader)
			}
			if tt.want != "" {
				if diff := cmp.Diff(tt.want, body); diff != "" {
					t.Errorf("manifest (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestRunWritesFile(t *testing.T) {
	dist := writeDist(t, map[string]string{"ssa_linux_amd64.tar.gz": "linux"}, map[string]string{"ssa_linux_amd64.tar.gz": "linux"})
	out := filepath.Join(dist, "krew", "ssa.yaml")
	if err := run([]string{"-dist", dist, "-template", filepath.Join(dist, "tmpl.yaml"), "-partial", "-o", out}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.Contains(b, []byte("sha256: "+sum("linux"))) {
		t.Errorf("%s: %v\n%s", out, err, b)
	}
}
