package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/csaupgrade"
)

type conflictReport struct {
	Kind   string `json:"kind"`
	Action string `json:"action"`
	Object struct {
		Kind, Namespace, Name, ResourceVersion string
	} `json:"object"`
	FieldManager string `json:"fieldManager"`
	Force        bool   `json:"force"`
	Conflicts    []struct {
		Path         string  `json:"path"`
		Manager      string  `json:"manager"`
		Operation    string  `json:"operation"`
		Subresource  string  `json:"subresource"`
		APIVersion   string  `json:"apiVersion"`
		Time         *string `json:"time"`
		LiveValue    any     `json:"liveValue"`
		AppliedValue any     `json:"appliedValue"`
		Likely       string  `json:"likely"`
	} `json:"conflicts"`
	Message    string            `json:"message"`
	Removed    []string          `json:"removed"`
	Reset      []resetEntry      `json:"reset"`
	MaybeReset []maybeResetEntry `json:"maybeReset"`
	Retained   []struct {
		Path   string  `json:"path"`
		Owners []owner `json:"owners"`
	} `json:"retained"`
	Released       []owner                     `json:"releasedManagers"`
	ManagedFields  []metav1.ManagedFieldsEntry `json:"managedFields"`
	Warnings       []string                    `json:"warnings"`
	KubectlUpgrade []string                    `json:"kubectlUpgrade"`
}

type applyCase struct {
	manifest    string
	manager     string
	force       bool
	subresource string
	// kubectlUpgrade models kubectl's client-side upgrade; the server's
	// dry run is a plain apply, so the corpus compares without it.
	kubectlUpgrade bool
}

// explain runs explain-conflict -o json on one manifest.
func explain(t *testing.T, ns string, c applyCase, extra ...string) (conflictReport, int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "manifest.yaml")
	writeFile(t, file, c.manifest)
	args := []string{"explain-conflict", "-n", ns, "-f", file, "-o", "json", "--field-manager", c.manager, "--kubectl-upgrade=" + fmt.Sprint(c.kubectlUpgrade)}
	if c.force {
		args = append(args, "--force-conflicts")
	}
	if c.subresource != "" {
		args = append(args, "--subresource", c.subresource)
	}
	res := ssa(t, append(args, extra...)...)
	if res.code > 1 {
		t.Fatalf("explain-conflict exit %d:\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var r conflictReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("not a report: %v\n%s", err, res.stdout)
	}
	if r.Kind != "ConflictReport" {
		t.Fatalf("kind %q", r.Kind)
	}
	return r, res.code
}

var causeManager = regexp.MustCompile(`^conflict with "((?:[^"\\]|\\.)*)"`)

// agreeWithServer runs the prediction and the server's own dry run of the
// same apply, and fails on any difference in conflicts (manager and path),
// message, or resulting managedFields (times aside).
// Controllers may write the object between the two (the deployment
// controller updates status): then the pair is taken again.
func agreeWithServer(t *testing.T, ns string, c applyCase) conflictReport {
	t.Helper()
	for attempt := 0; ; attempt++ {
		r, code := explain(t, ns, c)
		a := askServer(t, ns, c)
		// The server judged the object the prediction read only when the live
		// resourceVersion was the same before and after its dry run.
		same := a.live != nil && a.live.GetResourceVersion() == r.Object.ResourceVersion && a.rvAfter == r.Object.ResourceVersion
		if r.Action == "create" && a.live == nil || same || attempt == 10 {
			return compareWithServer(t, c, r, code, a)
		}
		time.Sleep(time.Duration(200*(attempt+1)) * time.Millisecond)
	}
}

