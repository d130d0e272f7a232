package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
)

// The report as scripts read it: the field names here are the documented,
// stable ones; a rename in the plugin breaks these tests.
type owner struct {
	Manager     string  `json:"manager"`
	Operation   string  `json:"operation"`
	Subresource string  `json:"subresource"`
	APIVersion  string  `json:"apiVersion"`
	Time        *string `json:"time"`
}

type ownershipReport struct {
	Kind   string `json:"kind"`
	Object struct {
		APIVersion, Kind, Namespace, Name, UID, ResourceVersion string
	} `json:"object"`
	Managers []struct {
		owner
		FieldCount int `json:"fieldCount"`
	} `json:"managers"`
	Fields []struct {
		Path   string  `json:"path"`
		Owners []owner `json:"owners"`
		Value  any     `json:"value"`
	} `json:"fields"`
	Unowned []string `json:"unowned"`
}

func (r ownershipReport) owners(path string) []string {
	for _, f := range r.Fields {
		if f.Path == path {
			var out []string
			for _, o := range f.Owners {
				s := o.Manager + "/" + o.Operation
				if o.Subresource != "" {
					s += "/" + o.Subresource
				}
				out = append(out, s)
			}
			sort.Strings(out)
			return out
		}
	}
	return nil
}

func (r ownershipReport) value(path string) any {
	for _, f := range r.Fields {
		if f.Path == path {
			return f.Value
		}
	}
	return nil
}

func whoOwnsJSON(t *testing.T, args ...string) ownershipReport {
	t.Helper()
	res := mustSSA(t, 0, append([]string{"who-owns", "-o", "json"}, args...)...)
	var r ownershipReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("who-owns -o json is not a report: %v\n%s", err, res.stdout)
	}
	if r.Kind != "OwnershipReport" {
		t.Fatalf("kind %q, want OwnershipReport", r.Kind)
	}
	return r
}

func assertOwners(t *testing.T, r ownershipReport, path string, want ...string) {
	t.Helper()
	sort.Strings(want)
	got := r.owners(path)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("owners of %s = %v, want %v", path, got, want)
	}
}

const deployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        args: ["-g", "daemon off;"]
        ports:
        - containerPort: 80
          protocol: TCP
        - containerPort: 80
          protocol: UDP
