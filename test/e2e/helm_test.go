package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
)

// The Helm tests write as Helm writes, with no helm binary: Helm 3 (and
// Helm 4 with --server-side=false) creates a release's objects by Update
// as field manager "helm", Helm 4 applies them server-side as "helm";
// both add a label and two annotations to every object, and keep the
// release in a Secret sh.helm.release.v1.NAME.vN whose "release" value is
// base64 of the gzipped JSON of the release (helm/helm
// pkg/storage/driver/util.go, encodeRelease).

const (
	helmChartPassword  = "helm-e2e-chart-s3cret"
	helmEditedPassword = "helm-e2e-edited-s3cret"
	helmConfigPassword = "helm-e2e-values-s3cret" // only in the release's values
)

// helmChart is a chart's render: no namespaces, as charts leave them to
// the release's.
func helmChart(replicas int, image string) string {
	return fmt.Sprintf(`---
# Source: web/templates/secret.yaml
apiVersion: v1
kind: Secret
metadata:
  name: web-credentials
type: Opaque
stringData:
  password: %q
---
# Source: web/templates/service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector:
    app: web
  ports:
  - port: 80
---
# Source: web/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: %d
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: %s
`, helmChartPassword, replicas, image)
}

// helmObjects are a render's objects as Helm sends them for release in
// ns: in the namespace, with Helm's label and annotations.
func helmObjects(t *testing.T, ns, release, manifest string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(manifest, "\n---\n") {
		u := parse(t, strings.TrimPrefix(doc, "---\n"))
		setNamespace(t, u, ns)
		u.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm"})
		u.SetAnnotations(map[string]string{"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": ns})
		out = append(out, u)
	}
	return out
}

// helmWrite writes a render as Helm does: created by Update (Helm 3, or
// Helm 4 applying client-side) or applied server-side (Helm 4), as "helm".
func helmWrite(t *testing.T, ns, release, manifest string, serverSide bool) {
	t.Helper()
	for _, u := range helmObjects(t, ns, release, manifest) {
		var err error
		if serverSide {
			_, err = resourceFor(t, u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "helm"})
		} else {
			_, err = resourceFor(t, u).Create(context.Background(), u, metav1.CreateOptions{FieldManager: "helm"})
		}
		if err != nil {
			t.Fatalf("helm's write of %s: %v", u.GetName(), err)
		}
	}
}

// helmReleaseSecret stores a revision as Helm's Secrets driver does.
func helmReleaseSecret(t *testing.T, ns, release string, revision int, status, applyMethod, manifest string) {
	t.Helper()
	rel := map[string]any{
		"name":      release,
		"namespace": ns,
		"version":   revision,
		"info":      map[string]any{"status": status, "description": "Install complete", "first_deployed": "2026-03-02T10:00:00Z", "last_deployed": "2026-03-02T10:00:00Z"},
		"chart":     map[string]any{"metadata": map[string]any{"name": "web", "version": "1.0.0", "apiVersion": "v2"}, "values": map[string]any{"password": helmChartPassword}},
		"config":    map[string]any{"password": helmConfigPassword},
		"manifest":  manifest,
	}
	if applyMethod != "" {
		rel["apply_method"] = applyMethod
	}
	value, err := testkit.HelmRelease(rel)
	if err != nil {
		t.Fatal(err)
	}
	helmStorageSecret(t, ns, release, revision, status, value)
}

// helmStorageSecret creates the Secret of a revision with value as its
// "release" data.
func helmStorageSecret(t *testing.T, ns, release string, revision int, status, value string) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", release, revision), Namespace: ns,
			Labels: map[string]string{"owner": "helm", "name": release, "status": status, "version": strconv.Itoa(revision), "createdAt": "1772445600"},
		},
		Type: "helm.sh/release.v1",
		Data: map[string][]byte{"release": []byte(value)},
	}
	if _, err := env.client.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{FieldManager: "helm"}); err != nil {
		t.Fatal(err)
	}
}