func liveRV(t *testing.T, ns, manifest string) string {
	u := parse(t, manifest)
	u.SetNamespace(ns)
	live, err := resourceFor(t, u).Get(context.Background(), u.GetName(), metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return live.GetResourceVersion()
}

// serverAnswer is the server's dry run of an apply, with the live object
// before it and the live resourceVersion after it.
type serverAnswer struct {
	live    *unstructured.Unstructured
	out     *unstructured.Unstructured
	err     error
	rvAfter string
}

func askServer(t *testing.T, ns string, c applyCase) serverAnswer {
	t.Helper()
	u := parse(t, c.manifest)
	u.SetNamespace(ns)
	var subs []string
	if c.subresource != "" {
		subs = []string{c.subresource}
	}
	body := u
	if c.subresource == "scale" {
		replicas, _, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "replicas")
		body = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
			"metadata": map[string]any{"name": u.GetName(), "namespace": ns}, "spec": map[string]any{"replicas": replicas}}}
	}
	var a serverAnswer
	live, err := resourceFor(t, u).Get(context.Background(), u.GetName(), metav1.GetOptions{})
	if err == nil {
		a.live = live
	}
	a.out, a.err = resourceFor(t, u).Apply(context.Background(), u.GetName(), body, metav1.ApplyOptions{FieldManager: c.manager, Force: c.force, DryRun: []string{metav1.DryRunAll}}, subs...)
	a.rvAfter = liveRV(t, ns, c.manifest)
	return a
}

func compareWithServer(t *testing.T, c applyCase, r conflictReport, code int, a serverAnswer) conflictReport {
	t.Helper()
	live, out, err := a.live, a.out, a.err
	switch {
	case apierrors.IsConflict(err):
		st := err.(apierrors.APIStatus).Status()
		if code != 1 {
			t.Errorf("server: conflict %q; prediction exit %d", st.Message, code)
		}
		if r.Message != st.Message {
			t.Errorf("message:\nserver:    %q\npredicted: %q", st.Message, r.Message)
		}
		var server, local []string
		for _, cause := range st.Details.Causes {
			m := causeManager.FindStringSubmatch(cause.Message)
			server = append(server, cause.Field+" by "+m[1])
		}
		for _, cf := range r.Conflicts {
			local = append(local, cf.Path+" by "+cf.Manager)
		}
		sort.Strings(server)
		sort.Strings(local)
		if strings.Join(server, "\n") != strings.Join(local, "\n") {
			t.Errorf("conflicts:\nserver:\n%s\npredicted:\n%s", strings.Join(server, "\n"), strings.Join(local, "\n"))
		}
	case err != nil:
		t.Fatalf("server dry run: %v", err)
	default:
		if code != 0 || r.Message != "" {
			t.Errorf("server applied; prediction exit %d message %q", code, r.Message)
		}
		got, want := normalize(r.ManagedFields), normalize(out.GetManagedFields())
		if got != want && c.subresource != "scale" { // a Scale carries no parent managedFields
			t.Errorf("managedFields:\nserver:    %s\npredicted: %s", want, got)
		}
		checkRemovals(t, c, r, live, out)
	}
	return r
}

