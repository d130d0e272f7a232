package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubectlapply "k8s.io/kubectl/pkg/cmd/apply"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
)

const lastAppliedKey = "kubectl.kubernetes.io/last-applied-configuration"

// kubectlApply runs kubectl's own client-side apply (kubectl apply -f,
// without --server-side), in process, against the test bed: the
// three-way merge with the last-applied annotation that deletes what the
// annotation holds and the manifest does not.
func kubectlApply(t *testing.T, ns, manifest string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "manifest.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	kubectlApplyFile(t, ns, file)
}

// kubectlApplyServerSide is kubectl apply --server-side -f file, in
// process: the objects in the file's order.
func kubectlApplyServerSide(t *testing.T, file string) {
	t.Helper()
	kubectlApplyFile(t, "", file, "server-side=true")
}

// kubectlApplyFile is kubectl apply -f file with more flags (name=value).
func kubectlApplyFile(t *testing.T, ns, file string, more ...string) {
	t.Helper()
	if err := kubectlApplyFileErr(t, ns, file, more...); err != nil {
		t.Fatal(err)
	}
}

// kubectlApplyFileErr is kubectlApplyFile, its error returned.
func kubectlApplyFileErr(t *testing.T, ns, file string, more ...string) error {
	t.Helper()
	cf := genericclioptions.NewConfigFlags(true)
	cf.KubeConfig = &env.kubeconfig
	if ns != "" {
		cf.Namespace = &ns
	}
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	flags := kubectlapply.NewApplyFlags(streams)
	cmd := &cobra.Command{Use: "apply"}
	flags.AddFlags(cmd)
	if err := cmd.Flags().Set("filename", file); err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		name, value, _ := strings.Cut(f, "=")
		if err := cmd.Flags().Set(name, value); err != nil {
			t.Fatal(err)
		}
	}
	// ToOptions, Validate and Run are what NewCmdApply runs, without
	// its os.Exit on error.
	o, err := flags.ToOptions(cmdutil.NewFactory(cf), cmd, "kubectl", nil)
	if err == nil {
		err = o.Validate()
	}
	if err == nil {
		err = o.Run()
	}
	if err != nil {
		return fmt.Errorf("kubectl apply: %w\n%s%s", err, out.String(), errOut.String())
	}
	return nil
}

// csaWeb is the Deployment of the HPA tests with 3 replicas.
var csaWeb = strings.Replace(hpaDeployment, "replicas: 1", "replicas: 3", 1)

// csaWebNoReplicas is the same manifest once the autoscaler owns the
// replica count: the user dropped it, as the documentation says.
var csaWebNoReplicas = strings.Replace(csaWeb, "  replicas: 3\n", "", 1)

func replicas(t *testing.T, ns string) int64 {
	t.Helper()
	v, _, _ := unstructured.NestedInt64(get(t, webRef(ns)).Object, "spec", "replicas")
	return v
}

func webRef(ns string) *unstructured.Unstructured { return objRef("apps/v1", "Deployment", ns, "web") }

// objRef names an object for get.
func objRef(apiVersion, kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func lastApplied(t *testing.T, u *unstructured.Unstructured) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(u.GetAnnotations()[lastAppliedKey]), &doc); err != nil {
		t.Fatalf("the last-applied annotation: %v", err)
	}
	return doc
}