// helmLeaks says which Secret values, of the chart or of the release's
// values, out shows, in clear or in base64.
func helmLeaks(out string) []string {
	var found []string
	for _, v := range []string{helmChartPassword, helmEditedPassword, helmConfigPassword} {
		for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if strings.Contains(out, form) {
				found = append(found, form)
			}
		}
	}
	return found
}

type helmDiffList struct {
	Items []diffReport `json:"items"`
}

// helmDiff runs diff -o json and returns the report of each kind.
func helmDiff(t *testing.T, want int, args ...string) map[string]diffReport {
	t.Helper()
	r := mustSSA(t, want, append(args, "-o", "json")...)
	if leaks := helmLeaks(r.stdout + r.stderr); leaks != nil {
		t.Errorf("diff %v prints %v", args, leaks)
	}
	var list helmDiffList
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	out := map[string]diffReport{}
	for _, d := range list.Items {
		var obj struct{ Kind string }
		b, _ := json.Marshal(d.Live)
		_ = json.Unmarshal(b, &obj)
		out[obj.Kind] = d
	}
	return out
}

// valueChanges lists a report's value changes as "path before -> after
// (owner before)".
func valueChanges(d diffReport) []string {
	var out []string
	for _, c := range d.Changes {
		if c.Change == "ownership" {
			continue
		}
		var owners []string
		for _, o := range c.OwnersBefore {
			owners = append(owners, strings.TrimSuffix(o.Manager+"/"+string(o.Subresource), "/"))
		}
		out = append(out, fmt.Sprintf("%s %v -> %v (%s)", c.Path, c.Before, c.After, strings.Join(owners, ",")))
	}
	return out
}