func normalize(entries []metav1.ManagedFieldsEntry) string {
	var out []string
	for _, e := range entries {
		fields := ""
		if e.FieldsV1 != nil {
			var v any
			_ = json.Unmarshal(e.FieldsV1.GetRawBytes(), &v)
			b, _ := json.Marshal(v)
			fields = string(b)
		}
		out = append(out, fmt.Sprintf("%s|%s|%s|%s|%s", e.Manager, e.Operation, e.Subresource, e.APIVersion, fields))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

const conflictDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  finalizers: [example.com/a]
spec:
  replicas: 2
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: main
        image: nginx:1
        args: [serve]
        ports:
        - {containerPort: 80, protocol: TCP, name: http}
      - name: side
        image: busybox:1
`

func TestExplainConflictCorpus(t *testing.T) {
	createCRD(t)
	createExtraCRDs(t)
	variant := func(from, to string) string { return strings.Replace(conflictDeployment, from, to, 1) }

	scenarios := []struct {
		name  string
		setup func(t *testing.T, ns string)
		apply applyCase
		check func(t *testing.T, r conflictReport)
	}{
		{
			name: "controller update vs apply",
			setup: func(t *testing.T, ns string) {
				d := apply(t, ns, "kubectl", conflictDeployment, false)
				patch(t, d, "image-updater", `{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:2"}]}}}}`)
			},
			apply: applyCase{manifest: variant("nginx:1", "nginx:3"), manager: "kubectl"},
			check: func(t *testing.T, r conflictReport) {
				if len(r.Conflicts) != 1 || r.Conflicts[0].Manager != "image-updater" || r.Conflicts[0].Operation != "Update" ||
					r.Conflicts[0].LiveValue != "nginx:2" || r.Conflicts[0].AppliedValue != "nginx:3" || r.Conflicts[0].Time == nil {
					t.Errorf("conflict = %+v", r.Conflicts)
				}
			},
		},
		{
			name: "force takes the field",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "kubectl", conflictDeployment, false)
				apply(t, ns, "other", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"},"spec":{"replicas":3}}`, true)
			},
			apply: applyCase{manifest: conflictDeployment, manager: "kubectl", force: true},
			check: func(t *testing.T, r conflictReport) {
				if !r.Force || len(r.Conflicts) != 1 || r.Conflicts[0].Manager != "other" {
					t.Errorf("forced conflicts = %+v", r.Conflicts)
				}
				if len(r.Released) != 1 || r.Released[0].Manager != "other" {
					t.Errorf("released = %+v, want other (it owned only replicas); report %+v", r.Released, r)
				}
			},
		},
		{
			name: "shared ownership by equal values",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "a", conflictDeployment, false)
				apply(t, ns, "b", conflictDeployment, false)
			},
			apply: applyCase{manifest: variant("replicas: 2", "replicas: 5"), manager: "c"},
			check: func(t *testing.T, r conflictReport) {
				if len(r.Conflicts) != 2 {
					t.Errorf("want .spec.replicas against a and b, got %+v", r.Conflicts)
				}
			},
		},
		{
			name:  "two appliers on one keyed list item",
			setup: func(t *testing.T, ns string) { apply(t, ns, "a", conflictDeployment, false) },
			apply: applyCase{manifest: `
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    spec:
      containers:
      - {name: side, image: busybox:2}
`, manager: "b"},
		},
		{
			name:  "set-typed finalizers do not conflict",
			setup: func(t *testing.T, ns string) { apply(t, ns, "a", conflictDeployment, false) },
			apply: applyCase{manifest: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app","finalizers":["example.com/b"]}}`, manager: "b"},
		},
		{
			name:  "atomic selector",
			setup: func(t *testing.T, ns string) { apply(t, ns, "a", conflictDeployment, false) },
			apply: applyCase{manifest: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"},"spec":{"selector":{"matchLabels":{"app":"app","x":"y"}}}}`, manager: "b"},
		},
		{
			name:  "atomic container args",
			setup: func(t *testing.T, ns string) { apply(t, ns, "a", conflictDeployment, false) },
			apply: applyCase{manifest: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"},"spec":{"template":{"spec":{"containers":[{"name":"main","args":["serve","--debug"]}]}}}}`, manager: "b"},
		},
		{
			name:  "multi-key container ports",
			setup: func(t *testing.T, ns string) { apply(t, ns, "a", conflictDeployment, false) },
			apply: applyCase{manifest: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"},"spec":{"template":{"spec":{"containers":[{"name":"main","ports":[{"containerPort":80,"protocol":"TCP","name":"web"}]}]}}}}`, manager: "b"},
			check: func(t *testing.T, r conflictReport) {
				if len(r.Conflicts) != 1 || r.Conflicts[0].Path != `.spec.template.spec.containers[name="main"].ports[containerPort=80,protocol="TCP"].name` {
					t.Errorf("conflicts = %+v", r.Conflicts)
				}
			},
		},
		{
			name: "kubectl scale then apply",
			setup: func(t *testing.T, ns string) {
				d := apply(t, ns, "kubectl", conflictDeployment, false)
				patch(t, d, "kubectl", `{"spec":{"replicas":7}}`, "scale")
			},
			apply: applyCase{manifest: conflictDeployment, manager: "kubectl"},
			check: func(t *testing.T, r conflictReport) {
				if len(r.Conflicts) != 1 || r.Conflicts[0].Subresource != "scale" || r.Conflicts[0].LiveValue != float64(7) {
					t.Errorf("conflicts = %+v", r.Conflicts)
				}
			},
		},
		{
			name: "status written through /status",
			setup: func(t *testing.T, ns string) {
				g := apply(t, ns, "a", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":"s"}}`, false)
				patch(t, g, "status-controller", `{"status":{"phase":"Ready"}}`, "status")
			},
			apply: applyCase{manifest: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"status":{"phase":"Failed"}}`, manager: "prober", subresource: "status"},
		},
		{
			name: "status is reset on main-resource applies",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "a", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":"s"}}`, false)
			},
			apply: applyCase{manifest: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":"s"},"status":{"phase":"Made-up"}}`, manager: "b"},
			check: func(t *testing.T, r conflictReport) {
				found := false
				for _, w := range r.Warnings {
					found = found || strings.Contains(w, "apply it with --subresource status")
				}
				if !found {
					t.Errorf("no warning that status is ignored: %v", r.Warnings)
				}
			},
		},
		{
			name:  "kubectl with last-applied is forced silently",
			setup: func(t *testing.T, ns string) { csaApply(t, ns, conflictDeployment) },
			apply: applyCase{manifest: variant("nginx:1", "nginx:5"), manager: "kubectl"},
			check: func(t *testing.T, r conflictReport) {
				if len(r.Conflicts) != 0 {
					t.Errorf("kubectl upgrading from client-side apply should not conflict: %+v", r.Conflicts)
				}
			},
		},
		{
			name:  "another manager against client-side apply",
			setup: func(t *testing.T, ns string) { csaApply(t, ns, conflictDeployment) },
			apply: applyCase{manifest: variant("nginx:1", "nginx:5"), manager: "ci-deploy"},
			check: func(t *testing.T, r conflictReport) {
				if len(r.Conflicts) != 1 || r.Conflicts[0].Manager != "kubectl-client-side-apply" {
					t.Errorf("conflicts = %+v", r.Conflicts)
				}
			},
		},
		{
			name: "before-first-apply after a reset",
			setup: func(t *testing.T, ns string) {
				d := apply(t, ns, "a", conflictDeployment, false)
				patch(t, d, "resetter", `{"metadata":{"managedFields":[{}]}}`)
			},
			apply: applyCase{manifest: variant("nginx:1", "nginx:4"), manager: "b"},
			check: func(t *testing.T, r conflictReport) {
				if len(r.Conflicts) == 0 || r.Conflicts[0].Manager != "before-first-apply" {
					t.Errorf("conflicts = %+v", r.Conflicts)
				}
			},
		},
		{
			name: "more than ten update managers",
			setup: func(t *testing.T, ns string) {
				cm := apply(t, ns, "a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"x":"1"}}`, false)
				for i := 0; i < 12; i++ {
					patch(t, cm, fmt.Sprintf("w%02d", i), fmt.Sprintf(`{"data":{"k%02d":"v"}}`, i))
				}
			},
			apply: applyCase{manifest: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k00":"changed","k11":"changed"}}`, manager: "b"},
			check: func(t *testing.T, r conflictReport) {
				found := false
				for _, c := range r.Conflicts {
					found = found || c.Manager == "ancient-changes"
				}
				if !found {
					t.Errorf("no conflict with ancient-changes: %+v", r.Conflicts)
				}
			},
		},
		{
			name: "manager recorded at another apiVersion",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "v1-owner", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"color":"red"}}`, false)
			},
			apply: applyCase{manifest: `{"apiVersion":"example.com/v2","kind":"Gadget","metadata":{"name":"g"},"spec":{"color":"blue"}}`, manager: "v2-owner"},
			check: func(t *testing.T, r conflictReport) {
				if len(r.Conflicts) != 1 || r.Conflicts[0].Manager != "v1-owner" {
					t.Errorf("conflicts = %+v", r.Conflicts)
				}
			},
		},
		{
			name: "update manager at another apiVersion",
			setup: func(t *testing.T, ns string) {
				g := apply(t, ns, "a", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"color":"red"}}`, false)
				patch(t, g, "editor", `{"spec":{"size":"xl"}}`)
			},
			apply: applyCase{manifest: `{"apiVersion":"example.com/v2","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":"s"}}`, manager: "b"},
		},
		{
			name: "CRD without schema: lists are atomic",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "a", `{"apiVersion":"example.com/v1","kind":"Blob","metadata":{"name":"b"},"spec":{"items":[{"name":"x"},{"name":"y"}]}}`, false)
			},
			apply: applyCase{manifest: `{"apiVersion":"example.com/v1","kind":"Blob","metadata":{"name":"b"},"spec":{"items":[{"name":"x"}]}}`, manager: "b"},
			check: func(t *testing.T, r conflictReport) {
				if len(r.Conflicts) != 1 || r.Conflicts[0].Path != ".spec.items" {
					t.Errorf("conflicts = %+v", r.Conflicts)
				}
			},
		},
		{
			name: "keyed list in a custom resource",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "a", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"items":[{"name":"x","value":"1"},{"name":"y","value":"2"}]}}`, false)
			},
			apply: applyCase{manifest: `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"items":[{"name":"y","value":"3"}]}}`, manager: "b"},
		},
		{
			name:  "create",
			setup: func(t *testing.T, ns string) {},
			apply: applyCase{manifest: conflictDeployment, manager: "kubectl"},
			check: func(t *testing.T, r conflictReport) {
				if r.Action != "create" || len(r.Conflicts) != 0 {
					t.Errorf("action %q conflicts %+v", r.Action, r.Conflicts)
				}
			},
		},
		{
			name: "dropped field is removed; shared one is retained",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "a", conflictDeployment, false)
				apply(t, ns, "b", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"},"spec":{"template":{"spec":{"containers":[{"name":"main","args":["serve"]}]}}}}`, false)
			},
			apply: applyCase{manifest: strings.Replace(strings.Replace(conflictDeployment, "        args: [serve]\n", "", 1), "      - name: side\n        image: busybox:1\n", "", 1), manager: "a"},
			check: func(t *testing.T, r conflictReport) {
				if !containsString(r.Removed, `.spec.template.spec.containers[name="side"]`) {
					t.Errorf("removed = %v", r.Removed)
				}
				if len(r.Retained) != 1 || r.Retained[0].Path != `.spec.template.spec.containers[name="main"].args` || r.Retained[0].Owners[0].Manager != "b" {
					t.Errorf("retained = %+v", r.Retained)
				}
			},
		},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			ns := namespace(t)
			s.setup(t, ns)
			r := agreeWithServer(t, ns, s.apply)
			if s.check != nil {
				s.check(t, r)
			}
		})
	}
}

