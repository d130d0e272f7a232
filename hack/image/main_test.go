package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// fakeBinaries writes a stand-in binary per platform, with the given
// mtime and mode: neither may reach the image.
func fakeBinaries(t *testing.T, mtime time.Time, mode os.FileMode, content string) []string {
	t.Helper()
	dir := t.TempDir()
	var args []string
	for _, p := range []string{"linux/arm64", "linux/amd64"} {
		path := filepath.Join(dir, strings.ReplaceAll(p, "/", "_"))
		if err := os.WriteFile(path, []byte(content+p), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		args = append(args, p+"="+path)
	}
	return args
}

func build(t *testing.T, epoch string, binaries []string) (digest, out string) {
	t.Helper()
	out = filepath.Join(t.TempDir(), "image")
	var stdout bytes.Buffer
	if err := run(append([]string{"-o", out, "-version", "v1.2.3", "-revision", "abc1234"}, binaries...), epoch, &stdout); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(stdout.String()), out
}

func TestSameDigestTwice(t *testing.T) {
	first, dir1 := build(t, "1767225600", fakeBinaries(t, time.Now(), 0o755, "kubectl-ssa "))
	second, dir2 := build(t, "1767225600", fakeBinaries(t, time.Now().Add(-time.Hour), 0o700, "kubectl-ssa "))
	if first != second {
		t.Errorf("two builds of the same binaries: %s then %s", first, second)
	}
	for _, name := range []string{"index.json", "oci-layout"} {
		a, _ := os.ReadFile(filepath.Join(dir1, name))
		b, _ := os.ReadFile(filepath.Join(dir2, name))
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s differs between the builds:\n%s\n%s", name, a, b)
		}
	}
	// What the digest depends on: the binaries and the time.
	if other, _ := build(t, "1767225600", fakeBinaries(t, time.Now(), 0o755, "changed ")); other == first {
		t.Errorf("other binaries, same digest %s", other)
	}
	if other, _ := build(t, "1767225601", fakeBinaries(t, time.Now(), 0o755, "kubectl-ssa ")); other == first {
		t.Errorf("another SOURCE_DATE_EPOCH, same digest %s", other)
	}
}

func TestImageContents(t *testing.T) {
	digest, dir := build(t, "1767225600", fakeBinaries(t, time.Now(), 0o600, "kubectl-ssa "))
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil || len(m.Manifests) != 1 || m.Manifests[0].Digest.String() != digest {
		t.Fatalf("the layout's one entry should be the printed index %s: %+v %v", digest, m, err)
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkImage(t, img, d.Platform.String())
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, platforms); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
}

func checkImage(t *testing.T, img v1.Image, platform string) {
	t.Helper()
	created := time.Unix(1767225600, 0).UTC()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "65532:65532" || cf.Config.Entrypoint[0] != "/usr/local/bin/kubectl-ssa" || !cf.Created.Equal(created) || cf.OS+"/"+cf.Architecture != platform {
		t.Errorf("%s: config user %q, entrypoint %v, created %v, platform %s/%s", platform, cf.Config.User, cf.Config.Entrypoint, cf.Created, cf.OS, cf.Architecture)
	}
	for _, h := range cf.History {
		if !h.Created.Equal(created) {
			t.Errorf("%s: history at %v", platform, h.Created)
		}
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%s: want one layer on an empty base, got %d (%v)", platform, len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	var files []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(created) {
			t.Errorf("%s: %s at %v", platform, h.Name, h.ModTime)
		}
		files = append(files, h.Name+" "+os.FileMode(h.Mode).String())
		if h.Name == binaryPath {
			body, _ := io.ReadAll(tr)
			if string(body) != "kubectl-ssa "+platform {
				t.Errorf("%s: the binary of another platform: %q", platform, body)
			}
		}
	}
	want := []string{"home/ -rwxr-xr-x", "home/nonroot/ -rwx------", "usr/ -rwxr-xr-x", "usr/local/ -rwxr-xr-x", "usr/local/bin/ -rwxr-xr-x", "usr/local/bin/kubectl-ssa -rwxr-xr-x"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("%s: layer (-want +got):\n%s", platform, diff)
	}
}

func TestUsage(t *testing.T) {
	for _, c := range []struct{ name, epoch, want string }{
		{"no binary", "", "usage: image -o DIR"},
		{"bad platform", "", `"linux=x": want OS/ARCH=BINARY`},
		{"bad epoch", "soon", `SOURCE_DATE_EPOCH="soon" is not a number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"-o", t.TempDir()}
			if c.name != "no binary" {
				args = append(args, "linux=x")
			}
			if c.name == "bad epoch" {
				args[len(args)-1] = "linux/amd64=x"
			}
			err := run(args, c.epoch, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