`

// deploymentStory: applied by kubectl, scaled through /scale, labelled by
// kubectl label, with the status written by the deployment controller.
func deploymentStory(t *testing.T, ns string) *unstructured.Unstructured {
	t.Helper()
	d := apply(t, ns, "kubectl", deployment, false)
	patch(t, d, "kubectl", `{"spec":{"replicas":4}}`, "scale")
	patch(t, d, "kubectl-label", `{"metadata":{"labels":{"team":"payments"}}}`)
	return get(t, d)
}

func TestWhoOwnsDeployment(t *testing.T) {
	ns := namespace(t)
	deploymentStory(t, ns)

	r := whoOwnsJSON(t, "-n", ns, "deployment/web")
	if r.Object.Kind != "Deployment" || r.Object.Name != "web" || r.Object.Namespace != ns || r.Object.UID == "" {
		t.Errorf("object = %+v", r.Object)
	}
	assertOwners(t, r, ".spec.replicas", "kubectl/Update/scale")
	assertOwners(t, r, ".spec.template.spec.containers[name=\"nginx\"].image", "kubectl/Apply")
	assertOwners(t, r, ".spec.template.spec.containers[name=\"nginx\"].ports[containerPort=80,protocol=\"UDP\"].protocol", "kubectl/Apply")
	assertOwners(t, r, ".metadata.labels.app.kubernetes.io/name", "kubectl/Apply")
	assertOwners(t, r, ".metadata.labels.team", "kubectl-label/Update")
	assertOwners(t, r, ".spec.selector", "kubectl/Apply")
	if v := r.value(".spec.template.spec.containers[name=\"nginx\"].image"); v != "nginx:1.27" {
		t.Errorf("value of image = %v", v)
	}
	if v := r.value(".spec.replicas"); v != float64(4) {
		t.Errorf("value of replicas = %v, want 4", v)
	}
	// Defaulted fields are present but owned by nobody.
	if !containsString(r.Unowned, ".spec.strategy") {
		t.Errorf("unowned %v lacks .spec.strategy", r.Unowned)
	}
	for _, u := range r.Unowned {
		if u == ".metadata.name" || u == ".metadata.uid" {
			t.Errorf("identity metadata %s listed as unowned", u)
		}
	}
	// The manager entries, with times.
	found := map[string]bool{}
	for _, m := range r.Managers {
		found[m.Manager+"/"+m.Operation+"/"+m.Subresource] = true
		if m.APIVersion != "apps/v1" || m.FieldCount == 0 {
			t.Errorf("manager entry %+v lacks apiVersion or fields", m)
		}
		// The apiserver records no time for /scale writes.
		if (m.Time == nil) != (m.Subresource == "scale") {
			t.Errorf("manager entry %+v: time %v", m, m.Time)
		}
	}
	for _, want := range []string{"kubectl/Apply/", "kubectl/Update/scale", "kubectl-label/Update/"} {
		if !found[want] {
			t.Errorf("managers %v lack %s", found, want)
		}
	}

	t.Run("table", func(t *testing.T) {
		out := mustSSA(t, 0, "who-owns", "-n", ns, "deploy", "web", "--color", "never").stdout
		wantLine(t, out, `^\.spec\.replicas\s+kubectl\s+Update\s+scale\s+\S+$`)
		wantLine(t, out, `^\.metadata\.labels\["app\.kubernetes\.io/name"\]\s+kubectl\s+Apply\s+-\s+\S+$`)
		wantLine(t, out, `^# AGE is each manager's last write`)
		wantLine(t, out, `^# \d+ unowned path\(s\) not shown`)
	})
	t.Run("wide", func(t *testing.T) {
		out := mustSSA(t, 0, "who-owns", "-n", ns, "deploy/web", "-o", "wide", "--time", "none").stdout
		wantLine(t, out, `^FIELD\s+MANAGER\s+OPERATION\s+SUBRESOURCE\s+APIVERSION\s+VALUE$`)
		wantLine(t, out, `^\.spec\.template\.spec\.containers\[name="nginx"\]\.image\s+kubectl\s+Apply\s+-\s+apps/v1\s+"nginx:1\.27"$`)
		wantLine(t, out, `^\.spec\.template\.spec\.containers\[name="nginx"\]\.args\s+kubectl\s+Apply\s+-\s+apps/v1\s+\["-g","daemon off;"\]$`)
	})
	t.Run("blame", func(t *testing.T) {
		out := mustSSA(t, 0, "who-owns", "-n", ns, "deploy/web", "-o", "blame", "--time", "none").stdout
		wantLine(t, out, `^kubectl \(Update /scale\)\s+│   replicas: 4$`)
		wantLine(t, out, `^kubectl-label \(Update\)\s+│     team: payments$`)
		wantLine(t, out, `^kubectl \(Apply\)\s+│         - containerPort: 80$`)
		// Inside the atomic args list every line belongs to the list's owner.
		wantLine(t, out, `^kubectl \(Apply\)\s+│         - daemon off;$`)
		// Defaulted fields are marked as unowned, not given to an ancestor.
		wantLine(t, out, `^\(unowned\)\s+│         terminationMessagePath: /dev/termination-log$`)
		wantLine(t, out, `^\(not tracked\)\s+│   name: web$`)
	})
	t.Run("tree", func(t *testing.T) {
		out := mustSSA(t, 0, "who-owns", "-n", ns, "deploy/web", "-o", "tree", "--time", "none").stdout
		wantLine(t, out, `── \.replicas  kubectl \(Update /scale\)$`)
		wantLine(t, out, `── \.template  kubectl \(Apply\) \[all \d+ owned fields below\]$`)
		wantLine(t, out, `── \["app\.kubernetes\.io/name"\]  kubectl \(Apply\)$`)
	})
	t.Run("managers", func(t *testing.T) {
		out := mustSSA(t, 0, "who-owns", "-n", ns, "deploy/web", "-o", "managers").stdout
		wantLine(t, out, `^MANAGER\s+OPERATION\s+SUBRESOURCE\s+APIVERSION\s+LAST-WRITE\s+FIELDS$`)
		wantLine(t, out, `^kubectl\s+Update\s+scale\s+apps/v1\s+\S+\s+1$`)
		wantLine(t, out, `^kubectl-label\s+Update\s+-\s+apps/v1\s+\S+\s+1$`)
	})
	t.Run("yaml", func(t *testing.T) {
		// (.spec only: the deployment controller keeps writing status.)
		out := mustSSA(t, 0, "who-owns", "-n", ns, "deploy/web", "-o", "yaml", "--field", ".spec.**").stdout
		var back ownershipReport
		if err := yaml.Unmarshal([]byte(out), &back); err != nil || back.Kind != "OwnershipReport" {
			t.Fatalf("yaml report: %v\n%s", err, out)
		}
		spec := whoOwnsJSON(t, "-n", ns, "deploy/web", "--field", ".spec.**")
		if len(back.Fields) != len(spec.Fields) || len(spec.Fields) < 10 {
			t.Errorf("yaml has %d fields, json %d", len(back.Fields), len(spec.Fields))
		}
	})
	t.Run("filters", func(t *testing.T) {
		f := whoOwnsJSON(t, "-n", ns, "deploy/web", "--manager", "kubectl-*")
		if len(f.Fields) != 1 || f.Fields[0].Path != ".metadata.labels.team" {
			t.Errorf("--manager kubectl-* kept %v", paths(f))
		}
		f = whoOwnsJSON(t, "-n", ns, "deploy/web", "--subresource", "scale")
		if len(f.Fields) != 1 || f.Fields[0].Path != ".spec.replicas" {
			t.Errorf("--subresource scale kept %v", paths(f))
		}
		f = whoOwnsJSON(t, "-n", ns, "deploy/web", "--operation", "Update", "--subresource", "none")
		if strings.Join(paths(f), " ") != ".metadata.labels.team" {
			t.Errorf("--operation Update --subresource none kept %v", paths(f))
		}
		f = whoOwnsJSON(t, "-n", ns, "deploy/web", "--field", ".metadata.labels.*")
		if strings.Join(paths(f), " ") != ".metadata.labels.app.kubernetes.io/name .metadata.labels.team" {
			t.Errorf("--field .metadata.labels.* kept %v", paths(f))
		}
		f = whoOwnsJSON(t, "-n", ns, "deploy/web", "--field", ".spec.template.spec.containers[*].ports.**")
		if len(f.Fields) != 6 {
			t.Errorf("--field ports.** kept %v", paths(f))
		}
		// Views of a filtered report (owner filters drop managers).
		for _, view := range []string{"tree", "blame", "table", "managers"} {
			for _, filter := range [][]string{{"--manager", "kubectl-label"}, {"--operation", "Update"}, {"--subresource", "scale"}} {
				mustSSA(t, 0, append([]string{"who-owns", "-n", ns, "deploy/web", "-o", view}, filter...)...)
			}
		}
		f = whoOwnsJSON(t, "-n", ns, "deploy/web", "--unowned")
		if len(f.Fields) != 0 || !containsString(f.Unowned, ".spec.strategy") {
			t.Errorf("--unowned: fields %v unowned %v", paths(f), f.Unowned)
		}
		out := mustSSA(t, 0, "who-owns", "-n", ns, "deploy/web", "--unowned", "--color", "never").stdout
		wantLine(t, out, `^\.spec\.strategy\s+<none>\s+-\s+-\s+-$`)
	})
}