// The scenario, with kubectl's real client-side apply before and
// after: a Deployment applied client-side with replicas 3, handed over to
// the autoscaler's controller, then applied client-side again from a
// manifest without replicas.
func TestHandoverFromClientSideApply(t *testing.T) {
	// Without the handover the scenario is real: kubectl deletes the
	// replicas its annotation holds, and the apiserver defaults them to 1.
	t.Run("without handover the next client-side apply resets replicas", func(t *testing.T) {
		ns := namespace(t)
		kubectlApply(t, ns, csaWeb)
		kubectlApply(t, ns, csaWebNoReplicas)
		if got := replicas(t, ns); got != 1 {
			t.Errorf("replicas %d, want 1 (reset): the scenario did not happen", got)
		}
	})

	t.Run("after the handover the next client-side apply keeps them", func(t *testing.T) {
		ns := namespace(t)
		kubectlApply(t, ns, csaWeb)
		before := get(t, webRef(ns))
		args := []string{"handover", "-n", ns, "deploy/web", "--field", ".spec.replicas", "--from", "kubectl-client-side-apply", "--to", "kube-controller-manager"}

		// The dry run shows the edit and writes nothing.
		dry := mustSSA(t, 0, append(args, "--dry-run=client")...)
		wantLine(t, dry.stdout, `last-applied: takes \.spec\.replicas out of the annotation kubectl\.kubernetes\.io/last-applied-configuration \(written as "kubectl-client-side-apply", its owner\)`)
		// (The deployment controller writes the status meanwhile: compare
		// what the handover would write.)
		if now := get(t, webRef(ns)); now.GetAnnotations()[lastAppliedKey] != before.GetAnnotations()[lastAppliedKey] || hasEntry(now, "kubectl-ssa-handover") {
			t.Fatalf("the dry run wrote: %v", now.GetManagedFields())
		}

		// The server accepts every step, the edit included, as a dry run.
		srv := mustSSA(t, 0, append(args, "--dry-run=server")...)
		wantLine(t, srv.stdout, `last-applied: takes \.spec\.replicas out of the annotation`)
		if now := get(t, webRef(ns)); now.GetAnnotations()[lastAppliedKey] != before.GetAnnotations()[lastAppliedKey] || hasEntry(now, "kubectl-ssa-handover") {
			t.Fatalf("the server dry run wrote: %v", now.GetManagedFields())
		}

		res := mustSSA(t, 0, append(args, "-o", "json")...)
		var r struct {
			Status string `json:"status"`
			Next   string `json:"next"`
			Steps  []struct {
				Name        string `json:"name"`
				Status      string `json:"status"`
				LastApplied *struct {
					Manager string   `json:"manager"`
					Removed []string `json:"removed"`
					Deleted bool     `json:"deleted"`
				} `json:"lastApplied"`
			} `json:"steps"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
			t.Fatalf("%v\n%s", err, res.stdout)
		}
		if r.Status != "held" || len(r.Steps) != 2 || r.Steps[1].Name != "release" || r.Steps[1].LastApplied == nil ||
			strings.Join(r.Steps[1].LastApplied.Removed, " ") != ".spec.replicas" || r.Steps[1].LastApplied.Deleted {
			t.Fatalf("report:\n%s", res.stdout)
		}
		if !strings.Contains(r.Next, "remove .spec.replicas from the manifests you apply client-side") {
			t.Errorf("next: %q", r.Next)
		}

		after := get(t, webRef(ns))
		doc := lastApplied(t, after)
		if _, has, _ := unstructured.NestedFieldNoCopy(doc, "spec", "replicas"); has {
			t.Errorf("the annotation still holds replicas: %v", doc)
		}
		if _, has, _ := unstructured.NestedFieldNoCopy(doc, "spec", "template"); !has {
			t.Errorf("the annotation lost the rest of the manifest: %v", doc)
		}
		// Written as its owner: the annotation stays client-side apply's,
		// and no entry of kubectl-ssa appears.
		rep := whoOwnsJSON(t, "-n", ns, "deploy/web")
		assertOwners(t, rep, ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration", "kubectl-client-side-apply/Update")
		assertOwners(t, rep, ".spec.replicas", "kubectl-ssa-handover/Apply")
		if hasEntry(after, "kubectl-ssa") {
			t.Errorf("a kubectl-ssa entry appeared: %v", after.GetManagedFields())
		}

		kubectlApply(t, ns, csaWebNoReplicas)
		if got := replicas(t, ns); got != 3 {
			t.Errorf("replicas %d after the client-side apply without them, want 3", got)
		}
		// Run again: nothing left to do.
		again := handoverJSON(t, 0, args...)
		if again.Status != "held" || len(again.Steps) != 0 {
			t.Errorf("re-run: %s %s", again.Status, stepNames(again))
		}
	})

	// The autoscaler already scaled: it owns replicas, client-side apply
	// none, and only the annotation still holds them (as after a handover
	// by an earlier version): the handover edits just the annotation.
	t.Run("the controller took replicas already: only the annotation is left", func(t *testing.T) {
		ns := namespace(t)
		kubectlApply(t, ns, csaWeb)
		patch(t, webRef(ns), "kube-controller-manager", `{"spec":{"replicas":4}}`, "scale")
		args := []string{"handover", "-n", ns, "deploy/web", "--field", ".spec.replicas", "--from", "kubectl-client-side-apply", "--to", "kube-controller-manager"}
		r := handoverJSON(t, 0, args...)
		if r.Status != "completed" || stepNames(r) != "last-applied:done" {
			t.Fatalf("status %s steps %s", r.Status, stepNames(r))
		}
		if _, has, _ := unstructured.NestedFieldNoCopy(lastApplied(t, get(t, webRef(ns))), "spec", "replicas"); has {
			t.Errorf("the annotation still holds replicas")
		}
		kubectlApply(t, ns, csaWebNoReplicas)
		if got := replicas(t, ns); got != 4 {
			t.Errorf("replicas %d after the client-side apply without them, want 4", got)
		}
		if again := handoverJSON(t, 0, args...); again.Status != "already-complete" {
			t.Errorf("re-run: %s %s", again.Status, stepNames(again))
		}
	})

	t.Run("an annotation it can't edit is refused with the command that clears it", func(t *testing.T) {
		ns := namespace(t)
		kubectlApply(t, ns, csaWeb)
		d := patch(t, webRef(ns), "kubectl-client-side-apply", `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"spec\":"}}}`)
		res := mustSSA(t, 2, "handover", "-n", ns, "deploy/web", "--field", ".spec.replicas", "--from", "kubectl-client-side-apply", "--to", "kube-controller-manager", "--kubeconfig", env.kubeconfig)
		want := "kubectl annotate --kubeconfig=" + env.kubeconfig + " deployment.v1.apps/web kubectl.kubernetes.io/last-applied-configuration- -n " + ns + "\n"
		if !strings.HasSuffix(res.stderr, want) || strings.Count(res.stderr, "\n") != 1 {
			t.Errorf("stderr:\n%s\nwant one line ending with:\n%s", res.stderr, want)
		}
		if now := get(t, d); now.GetAnnotations()[lastAppliedKey] != `{"spec":` || hasEntry(now, "kubectl-ssa-handover") {
			t.Errorf("a refused handover wrote: %v", now.GetManagedFields())
		}
	})
}

// A release of a client-side apply manager takes the fields out of its
// annotation too: the next client-side apply without them leaves them.
func TestHandoverReleaseClientSideApply(t *testing.T) {
	ns := namespace(t)
	kubectlApply(t, ns, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"tier":"web"}},"data":{"x":"1","y":"2"}}`)
	mustSSA(t, 0, "handover", "release", "-n", ns, "cm/c", "--from", "kubectl-client-side-apply", "--field", ".data.y", "--field", ".metadata.labels.tier")
	kubectlApply(t, ns, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"x":"1"}}`)
	live := get(t, objRef("v1", "ConfigMap", ns, "c"))
	if y, _, _ := unstructured.NestedString(live.Object, "data", "y"); y != "2" {
		t.Errorf(".data.y = %q after the next client-side apply, want 2 (released: kept)", y)
	}
	if live.GetLabels()["tier"] != "web" {
		t.Errorf("labels %v: the released label went", live.GetLabels())
	}
}

// A Secret applied client-side: its last-applied annotation holds the
// stringData in clear and the data in base64.
const (
	csaSecretPassword  = "aHVudGVyMi1zZWtyZXQ=" // base64 of hunter2-sekret
	csaSecretToken     = "tok-plain-value"
	csaSecretTokenData = "dG9rLXBsYWluLXZhbHVl" // base64 of the token, as the apiserver stores it
	csaSecret          = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"password":"` + csaSecretPassword + `"},"stringData":{"token":"` + csaSecretToken + `"}}`
)

