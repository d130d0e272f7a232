package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// diffReport is the part of the DiffReport the tests read.
type diffReport struct {
	Kind      string `json:"kind"`
	Action    string `json:"action"`
	Conflicts []struct {
		Path    string `json:"path"`
		Manager string `json:"manager"`
	} `json:"conflicts"`
	Changes []struct {
		Path         string           `json:"path"`
		Change       string           `json:"change"`
		Before       any              `json:"before"`
		After        any              `json:"after"`
		OwnersBefore []v1alpha1.Owner `json:"ownersBefore"`
		OwnersAfter  []v1alpha1.Owner `json:"ownersAfter"`
		Conflict     bool             `json:"conflict"`
	} `json:"changes"`
	Stays []struct {
		Manager   v1alpha1.Owner `json:"manager"`
		Paths     []string       `json:"paths"`
		Defaulted []string       `json:"defaulted"`
		Command   string         `json:"command"`
	} `json:"stays"`
	Unknown  []string `json:"unknown"`
	Warnings []string `json:"warnings"`
	// Admission's ops that add an item of a generated name (a Pod's
	// token volume): the prediction holds the name's prefix.
	Admission *struct {
		Steps []struct {
			Ops []struct {
				GenerateName string `json:"generateName"`
			} `json:"ops"`
		} `json:"steps"`
	} `json:"admission"`
	Live   map[string]any `json:"live"`
	Result map[string]any `json:"result"`
}

var bookkeepingKeys = []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink"}

// withoutBookkeeping copies obj without the metadata the server sets on
// every write.
func withoutBookkeeping(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	c := (&unstructured.Unstructured{Object: obj}).DeepCopy().Object
	if m, ok := c["metadata"].(map[string]any); ok {
		for _, k := range bookkeepingKeys {
			delete(m, k)
		}
	}
	return c
}

// managedFieldsOf returns the entries without their times, as JSON
// values.
func managedFieldsOf(obj map[string]any) []any {
	m, _ := obj["metadata"].(map[string]any)
	entries, _ := m["managedFields"].([]any)
	out := make([]any, 0, len(entries))
	for _, e := range entries {
		em, _ := e.(map[string]any)
		c := map[string]any{}
		for k, v := range em {
			if k != "time" {
				c[k] = v
			}
		}
		out = append(out, c)
	}
	return out
}

// sortedEntries are managedFields entries (managedFieldsOf's) in the
// order of their JSON text.
func sortedEntries(entries []any) []any {
	out := append([]any{}, entries...)
	sort.Slice(out, func(i, j int) bool { return jsonText(out[i]) < jsonText(out[j]) })
	return out
}

// normalJSON round-trips a value through JSON so that numbers compare.
func normalJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// itemToken names a list item: by its name when every item of the list
// has a distinct one (containers, env, ports), else by position.
func itemToken(list []any, i int) string {
	names := map[string]bool{}
	for _, it := range list {
		m, ok := it.(map[string]any)
		n, isString := m["name"].(string)
		if !ok || !isString || names[n] {
			return fmt.Sprintf("#%d", i)
		}
		names[n] = true
	}
	return "name=" + list[i].(map[string]any)["name"].(string)
}

// differingLeaves lists, as token paths, every leaf of a or b where the
// two objects differ; lists are matched as itemToken names their items.
func differingLeaves(a, b any, path []string, out *[][]string) {
	leaves := func(v any, p []string) {
		var walk func(v any, p []string)
		walk = func(v any, p []string) {
			switch t := v.(type) {
			case map[string]any:
				if len(t) == 0 {
					*out = append(*out, p)
				}
				for k, e := range t {
					walk(e, append(append([]string{}, p...), k))
				}
			case []any:
				if len(t) == 0 {
					*out = append(*out, p)
				}
				for i, e := range t {
					walk(e, append(append([]string{}, p...), itemToken(t, i)))
				}
			default:
				*out = append(*out, p)
			}
		}
		walk(v, p)
	}
	am, aMap := a.(map[string]any)
	bm, bMap := b.(map[string]any)
	al, aList := a.([]any)
	bl, bList := b.([]any)
	switch {
	case aMap && bMap:
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		for k := range keys {
			p := append(append([]string{}, path...), k)
			av, aok := am[k]
			bv, bok := bm[k]
			switch {
			case !aok:
				leaves(bv, p)
			case !bok:
				leaves(av, p)
			default:
				differingLeaves(av, bv, p, out)
			}
		}
	case aList && bList:
		items := func(l []any) map[string]any {
			m := map[string]any{}
			for i, it := range l {
				m[itemToken(l, i)] = it
			}
			return m
		}
		differingLeaves(items(al), items(bl), path, out)
	case !reflect.DeepEqual(a, b):
		if a != nil {
			leaves(a, path)
		}
		if b != nil {
			leaves(b, path)
		}
	}
}