func TestExplainConflictText(t *testing.T) {
	ns := namespace(t)
	d := apply(t, ns, "kubectl", conflictDeployment, false)
	patch(t, d, "kubectl", `{"spec":{"replicas":7}}`, "scale")
	file := filepath.Join(t.TempDir(), "app.yaml")
	writeFile(t, file, conflictDeployment)
	res := ssa(t, "explain-conflict", "-n", ns, "-f", file, "--color", "never")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", res.code, res.stdout, res.stderr)
	}
	out := res.stdout
	for _, want := range []string{
		`CONFLICT: the apply as "kubectl" would fail with 1 conflict`,
		`owner:      "kubectl" (Update with subresource "scale", apps/v1)`,
		"likely:     `kubectl scale`",
		"live value: 7",
		"your value: 2",
		`Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas`,
		"$ kubectl apply --server-side --force-conflicts -n " + ns + " -f " + file,
		"$ kubectl ssa handover deployment.v1.apps/app -n " + ns + " --field .spec.replicas --from kubectl",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The suggested commands work when pasted: run them as server dry runs.
	for _, line := range strings.Split(out, "\n") {
		cmdline, ok := strings.CutPrefix(strings.TrimSpace(line), "$ kubectl ssa ")
		if !ok {
			continue
		}
		args := append(strings.Fields(cmdline), "--dry-run=server", "-o", "json")
		r := ssa(t, args...)
		if r.code != 0 || !strings.Contains(r.stdout, `"name": "app"`) || !strings.Contains(r.stdout, `"namespace": "`+ns+`"`) {
			t.Errorf("the suggestion %q failed as a server dry run: exit %d\n%s%s", cmdline, r.code, r.stdout, r.stderr)
		}
	}
	// -o json carries the same ways out as data: every command the text
	// view prints, by kind.
	res = ssa(t, "explain-conflict", "-n", ns, "-f", file, "-o", "json")
	var rep struct {
		Resolutions []struct {
			Kind, Summary, Manager, Subresource, Command string
			Paths                                        []string
		} `json:"resolutions"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	var kinds, commands []string
	for _, rm := range rep.Resolutions {
		kinds = append(kinds, rm.Kind)
		if rm.Command != "" {
			commands = append(commands, rm.Command)
		}
	}
	if got := strings.Join(kinds, " "); got != "force leave share handover who-owns" {
		t.Errorf("resolution kinds %q", got)
	}
	var printed []string
	for _, line := range strings.Split(out, "\n") {
		if _, c, ok := strings.Cut(line, "$ "); ok {
			printed = append(printed, c)
		} else if _, c, ok := strings.Cut(line, "See who owns what: "); ok {
			printed = append(printed, c)
		}
	}
	if !slices.Equal(printed, commands) {
		t.Errorf("text view's commands %q, JSON's %q", printed, commands)
	}
	// --verify agrees and keeps the exit code.
	res = ssa(t, "explain-conflict", "-n", ns, "-f", file, "--verify")
	if res.code != 1 || !strings.Contains(res.stdout, "the server's dry run agrees") {
		t.Errorf("--verify: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// Exit 0 when it applies cleanly.
	writeFile(t, file, strings.Replace(conflictDeployment, "replicas: 2", "replicas: 7", 1))
	if r := ssa(t, "explain-conflict", "-n", ns, "-f", file); r.code != 0 {
		t.Errorf("clean apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestExplainConflictErrors(t *testing.T) {
	ns := namespace(t)
	dir := t.TempDir()
	cases := []struct{ name, manifest, want string }{
		{"malformed", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n", `(?i)yaml|json`},
		{"unknown kind", `{"apiVersion":"example.com/v1","kind":"Nope","metadata":{"name":"x"}}`, `doesn't serve kind Nope`},
		{"managedFields in manifest", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","managedFields":[{"manager":"m"}]}}`, `metadata.managedFields.*remove it`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
			writeFile(t, f, c.manifest)
			r := ssa(t, "explain-conflict", "-n", ns, "-f", f)
			if r.code < 2 {
				t.Fatalf("exit %d, want >1\n%s", r.code, r.stdout)
			}
			if !regexp.MustCompile(c.want).MatchString(r.stderr) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("stderr %q, want one line matching %q", r.stderr, c.want)
			}
		})
	}
	// A user who may not read the object.
	f := filepath.Join(dir, "cm.yaml")
	writeFile(t, f, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`)
	if r := ssa(t, "explain-conflict", "-n", ns, "-f", f, "--as", "nobody"); r.code < 2 || !strings.Contains(r.stderr, "forbidden") {
		t.Errorf("forbidden: exit %d %q", r.code, r.stderr)
	}
}

func TestExplainConflictLocal(t *testing.T) {
	ns := namespace(t)
	d := apply(t, ns, "kubectl", conflictDeployment, false)
	patch(t, d, "kubectl", `{"spec":{"replicas":7}}`, "scale")
	live := get(t, d)
	b, _ := json.Marshal(live.Object)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "live.json"), string(b))
	writeFile(t, filepath.Join(dir, "app.yaml"), conflictDeployment)
	online, _ := explain(t, ns, applyCase{manifest: conflictDeployment, manager: "kubectl"})
	out := ssaLocalCode(t, 1, "explain-conflict", "--local", "--live-file", filepath.Join(dir, "live.json"), "-f", filepath.Join(dir, "app.yaml"), "-o", "json")
	var offline conflictReport
	if err := json.Unmarshal([]byte(out), &offline); err != nil {
		t.Fatal(err)
	}
	if offline.Message != online.Message || offline.Message == "" {
		t.Errorf("offline message %q, online %q", offline.Message, online.Message)
	}
}

func ssaLocalCode(t *testing.T, code int, args ...string) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "nowhere")
	writeFile(t, kc, "apiVersion: v1\nkind: Config\nclusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: x, context: {cluster: x}}]\ncurrent-context: x\n")
	return mustSSA(t, code, append(args, "--kubeconfig", kc)...).stdout
}

func TestExplainConflictRedactsSecrets(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "vault", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"password":"hunter2"}}`, false)
	file := filepath.Join(t.TempDir(), "s.yaml")
	writeFile(t, file, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"password":"swordfish"}}`)
	for _, o := range []string{"text", "json"} {
		r := ssa(t, "explain-conflict", "-n", ns, "-f", file, "-o", o)
		if r.code != 1 {
			t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout, "aHVudGVyMg") || strings.Contains(r.stdout, "swordfish") || strings.Contains(r.stdout, "c3dvcmRmaXNo") {
			t.Errorf("-o %s prints a secret value:\n%s", o, r.stdout)
		}
		if !strings.Contains(r.stdout, "<redacted>") {
			t.Errorf("-o %s does not say it redacted:\n%s", o, r.stdout)
		}
	}
	// (stringData is write-only: the live object has no value there.)
	if r := ssa(t, "explain-conflict", "-n", ns, "-f", file, "-o", "json", "--show-secret-values"); !strings.Contains(r.stdout, `"appliedValue": "swordfish"`) {
		t.Errorf("--show-secret-values hides the value:\n%s", r.stdout)
	}
}

// kubectl apply --server-side on an object still carrying client-side
// apply: it applies, keeps the last-applied annotation (as "kubectl"),
// moves client-side apply's ownership to its field manager (csaupgrade)
// and applies again. The prediction follows the whole sequence, replayed
// here request by request as kubectl sends them.
func TestExplainConflictKubectlSequence(t *testing.T) {
	ns := namespace(t)
	cm := csaApply(t, ns, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"1","b":"2"}},"data":{"x":"1","yy":"2"}}`)
	manifest := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"1"}},"data":{"x":"1"}}`
	r, code := explain(t, ns, applyCase{manifest: manifest, manager: "kubectl", kubectlUpgrade: true})
	if code != 0 || strings.Join(r.Removed, " ") != ".data.yy .metadata.labels.b" || len(r.KubectlUpgrade) != 1 {
		t.Fatalf("exit %d removed %v upgrade %v", code, r.Removed, r.KubectlUpgrade)
	}
	// 1. the apply
	apply(t, ns, "kubectl", manifest, false)
	// 2. kubectl-last-applied keeps the annotation
	live := get(t, cm)
	apply(t, ns, "kubectl-last-applied", fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":{%q:%q}}}`,
		"kubectl.kubernetes.io/last-applied-configuration", live.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]), false)
	// 3. the client-side apply upgrade
	live = get(t, cm)
	p, err := csaupgrade.UpgradeManagedFieldsPatch(live, sets.New("kubectl-client-side-apply"), "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resourceFor(t, live).Patch(context.Background(), "c", types.JSONPatchType, p, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// 4. the apply again
	apply(t, ns, "kubectl", manifest, false)
	after := get(t, cm)
	if _, found, _ := unstructured.NestedString(after.Object, "data", "yy"); found {
		t.Errorf(".data.yy was predicted removed but stayed")
	}
	if _, ok := after.GetLabels()["b"]; ok {
		t.Errorf("label b was predicted removed but stayed")
	}
	if got, want := normalize(r.ManagedFields), normalize(after.GetManagedFields()); got != want {
		t.Errorf("managedFields after kubectl's sequence:\nserver:    %s\npredicted: %s", want, got)
	}

	// The first apply is a plain one: a field client-side apply set by
	// default (not in its last-applied configuration) conflicts, and so
	// does any change under another field manager.
	d := csaApply(t, ns, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"data":{"a":"1"}}`)
	_ = d
	r, code = explain(t, ns, applyCase{manifest: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"data":{"a":"10"}}`, manager: "ci", kubectlUpgrade: true})
	if code != 1 || len(r.Conflicts) != 1 || r.Conflicts[0].Manager != "kubectl-client-side-apply" {
		t.Errorf("another manager changing a client-side applied value: exit %d conflicts %+v", code, r.Conflicts)
	}
}