// TestHelmReleaseDrift: a Helm-3-style release (objects created by
// Update as "helm", no apply method recorded), then kubectl scale, a
// kubectl edit of the image and one of the chart's Secret: diff
// --helm-release shows each drift with its owner, exits 1, and never
// prints a Secret value; --helm-revision diffs an older revision.
func TestHelmReleaseDrift(t *testing.T) {
	ns := namespace(t)
	helmWrite(t, ns, "web", helmChart(2, "nginx:1.27"), false)
	helmReleaseSecret(t, ns, "web", 1, "superseded", "", helmChart(1, "nginx:1.26"))
	helmReleaseSecret(t, ns, "web", 2, "deployed", "", helmChart(2, "nginx:1.27"))
	deploy := objRef("apps/v1", "Deployment", ns, "web")
	patch(t, deploy, "kubectl", `{"spec":{"replicas":5}}`, "scale")
	patch(t, deploy, "kubectl-edit", `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27-debug"}]}}}}`)
	patch(t, objRef("v1", "Secret", ns, "web-credentials"), "kubectl-edit", `{"data":{"password":"`+base64.StdEncoding.EncodeToString([]byte(helmEditedPassword))+`"}}`)

	// The same values go back either way helm upgrade writes: by
	// default (--server-side=auto keeps a client-side release so) Helm's
	// client-side patch, as "helm" by Update; with --server-side=true,
	// Helm 4's move of helm's Update ownership, then its apply.
	want := map[string][]string{
		"Deployment": {
			".spec.replicas 5 -> 2 (kubectl/scale)",
			`.spec.template.spec.containers[name="web"].image nginx:1.27-debug -> nginx:1.27 (kubectl-edit)`,
		},
		"Secret":  {".data.password <redacted> #1 -> <redacted> #2 (kubectl-edit)"},
		"Service": nil,
	}
	for _, way := range []struct {
		flag, owner, see string
		moves            bool
	}{
		{"--helm-server-side=auto", "+  replicas: 2  # helm (Update", "", false},
		// the explanation it points to reads the same release, the same way
		{"--helm-server-side=true", "+  replicas: 2  # helm (Apply", "see why and the ways out: kubectl ssa explain-conflict -n " + ns + " --field-manager=helm --helm-release web --helm-server-side=true\n", true},
	} {
		reports := helmDiff(t, 1, "diff", "-n", ns, "--helm-release", "web", way.flag)
		for kind, w := range want {
			if got := valueChanges(reports[kind]); strings.Join(got, "\n") != strings.Join(w, "\n") {
				t.Errorf("%s: %s: value changes\n%s\nwant\n%s", way.flag, kind, strings.Join(got, "\n"), strings.Join(w, "\n"))
			}
		}
		var moved bool
		for _, w := range reports["Deployment"].Warnings {
			moved = moved || strings.Contains(w, "csaupgrade")
		}
		if moved != way.moves {
			t.Errorf("%s: Helm 4's move of helm's Update ownership predicted: %v, want %v (%q)", way.flag, moved, way.moves, reports["Deployment"].Warnings)
		}
		text := mustSSA(t, 1, "diff", "-n", ns, "--helm-release", "web", way.flag)
		for _, s := range []string{
			"# helm release web, revision 2 (deployed), from Secret/" + ns + "/sh.helm.release.v1.web.v2: applied client-side",
			"-  replicas: 5  # kubectl (Update /scale",
			way.owner, way.see,
		} {
			if !strings.Contains(text.stdout, s) {
				t.Errorf("%s: the text diff does not show %q:\n%s", way.flag, s, text.stdout)
			}
		}
		if leaks := helmLeaks(text.stdout + text.stderr); leaks != nil {
			t.Errorf("the text diff prints %v", leaks)
		}
	}

	old := helmDiff(t, 1, "diff", "-n", ns, "--helm-release", "web", "--helm-revision", "1")
	if got, w := valueChanges(old["Deployment"]), []string{
		".spec.replicas 5 -> 1 (kubectl/scale)",
		`.spec.template.spec.containers[name="web"].image nginx:1.27-debug -> nginx:1.26 (kubectl-edit)`,
	}; strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("revision 1: %q, want %q", got, w)
	}

	// The preflight of the next render, which also changes a value
	// "helm" still owns through Update (the Service's targetPort, which
	// the create defaulted): predicted with Helm 4's move of that
	// ownership (csaupgrade of "helm"), as --server-side=true does, that
	// value conflicts with no one. The server agrees: the move made for
	// real, then the apply as "helm", dry run, answers what was predicted.
	next := strings.Replace(helmChart(2, "nginx:1.27"), "  - port: 80\n", "  - port: 80\n    targetPort: 8080\n", 1)
	ex := ssaIn(t, next, "explain-conflict", "-n", ns, "-f", "-", "--helm-release", "web", "--helm-server-side=true", "-o", "json")
	var exList struct{ Items []conflictReport }
	if err := json.Unmarshal([]byte(ex.stdout), &exList); ex.code != 1 || err != nil {
		t.Fatalf("exit %d, %v\n%s%s", ex.code, err, ex.stdout, ex.stderr)
	}
	for i, u := range helmObjects(t, ns, "web", next) {
		live, err := resourceFor(t, u).Get(context.Background(), u.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := csaupgrade.UpgradeManagedFieldsPatch(live, sets.New("helm"), "helm")
		if err != nil || p == nil {
			t.Fatalf("helm's client-side ownership of %s to move: %s, %v", u.GetKind(), p, err)
		}
		if _, err := resourceFor(t, u).Patch(context.Background(), u.GetName(), types.JSONPatchType, p, metav1.PatchOptions{FieldManager: "helm"}); err != nil {
			t.Fatal(err)
		}
		_, err = resourceFor(t, u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "helm", DryRun: []string{metav1.DryRunAll}})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if predicted := exList.Items[i].Message; predicted != got {
			t.Errorf("%s: predicted %q, the server answers %q", u.GetKind(), predicted, got)
		}
	}
}