// tokens resolves a typed path in obj into itemToken paths.
func tokens(obj any, p fieldpath.Path) ([]string, bool) {
	var out []string
	cur := obj
	for _, pe := range p {
		if pe.FieldName != nil {
			out = append(out, *pe.FieldName)
			m, _ := cur.(map[string]any)
			cur = m[*pe.FieldName]
			continue
		}
		l, ok := cur.([]any)
		if !ok {
			return nil, false
		}
		found := -1
		for i, it := range l {
			if _, ok := pathlang.Lookup([]any{it}, fieldpath.Path{pe}); ok {
				if v, _ := pathlang.Lookup(l, fieldpath.Path{pe}); reflect.DeepEqual(v, it) {
					found = i
					break
				}
			}
		}
		if found < 0 {
			return nil, false
		}
		out = append(out, itemToken(l, found))
		cur = l[found]
	}
	return out, true
}

func hasPrefix(l, p []string) bool {
	if len(p) > len(l) {
		return false
	}
	for i := range p {
		if l[i] != p[i] {
			return false
		}
	}
	return true
}

type diffCase struct {
	name    string
	kind    string // TYPE/NAME of the object, for extract
	setup   func(t *testing.T, ns string)
	applied string
	manager string
	args    []string
	// sub is the subresource the apply goes to.
	sub string
	// want: the exit code (anyChange: 0 or 1, as the changes say),
	// conflicts, change kinds that must appear, managers that must stay.
	code      int
	conflicts int
	kinds     []string
	stays     []string
	// stayPaths must be among the stays' (not defaulted) paths.
	stayPaths []string
}

const diffDeploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web%s}}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: app
        image: %s
%s`

func deploy(extraLabels string, replicas int, image, extra string) string {
	return fmt.Sprintf(diffDeploy, extraLabels, replicas, image, extra)
}

// stsClaims is a StatefulSet with a volume claim template, whose
// apiVersion and kind the apiserver's conversion writes.
const stsClaims = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: pg}
spec:
  serviceName: pg
  selector: {matchLabels: {app: pg}}
  template:
    metadata: {labels: {app: pg}}
    spec:
      containers: [{name: pg, image: 'postgres:17'}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`

// limitRange has a default limit, which the apiserver copies into the
// default request.
const limitRange = "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits:\n  - type: Container\n    default: {cpu: 500m}\n"

func daemonSet(tag string) string {
	return "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  selector: {matchLabels: {app: agent}}\n  template:\n    metadata: {labels: {app: agent}}\n    spec:\n      containers: [{name: agent, image: 'nginx:" + tag + "'}]\n"
}

// gizmoCRD installs testdata/crd/gizmos.yaml: Gizmos served at v1, which
// declares spec.extra with a default and spec.legacy, and stored at v2,
// which declares neither: the apiserver prunes both when it stores a
// Gizmo applied at v1.
var gizmoOnce sync.Once

func gizmoCRD(t *testing.T, _ string) {
	gizmoOnce.Do(func() {
		apply(t, "", "test-setup", testkit.Fixture(t, "crd/gizmos.yaml"), true)
		waitEstablished(t, "gizmos.example.com")
	})
}

const gizmo = "apiVersion: example.com/v1\nkind: Gizmo\nmetadata: {name: g}\nspec: {size: l}\n"