func TestWhoOwnsSharedAndSetsAndStatus(t *testing.T) {
	ns := namespace(t)
	cm := `
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
  finalizers: ["example.com/keep"]
data:
  color: blue
  size: large
`
	apply(t, ns, "team-a", cm, false)
	apply(t, ns, "team-b", `
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
  finalizers: ["example.com/keep", "example.com/audit"]
data:
  color: blue
  owner: b
`, false)
	obj := parse(t, cm)
	obj.SetNamespace(ns)
	t.Cleanup(func() {
		patch(t, obj, "cleanup", `{"metadata":{"finalizers":null}}`)
	})
	r := whoOwnsJSON(t, "-n", ns, "configmap/shared")
	assertOwners(t, r, ".data.color", "team-a/Apply", "team-b/Apply")
	assertOwners(t, r, ".data.size", "team-a/Apply")
	assertOwners(t, r, ".metadata.finalizers[=\"example.com/keep\"]", "team-a/Apply", "team-b/Apply")
	assertOwners(t, r, ".metadata.finalizers[=\"example.com/audit\"]", "team-b/Apply")

	shared := whoOwnsJSON(t, "-n", ns, "cm/shared", "--shared")
	if strings.Join(paths(shared), " ") != `.data.color .metadata.finalizers[="example.com/keep"]` {
		t.Errorf("--shared kept %v", paths(shared))
	}
	out := mustSSA(t, 0, "who-owns", "-n", ns, "cm/shared", "-o", "blame", "--time", "none").stdout
	wantLine(t, out, `^team-a \(Apply\), team-b \(Apply\)\s+│   color: blue$`)
	wantLine(t, out, `^team-b \(Apply\)\s+│   - example.com/audit$`)

	// A status written through /status by a Go client under its own name.
	pod := apply(t, ns, "kubectl", `
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: busybox}]
`, false)
	patch(t, pod, "status-writer", `{"status":{"conditions":[{"type":"Example","status":"True"}]}}`, "status")
	r = whoOwnsJSON(t, "-n", ns, "pod/p")
	assertOwners(t, r, `.status.conditions[type="Example"].status`, "status-writer/Update/status")
	assertOwners(t, r, `.spec.containers[name="c"].image`, "kubectl/Apply")
}

