package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 36: migrate resolves every object of -f before its first write
// (a missing one: exit 2, nothing written, the hint said once); a second
// run into the same --backup-dir never overwrites a backup; undo reports
// a corrupt backup as failed (exit 3).
func TestMigrateBackupsHardening(t *testing.T) {
	ns := namespace(t)
	csaApply(t, ns, strings.Replace(csaConfigMap, `"cfg"`, `"p1"`, 1))
	csaApply(t, ns, strings.Replace(csaConfigMap, `"cfg"`, `"p2"`, 1))
	file := filepath.Join(t.TempDir(), "in.yaml")
	var docs []string
	for _, n := range []string{"p1", "nope", "p2"} {
		docs = append(docs, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "+n+"\n  namespace: "+ns+"\n")
	}
	if err := os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "b")
	r := ssa(t, "migrate", "-f", file, "--backup-dir", backup)
	if r.code != 2 || strings.Count(r.stderr, "check the name") != 1 || !strings.Contains(r.stderr, "nope") {
		t.Fatalf("a missing object: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if files, _ := filepath.Glob(filepath.Join(backup, "*", ns, "*.json")); len(files) != 0 {
		t.Fatalf("written before the missing object was found: %v", files)
	}

	// An empty --backup-dir the user made stays after a run that wrote
	// nothing (one the run made is removed).
	mine := t.TempDir()
	if r := ssa(t, "migrate", "-f", file, "--backup-dir", mine); r.code != 2 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("the user's empty --backup-dir was removed: %v", err)
	}
	if _, err := os.Stat(backup); err == nil {
		t.Fatalf("the run's own empty backup directory was left")
	}

	migrateJSON(t, 0, "migrate", "-n", ns, "cm/p1", "cm/p2", "--backup-dir", backup)
	// A second run into the same directory refuses to overwrite the
	// first run's backup of the object.
	const h = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"h"},"data":{"a":"1"}}`
	apply(t, ns, "helm", h, false)
	hb := filepath.Join(t.TempDir(), "hb")
	migrateJSON(t, 0, "migrate", "rename", "-n", ns, "cm/h", "--from", "helm", "--field-manager", "argocd-controller", "--backup-dir", hb)
	apply(t, ns, "helm", strings.Replace(h, `"a":"1"`, `"b":"2"`, 1), false)
	r = ssa(t, "migrate", "rename", "-n", ns, "cm/h", "--from", "helm", "--field-manager", "argocd-controller", "--backup-dir", hb)
	if r.code != 3 || !strings.Contains(r.stdout, "already holds a backup of configmap "+ns+"/h from an earlier run") {
		t.Fatalf("reused --backup-dir: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	if err := os.WriteFile(filepath.Join(backup, "core.v1.configmaps", ns, "p2.json"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	u := migrateJSON(t, 3, "migrate", "undo", "--backup-dir", backup)
	if u.Summary.Scanned != 2 || u.Summary.Failed != 1 {
		t.Fatalf("undo with a corrupt backup: %+v %+v", u.Summary, u.Objects)
	}
}
