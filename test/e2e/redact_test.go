package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Planted Secret values: clear, and base64 as the apiserver stores them.
// Each is long enough for every form of it to be searched for.
const (
	plantedPassword = "S3CR3T-planted-pw"
	plantedToken    = "S3CR3T-planted-tok"
	plantedNew      = "S3CR3T-planted-new"
	plantedInError  = "S3CR3T-planted-err"
)

func plantedForms() []string {
	var forms []string
	for _, v := range []string{plantedPassword, plantedToken, plantedNew, plantedInError} {
		forms = append(forms, v, base64.StdEncoding.EncodeToString([]byte(v)))
	}
	return forms
}

// leaksPlanted says which planted value text holds, in clear or base64.
func leaksPlanted(text string) []string {
	var found []string
	for _, f := range plantedForms() {
		if strings.Contains(text, f) {
			found = append(found, f)
		}
	}
	return found
}

// TestSecretValuesInNoOutput plants Secret values (applied client-side,
// so that the last-applied annotation holds them too, then server-side
// by a second manager) and runs every command in every format, on
// success and on error, and finds them in no output: stdout, stderr,
// the external diff's files. --show-secret-values shows them.
func TestSecretValuesInNoOutput(t *testing.T) {
	ns := namespace(t)
	dir := t.TempDir()
	secret := func(name, stringData string) string {
		return fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n  namespace: %s\ntype: Opaque\nstringData:\n%s", name, ns, stringData)
	}
	kubectlApply(t, ns, secret("s", "  password: "+plantedPassword+"\n"))
	apply(t, ns, "operator", secret("s", "  token: "+plantedToken+"\n"), false)
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	changed := write("changed.yaml", secret("s", "  password: "+plantedNew+"\n"))
	created := write("created.yaml", secret("s2", "  password: "+plantedNew+"\n"))
	badType := write("bad.yaml", secret("s", "  password: ["+plantedInError+"]\n"))
	liveYAML, err := yaml.Marshal(get(t, objRef("v1", "Secret", ns, "s")).Object)
	if err != nil {
		t.Fatal(err)
	}
	live := write("live.yaml", string(liveYAML))
	// The external diff shows the files it was given.
	showFiles := write("show.sh", "#!/bin/sh\nfind \"$1\" \"$2\" -type f -exec cat {} +\nexit 1\n")
	if err := os.Chmod(showFiles, 0o700); err != nil {
		t.Fatal(err)
	}
	formats := []string{"json", "yaml", "jsonpath={..}", "go-template={{.}}"}
	type run struct {
		args []string
		env  []string
	}
	var runs []run
	add := func(base []string, views ...string) {
		for _, o := range append(views, formats...) {
			runs = append(runs, run{args: append(append([]string{}, base...), "-o", o)})
		}
	}
	add([]string{"who-owns", "-n", ns, "secret/s"}, "table", "wide", "blame", "tree", "managers")
	add([]string{"who-owns", "--local", "-f", live}, "table", "blame")
	add([]string{"explain-conflict", "-n", ns, "-f", changed}, "text")
	add([]string{"explain-conflict", "-n", ns, "-f", changed, "--verify"}, "text")
	add([]string{"explain-conflict", "-n", ns, "-f", changed, "--field-manager", "operator"}, "text")
	add([]string{"explain-conflict", "-n", ns, "-f", created}, "text")
	add([]string{"explain-conflict", "-n", ns, "-f", badType}, "text")
	add([]string{"explain-conflict", "--local", "--live-file", live, "-f", badType}, "text")
	add([]string{"explain-conflict", "--local", "--live-file", live, "-f", changed}, "text")
	add([]string{"diff", "-n", ns, "-f", changed}, "text")
	add([]string{"diff", "-n", ns, "-f", changed, "--field-manager", "operator", "--force-conflicts"}, "text")
	add([]string{"diff", "-n", ns, "-f", badType}, "text")
	add([]string{"diff", "--local", "--live-file", live, "-f", changed}, "text")
	add([]string{"extract", "-n", ns, "secret/s", "--manager", "operator"})
	add([]string{"extract", "-n", ns, "secret/s", "--all-managers"})
	add([]string{"extract", "--local", "-f", live, "--all-managers"})
	add([]string{"handover", "-n", ns, "secret/s", "--from", "kubectl-client-side-apply", "--to", "operator", "--all", "--dry-run=server"}, "text")
	add([]string{"handover", "release", "-n", ns, "secret/s", "--from", "operator", "--all", "--dry-run=client"}, "text")
	add([]string{"migrate", "-n", ns, "secret/s", "--dry-run=server", "--remove-last-applied"}, "text")
	add([]string{"audit", "-n", ns}, "table", "wide")
	runs = append(runs,
		run{args: []string{"diff", "-n", ns, "-f", changed}, env: []string{"KUBECTL_EXTERNAL_DIFF=" + showFiles}},
		run{args: []string{"diff", "-n", ns, "-f", created}, env: []string{"KUBECTL_EXTERNAL_DIFF=" + showFiles}},
		run{args: []string{"extract", "-n", ns, "secret/s", "--manager", "nobody"}},
		run{args: []string{"handover", "-n", ns, "secret/s", "--field", ".data.password", "--from", "kubectl-client-side-apply", "--to", "kube-controller-manager", "--wait", "--timeout", "1s"}},
	)
	for _, r := range runs {
		name := strings.Join(r.args, " ")
		t.Run(name, func(t *testing.T) {
			res := ssaEnv(t, r.env, r.args...)
			if res.code > 3 {
				t.Errorf("exit %d:\n%s%s", res.code, res.stdout, res.stderr)
			}
			if leaks := leaksPlanted(res.stdout + res.stderr); leaks != nil {
				t.Errorf("prints %v (exit %d):\n%s\n%s", leaks, res.code, res.stdout, res.stderr)
			}
		})
	}
	t.Run("watch", func(t *testing.T) {
		// Two managers fight over the password while watch looks.
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; i < 6; i++ {
				time.Sleep(300 * time.Millisecond)
				u := parse(t, secret("s", fmt.Sprintf("  password: %s-%d\n", plantedNew, i%2)))
				mgr := []string{"alice", "bob"}[i%2]
				_, _ = resourceFor(t, u).Apply(context.Background(), "s", u, metav1.ApplyOptions{FieldManager: mgr, Force: true})
			}
		}()
		res := ssa(t, "watch", "-n", ns, "secret/s", "--timeout", "4s", "-o", "json")
		<-done
		if leaks := leaksPlanted(res.stdout + res.stderr); leaks != nil {
			t.Errorf("prints %v:\n%s\n%s", leaks, res.stdout, res.stderr)
		}
	})
	t.Run("migrate and undo from backups", func(t *testing.T) {
		backup := filepath.Join(dir, "backup")
		runs := [][]string{
			{"migrate", "-n", ns, "secret/s", "--remove-last-applied", "--backup-dir", backup},
		}
		for _, o := range append([]string{"text"}, formats...) {
			runs = append(runs, []string{"migrate", "undo", "--backup-dir", backup, "--dry-run=client", "-o", o})
		}
		runs = append(runs, []string{"migrate", "undo", "--backup-dir", backup})
		for _, args := range runs {
			res := ssa(t, args...)
			if res.code != 0 {
				t.Fatalf("%v: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
			}
			if leaks := leaksPlanted(res.stdout + res.stderr); leaks != nil {
				t.Errorf("%v prints %v:\n%s\n%s", args, leaks, res.stdout, res.stderr)
			}
		}
	})
	t.Run("--show-secret-values", func(t *testing.T) {
		res := ssa(t, "extract", "-n", ns, "secret/s", "--manager", "operator", "--show-secret-values")
		if !strings.Contains(res.stdout, plantedToken) {
			t.Errorf("--show-secret-values hides the value:\n%s%s", res.stdout, res.stderr)
		}
	})
}