// TestHelmPreflight: a Helm-4-style release (applied server-side by
// "helm"), then kubectl scale: the chart's next render, piped to
// explain-conflict with --helm-release (or as the README's plain recipe,
// --field-manager helm), names the conflict on .spec.replicas with
// "kubectl" through /scale, exits 1, and its JSON says so; the server's
// dry run of the same apply agrees.
func TestHelmPreflight(t *testing.T) {
	ns := namespace(t)
	helmWrite(t, ns, "web", helmChart(2, "nginx:1.27"), true)
	helmReleaseSecret(t, ns, "web", 1, "deployed", "ssa", helmChart(2, "nginx:1.27"))
	patch(t, objRef("apps/v1", "Deployment", ns, "web"), "kubectl", `{"spec":{"replicas":4}}`, "scale")
	next := helmChart(2, "nginx:1.28")
	const message = `Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas`

	for _, c := range []struct {
		args []string
		// asHelm: the release is named, so the apply is Helm's own.
		asHelm bool
	}{
		{[]string{"explain-conflict", "-n", ns, "-f", "-", "--helm-release", "web"}, true},
		{[]string{"explain-conflict", "-n", ns, "-f", "-", "--field-manager", "helm", "--kubectl-upgrade=false"}, false},
	} {
		args := c.args
		r := ssaIn(t, next, append(args, "-o", "json")...)
		if r.code != 1 {
			t.Fatalf("%v: exit %d, want 1\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		if leaks := helmLeaks(r.stdout + r.stderr); leaks != nil {
			t.Errorf("%v prints %v", args, leaks)
		}
		var list struct{ Items []conflictReport }
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatal(err)
		}
		for _, rep := range list.Items {
			switch rep.Object.Kind {
			case "Deployment":
				if len(rep.Conflicts) != 1 || rep.Conflicts[0].Path != ".spec.replicas" || rep.Conflicts[0].Manager != "kubectl" ||
					rep.Conflicts[0].Subresource != "scale" || rep.Message != message || !strings.HasPrefix(rep.Conflicts[0].Likely, "`kubectl scale`") {
					t.Errorf("%v: Deployment: conflicts %+v, message %q", args, rep.Conflicts, rep.Message)
				}
			default:
				if rep.Message != "" {
					t.Errorf("%v: %s: %q", args, rep.Object.Kind, rep.Message)
				}
			}
			// Helm's own apply keeps the label and annotations Helm adds.
			if c.asHelm && len(rep.Removed) > 0 {
				t.Errorf("%v: %s: removes %q", args, rep.Object.Kind, rep.Removed)
			}
		}
	}
	// kubectl apply of the render would drop what Helm adds: the force is
	// Helm's own flags, and no command names the file.
	file := filepath.Join(t.TempDir(), "next.yaml")
	writeFile(t, file, next)
	text := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--helm-release", "web")
	if text.code != 1 || !strings.Contains(text.stdout, `owner:      "kubectl" (Update with subresource "scale", apps/v1)`) ||
		!strings.Contains(text.stdout, "applied server-side: helm upgrade applies server-side next") ||
		!strings.Contains(text.stdout, "--server-side=true --force-conflicts") || strings.Contains(text.stdout, "kubectl apply") || strings.Contains(text.stdout, file) {
		t.Errorf("exit %d:\n%s%s", text.code, text.stdout, text.stderr)
	}

	for _, u := range helmObjects(t, ns, "web", next) {
		_, err := resourceFor(t, u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "helm", DryRun: []string{metav1.DryRunAll}})
		switch {
		case u.GetKind() == "Deployment" && (err == nil || err.Error() != message || !apierrors.IsConflict(err)):
			t.Errorf("the server's dry run: %v, want %q", err, message)
		case u.GetKind() != "Deployment" && err != nil:
			t.Errorf("the server's dry run of %s: %v", u.GetKind(), err)
		}
	}
}

