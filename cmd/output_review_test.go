package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/sarif"
)

func TestFileURI(t *testing.T) {
	for path, want := range map[string]string{
		"deploy/web.yaml":       "deploy/web.yaml",
		"./deploy/../web.yaml":  "web.yaml",
		"my manifests/a#b.yaml": "my%20manifests/a%23b.yaml",
		"/tmp/web.yaml":         "file:///tmp/web.yaml",
	} {
		if got := fileURI(path); got != want {
			t.Errorf("fileURI(%q) = %q, want %q", path, got, want)
		}
	}
}

// applyYAML conflicts with deploymentFixture's kubectl scale (replicas,
// line 7) and its two owners of the web container's image (line 18).
const applyYAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 7
  selector:
    matchLabels:
      app.kubernetes.io/name: web
  template:
    metadata:
      labels:
        app.kubernetes.io/name: web
    spec:
      containers:
      - name: web
        image: nginx:9
`

// TestSARIFLocations: -o sarif points each conflict at its line in the
// manifest file; from a kustomization there is no file of the object's
// own, so no physical location.
func TestSARIFLocations(t *testing.T) {
	file := writeFile(t, "web.yaml", applyYAML)
	type at struct {
		Field, URI string
		Line       int
	}
	locations := func(args ...string) []at {
		t.Helper()
		r := run(t, append([]string{"explain-conflict", "--local", "--live-file", deploymentFixture, "-o", "sarif"}, args...)...)
		if r.code != CodeFound {
			t.Fatalf("exit %d, want %d: %s", r.code, CodeFound, r.err)
		}
		var log sarif.Log
		if err := json.Unmarshal([]byte(r.out), &log); err != nil {
			t.Fatal(err)
		}
		var out []at
		for _, res := range log.Runs[0].Results {
			l := res.Locations[0]
			a := at{Field: l.LogicalLocations[0].Name}
			if p := l.PhysicalLocation; p != nil {
				a.URI, a.Line = p.ArtifactLocation.URI, p.Region.StartLine
			}
			out = append(out, a)
		}
		return out
	}
	uri := "file://" + filepath.ToSlash(file)
	image := `.spec.template.spec.containers[name="web"].image`
	want := []at{{".spec.replicas", uri, 7}, {image, uri, 18}, {image, uri, 18}}
	if diff := cmp.Diff(want, locations("-f", file)); diff != "" {
		t.Errorf("-f FILE (-want +got):\n%s", diff)
	}
	dir := filepath.Dir(file)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [web.yaml]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	want = []at{{Field: ".spec.replicas"}, {Field: image}, {Field: image}}
	if diff := cmp.Diff(want, locations("-k", dir)); diff != "" {
		t.Errorf("-k DIR (-want +got):\n%s", diff)
	}
}
