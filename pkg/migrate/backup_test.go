package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// Undo reports each backup it cannot read as failed, by name (issue 36,
// F4): overwritten with garbage, or a symlink to a device (read capped,
// never whole); another tool's JSON file is left alone.
func TestUndoReportsUnreadableBackups(t *testing.T) {
	live := partial(t, "web", "10")
	live.UID = "u1"
	dir := t.TempDir()
	b := Backup{Format: BackupFormat, Resource: deployments, Kind: "Deployment", Namespaced: true, Namespace: "ns", Name: "web", UID: "u1",
		ResourceVersion: "10", ManagedFields: live.ManagedFields, Migrated: live.ManagedFields}
	data, _ := json.Marshal(b)
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.json", string(data))
	write("b.json", "garbage")
	write("c.json", `{"format": "`+BackupFormat+`", "managedFields": 3}`)
	write("other.json", `{"kind": "Something"}`)
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "d.json")); err != nil {
		t.Fatal(err)
	}
	rep, err := Undo(context.Background(), Clients{Metadata: fakeClient(live)}, dir, v1alpha1.DryRunNone, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Scanned != 4 || rep.Summary.Unchanged != 1 || rep.Summary.Failed != 3 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	for _, o := range rep.Objects {
		if o.Result == v1alpha1.ResultFailed && !strings.Contains(o.Reason, o.Backup) {
			t.Errorf("%s: the reason does not name the file: %s", o.Backup, o.Reason)
		}
	}
}

// A file past MaxBackupSize is refused without being read whole.
func TestReadBackupCapped(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(p, make([]byte, MaxBackupSize+10), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readBackup(p); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v", err)
	}
}

// A symlink planted where an old run put its temporary file is not
// followed (issue 36, F5): the backup is written through a new file of
// a random name, mode 0600, and nothing is left behind.
func TestWriteBackupIgnoresPlantedSymlink(t *testing.T) {
	dir := t.TempDir()
	it := Item{Resource: Resource{GVR: deployments, Kind: "Deployment", Namespaced: true}}
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}}
	path := backupPath(dir, it, m)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path+".tmp"); err != nil {
		t.Fatal(err)
	}
	got, err := writeBackup(dir, it, m, &Plan{})
	if err != nil || got != path {
		t.Fatalf("writeBackup: %q %v", got, err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep" {
		t.Fatalf("the symlink was followed: %q", data)
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup: %v %v", st, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 { // web.json and the planted web.json.tmp
		t.Fatalf("left behind: %v", entries)
	}
}

// A second run into the same --backup-dir never overwrites the earlier
// backup of an object (issue 36, F6): undo would restore the state
// between the two runs.
func TestWriteBackupKeepsTheEarlierOne(t *testing.T) {
	dir := t.TempDir()
	it := Item{Resource: Resource{GVR: deployments, Kind: "Deployment", Namespaced: true}}
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1", ResourceVersion: "1"}}
	path, err := writeBackup(dir, it, m, &Plan{})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(path)
	m.ResourceVersion = "2"
	_, err = writeBackup(dir, it, m, &Plan{})
	want := dir + " already holds a backup of deployment ns/web from an earlier run: use another --backup-dir, or migrate undo first"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
	if again, _ := os.ReadFile(path); string(again) != string(first) {
		t.Fatal("the earlier backup was overwritten")
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("left behind: %v", entries)
	}
}

// The first backup that cannot be written stops the run (issue 36,
// F10): no object after it is started.
func TestRunStopsAtTheFirstBackupFailure(t *testing.T) {
	objs := []*metav1.PartialObjectMetadata{partial(t, "a", "1"), partial(t, "b", "1"), partial(t, "c", "1")}
	dir := t.TempDir()
	path := backupPath(dir, Item{Resource: Resource{GVR: deployments, Kind: "Deployment", Namespaced: true}}, objs[0])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	backoff := wait.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 5}
	rep, err := Run(context.Background(), Clients{Metadata: fakeClient(objs...)}, sourceOf(objs), RunOptions{
		Plan:        Options{Mode: v1alpha1.MigrateRename, Target: "kubectl", From: []string{"ci"}, Now: time.Now()},
		Concurrency: 1, Backoff: &backoff, BackupDir: dir, DryRun: v1alpha1.DryRunNone,
	})
	if !errors.Is(err, errBackupStopped) {
		t.Fatalf("got %v %+v %+v", err, rep.Summary, rep.Objects)
	}
	if rep.Summary.Scanned != 1 || rep.Summary.Failed != 1 || !strings.Contains(rep.Objects[0].Reason, "already holds a backup of deployment ns/a") {
		t.Fatalf("%+v %+v", rep.Summary, rep.Objects)
	}
}
