package cmd

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// The file's gzip header holds no name and no time: the same snapshot
// gives the same bytes.
func TestSnapshotGzipIsDeterministic(t *testing.T) {
	var a, b bytes.Buffer
	doc := []byte(`{"apiVersion":"ssa.kubectl-ssa.io/v1alpha1","kind":"Snapshot"}`)
	if err := gzipTo(&a, doc); err != nil {
		t.Fatal(err)
	}
	if err := gzipTo(&b, doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of one snapshot differ")
	}
	r, err := gzip.NewReader(&a)
	if err != nil {
		t.Fatal(err)
	}
	if !r.ModTime.IsZero() || r.Name != "" || r.Comment != "" {
		t.Errorf("gzip header: time %v, name %q, comment %q", r.ModTime, r.Name, r.Comment)
	}
}

// The help lists only the flags snapshot takes: a snapshot lists whole
// kinds, so -f, -k and -R (refused) are not offered.
func TestSnapshotHelpOffersNoFileFlags(t *testing.T) {
	cmd := newSnapshotCmd(&globalOptions{})
	for _, name := range []string{"filename", "kustomize", "recursive"} {
		if f := cmd.Flags().Lookup(name); f != nil && !f.Hidden {
			t.Errorf("snapshot --help offers --%s, which it refuses", name)
		}
	}
}

// A snapshot taken in the future (clocks that disagree) has no age
// --max-age can check: refused with exit 6, as an old one; one with no
// takenAt is not a snapshot.
func TestSnapshotMaxAgeFuture(t *testing.T) {
	dir := t.TempDir()
	for name, takenAt := range map[string]string{"future": time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339), "none": ""} {
		doc := `{"apiVersion":"ssa.kubectl-ssa.io/v1alpha1","kind":"Snapshot","salt":"00"`
		if takenAt != "" {
			doc += `,"takenAt":"` + takenAt + `"`
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(doc+"}"), 0o600); err != nil {
			t.Fatal(err)
		}
		s := &snapshotInput{file: f, maxAge: time.Hour}
		_, err := s.source(nil)
		var exit *ExitError
		switch {
		case err == nil:
			t.Errorf("%s: accepted", name)
		case name == "future" && (!errors.As(err, &exit) || exit.Code != CodeSnapshotTooOld):
			t.Errorf("%s: %v, not exit %d", name, err, CodeSnapshotTooOld)
		case name == "none" && !strings.Contains(err.Error(), "takenAt"):
			t.Errorf("%s: %v", name, err)
		}
	}
}

// -o is the file to write: a kubectl output format given there (-o json,
// as every other command takes it) is refused, not written as a file of
// that name.
func TestSnapshotOutputIsAFile(t *testing.T) {
	for out, ok := range map[string]bool{"json": false, "yaml": false, "jsonpath={.x}": false, "markdown": false, "./json": true, "shop.snapshot": true, "-": true} {
		o := &snapshotOptions{out: out, args: []string{"deployments"}, saltHex: strings.Repeat("ab", 32)}
		if err := o.validate(); (err == nil) != ok {
			t.Errorf("-o %s: %v", out, err)
		}
	}
}

// Lists the server refused are named when the snapshot is written: the
// predictions that read them will not be exact.
func TestSnapshotRefusedWarning(t *testing.T) {
	snap := &v1alpha1.Snapshot{Lists: []v1alpha1.SnapshotList{
		{Version: "v1", Resource: "configmaps", Namespace: "shop"},
		{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies", Refused: "forbidden"},
		{Version: "v1", Resource: "secrets", Namespace: "shop", Refused: "forbidden"},
	}}
	got := refusedWarning(snap)
	if !strings.Contains(got, "2 lists") || !strings.Contains(got, "validatingadmissionpolicies.admissionregistration.k8s.io") || !strings.Contains(got, "secrets in namespace shop") {
		t.Errorf("warning %q", got)
	}
	if refusedWarning(&v1alpha1.Snapshot{Lists: snap.Lists[:1]}) != "" {
		t.Error("a warning with nothing refused")
	}
}

// A snapshot from the future (clocks that disagree) says so in the text
// views' header, not a negative age.
func TestSnapshotHeaderFuture(t *testing.T) {
	s := &snapshotInput{file: "f", now: time.Unix(1000, 0)}
	snap := &v1alpha1.Snapshot{TakenAt: metav1.Unix(1000+7200, 0)}
	s.snap = &source.Snapshot{File: snap}
	var b bytes.Buffer
	s.printHeader(&b)
	if strings.Contains(b.String(), "-2h") || !strings.Contains(b.String(), "2h0m0s in the future") {
		t.Errorf("header %q", b.String())
	}
}

// -o FILE that can't be written is refused before the cluster is read,
// naming the directory, not a temporary file.
func TestSnapshotOutFile(t *testing.T) {
	dir := t.TempDir()
	for out, want := range map[string]string{
		dir:                                "is a directory: give a file in it",
		filepath.Join(dir, "nope", "s.gz"): "the directory " + filepath.Join(dir, "nope") + " does not exist",
		filepath.Join(dir, "s.gz"):         "",
		"-":                                "",
	} {
		err := checkOutFile(out)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("-o %s: %v, want %q", out, err, want)
		}
	}
}
