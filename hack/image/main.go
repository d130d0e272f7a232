// Command image builds the kubectl-ssa container image (what the monitor's
// Helm chart runs) without a Docker daemon: each platform's static binary
// in one layer on an empty base, run as the non-root uid 65532, written as
// an OCI image layout whose one entry is the multi-platform index.
//
// Reproducible: every time in the image (the layer's files, the config's
// created and history) is SOURCE_DATE_EPOCH (make image passes the commit's
// time; 0 without it), owners and modes are fixed, platforms sorted; the
// same binaries give the same digest, whoever builds them and whenever
// (TestSameDigestTwice). The digest is printed on standard output.
//
//	go run ./hack/image -o dist/image [-version v1.2.3] [-revision abc1234] linux/amd64=PATH [linux/arm64=PATH ...]
//
// crane push dist/image REF publishes it (make image-push).
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// binaryPath is the entrypoint; the chart's args start with "monitor".
	binaryPath = "usr/local/bin/kubectl-ssa"
	// nonRoot is distroless' nonroot user, which the chart's
	// securityContext names too.
	nonRoot = 65532
	home    = "home/nonroot"
	source  = "https://github.com/kubectl-ssa/kubectl-ssa"
)

func main() {
	if err := run(os.Args[1:], os.Getenv("SOURCE_DATE_EPOCH"), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "image: "+err.Error())
		os.Exit(1)
	}
}

type options struct {
	out, version, revision string
	created                time.Time
	binaries               map[string]string // platform (os/arch) -> path
}

func parse(args []string, epoch string) (options, error) {
	var o options
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.StringVar(&o.out, "o", "", "the OCI image layout directory to write (must not exist, or be empty)")
	fs.StringVar(&o.version, "version", "", "the org.opencontainers.image.version label")
	fs.StringVar(&o.revision, "revision", "", "the org.opencontainers.image.revision label (the commit)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.out == "" || fs.NArg() == 0 {
		return o, errors.New("usage: image -o DIR [-version V] [-revision C] OS/ARCH=BINARY (one or more)")
	}
	secs := int64(0)
	if epoch != "" {
		var err error
		if secs, err = strconv.ParseInt(epoch, 10, 64); err != nil {
			return o, fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a number of seconds: %w", epoch, err)
		}
	}
	o.created = time.Unix(secs, 0).UTC()
	o.binaries = map[string]string{}
	for _, a := range fs.Args() {
		platform, path, ok := strings.Cut(a, "=")
		if goos, arch, ok2 := strings.Cut(platform, "/"); !ok || !ok2 || goos == "" || arch == "" || path == "" {
			return o, fmt.Errorf("%q: want OS/ARCH=BINARY, e.g. linux/amd64=bin/kubectl-ssa", a)
		}
		o.binaries[platform] = path
	}
	return o, nil
}

func run(args []string, epoch string, stdout io.Writer) error {
	o, err := parse(args, epoch)
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(o.out); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: remove it first (make image does)", o.out)
	}
	idx, err := index(o)
	if err != nil {
		return err
	}
	p, err := layout.Write(o.out, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx); err != nil {
		return err
	}
	d, err := idx.Digest()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, d)
	return err
}

// index is the multi-platform index of one image per binary, in platform order.
func index(o options) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	platforms := make([]string, 0, len(o.binaries))
	for p := range o.binaries {
		platforms = append(platforms, p)
	}
	slices.Sort(platforms)
	for _, p := range platforms {
		img, err := image(o, p)
		if err != nil {
			return nil, err
		}
		osName, arch, _ := strings.Cut(p, "/")
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: osName, Architecture: arch}},
		})
	}
	return idx, nil
}

// image is one platform's image: the binary's layer on an empty base.
func image(o options, platform string) (v1.Image, error) {
	bin, err := os.ReadFile(o.binaries[platform])
	if err != nil {
		return nil, err
	}
	tarData, err := layerTar(bin, o.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tarData)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: o.created}, CreatedBy: "hack/image: " + binaryPath, Comment: "kubectl-ssa, static"},
	})
	if err != nil {
		return nil, err
	}
	osName, arch, _ := strings.Cut(platform, "/")
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Created = osName, arch, v1.Time{Time: o.created}
	cf.Config = v1.Config{
		Entrypoint: []string{"/" + binaryPath},
		User:       fmt.Sprintf("%d:%d", nonRoot, nonRoot),
		Env:        []string{"HOME=/" + home, "PATH=/usr/local/bin"},
		WorkingDir: "/" + home,
		Labels:     labels(o),
	}
	return mutate.ConfigFile(img, cf)
}

func labels(o options) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.title":    "kubectl-ssa",
		"org.opencontainers.image.licenses": "Apache-2.0",
	}
	if o.version != "" {
		l["org.opencontainers.image.version"] = o.version
	}
	if o.revision != "" {
		l["org.opencontainers.image.revision"] = o.revision
	}
	return l
}

// layerTar is the layer's tar: the directories, the home directory owned
// by the non-root user, and the binary, all at the one fixed time.
func layerTar(bin []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, uid int, mode int64) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: mtime, Format: tar.FormatUSTAR}
	}
	headers := []*tar.Header{
		dir("home", 0, 0o755), dir(home, nonRoot, 0o700),
		dir("usr", 0, 0o755), dir("usr/local", 0, 0o755), dir("usr/local/bin", 0, 0o755),
	}
	for _, h := range headers {
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: binaryPath, Mode: 0o755, Size: int64(len(bin)), ModTime: mtime, Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(h); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