func TestExplainConflictScaleSubresource(t *testing.T) {
	ns := namespace(t)
	d := apply(t, ns, "kubectl", conflictDeployment, false)
	patch(t, d, "autoscaler", `{"spec":{"replicas":5}}`, "scale")
	// An apply to /scale by another manager conflicts with the /scale writer.
	c := applyCase{manifest: strings.Replace(conflictDeployment, "replicas: 2", "replicas: 6", 1), manager: "scaler", subresource: "scale"}
	r := agreeWithServer(t, ns, c)
	// The owner's entry is the object's own (apps/v1), not the Scale's
	// view of it.
	if len(r.Conflicts) != 1 || r.Conflicts[0].Manager != "autoscaler" || r.Conflicts[0].APIVersion != "apps/v1" {
		t.Errorf("conflicts %+v", r.Conflicts)
	}
	// handover gives fields to an applier of the object itself: no
	// handover command is offered to an apply to /scale.
	file := filepath.Join(t.TempDir(), "m.yaml")
	writeFile(t, file, c.manifest)
	text := mustSSA(t, 1, "explain-conflict", "-n", ns, "-f", file, "--field-manager", "scaler", "--subresource", "scale")
	if strings.Contains(text.stdout, "kubectl ssa handover") || !strings.Contains(text.stdout, "not to an apply to /scale") {
		t.Errorf("the ways out of a /scale conflict:\n%s", text.stdout)
	}
}