func TestWhoOwnsCustomResourceMultiKeyList(t *testing.T) {
	ns := namespace(t)
	createCRD(t)
	apply(t, ns, "ci", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  endpoints:
  - {host: a.example.com, port: 443, weight: 1}
  - {host: a.example.com, port: 80, weight: 2}
  tags: ["x", "z"]
`, false)
	apply(t, ns, "ops", `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
spec:
  endpoints:
  - {host: a.example.com, port: 80, weight: 2}
`, false)
	r := whoOwnsJSON(t, "-n", ns, "widgets.example.com/w")
	assertOwners(t, r, `.spec.endpoints[host="a.example.com",port=443].weight`, "ci/Apply")
	assertOwners(t, r, `.spec.endpoints[host="a.example.com",port=80].weight`, "ci/Apply", "ops/Apply")
	assertOwners(t, r, `.spec.tags`, "ci/Apply")
	out := mustSSA(t, 0, "who-owns", "-n", ns, "widget/w", "-o", "blame", "--time", "none").stdout
	wantLine(t, out, `^(ci|ops) \(Apply\), (ci|ops) \(Apply\)\s+│   - host: a\.example\.com$`)
	wantLine(t, out, `^ci \(Apply\)\s+│     port: 443$`)
	wantLine(t, out, `^ci \(Apply\)\s+│   - x$`)
}

func TestWhoOwnsAncientChangesResetAndClientSideApply(t *testing.T) {
	ns := namespace(t)
	cm := csaApply(t, ns, `
apiVersion: v1
kind: ConfigMap
metadata: {name: many}
data: {base: "1"}
`)
	for i := 0; i < 12; i++ {
		patch(t, cm, fmt.Sprintf("writer-%02d", i), fmt.Sprintf(`{"data":{"k%02d":"v"}}`, i))
	}
	r := whoOwnsJSON(t, "-n", ns, "cm/many")
	// The client-side-apply entry was the oldest Update: it was folded.
	assertOwners(t, r, ".metadata.annotations.kubectl.kubernetes.io/last-applied-configuration", "ancient-changes/Update")
	updates := 0
	for _, m := range r.Managers {
		if m.Operation == "Update" {
			updates++
		}
	}
	if updates > 10 {
		t.Errorf("%d Update managers, the apiserver keeps at most 10", updates)
	}
	if !hasManager(r, "ancient-changes") {
		t.Errorf("no ancient-changes manager after 13 Update managers: %+v", r.Managers)
	}
	assertOwners(t, r, ".data.k11", "writer-11/Update")

	// A reset: managedFields: [{}] clears them.
	patch(t, cm, "resetter", `{"metadata":{"managedFields":[{}]}}`)
	r = whoOwnsJSON(t, "-n", ns, "cm/many")
	if len(r.Managers) != 0 || len(r.Fields) != 0 {
		t.Errorf("after a reset: managers %+v fields %v", r.Managers, paths(r))
	}
	if !containsString(r.Unowned, ".data") {
		t.Errorf("after a reset, .data should be unowned: %v", r.Unowned)
	}
	out := mustSSA(t, 0, "who-owns", "-n", ns, "cm/many").stdout
	wantLine(t, out, `^# no managedFields: nothing records who set these fields`)
}

func TestWhoOwnsSecretRedaction(t *testing.T) {
	ns := namespace(t)
	csaApply(t, ns, `
apiVersion: v1
kind: Secret
metadata: {name: s}
stringData: {password: hunter2}
`)
	for _, o := range []string{"json", "blame", "wide"} {
		out := mustSSA(t, 0, "who-owns", "-n", ns, "secret/s", "-o", o).stdout
		if strings.Contains(out, "aHVudGVyMg") || strings.Contains(out, "hunter2") {
			t.Errorf("-o %s prints the secret value:\n%s", o, out)
		}
		if !strings.Contains(out, "<redacted>") {
			t.Errorf("-o %s does not say the value was redacted:\n%s", o, out)
		}
	}
	out := mustSSA(t, 0, "who-owns", "-n", ns, "secret/s", "-o", "json", "--show-secret-values").stdout
	if !strings.Contains(out, "aHVudGVyMg==") {
		t.Errorf("--show-secret-values does not show the value:\n%s", out)
	}
}

func TestWhoOwnsSelectionAndFiles(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one","labels":{"sel":"yes"}},"data":{"x":"1"}}`, false)
	apply(t, ns, "b", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"two","labels":{"sel":"yes"}},"data":{"y":"2"}}`, false)

	var list struct {
		Kind  string            `json:"kind"`
		Items []ownershipReport `json:"items"`
	}
	out := mustSSA(t, 0, "who-owns", "-n", ns, "configmaps", "-l", "sel=yes", "-o", "json").stdout
	if err := json.Unmarshal([]byte(out), &list); err != nil || list.Kind != "List" || len(list.Items) != 2 {
		t.Fatalf("-l gave %v %q with %d items", err, list.Kind, len(list.Items))
	}
	// Objects from a file are looked up live.
	dir := t.TempDir()
	file := filepath.Join(dir, "cms.yaml")
	writeFile(t, file, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one, namespace: %s}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: two, namespace: %s}\n", ns, ns))
	out = mustSSA(t, 0, "who-owns", "-f", file, "-o", "json").stdout
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Items) != 2 || list.Items[1].owners(".data.y")[0] != "b/Apply" {
		t.Fatalf("-f: %v %+v", err, list)
	}
	// --local reads saved objects, with a List document, without a cluster.
	live := get(t, parse(t, fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one","namespace":"%s"}}`, ns)))
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{live.Object}})
	localFile := filepath.Join(dir, "saved.json")
	writeFile(t, localFile, string(b))
	res := ssaLocal(t, "who-owns", "--local", "-f", localFile, "-o", "json")
	var one ownershipReport
	if err := json.Unmarshal([]byte(res), &one); err != nil || one.owners(".data.x")[0] != "a/Apply" {
		t.Fatalf("--local: %v\n%s", err, res)
	}
	// From standard input.
	y, _ := yaml.Marshal(live.Object)
	r := ssaIn(t, string(y), "who-owns", "--local", "-f", "-", "-o", "managers")
	if r.code != 0 || !strings.Contains(r.stdout, "a ") {
		t.Fatalf("--local -f -: %d %s %s", r.code, r.stdout, r.stderr)
	}
}