// leaksSecret says which of the Secret's values out (stdout and stderr)
// shows.
func leaksSecret(out string) []string {
	var found []string
	for _, v := range []string{"hunter2-sekret", csaSecretPassword, csaSecretToken, csaSecretTokenData} {
		if strings.Contains(out, v) {
			found = append(found, v)
		}
	}
	return found
}

// handover never prints a Secret's values, wherever they come from: the
// fields, the last-applied annotation inside .metadata.annotations, the
// --wait timeout message; --show-secret-values shows them.
func TestHandoverRedactsSecrets(t *testing.T) {
	ns := namespace(t)
	kubectlApply(t, ns, csaSecret)
	for _, o := range []string{"text", "json", "yaml"} {
		t.Run("release .metadata.annotations -o "+o, func(t *testing.T) {
			r := mustSSA(t, 0, "handover", "release", "-n", ns, "secret/s", "--from", "kubectl-client-side-apply", "--field", ".metadata.annotations", "--dry-run=client", "-o", o)
			if leaks := leaksSecret(r.stdout + r.stderr); leaks != nil {
				t.Errorf("prints %v:\n%s%s", leaks, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, "<redacted>") {
				t.Errorf("no redacted value shown:\n%s", r.stdout)
			}
		})
	}
	// A real handover to a controller that never writes: held, and the
	// timeout's message names the values it holds.
	args := []string{"handover", "-n", ns, "secret/s", "--field", ".data.password", "--from", "kubectl-client-side-apply", "--to", "kube-controller-manager", "--wait", "--timeout", "1s"}
	for _, o := range []string{"text", "json"} {
		t.Run("--wait timeout -o "+o, func(t *testing.T) {
			r := mustSSA(t, 1, append(args, "-o", o)...)
			if leaks := leaksSecret(r.stdout + r.stderr); leaks != nil {
				t.Errorf("prints %v:\n%s%s", leaks, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, ".data.password=<redacted>") {
				t.Errorf("the message does not say what is held:\n%s", r.stdout)
			}
		})
	}
	t.Run("--show-secret-values", func(t *testing.T) {
		r := mustSSA(t, 1, append(args, "--show-secret-values")...)
		if !strings.Contains(r.stdout, ".data.password="+csaSecretPassword) {
			t.Errorf("--show-secret-values hides the value:\n%s", r.stdout)
		}
	})
	// The password left the annotation, the token stayed.
	doc := lastApplied(t, get(t, objRef("v1", "Secret", ns, "s")))
	if _, has, _ := unstructured.NestedFieldNoCopy(doc, "data", "password"); has {
		t.Errorf("the annotation still holds the password")
	}
	if tok, _, _ := unstructured.NestedString(doc, "stringData", "token"); tok != csaSecretToken {
		t.Errorf("the annotation lost the token: %v", doc)
	}
}

// migrate --remove-last-applied keeps the annotation in its backups, for
// undo: the files are the user's alone (0600 in 0700 directories), and
// nothing is printed.
func TestMigrateBackupOfSecret(t *testing.T) {
	ns := namespace(t)
	kubectlApply(t, ns, csaSecret)
	backup := filepath.Join(t.TempDir(), "b")
	for _, o := range []string{"text", "json"} {
		r := mustSSA(t, 0, "migrate", "-n", ns, "secret/s", "--remove-last-applied", "--backup-dir", backup+"-"+o, "-o", o)
		if leaks := leaksSecret(r.stdout + r.stderr); leaks != nil {
			t.Errorf("-o %s prints %v:\n%s%s", o, leaks, r.stdout, r.stderr)
		}
		if o == "text" {
			// the second run has nothing to do
			kubectlApply(t, ns, csaSecret)
		}
	}
	dir := backup + "-text"
	file := filepath.Join(dir, "core.v1.secrets", ns, "s.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), csaSecretToken) {
		t.Errorf("the backup lacks the annotation undo restores:\n%s", data)
	}
	for _, p := range []string{dir, filepath.Dir(filepath.Dir(file)), filepath.Dir(file)} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v, want drwx------", p, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v %v, want -rw-------", file, fi.Mode(), err)
	}
}

// A client-side-applied Secret with stringData: the apiserver stored the
// token in .data.token, which client-side apply's entry owns; migrate
// moves it to the applier as kubectl's own upgrade does (it used to leave
// it to nobody, giving "kubectl" only .type), and --verify agrees.
func TestMigrateSecretStringData(t *testing.T) {
	ns := namespace(t)
	kubectlApply(t, ns, csaSecret)
	r := migrateJSON(t, 0, "migrate", "-n", ns, "secret/s", "--verify", "--no-backup")
	if r.Summary.Migrated != 1 || r.Summary.Failed != 0 {
		t.Fatalf("migrate: %+v %+v", r.Summary, r.Objects)
	}
	rep := whoOwnsJSON(t, "-n", ns, "secret/s")
	assertOwners(t, rep, ".data.token", "kubectl/Apply")
	assertOwners(t, rep, ".data.password", "kubectl/Apply")
	// The next server-side apply of the same manifest keeps both keys.
	s := apply(t, ns, "kubectl", csaSecret, false)
	if tok, _, _ := unstructured.NestedString(s.Object, "data", "token"); tok != csaSecretTokenData {
		t.Errorf("the token is gone or changed after the next apply")
	}
}