// TestHelmReleaseErrors: what goes wrong reading a release is one line
// that says what to do, with the exit code of any input error.
func TestHelmReleaseErrors(t *testing.T) {
	ns := namespace(t)
	missingFile := mustSSA(t, 2, "diff", "-n", ns, "-f", "/no/such/manifest.yaml")
	helmReleaseSecret(t, ns, "failed", 1, "failed", "ssa", helmChart(2, "nginx:1.27"))
	helmStorageSecret(t, ns, "broken", 1, "deployed", "H4sIAAAA-not-a-release")
	configMapReader(t, ns, "reader")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no such release", []string{"--helm-release", "nope"},
			`error: helm release "nope" not found in namespace "` + ns + `" (no Secret labelled name=nope,owner=helm): check the release name and -n (and HELM_DRIVER=configmap for a release Helm stores in ConfigMaps); kubectl get secrets -A -l owner=helm lists the releases`},
		{"no deployed revision", []string{"--helm-release", "failed"},
			`error: helm release "failed" in namespace "` + ns + `" has no deployed revision (its revisions: 1 failed): give one with --helm-revision`},
		{"no such revision", []string{"--helm-release", "failed", "--helm-revision", "4"},
			`error: helm release "failed" in namespace "` + ns + `" has no revision 4 (its revisions: 1 failed): give one of them with --helm-revision`},
		{"undecodable", []string{"--helm-release", "broken"},
			"error: Secret/" + ns + "/sh.helm.release.v1.broken.v1: cannot decode the helm release it holds: not base64: "},
		{"no permission to read Secrets", []string{"--helm-release", "failed", "--as", "reader"},
			"this needs list permission (check with kubectl auth can-i list secrets -n " + ns + " --as=reader), or use another --context/--as"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ssa(t, append([]string{"diff", "-n", ns}, tt.args...)...)
			if r.code != missingFile.code {
				t.Errorf("exit %d, want %d as for a missing -f file", r.code, missingFile.code)
			}
			if !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
				t.Errorf("stdout %q, stderr %q; want one line with %q", r.stdout, r.stderr, tt.want)
			}
		})
	}

	// --helm-release completes with the namespace's releases.
	if r := mustSSA(t, 0, "__complete", "diff", "-n", ns, "--helm-release", ""); !strings.HasPrefix(r.stdout, "broken\nfailed\n:4\n") {
		t.Errorf("completion: %q", r.stdout)
	}

	// HELM_DRIVER=configmap reads ConfigMaps; no drift exits 0.
	helmWrite(t, ns, "cm", helmChart(2, "nginx:1.27"), true)
	rel, _ := json.Marshal(map[string]any{"name": "cm", "namespace": ns, "version": 1, "info": map[string]any{"status": "deployed"},
		"manifest": helmChart(2, "nginx:1.27"), "apply_method": "ssa"})
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.cm.v1", Namespace: ns, Labels: map[string]string{"owner": "helm", "name": "cm", "status": "deployed", "version": "1"}},
		Data:       map[string]string{"release": base64.StdEncoding.EncodeToString(rel)},
	}
	if _, err := env.client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r := ssaEnv(t, []string{"HELM_DRIVER=configmap"}, "diff", "-n", ns, "--helm-release", "cm")
	if r.code != 0 || !strings.Contains(r.stdout, "from ConfigMap/"+ns+"/sh.helm.release.v1.cm.v1") || strings.Contains(r.stdout, "\n-") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestHelmAdoption: a render that adds an object someone made by hand