func TestWhoOwnsErrors(t *testing.T) {
	ns := namespace(t)
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		file string
		want string
	}{
		{"not found", []string{"-n", ns, "deploy/missing"}, "", `(?i)"missing" not found.*check the name and the namespace`},
		{"unknown type", []string{"-n", ns, "frobnicators/x"}, "", `doesn't have a resource type "frobnicators".*kubectl api-resources`},
		{"malformed file", []string{"--local", "-f", "FILE"}, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n", `(?i)error.*(yaml|json)`},
		{"corrupt managedFields", []string{"--local", "-f", "FILE"}, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"x","managedFields":[{"manager":"m","operation":"Apply","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"k:{bad":{}}}}]},"data":{"a":"b"}}`, `ConfigMap/x/c: managedFields\[0\] is corrupt`},
		{"no selection", []string{}, "", `name the objects`},
		{"bad output", []string{"-n", ns, "cm/x", "-o", "xml"}, "", `--output must be one of`},
		{"forbidden", []string{"-n", ns, "cm/x", "--as", "nobody"}, "", `(?i)forbidden.*get permission`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"who-owns"}, c.args...)
			if c.file != "" {
				f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
				writeFile(t, f, c.file)
				for i, a := range args {
					if a == "FILE" {
						args[i] = f
					}
				}
			}
			r := ssa(t, args...)
			if r.code == 0 {
				t.Fatalf("exit 0, want an error; stdout:\n%s", r.stdout)
			}
			if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
				t.Fatalf("panicked:\n%s", r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if !regexp.MustCompile(c.want).MatchString(r.stderr) {
				t.Errorf("stderr %q does not match %q", r.stderr, c.want)
			}
			if len(lines) > 1 {
				t.Errorf("error is %d lines, want one:\n%s", len(lines), r.stderr)
			}
		})
	}
}

func TestWhoOwnsLargeObject(t *testing.T) {
	ns := namespace(t)
	data := map[string]string{}
	for i := 0; i < 5000; i++ {
		data[fmt.Sprintf("key-%04d", i)] = fmt.Sprintf("value-%d", i)
	}
	b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]string{"name": "big"}, "data": data})
	apply(t, ns, "bulk", string(b), false)
	r := whoOwnsJSON(t, "-n", ns, "cm/big")
	if len(r.Fields) != 5000 {
		t.Errorf("%d fields, want 5000", len(r.Fields))
	}
	assertOwners(t, r, ".data.key-4999", "bulk/Apply")
}