func diffCases() []diffCase {
	base := deploy("", 2, "nginx:1.27", "")
	return []diffCase{
		{name: "create", kind: "deploy/web", setup: func(*testing.T, string) {}, applied: base, manager: "platform", code: 1, kinds: []string{"added"}},
		{name: "no change", kind: "deploy/web", setup: applyAs(base, "platform"), applied: base, manager: "platform", code: 0},
		{name: "image", kind: "deploy/web", setup: applyAs(base, "platform"), applied: deploy("", 2, "nginx:1.28", ""), manager: "platform", code: 1, kinds: []string{"modified"}},
		{name: "drop env and pull policy", kind: "deploy/web",
			setup:   applyAs(deploy(", tier: web", 2, "nginx:1.27", "        imagePullPolicy: Always\n        env: [{name: A, value: a}, {name: B, value: b}]\n"), "platform"),
			applied: deploy("", 2, "nginx:1.27", "        env: [{name: A, value: a}]\n"), manager: "platform", code: 1, kinds: []string{"removed", "reset"}},
		{name: "scaled: conflict", kind: "deploy/web",
			setup: func(t *testing.T, ns string) {
				u := apply(t, ns, "platform", base, false)
				patch(t, u, "kubectl", `{"spec":{"replicas":5}}`, "scale")
			},
			applied: deploy("", 3, "nginx:1.27", ""), manager: "platform", code: 1, conflicts: 1, kinds: []string{"modified"}},
		{name: "scaled: forced", kind: "deploy/web",
			setup: func(t *testing.T, ns string) {
				u := apply(t, ns, "platform", base, false)
				patch(t, u, "kubectl", `{"spec":{"replicas":5}}`, "scale")
			},
			applied: deploy("", 3, "nginx:1.27", ""), manager: "platform", args: []string{"--force-conflicts"}, code: 1, conflicts: 1, kinds: []string{"modified"}},
		{name: "helm to argo", kind: "deploy/web",
			setup: func(t *testing.T, ns string) {
				u := parse(t, deploy(", helm.sh/chart: web-1", 2, "nginx:1.27", "        env: [{name: OLD_FLAG, value: \"1\"}, {name: MODE, value: prod}]\n"))
				u.SetNamespace(ns)
				created, err := resourceFor(t, u).Create(context.Background(), u, metav1.CreateOptions{FieldManager: "helm"})
				if err != nil {
					t.Fatal(err)
				}
				// kubectl set image: a strategic merge patch.
				if _, err := resourceFor(t, created).Patch(context.Background(), "web", types.StrategicMergePatchType,
					[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.27-hotfix"}]}}}}`), metav1.PatchOptions{FieldManager: "kubectl-set"}); err != nil {
					t.Fatal(err)
				}
			},
			applied: deploy("", 2, "nginx:1.28", "        env: [{name: MODE, value: prod}]\n"), manager: "argocd-controller",
			code: 1, conflicts: 1, kinds: []string{"modified", "ownership"}, stays: []string{"helm"},
			stayPaths: []string{`.metadata.labels.helm.sh/chart`, `.spec.template.spec.containers[name="app"].env[name="OLD_FLAG"].value`}},
		{name: "shared", kind: "deploy/web", setup: applyAs(base, "platform"), applied: base, manager: "ci", code: 0, kinds: []string{"ownership"}},
		{name: "sidecar", kind: "deploy/web", setup: applyAs(base, "platform"),
			applied: deploy("", 2, "nginx:1.27", "      - name: side\n        image: busybox:1.36\n        ports: [{containerPort: 9090}]\n"), manager: "platform", code: 1, kinds: []string{"added"}},
		{name: "service ports", kind: "svc/svc",
			setup:   applyAs("apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 80}]\n", "platform"),
			applied: "apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec:\n  selector: {app: web}\n  ports: [{name: http, port: 8080}, {name: metrics, port: 9090}]\n", manager: "platform", code: 1, kinds: []string{"removed", "added"}},
		{name: "configmap client-side applied", kind: "cm/conf",
			setup: func(t *testing.T, ns string) {
				csaApply(t, ns, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf}\ndata: {a: '1', b: '2'}\n")
			},
			applied: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: conf}\ndata: {a: '10'}\n", manager: "kubectl", args: []string{"--kubectl-upgrade=false"},
			code: 1, kinds: []string{"modified"}, stays: []string{"kubectl-client-side-apply"}},
		{name: "statefulset", kind: "sts/db",
			setup:   func(*testing.T, string) {},
			applied: "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: 'postgres:17'}]\n",
			manager: "platform", code: 1, kinds: []string{"added"}},
		{name: "job label", kind: "job/batch",
			setup:   applyAs("apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch, labels: {a: '1'}}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: run, image: 'busybox:1.36'}]\n", "platform"),
			applied: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch, labels: {a: '2'}}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: run, image: 'busybox:1.36'}]\n", manager: "platform", code: 1, kinds: []string{"modified"}},
		{name: "crd defaults", kind: "dials.example.com/d",
			setup:   applyAs("apiVersion: example.com/v1\nkind: Dial\nmetadata: {name: d}\nspec: {size: l, replicas: 3, note: x, ports: [{name: a, protocol: UDP}]}\n", "platform"),
			applied: "apiVersion: example.com/v1\nkind: Dial\nmetadata: {name: d}\nspec: {ports: [{name: a}, {name: b}]}\n", manager: "platform", code: 1, kinds: []string{"reset", "removed", "added"}},
		{name: "scale subresource", kind: "deploy/web", setup: applyAs(base, "platform"), sub: "scale",
			applied: "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {replicas: 4}\n", manager: "autoscaler", args: []string{"--subresource", "scale"}, code: 1, conflicts: 1, kinds: []string{"modified"}},
		{name: "service type change", kind: "svc/np",
			setup:   applyAs("apiVersion: v1\nkind: Service\nmetadata: {name: np}\nspec:\n  type: NodePort\n  selector: {app: x}\n  ports: [{name: http, port: 80}, {name: https, port: 443}]\n", "ops"),
			applied: "apiVersion: v1\nkind: Service\nmetadata: {name: np}\nspec:\n  selector: {app: x}\n  ports: [{name: http, port: 80}]\n", manager: "ops", code: 1, kinds: []string{"removed", "reset"}},
		{name: "dropped strategy", kind: "deploy/web",
			setup:   applyAs(deploy("", 2, "nginx:1.27", "")+"  strategy: {type: Recreate}\n", "platform"),
			applied: base, manager: "platform", code: 1, kinds: []string{"reset", "added"}},
		{name: "client-side applied deployment", kind: "deploy/web",
			setup:   func(t *testing.T, ns string) { csaApply(t, ns, base) },
			applied: deploy("", 2, "nginx:1.28", ""), manager: "kubectl", args: []string{"--kubectl-upgrade=false"}, code: 1, kinds: []string{"modified"}},
		{name: "statefulset claim templates: create", kind: "sts/pg", setup: func(*testing.T, string) {},
			applied: stsClaims, manager: "platform", code: 1, kinds: []string{"added"}},
		{name: "statefulset claim templates: no change", kind: "sts/pg", setup: applyAs(stsClaims, "platform"),
			applied: stsClaims, manager: "platform", code: 0},
		{name: "service affinity dropped", kind: "svc/sticky",
			setup:   applyAs("apiVersion: v1\nkind: Service\nmetadata: {name: sticky}\nspec:\n  sessionAffinity: ClientIP\n  ports: [{port: 80}]\n", "platform"),
			applied: "apiVersion: v1\nkind: Service\nmetadata: {name: sticky}\nspec:\n  ports: [{port: 80}]\n", manager: "platform", code: 1, kinds: []string{"reset"}},
		{name: "limitrange: no change", kind: "limits/lr", setup: applyAs(limitRange, "platform"), applied: limitRange, manager: "platform", code: 0},
		{name: "limitrange: max and min", kind: "limits/lr", setup: applyAs(limitRange, "platform"),
			applied: "apiVersion: v1\nkind: LimitRange\nmetadata: {name: lr}\nspec:\n  limits:\n  - type: Container\n    max: {cpu: '2', memory: 1Gi}\n    min: {memory: 64Mi}\n", manager: "platform", code: 1, kinds: []string{"modified"}},
		{name: "status ignored: create", kind: "deploy/web", setup: func(*testing.T, string) {}, applied: base + "status:\n  replicas: 7\n", manager: "platform", code: 1, kinds: []string{"added"}},
		{name: "status ignored: no change", kind: "deploy/web", setup: applyAs(base, "platform"), applied: base + "status:\n  replicas: 7\n", manager: "platform", code: 0},
		{name: "job: create", kind: "job/batch", setup: func(*testing.T, string) {},
			applied: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: batch}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: run, image: 'busybox:1.36'}]\n", manager: "platform", code: 1, kinds: []string{"added"}},
		{name: "daemonset: create", kind: "ds/agent", setup: func(*testing.T, string) {}, applied: daemonSet("1.27"), manager: "platform", code: 1, kinds: []string{"added"}},
		{name: "daemonset: template change", kind: "ds/agent", setup: applyAs(daemonSet("1.27"), "platform"), applied: daemonSet("1.28"), manager: "platform", code: 1, kinds: []string{"modified"}},
		{name: "daemonset: no change", kind: "ds/agent", setup: applyAs(daemonSet("1.27"), "platform"), applied: daemonSet("1.27"), manager: "platform", code: 0},
		{name: "crd at a version other than the storage one: create", kind: "gizmos.v1.example.com/g", setup: gizmoCRD,
			applied: gizmo, manager: "platform", code: 1, kinds: []string{"added"}},
		{name: "crd at a version other than the storage one: no change", kind: "gizmos.v1.example.com/g",
			setup: func(t *testing.T, ns string) { gizmoCRD(t, ns); apply(t, ns, "platform", gizmo, false) }, applied: gizmo, manager: "platform", code: 0},
		{name: "crd at a version other than the storage one: a field it alone declares", kind: "gizmos.v1.example.com/g",
			setup:   func(t *testing.T, ns string) { gizmoCRD(t, ns); apply(t, ns, "platform", gizmo, false) },
			applied: strings.Replace(gizmo, "size: l", "size: m, legacy: true", 1), manager: "platform", code: 1, kinds: []string{"modified"}},
		{name: "secret", kind: "secret/creds", setup: applyAs("apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: hunter2}\n", "platform"),
			applied: "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: s3cr3t-new}\n", manager: "platform", code: 1, kinds: []string{"modified"}},
	}
}