// fails Helm's ownership check before anything is applied; the
// preflight says so in Helm's words, and its fixes (the label and
// annotations, pasted as kubectl commands) let the next preflight pass.
func TestHelmAdoption(t *testing.T) {
	ns := namespace(t)
	helmWrite(t, ns, "web", helmChart(2, "nginx:1.27"), true)
	helmReleaseSecret(t, ns, "web", 1, "deployed", "ssa", helmChart(2, "nginx:1.27"))
	extra := parse(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-extra}\ndata: {mode: fast}\n")
	extra.SetNamespace(ns)
	if _, err := resourceFor(t, extra).Create(context.Background(), extra, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	next := helmChart(2, "nginx:1.27") + "---\n# Source: web/templates/extra.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-extra\ndata:\n  mode: fast\n"
	args := []string{"explain-conflict", "-n", ns, "-f", "-", "--helm-release", "web"}
	want := `unable to continue with update: ConfigMap "web-extra" in namespace "` + ns +
		`" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"; annotation validation error: missing key "meta.helm.sh/release-name": must be set to "web"; annotation validation error: missing key "meta.helm.sh/release-namespace": must be set to "` + ns + `"`

	r := ssaIn(t, next, append(args, "-o", "json")...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (Helm refuses the upgrade)\n%s%s", r.code, r.stdout, r.stderr)
	}
	var list struct {
		Items []struct {
			Object  struct{ Kind string } `json:"object"`
			Refused *struct {
				Tool, Release, Namespace, Message string
			} `json:"refused"`
			Resolutions []struct {
				Kind, Snippet, Command string
			} `json:"resolutions"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, rep := range list.Items {
		switch {
		case rep.Object.Kind != "ConfigMap" && rep.Refused != nil:
			t.Errorf("%s of the release is refused: %+v", rep.Object.Kind, rep.Refused)
		case rep.Object.Kind == "ConfigMap" && (rep.Refused == nil || rep.Refused.Message != want || rep.Refused.Tool != "helm"):
			t.Errorf("the ConfigMap's refusal: %+v\nwant message %s", rep.Refused, want)
		case rep.Object.Kind == "ConfigMap":
			for _, rm := range rep.Resolutions {
				if rm.Kind == "helm-take-ownership" && rm.Snippet != "--take-ownership" {
					t.Errorf("take-ownership snippet %q", rm.Snippet)
				}
				if rm.Kind == "helm-ownership-metadata" {
					commands = append(commands, rm.Command)
				}
			}
		}
	}
	wantCommands := []string{
		"kubectl label configmap/web-extra -n " + ns + " app.kubernetes.io/managed-by=Helm --overwrite",
		"kubectl annotate configmap/web-extra -n " + ns + " meta.helm.sh/release-name=web meta.helm.sh/release-namespace=" + ns + " --overwrite",
	}
	if diff := cmp.Diff(wantCommands, commands); diff != "" {
		t.Errorf("the ownership fixes (-want +got):\n%s", diff)
	}
	text := ssaIn(t, next, args...)
	if text.code != 1 || !strings.Contains(text.stdout, "REFUSED: helm refuses it before it applies anything: "+want) {
		t.Errorf("text, exit %d:\n%s%s", text.code, text.stdout, text.stderr)
	}
	// diff says it too, and that the upgrade deletes the Service the
	// render no longer has.
	const serviceDoc = "---\n# Source: web/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  selector:\n    app: web\n  ports:\n  - port: 80\n"
	if !strings.Contains(next, serviceDoc) {
		t.Fatalf("the render has no Service as this test expects:\n%s", next)
	}
	d := ssaIn(t, strings.Replace(next, serviceDoc, "", 1), "diff", "-n", ns, "-f", "-", "--helm-release", "web")
	if d.code != 1 || !strings.Contains(d.stdout, "# helm refuses the upgrade before it applies anything: "+want) ||
		!strings.Contains(d.stdout, "# helm upgrade deletes 1 object(s) of the release the render no longer has (annotate one helm.sh/resource-policy=keep to keep it): Service/"+ns+"/web\n") {
		t.Errorf("diff, exit %d:\n%s%s", d.code, d.stdout, d.stderr)
	}

	// The commands' writes (kubectl label and annotate, as their managers).
	patch(t, objRef("v1", "ConfigMap", ns, "web-extra"), "kubectl-label", `{"metadata":{"labels":{"app.kubernetes.io/managed-by":"Helm"}}}`)
	patch(t, objRef("v1", "ConfigMap", ns, "web-extra"), "kubectl-annotate", `{"metadata":{"annotations":{"meta.helm.sh/release-name":"web","meta.helm.sh/release-namespace":"`+ns+`"}}}`)
	if r := ssaIn(t, next, args...); r.code != 0 {
		t.Errorf("after the fixes: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestHelmAutoFollowsLastRevision: --server-side=auto follows the last
// revision of any status; after a failed server-side upgrade of a
// client-side release, the next upgrade is server-side too.
func TestHelmAutoFollowsLastRevision(t *testing.T) {
	ns := namespace(t)
	helmWrite(t, ns, "legacy", helmChart(2, "nginx:1.27"), false)
	helmReleaseSecret(t, ns, "legacy", 1, "deployed", "csa", helmChart(2, "nginx:1.27"))
	helmReleaseSecret(t, ns, "legacy", 2, "failed", "ssa", helmChart(2, "nginx:1.27"))
	r := mustSSA(t, 0, "diff", "-n", ns, "--helm-release", "legacy")
	want := "# helm release legacy, revision 1 (deployed), from Secret/" + ns + "/sh.helm.release.v1.legacy.v1: applied client-side (Helm 3, or --server-side=false); revision 2 after it (failed) was server-side: helm upgrade applies server-side next (--server-side=auto); the prediction below is of --server-side=auto, which first moves helm's client-side ownership to its apply"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("the header does not say %q:\n%s", want, r.stdout)
	}
}

// TestHelmInstallPreflight: a release not installed yet, its render piped
// in: predicted as helm install applies it, and an object that exists
// without the release's label and annotations is refused as Helm refuses
// it.
func TestHelmInstallPreflight(t *testing.T) {
	ns := namespace(t)
	render := helmChart(2, "nginx:1.27")
	args := []string{"explain-conflict", "-n", ns, "-f", "-", "--helm-release", "fresh"}
	r := ssaIn(t, render, args...)
	if r.code != 0 || !strings.Contains(r.stdout, "# helm release fresh is not installed in namespace "+ns+": the render is predicted as helm install applies it (server-side, Helm 4's default)") {
		t.Fatalf("nothing there yet: exit %d, want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	svc := parse(t, "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n")
	svc.SetNamespace(ns)
	if _, err := resourceFor(t, svc).Create(context.Background(), svc, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	want := `unable to continue with install: Service "web" in namespace "` + ns + `" exists and cannot be imported into the current release: invalid ownership metadata; label validation error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"; annotation validation error: missing key "meta.helm.sh/release-name": must be set to "fresh"; annotation validation error: missing key "meta.helm.sh/release-namespace": must be set to "` + ns + `"`
	r = ssaIn(t, render, args...)
	if r.code != 1 || !strings.Contains(r.stdout, "# Service/"+ns+"/web: REFUSED: helm refuses it before it applies anything: "+want) {
		t.Errorf("a Service made by hand: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	d := ssaIn(t, render, "diff", "-n", ns, "-f", "-", "--helm-release", "fresh")
	if d.code != 1 || !strings.Contains(d.stdout, "# helm refuses the install before it applies anything: "+want) {
		t.Errorf("diff: exit %d, want 1\n%s%s", d.code, d.stdout, d.stderr)
	}
}

// TestHelmFailedInstallPreflight: a release whose only revision failed
// (an install that conflicted): helm upgrade builds on that revision, and
// so does the preflight.
func TestHelmFailedInstallPreflight(t *testing.T) {
	ns := namespace(t)
	helmReleaseSecret(t, ns, "new", 1, "failed", "ssa", helmChart(2, "nginx:1.27"))
	r := ssaIn(t, helmChart(2, "nginx:1.27"), "explain-conflict", "-n", ns, "-f", "-", "--helm-release", "new")
	if r.code != 0 || !strings.Contains(r.stdout, "# helm release new, revision 1 (failed), from Secret/"+ns+"/sh.helm.release.v1.new.v1: applied server-side") {
		t.Errorf("exit %d, want 0 with the failed revision as the base:\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Alone, with nothing to diff but the release itself, it still says
	// there is no deployed revision.
	if r := ssa(t, "diff", "-n", ns, "--helm-release", "new"); r.code != 2 || !strings.Contains(r.stderr, "has no deployed revision") {
		t.Errorf("diff of the release alone: exit %d\n%s", r.code, r.stderr)
	}
}
