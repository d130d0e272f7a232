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

// maxRelease bounds the decompressed release: a Secret holds at most
// 1 MiB, and a release compresses well, but not a thousandfold.
var maxRelease = 256 << 20

// Decode reads the value of the "release" key (for a Secret, after the
// Secret's own base64): base64 of the release's JSON, gzipped unless it
// predates Helm's compression, as Helm's decodeRelease reads it.
func Decode(data string) (*Release, error) {
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return nil, fmt.Errorf("not base64: %w", err)
	}
	if len(b) > 3 && bytes.Equal(b[:3], magicGzip) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("not gzip: %w", err)
		}
		defer func() { _ = zr.Close() }()
		if b, err = io.ReadAll(io.LimitReader(zr, int64(maxRelease)+1)); err != nil {
			return nil, fmt.Errorf("not gzip: %w", err)
		}
		if len(b) > maxRelease {
			return nil, fmt.Errorf("larger than %d bytes once decompressed: not a release", maxRelease)
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
