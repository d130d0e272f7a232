package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// Snapshot is the offline source: a Cluster whose every read is answered
// from a snapshot (kubectl ssa snapshot), so the prediction reads its
// State as it would from the cluster then, with no cluster reached.
type Snapshot struct {
	*Cluster
	File *v1alpha1.Snapshot
	salt []byte
}

var _ conflict.Source = (*Snapshot)(nil)

// NewSnapshot reads from f, in namespace ns (enforce: -n was given).
func NewSnapshot(f *v1alpha1.Snapshot, ns string, enforce bool) (*Snapshot, error) {
	salt, err := hex.DecodeString(f.Salt)
	if err != nil {
		return nil, fmt.Errorf("its salt is not hex: %w", err)
	}
	rt, err := newSnapshotTransport(f)
	if err != nil {
		return nil, err
	}
	c, err := kube.Offline(rt, ns, enforce)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Cluster: NewCluster(c, ""), File: f, salt: salt}, nil
}

// Reader is the snapshot's reader: every read the cluster's makes.
func (s *Snapshot) Reader() Reader {
	return Reader{Source: s, Resolve: s.Resolve, Admission: s.Admission}
}

// Target implements conflict.Source: the cluster's, with a Secret's
// hashed values put back where the manifest's value has the same hash
// (the value is then the same), and a stand-in that differs from it
// where not.
func (s *Snapshot) Target(ctx context.Context, obj *unstructured.Unstructured) (*conflict.Target, error) {
	t, err := s.Cluster.Target(ctx, obj)
	if err != nil || t.Live == nil || obj.GroupVersionKind().GroupKind() != secretKind {
		return t, err
	}
	t.Live = t.Live.DeepCopy()
	s.unhash(t.Live.Object, obj)
	ann := t.Live.GetAnnotations()
	if v, ok := ann[lastApplied]; ok {
		var m map[string]any
		if json.Unmarshal([]byte(v), &m) == nil && m != nil {
			s.unhash(m, obj)
			if b, err := json.Marshal(m); err == nil {
				ann[lastApplied] = string(b) + strings.TrimPrefix(v, strings.TrimRight(v, "\n"))
				t.Live.SetAnnotations(ann)
			}
		}
	}
	return t, nil
}

// unhash puts back, in a Secret's data and stringData (of the live object
// or of its last-applied configuration), the manifest's value where it
// hashes as the stored one; elsewhere a stand-in, the same for the same
// hash (values equal live stay equal) and never the manifest's.
func (s *Snapshot) unhash(secret map[string]any, manifest *unstructured.Unstructured) {
	for _, field := range []string{"data", "stringData"} {
		m, _ := secret[field].(map[string]any)
		for k, v := range m {
			stored, _ := v.(string)
			value := []byte("(a value kubectl ssa snapshot did not keep: " + strings.TrimPrefix(stored, v1alpha1.SecretHashPrefix) + ")")
			mine, ok := secretValue(manifest, k)
			switch {
			case ok && stored == HashValue(s.salt, mine):
				value = mine
			case ok && stored == string(mine):
				// A Helm release's manifest, as the snapshot kept it
				// (hashed): the same value.
				value = mine
			}
			m[k] = string(value)
			if field == "data" {
				m[k] = base64.StdEncoding.EncodeToString(value)
			}
		}
	}
}

// secretValue is the value of key in a manifest's Secret: in stringData
// (which the server writes over data's), else data's, decoded.
func secretValue(obj *unstructured.Unstructured, key string) ([]byte, bool) {
	if v, ok, _ := unstructured.NestedString(obj.Object, "stringData", key); ok {
		return []byte(v), true
	}
	v, ok, _ := unstructured.NestedString(obj.Object, "data", key)
	if !ok {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(v)
	return b, err == nil
}

// HashValue is what a snapshot stores in place of a Secret's value.
func HashValue(salt, value []byte) string {
	m := hmac.New(sha256.New, salt)
	m.Write(value)
	return v1alpha1.SecretHashPrefix + hex.EncodeToString(m.Sum(nil))
}

// MaxSnapshotBytes bounds a snapshot once decompressed: ten times a
// 50,000-object one, and not a gzip bomb's worth.
const MaxSnapshotBytes = 1 << 30

// ReadSnapshot reads a snapshot file (gzip-compressed or plain JSON).
func ReadSnapshot(path string) (*v1alpha1.Snapshot, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--snapshot %s: no such file: take one with kubectl ssa snapshot -o FILE", path)
	}
	if err != nil {
		return nil, fmt.Errorf("--snapshot: %w", err)
	}
	defer func() { _ = f.Close() }()
	br := bufio.NewReader(f)
	var r io.Reader = br
	magic, _ := br.Peek(2)
	switch {
	case len(magic) == 0:
		return nil, fmt.Errorf("--snapshot %s: the file is empty: take one with kubectl ssa snapshot -o FILE", path)
	case bytes.Equal(magic, []byte{0x1f, 0x8b}):
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("--snapshot %s: %w", path, err)
		}
		r = gz
	}
	limited := &io.LimitedReader{R: r, N: MaxSnapshotBytes + 1}
	var snap v1alpha1.Snapshot
	dec := json.NewDecoder(limited)
	dec.UseNumber() // (the objects' numbers as they were, served back as they were)
	if err := dec.Decode(&snap); err != nil {
		if limited.N <= 0 {
			return nil, fmt.Errorf("--snapshot %s: it holds more than %d bytes once decompressed, more than a snapshot does: take one with kubectl ssa snapshot -o FILE", path, int64(MaxSnapshotBytes))
		}
		return nil, fmt.Errorf("--snapshot %s: not a snapshot (%w): take one with kubectl ssa snapshot -o FILE", path, err)
	}
	if snap.APIVersion != v1alpha1.GroupVersion || snap.Kind != v1alpha1.SnapshotKind {
		return nil, fmt.Errorf("--snapshot %s: a %s %s, not a %s %s: take one with kubectl ssa snapshot -o FILE", path, snap.APIVersion, snap.Kind, v1alpha1.GroupVersion, v1alpha1.SnapshotKind)
	}
	if snap.TakenAt.IsZero() {
		return nil, fmt.Errorf("--snapshot %s: it has no takenAt (its age is not known): take one with kubectl ssa snapshot -o FILE", path)
	}
	return &snap, nil
}
