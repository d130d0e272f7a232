package helm

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Release is what kubectl-ssa reads of a Helm release: the fields of
// helm.sh/helm/v4/pkg/release/v1.Release it uses, under their JSON names.
type Release struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	// Version is the revision.
	Version int   `json:"version"`
	Info    *Info `json:"info"`
	// Manifest is the rendered chart, without its hooks: a multi-document
	// YAML stream.
	Manifest string `json:"manifest"`
	// ApplyMethod is how the revision was applied: "ssa", or "csa" or
	// empty (client-side: Helm 3, or Helm 4 with --server-side=false).
	ApplyMethod ApplyMethod `json:"apply_method"`
}

// Info is the part of a release's info kubectl-ssa uses.
type Info struct {
	Status Status `json:"status"`
}

// Status is a revision's status, as Helm names it.
type Status string

// Deployed is the status of the revision Helm considers live.
const Deployed Status = "deployed"

// ApplyMethod is how Helm applied a revision.
type ApplyMethod string

// The apply methods Helm 4 records; a revision without one (every Helm 3
// revision) was applied client-side.
const (
	ClientSideApply ApplyMethod = "csa"
	ServerSideApply ApplyMethod = "ssa"
)

// ServerSide tells whether the revision was applied server-side, which
// is also what Helm 4's helm upgrade --server-side=auto (its default)
// does next.
func (r *Release) ServerSide() bool { return r.ApplyMethod == ServerSideApply }

// Status is the revision's status ("" when the release has no info).
func (r *Release) Status() Status {
	if r.Info == nil {
		return ""
	}
	return r.Info.Status
}

// The names, type and labels of Helm's storage objects.
const (
	// SecretType is the type of the Secrets Helm 3 and 4 keep releases in.
	SecretType = "helm.sh/release.v1"
	// DataKey is the key of the release in the Secret's or ConfigMap's data.
	DataKey = "release"
	// The labels Helm sets on every storage object.
	LabelOwner   = "owner"
	LabelName    = "name"
	LabelStatus  = "status"
	LabelVersion = "version"
	// Owner is the value of LabelOwner.
	Owner = "helm"
)

// ObjectName is the name of the Secret or ConfigMap that holds a
// revision of a release.
func ObjectName(release string, revision int) string {
	return "sh.helm.release.v1." + release + ".v" + strconv.Itoa(revision)
}

// magicGzip starts gzipped data; Helm stored releases uncompressed before
// it compressed them, and still reads those.
var magicGzip = []byte{0x1f, 0x8b, 0x08}

// maxRelease bounds a release once decompressed, and is checked while
// it is decompressed, so a crafted object costs at most this much.
// Helm's storage object holds at most 1 MiB (the apiserver's limit on a
// Secret's or a ConfigMap's data), so the gzip inside Helm's base64 is at
// most 768 KiB; Helm's releases (the chart's templates and files, the
// values and the manifest, as JSON) compress 4 to 10 times, so 16 MiB
// leaves a 21-fold ratio over the largest gzip Helm can store. Past it
// the data is a decompression bomb, not a release Helm wrote.
var maxRelease = 16 << 20

// errTooLarge is a release past maxRelease.
var errTooLarge = errors.New("too large")

// Decode reads the value of the "release" key (for a Secret, after the
// Secret's own base64): base64 of the release's JSON, gzipped unless it
// predates Helm's compression, as Helm's decodeRelease reads it.
func Decode(data string) (*Release, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	if len(b) > 3 && bytes.Equal(b[:3], magicGzip) {
		if b, err = gunzip(b); err != nil {
			return nil, err
		}
	}
	var r Release
	// encoding/json's errors say where and which type, never the content
	// (the release's values may hold secrets).
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("not a release's JSON: %w", err)
	}
	if r.Name == "" {
		return nil, errors.New("not a Helm release: it has no name")
	}
	return &r, nil
}

// Encode is Decode's inverse, as Helm's encodeRelease writes a release:
// its JSON, gzipped at gzip.BestCompression, in standard base64 (for a
// Secret, under the Secret's own base64).
func Encode(r *Release) (string, error) {
	js, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	return EncodeJSON(js)
}

// EncodeJSON is Encode of a release's JSON already marshalled.
func EncodeJSON(js []byte) (string, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := zw.Write(js); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("gzip: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// gunzip decompresses b, refusing it as soon as it passes maxRelease.
func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not gzip: %w", err)
	}
	defer func() { _ = zr.Close() }()
	out, err := io.ReadAll(&capReader{r: zr, left: maxRelease})
	if errors.Is(err, errTooLarge) {
		return nil, fmt.Errorf("larger than %s once decompressed, more than Helm's storage can hold (1 MiB compressed): not a release Helm wrote", size(maxRelease))
	}
	if err != nil {
		return nil, fmt.Errorf("not gzip: %w", err)
	}
	return out, nil
}

// capReader reads r, failing with errTooLarge once more than left bytes
// come out of it: io.LimitReader would stop quietly, and a cut release
// would be reported as broken JSON.
type capReader struct {
	r    io.Reader
	left int
}

func (c *capReader) Read(p []byte) (int, error) {
	if len(p) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	c.left -= n
	if c.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

// size is n bytes as people read it.
func size(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