func TestColorAndEscaping(t *testing.T) {
	ns := namespace(t)
	c := apply(t, ns, "team-a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"line1\nline2\u001b[2J"}}`, false)
	out := mustSSA(t, 0, "who-owns", "-n", ns, "cm/c", "-o", "wide", "--color", "always").stdout
	if !strings.Contains(out, "\x1b[") {
		t.Errorf("--color always piped has no colour:\n%q", out)
	}
	if strings.Contains(out, "\x1b[2J") {
		t.Errorf("a value reached the terminal unescaped:\n%q", out)
	}
	out = mustSSA(t, 0, "who-owns", "-n", ns, "cm/c", "-o", "blame").stdout
	if strings.Contains(out, "\x1b") {
		t.Errorf("colour when piped with --color auto:\n%q", out)
	}
	out = mustSSA(t, 0, "who-owns", "-n", ns, "cm/c", "-o", "json", "--color", "always").stdout
	if strings.Contains(out, "\x1b[3") {
		t.Errorf("JSON is coloured:\n%q", out)
	}
	// The apiserver refuses control characters in manager names, but a
	// saved file can carry anything.
	live := get(t, c)
	mf := live.Object["metadata"].(map[string]any)["managedFields"].([]any)
	mf[0].(map[string]any)["manager"] = "evil\x1b[31mname"
	b, _ := json.Marshal(live.Object)
	file := filepath.Join(t.TempDir(), "evil.json")
	writeFile(t, file, string(b))
	out = ssaLocal(t, "who-owns", "--local", "-f", file, "-o", "blame", "--color", "always")
	if strings.Contains(out, "\x1b[31mname") || !strings.Contains(out, "evil^[[31mname") {
		t.Errorf("manager name not escaped:\n%q", out)
	}
}

func TestForbiddenIsClear(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"v"}}`, false)
	// A user who may read ConfigMaps but not Deployments.
	configMapReader(t, ns, "reader")
	mustSSA(t, 0, "who-owns", "-n", ns, "cm/c", "--as", "reader")
	r := ssa(t, "who-owns", "-n", ns, "deploy/x", "--as", "reader")
	if r.code == 0 || !strings.Contains(r.stderr, "forbidden") {
		t.Errorf("exit %d stderr %q", r.code, r.stderr)
	}
}

func paths(r ownershipReport) []string {
	var out []string
	for _, f := range r.Fields {
		out = append(out, f.Path)
	}
	return out
}

func hasManager(r ownershipReport, name string) bool {
	for _, m := range r.Managers {
		if m.Manager == name {
			return true
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

func wantLine(t *testing.T, out, pattern string) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	for _, l := range strings.Split(out, "\n") {
		if re.MatchString(l) {
			return
		}
	}
	t.Errorf("no line matches %q in:\n%s", pattern, out)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ssaLocal runs the plugin with a kubeconfig that points nowhere, to prove
// --local needs no cluster.
func ssaLocal(t *testing.T, args ...string) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "nowhere")
	writeFile(t, kc, "apiVersion: v1\nkind: Config\nclusters: [{name: x, cluster: {server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: x, context: {cluster: x}}]\ncurrent-context: x\n")
	r := mustSSA(t, 0, append(args, "--kubeconfig", kc)...)
	return r.stdout
}

// createCRD installs the Widget CRD (testdata/crd/widgets.yaml: a map
// list keyed by host+port, an atomic list of tags) once for the suite.
func createCRD(t *testing.T) {
	t.Helper()
	crdOnce.Do(func() {
		apply(t, "", "test-setup", testkit.Fixture(t, "crd/widgets.yaml"), true)
		waitEstablished(t, "widgets.example.com")
	})
}

func TestWhoOwnsDirectoriesAndKustomize(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"one"},"data":{"x":"1"}}`, false)
	apply(t, ns, "b", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"two"},"data":{"y":"2"}}`, false)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "nested"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "one.yaml"), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one, namespace: %s}\n", ns))
	writeFile(t, filepath.Join(dir, "nested", "two.yaml"), fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two, namespace: %s}\n", ns))
	count := func(out string) int {
		var list struct {
			Items []ownershipReport `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return len(list.Items)
	}
	if n := count(mustSSA(t, 0, "who-owns", "-f", dir, "-R", "-o", "json").stdout); n != 2 {
		t.Errorf("-f DIR -R found %d objects, want 2", n)
	}
	if r := mustSSA(t, 0, "who-owns", "-f", dir, "-o", "json").stdout; !strings.Contains(r, `"name": "one"`) || strings.Contains(r, `"name": "two"`) {
		t.Errorf("-f DIR without -R:\n%s", r)
	}
	writeFile(t, filepath.Join(dir, "kustomization.yaml"), fmt.Sprintf("namespace: %s\nresources: [one.yaml, nested/two.yaml]\n", ns))
	if n := count(mustSSA(t, 0, "who-owns", "-k", dir, "-o", "json").stdout); n != 2 {
		t.Errorf("-k found %d objects, want 2", n)
	}
}