// kubectl autoscale (falling back to autoscaling/v1) writes an HPA at v1;
// the object is applied at v2, which differs in shape. The apiserver
// compares kubectl-autoscale's fields at v1, and so does the prediction:
// the conflict is found, and a forced apply leaves kubectl-autoscale the
// fields the apply did not change.
func TestExplainConflictBuiltinVersionSkew(t *testing.T) {
	ns := namespace(t)
	hpa := parse(t, `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":3,"targetCPUUtilizationPercentage":80}}`)
	hpa.SetNamespace(ns)
	if _, err := resourceFor(t, hpa).Create(context.Background(), hpa, metav1.CreateOptions{FieldManager: "kubectl-autoscale"}); err != nil {
		t.Fatal(err)
	}
	c := applyCase{manager: "kubectl", manifest: `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"web"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":4}}`}
	r := agreeWithServer(t, ns, c)
	if len(r.Conflicts) != 1 || r.Conflicts[0].Manager != "kubectl-autoscale" || r.Conflicts[0].Path != ".spec.maxReplicas" || r.Conflicts[0].APIVersion != "autoscaling/v1" {
		t.Errorf("conflicts = %+v", r.Conflicts)
	}
	c.force = true
	r = agreeWithServer(t, ns, c)
	kept := false
	for _, e := range r.ManagedFields {
		kept = kept || (e.Manager == "kubectl-autoscale" && strings.Contains(string(e.FieldsV1.GetRawBytes()), "f:scaleTargetRef"))
	}
	if !kept || len(r.Released) != 0 {
		t.Errorf("forced: kubectl-autoscale should keep .spec.scaleTargetRef; released %+v, managedFields %+v", r.Released, r.ManagedFields)
	}
}