// anyChange as a diffCase's code: the exit code must be what the
// report's changes say (1 when a value changes, else 0).
const anyChange = -1

func applyAs(manifest, manager string) func(t *testing.T, ns string) {
	return func(t *testing.T, ns string) { apply(t, ns, manager, manifest, false) }
}

// TestDiffCorpus: on each apply of the corpus, the DiffReport's result is
// the object the server's dry run of the same apply returns (forced when
// it conflicts), defaults and managedFields included; its changes are
// exactly the differences between live and result; and extract round
// trips (applying a manager's extracted manifest as that manager changes
// nothing).
func TestDiffCorpus(t *testing.T) {
	applyDialCRD(t)
	for _, c := range diffCases() {
		t.Run(c.name, func(t *testing.T) { checkDiffCase(t, c) })
	}
}

// checkDiffCase runs one apply of a corpus: see TestDiffCorpus.
func checkDiffCase(t *testing.T, c diffCase) {
	t.Helper()
	ns := namespace(t)
	c.setup(t, ns)
	checkDiffIn(t, c, ns)
}

// checkDiffIn is checkDiffCase in namespace ns, once c's setup ran.
func checkDiffIn(t *testing.T, c diffCase, ns string) {
	t.Helper()
	c.applied = strings.ReplaceAll(c.applied, nsPlaceholder, ns)
	obj := parse(t, c.applied)
	setNamespace(t, obj, ns)
	if _, err := resourceFor(t, obj).Get(context.Background(), obj.GetName(), metav1.GetOptions{}); err == nil {
		settle(t, obj)
		checkExtractRoundTrip(t, ns, c.kind, obj)
	}
	file := filepath.Join(t.TempDir(), "m.yaml")
	writeFile(t, file, c.applied)
	args := append([]string{"diff", "-n", ns, "-f", file, "--field-manager", c.manager, "-o", "json", "--show-secret-values"}, c.args...)
	var r result
	if c.code == anyChange {
		r = ssa(t, args...)
	} else {
		r = mustSSA(t, c.code, args...)
	}
	var rep diffReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if c.code == anyChange {
		// Exit 1 exactly when the apply changes a value (or conflicts).
		changes := len(rep.Conflicts) > 0
		for _, ch := range rep.Changes {
			changes = changes || ch.Change != "ownership"
		}
		if want := map[bool]int{false: 0, true: 1}[changes]; r.code != want {
			t.Fatalf("diff exits %d, want %d for %d changes, %d conflicts\nstdout:\n%s\nstderr:\n%s", r.code, want, len(rep.Changes), len(rep.Conflicts), r.stdout, r.stderr)
		}
	}
	if len(rep.Conflicts) != c.conflicts {
		t.Errorf("conflicts: %d, want %d: %+v", len(rep.Conflicts), c.conflicts, rep.Conflicts)
	}

	// The server's dry run of the same apply, forced when it
	// conflicts.
	var subs []string
	if c.sub != "" {
		subs = []string{c.sub}
		obj = parse(t, c.applied)
		setNamespace(t, obj, ns)
	}
	body := obj
	if c.sub == "scale" {
		body = parse(t, fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":%q,"namespace":%q},"spec":{"replicas":4}}`, obj.GetName(), ns))
	}
	server, err := resourceFor(t, obj).Apply(context.Background(), obj.GetName(), body, metav1.ApplyOptions{FieldManager: c.manager, Force: c.conflicts > 0, DryRun: []string{metav1.DryRunAll}}, subs...)
	if err != nil {
		t.Fatalf("server dry run: %v", err)
	}
	if c.sub == "scale" {
		// /scale's dry run returns a Scale: the object is the live
		// one with its replicas; managedFields of /scale writes are
		// the explain-conflict scale tests' part.
		replicas, _, _ := unstructured.NestedInt64(server.Object, "spec", "replicas")
		server = get(t, obj)
		_ = unstructured.SetNestedField(server.Object, replicas, "spec", "replicas")
		rep.Result = withManagedFields(rep.Result, server.Object)
	}
	// A name the server generates is, in the prediction, its prefix:
	// the server's is written so too.
	if rep.Admission != nil {
		for _, st := range rep.Admission.Steps {
			for _, op := range st.Ops {
				if op.GenerateName != "" {
					generatedAsPrefix(server.Object, op.GenerateName)
				}
			}
		}
	}
	// What the prediction says it can't know (a Job's UID) must be
	// in the server's object; it is compared nowhere else.
	for _, u := range rep.Unknown {
		p := pathlang.ParseServerPath(u, server.Object).Elements()
		if itemKey(p) {
			// A generated name that keys its item: both sides hold the
			// prefix now, and the item is found by it.
			if _, ok := pathlang.Lookup(server.Object, p); !ok {
				t.Errorf("unknown %s: the server's object has no such field", u)
			}
			continue
		}
		if !dropPath(server.Object, p) && !userHasNo[obj.GetKind()+" "+u] {
			t.Errorf("unknown %s: the server's object has no such field", u)
		}
		dropPath(rep.Result, p)
	}
	if c.sub == "" && c.conflicts == 0 && len(c.args) == 0 {
		// The user's own check, kubectl ssa explain-conflict --verify,
		// compares the whole object too, and agrees.
		vr := mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", file, "--field-manager", c.manager, "--verify", "-o", "json")
		var v verifyReport
		if err := json.Unmarshal([]byte(vr.stdout), &v); err != nil || v.Verify == nil || v.Verify.Status != "agrees" {
			t.Errorf("explain-conflict --verify does not agree (%v):\n%s", err, vr.stdout)
		}
	}
	want, got := normalJSON(t, withoutBookkeeping(server.Object)), normalJSON(t, withoutBookkeeping(rep.Result))
	if !reflect.DeepEqual(want, got) {
		var diffs [][]string
		differingLeaves(got, want, nil, &diffs)
		t.Errorf("result differs from the server's dry run at %v\nours: %s\nserver: %s", diffs, jsonText(got), jsonText(want))
	}
	if !reflect.DeepEqual(normalJSON(t, managedFieldsOf(server.Object)), normalJSON(t, managedFieldsOf(rep.Result))) {
		t.Errorf("managedFields differ from the server's dry run:\nours: %s\nserver: %s\nwarnings: %v", jsonText(managedFieldsOf(rep.Result)), jsonText(managedFieldsOf(server.Object)), rep.Warnings)
	}

	// changes are exactly the differences between live and result.
	live, result := withoutBookkeeping(rep.Live), withoutBookkeeping(rep.Result)
	var leaves [][]string
	var liveV any = live
	if live == nil {
		// A create: the identity is the manifest's, not a change.
		identity := map[string]any{"name": obj.GetName()}
		if obj.GetNamespace() != "" {
			identity["namespace"] = obj.GetNamespace()
		}
		liveV = map[string]any{"apiVersion": result["apiVersion"], "kind": result["kind"], "metadata": identity}
	}
	differingLeaves(normalJSON(t, liveV), normalJSON(t, result), nil, &leaves)
	kinds := map[string]bool{}
	var covers [][]string
	for _, ch := range rep.Changes {
		kinds[ch.Change] = true
		p := pathlang.ParseServerPath(ch.Path, live, result).Elements()
		bv, bok := pathlang.Lookup(live, p)
		av, aok := pathlang.Lookup(result, p)
		if ch.Change != "ownership" && ch.Change != "reset" && bok && aok && reflect.DeepEqual(normalJSON(t, bv), normalJSON(t, av)) {
			t.Errorf("%s %s: the value does not change (%v)", ch.Change, ch.Path, bv)
		}
		if bok && !reflect.DeepEqual(normalJSON(t, bv), normalJSON(t, ch.Before)) || aok && !reflect.DeepEqual(normalJSON(t, av), normalJSON(t, ch.After)) {
			t.Errorf("%s %s: before/after %v/%v, the objects hold %v/%v", ch.Change, ch.Path, ch.Before, ch.After, bv, av)
		}
		for _, side := range []map[string]any{live, result} {
			if tk, ok := tokens(normalJSON(t, side), p); ok {
				covers = append(covers, tk)
				if n := len(tk); n >= 2 && tk[n-1] == "name" && strings.HasPrefix(tk[n-2], "name=") {
					// A changed name changes the token that names
					// the item here (its real keys may be others).
					covers = append(covers, tk[:n-1])
				}
			}
		}
	}
	for _, l := range leaves {
		covered := false
		for _, cv := range covers {
			covered = covered || hasPrefix(l, cv)
		}
		if !covered {
			t.Errorf("live and result differ at %s, which no change lists", strings.Join(l, "."))
		}
	}
	for _, k := range c.kinds {
		if !kinds[k] {
			t.Errorf("no %q change; changes: %+v", k, rep.Changes)
		}
	}
	var stays []string
	for _, s := range rep.Stays {
		stays = append(stays, s.Manager.Manager)
		if s.Command == "" || obj.GetNamespace() != "" && !strings.Contains(s.Command, "-n "+ns) {
			t.Errorf("stay of %s: command %q must name the namespace", s.Manager.Manager, s.Command)
		}
	}
	for _, want := range c.stayPaths {
		found := false
		for _, st := range rep.Stays {
			for _, p := range st.Paths {
				found = found || p == want
			}
		}
		if !found {
			t.Errorf("stays do not list %s: %+v", want, rep.Stays)
		}
	}
	sort.Strings(stays)
	for _, m := range c.stays {
		if !strings.Contains(strings.Join(stays, ","), m) {
			t.Errorf("stays: %v, want %s among them", stays, m)
		}
	}
}

// userHasNo: unknown fields of the requesting user's identity that the
// test bed's user (a client certificate's) does not have.
var userHasNo = map[string]bool{"CertificateSigningRequest .spec.uid": true}

// settle waits until the workload controllers have caught up with the
// object (status.observedGeneration), so that they do not write between
// a prediction and the server's dry run.
// dropPath deletes the field at p from obj, telling whether it was there.
func dropPath(obj any, p fieldpath.Path) bool {
	for i, pe := range p {
		last := i == len(p)-1
		switch {
		case pe.FieldName != nil:
			m, ok := obj.(map[string]any)
			if !ok {
				return false
			}
			v, ok := m[*pe.FieldName]
			if !ok {
				return false
			}
			if last {
				delete(m, *pe.FieldName)
				return true
			}
			obj = v
		case pe.Index != nil:
			l, ok := obj.([]any)
			if !ok || *pe.Index >= len(l) || last {
				return false
			}
			obj = l[*pe.Index]
		case pe.Key != nil:
			l, ok := obj.([]any)
			if !ok || last {
				return false
			}
			var item map[string]any
			for _, it := range l {
				if m, ok := it.(map[string]any); ok && pathlang.MatchKey(m, *pe.Key) {
					item = m
					break
				}
			}
			if item == nil {
				return false
			}
			obj = item
		default:
			return false
		}
	}
	return false
}

func settle(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	// The test bed runs the Deployment and ReplicaSet controllers only
	// (test/cmd/kube-apiserver): nothing else writes apps objects' status.
	if obj.GroupVersionKind().Group != "apps" || (obj.GetKind() != "Deployment" && obj.GetKind() != "ReplicaSet") {
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		u := get(t, obj)
		seen, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if ok && seen == u.GetGeneration() {
			time.Sleep(200 * time.Millisecond) // the controller's follow-up status write
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the controller did not observe %s", obj.GetName())
}

// withManagedFields is result with the managedFields of other.
func withManagedFields(result, other map[string]any) map[string]any {
	out := (&unstructured.Unstructured{Object: result}).DeepCopy()
	mf, _, _ := unstructured.NestedFieldCopy(other, "metadata", "managedFields")
	_ = unstructured.SetNestedField(out.Object, mf, "metadata", "managedFields")
	return out.Object
}

// checkExtractRoundTrip extracts every manager of the main resource and
// applies the result as that manager (server dry run): no conflict, no
// value changes, and for appliers managedFields do not change either.
func checkExtractRoundTrip(t *testing.T, ns, kind string, obj *unstructured.Unstructured) {
	t.Helper()
	for _, e := range get(t, obj).GetManagedFields() {
		if e.Subresource != "" {
			continue
		}
		r := mustSSA(t, 0, "extract", "-n", ns, kind, "--manager", e.Manager, "--operation", string(e.Operation), "-o", "json", "--show-secret-values")
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal([]byte(r.stdout), &u.Object); err != nil {
			t.Fatalf("extract %s: %v\n%s", e.Manager, err, r.stdout)
		}
		// A controller may write between the read and the dry run: read
		// again until the dry run answers for the object read.
		var live, out *unstructured.Unstructured
		var err error
		for try := 0; try < 5; try++ {
			live = get(t, obj)
			out, err = resourceFor(t, live).Apply(context.Background(), live.GetName(), u, metav1.ApplyOptions{FieldManager: e.Manager, DryRun: []string{metav1.DryRunAll}})
			if err != nil || out.GetResourceVersion() == live.GetResourceVersion() {
				break
			}
		}
		if err != nil {
			t.Errorf("applying what extract gives for %s: %v\n%s", e.Manager, err, r.stdout)
			continue
		}
		if !reflect.DeepEqual(withoutBookkeeping(out.Object), withoutBookkeeping(live.Object)) {
			var diffs [][]string
			differingLeaves(withoutBookkeeping(live.Object), withoutBookkeeping(out.Object), nil, &diffs)
			t.Errorf("applying the extract of %s changes the object at %v", e.Manager, diffs)
		}
		// An Update entry's extract changes no value; applied, it gives the
		// manager an Apply entry beside its Update one.
		// (In any order: the server orders entries by their times, and an
		// apply that sends a zero value the stored object leaves out, an
		// IPAddress's parentRef.group "", is a write that stamps one.)
		if e.Operation == metav1.ManagedFieldsOperationApply && !reflect.DeepEqual(sortedEntries(managedFieldsOf(out.Object)), sortedEntries(managedFieldsOf(live.Object))) {
			t.Errorf("applying the extract of %s changes managedFields:\nbefore: %s\nafter: %s", e.Manager, jsonText(managedFieldsOf(live.Object)), jsonText(managedFieldsOf(out.Object)))
		}
	}
}

// TestDiffSecretAndExternalDiff: Secret values never reach the output,
// yet a changed one shows as changed, numbered as watch numbers values
// ("<redacted> #1" before, "#2" after), in the text view and to an external
// diff program (KUBECTL_EXTERNAL_DIFF, whose exit status is kubectl
// diff's).
func TestDiffSecretAndExternalDiff(t *testing.T) {
	ns := namespace(t)
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: %s}\n"
	apply(t, ns, "platform", fmt.Sprintf(secret, "hunter2"), false)
	same := filepath.Join(t.TempDir(), "same.yaml")
	writeFile(t, same, fmt.Sprintf(secret, "hunter2"))
	changed := filepath.Join(t.TempDir(), "changed.yaml")
	writeFile(t, changed, fmt.Sprintf(secret, "s3cr3t-new"))
	leaks := []string{"hunter2", "s3cr3t-new", "aHVudGVyMg", "czNjcjN0LW5ldw"}

	r := mustSSA(t, 1, "diff", "-n", ns, "-f", changed, "--field-manager", "platform")
	if !strings.Contains(r.stdout, "-  password: '<redacted> #1'") || !strings.Contains(r.stdout, "+  password: '<redacted> #2'") {
		t.Errorf("the changed password does not show as changed:\n%s", r.stdout)
	}
	for _, out := range []string{r.stdout, mustSSA(t, 1, "diff", "-n", ns, "-f", changed, "--field-manager", "platform", "-o", "json").stdout} {
		for _, l := range leaks {
			if strings.Contains(out, l) {
				t.Errorf("a Secret value (%s) reached the output:\n%s", l, out)
			}
		}
	}
	mustSSA(t, 0, "diff", "-n", ns, "-f", same, "--field-manager", "platform")

	t.Setenv("KUBECTL_EXTERNAL_DIFF", "diff -u -N")
	r = mustSSA(t, 1, "diff", "-n", ns, "-f", changed, "--field-manager", "platform")
	if !strings.Contains(r.stdout, "-  password: '<redacted> #1'") || !strings.Contains(r.stdout, "+  password: '<redacted> #2'") || !strings.Contains(r.stdout, "v1.Secret."+ns+".creds") {
		t.Errorf("the external diff does not show the change:\n%s", r.stdout)
	}
	for _, l := range leaks {
		if strings.Contains(r.stdout, l) {
			t.Errorf("a Secret value (%s) reached the external diff:\n%s", l, r.stdout)
		}
	}
	if r := mustSSA(t, 0, "diff", "-n", ns, "-f", same, "--field-manager", "platform"); r.stdout != "" {
		t.Errorf("no change: the diff program prints nothing, got:\n%s", r.stdout)
	}
}

// After kubectl rollout restart, diff's stays advice must not offer the
// GitOps applier the stamp: its next apply would remove it and restart
// every pod. It says so instead, and the apply indeed keeps the stamp.
func TestDiffRolloutRestart(t *testing.T) {
	ns := namespace(t)
	d := apply(t, ns, "argocd-controller", deployment, false)
	patch(t, d, "kubectl-rollout", `{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":"2026-11-23T10:00:00Z"}}}}}`)
	file := filepath.Join(t.TempDir(), "web.yaml")
	writeFile(t, file, deployment)
	r := ssa(t, "diff", "-n", ns, "-f", file, "--field-manager", "argocd-controller", "--color", "never")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, `kubectl rollout restart's stamp: it stays and changes nothing; made "argocd-controller"'s, its next apply would remove it, restarting every pod`) || strings.Contains(r.stdout, "--from kubectl-rollout") {
		t.Errorf("the stays advice:\n%s", r.stdout)
	}
	d = apply(t, ns, "argocd-controller", deployment, false)
	if ann, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "annotations"); ann["kubectl.kubernetes.io/restartedAt"] == "" {
		t.Error("the apply removed the restart stamp")
	}
}

// generatedAsPrefix writes every name below v that is prefix and more as
// prefix alone.
func generatedAsPrefix(v any, prefix string) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if s, ok := c.(string); ok && k == "name" && strings.HasPrefix(s, prefix) && len(s) > len(prefix) {
				t[k] = prefix
				continue
			}
			generatedAsPrefix(c, prefix)
		}
	case []any:
		for _, c := range t {
			generatedAsPrefix(c, prefix)
		}
	}
}

// itemKey tells whether p ends at a key field of the list item it names.
func itemKey(p fieldpath.Path) bool {
	n := len(p)
	if n < 2 || p[n-1].FieldName == nil || p[n-2].Key == nil {
		return false
	}
	for _, f := range *p[n-2].Key {
		if f.Name == *p[n-1].FieldName {
			return true
		}
	}
	return false
}
