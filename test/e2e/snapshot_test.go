package e2e

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/tools/clientcmd"
)

// readOnlyKubeconfig is a kubeconfig of a ServiceAccount bound to a
// ClusterRole that may only get and list, everywhere.
func readOnlyKubeconfig(t *testing.T, ns string) string {
	t.Helper()
	ctx := context.Background()
	name := "e2e-snapshot-reader-" + rand.String(5)
	if _, err := env.client.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"get", "list"}}, {NonResourceURLs: []string{"*"}, Verbs: []string{"get"}}}}
	if _, err := env.client.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}}}
	if _, err := env.client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.client.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = env.client.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	expiry := int64(3600)
	tok, err := env.client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.AuthInfos {
		a.ClientCertificate, a.ClientCertificateData, a.ClientKey, a.ClientKeyData = "", nil, "", nil
		a.Username, a.Password, a.TokenFile, a.Token = "", "", "", tok.Status.Token
	}
	file := filepath.Join(t.TempDir(), "reader.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, file); err != nil {
		t.Fatal(err)
	}
	// The account can read and not write: the snapshot needs no more.
	if r := ssa(t, "who-owns", "-n", ns, "serviceaccount/"+name, "--kubeconfig", file); r.code != 0 {
		t.Fatalf("the reader can't read: exit %d\n%s", r.code, r.stderr)
	}
	return file
}

// nowhereKubeconfig points at a server that does not exist.
func nowhereKubeconfig(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "nowhere.kubeconfig")
	writeFile(t, file, `apiVersion: v1
kind: Config
clusters: [{name: nowhere, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: nowhere, user: {token: none}}]
contexts: [{name: nowhere, context: {cluster: nowhere, user: nowhere}}]
current-context: nowhere
`)
	return file
}

// takeSnapshot takes a snapshot of kinds in ns with kubeconfig.
func takeSnapshot(t *testing.T, kubeconfig, ns, kinds string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "state.snapshot")
	mustSSA(t, 0, "snapshot", kinds, "-n", ns, "-o", file, "--kubeconfig", kubeconfig)
	return file
}

// snapshotReport is what the parity compares of a report besides what
// compareWithServer does.
type snapshotReport struct {
	Result    map[string]any  `json:"result"`
	Admission json.RawMessage `json:"admission"`
	Snapshot  *struct {
		TakenAt       string `json:"takenAt"`
		ServerVersion string `json:"serverVersion"`
	} `json:"snapshot"`
	Verify *struct {
		Status string `json:"status"`
	} `json:"verify"`
}

func snapshotReportOf(t *testing.T, out string) snapshotReport {
	t.Helper()
	var r snapshotReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not a report: %v\n%s", err, out)
	}
	return r
}

// explainJSON runs explain-conflict -o json of c in ns with more
// arguments, and returns the report's two readings and the exit code.
func explainJSON(t *testing.T, ns string, c applyCase, extra ...string) (conflictReport, snapshotReport, int) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "manifest.yaml")
	writeFile(t, file, c.manifest)
	args := []string{"explain-conflict", "-n", ns, "-f", file, "-o", "json", "--field-manager", c.manager, "--kubectl-upgrade=false"}
	if c.force {
		args = append(args, "--force-conflicts")
	}
	res := ssa(t, append(args, extra...)...)
	if res.code > 1 {
		t.Fatalf("explain-conflict %v: exit %d:\n%s\n%s", extra, res.code, res.stdout, res.stderr)
	}
	var r conflictReport
	if err := json.Unmarshal([]byte(res.stdout), &r); err != nil {
		t.Fatalf("not a report: %v\n%s", err, res.stdout)
	}
	return r, snapshotReportOf(t, res.stdout), res.code
}

// agreeOffline takes a snapshot of kinds with the read-only kubeconfig,
// predicts c from it with no cluster reachable, and compares with the
// live server's dry run (conflicts, message, managedFields, removals) and
// with the live prediction that --verify checked against the server
// (result object, admission). Controllers may write the object between
// the snapshot and the dry run: the pair is then taken again.
func agreeOffline(t *testing.T, ns, reader, kinds string, c applyCase) (conflictReport, int) {
	t.Helper()
	nowhere := nowhereKubeconfig(t)
	for attempt := 0; ; attempt++ {
		snap := takeSnapshot(t, reader, ns, kinds)
		r, rs, code := explainJSON(t, ns, c, "--snapshot", snap, "--kubeconfig", nowhere)
		if rs.Snapshot == nil || rs.Snapshot.ServerVersion == "" {
			t.Fatalf("the report does not say which snapshot it was read from")
		}
		a := askServer(t, ns, c)
		live, ls, liveCode := explainJSON(t, ns, c, "--verify")
		rv := r.Object.ResourceVersion
		same := a.live != nil && a.live.GetResourceVersion() == rv && a.rvAfter == rv && live.Object.ResourceVersion == rv
		settled := r.Action == "create" && a.live == nil || same
		if !settled && attempt < 10 {
			time.Sleep(time.Duration(200*(attempt+1)) * time.Millisecond)
			continue
		}
		if apierrors.IsInvalid(a.err) || apierrors.IsForbidden(a.err) {
			// A denial: the server's words, word for word.
			if st := a.err.(apierrors.APIStatus).Status(); code != 1 || r.Message != st.Message {
				t.Errorf("server denied %q; from the snapshot: exit %d, %q", st.Message, code, r.Message)
			}
		} else {
			compareWithServer(t, c, r, code, a)
		}
		if ls.Verify == nil || ls.Verify.Status != "agrees" {
			t.Errorf("the live prediction does not agree with the server's dry run: %+v", ls.Verify)
		}
		if code != liveCode {
			t.Errorf("exit from the snapshot %d, live %d", code, liveCode)
		}
		if !reflect.DeepEqual(withoutBookkeeping(rs.Result), withoutBookkeeping(ls.Result)) {
			t.Errorf("result object:\nfrom the snapshot: %v\nlive:              %v", withoutBookkeeping(rs.Result), withoutBookkeeping(ls.Result))
		}
		if !bytes.Equal(rs.Admission, ls.Admission) {
			t.Errorf("admission:\nfrom the snapshot: %s\nlive:              %s", rs.Admission, ls.Admission)
		}
		return r, code
	}
}

// configMapPolicy creates an admission policy of kind over the ConfigMaps
// of ns, with body after its match constraints, and its binding.
func configMapPolicy(t *testing.T, kind, name, ns, body, binding string) {
	t.Helper()
	clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: "+kind+"\nmetadata: {name: "+name+"}\nspec:\n  failurePolicy: Fail\n"+
		"  matchConstraints:\n    resourceRules:\n    - {apiGroups: [\"\"], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}\n"+
		"    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: "+ns+"}}\n"+body)
	clusterObject(t, "apiVersion: admissionregistration.k8s.io/v1\nkind: "+kind+"Binding\nmetadata: {name: "+name+"}\nspec: {policyName: "+name+binding+"}\n")
}

// The predictions from a snapshot, taken by a read-only ServiceAccount
// and read with the kubeconfig pointing at nothing, equal the live
// server's dry run: conflicts with another applier and with kubectl
// scale, a forced apply, a dropped co-owned key, a policy's denial, a
// mutating policy, LimitRange defaults on a Pod's create, a CRD's
// defaults.
func TestSnapshotPredictsAsTheServer(t *testing.T) {
	applyDialCRD(t)
	ns := namespace(t)
	reader := readOnlyKubeconfig(t, ns)
	const kinds = "deployments,configmaps,pods,dials.example.com"
	id := rand.String(5)

	// Another applier and kubectl scale own fields of a Deployment.
	base := deploy("", 2, "nginx:1.27", "")
	apply(t, ns, "platform", base, false)
	kubectlScale(t, ns, "deploy/web", 3)
	// A co-owned ConfigMap key: both appliers set b.
	apply(t, ns, "alice", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {a: x, b: \"y\"}\n", false)
	apply(t, ns, "bob", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {b: \"y\"}\n", false)
	// A Dial with defaults, applied by one manager.
	apply(t, ns, "alice", `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"d"},"spec":{"size":"l","ports":[{"name":"http"}]}}`, false)
	// A LimitRange's defaults for a Pod's create.
	apply(t, ns, "e2e", limitRange, false)
	// A policy denies ConfigMaps labelled deny=yes; another one stamps
	// the others.
	configMapPolicy(t, "ValidatingAdmissionPolicy", "e2e-snap-deny-"+id, ns,
		"  validations:\n  - {expression: \"!has(object.metadata.labels) || !('deny' in object.metadata.labels)\", message: \"no deny label here\"}\n", ", validationActions: [Deny]")
	configMapPolicy(t, "MutatingAdmissionPolicy", "e2e-snap-stamp-"+id, ns,
		"  reinvocationPolicy: Never\n  mutations:\n  - patchType: ApplyConfiguration\n    applyConfiguration:\n      expression: 'Object{metadata: Object.metadata{labels: {\"stamped\": \"yes\"}}}'\n", "")
	denied := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: refused, labels: {deny: \"yes\"}}\ndata: {a: b}\n"
	stamped := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stamped}\ndata: {a: b}\n"
	waitForServer(t, ns, denied, func(_ *unstructured.Unstructured, err error) bool { return apierrors.IsInvalid(err) })
	waitForServer(t, ns, stamped, func(o *unstructured.Unstructured, err error) bool {
		return err == nil && o.GetLabels()["stamped"] == "yes"
	})

	cases := []struct {
		name string
		c    applyCase
		want int
	}{
		{"conflicts with an applier and kubectl scale", applyCase{manifest: deploy("", 5, "nginx:1.28", ""), manager: "ci"}, 1},
		{"forced apply", applyCase{manifest: deploy("", 5, "nginx:1.28", ""), manager: "ci", force: true}, 0},
		{"dropped co-owned key", applyCase{manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\ndata: {a: x}\n", manager: "alice"}, 0},
		{"policy denial", applyCase{manifest: denied, manager: "ci"}, 1},
		{"mutating policy", applyCase{manifest: stamped, manager: "ci"}, 0},
		{"LimitRange defaults on a Pod create", applyCase{manifest: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: busybox:1}]\n", manager: "ci"}, 0},
		{"CRD defaults", applyCase{manifest: `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"d"},"spec":{"ports":[{"name":"http"},{"name":"admin"}]}}`, manager: "alice"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, code := agreeOffline(t, ns, reader, kinds, tc.c)
			if code != tc.want {
				t.Errorf("exit %d (conflicts %d, message %q), want %d", code, len(r.Conflicts), r.Message, tc.want)
			}
		})
	}
	// The fixes in a tool's terms are the same words.
	t.Run("fixes for flux", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "web.yaml")
		writeFile(t, file, deploy("", 5, "nginx:1.28", ""))
		nowhere := nowhereKubeconfig(t)
		args := []string{"explain-conflict", "-n", ns, "-f", file, "--field-manager", "ci", "--for", "flux", "--time", "none", "--color", "never"}
		off := ssa(t, append(args, "--snapshot", takeSnapshot(t, reader, ns, kinds), "--kubeconfig", nowhere)...)
		live := ssa(t, args...)
		header, rest, _ := strings.Cut(off.stdout, "\n\n")
		rest = strings.ReplaceAll(rest, " --kubeconfig="+nowhere, "")
		if !strings.HasPrefix(header, "# predicted from snapshot ") || off.code != live.code || rest != live.stdout || !strings.Contains(rest, "Flux") {
			t.Errorf("from the snapshot (exit %d):\n%s\nlive (exit %d):\n%s", off.code, off.stdout, live.code, live.stdout)
		}
	})
}

// A snapshot keeps no Secret value, plain or base64, compressed or not,
// even one in a client-side apply's last-applied annotation; a Secret in
// the manifest is still compared with the stored one, through the hashes.
func TestSnapshotKeepsNoSecretValue(t *testing.T) {
	ns := namespace(t)
	values := []string{"hunter2-" + rand.String(12), "second value " + rand.String(12)}
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData: {password: \"" + values[0] + "\", token: \"" + values[1] + "\"}\n"
	kubectlApply(t, ns, secret)
	file := takeSnapshot(t, env.kubeconfig, ns, "secrets,configmaps")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the snapshot is not gzip: %v", err)
	}
	plain, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(plain, []byte(`"kind":"Secret"`)) || !bytes.Contains(plain, []byte(`"name":"creds"`)) {
		t.Fatal("the Secret is not in the snapshot: the check below would pass for nothing")
	}
	for _, v := range values {
		for _, enc := range []string{v, base64.StdEncoding.EncodeToString([]byte(v)), base64.RawStdEncoding.EncodeToString([]byte(v)),
			base64.URLEncoding.EncodeToString([]byte(v)), strings.TrimRight(base64.StdEncoding.EncodeToString([]byte(v)), "=")} {
			if bytes.Contains(plain, []byte(enc)) || bytes.Contains(raw, []byte(enc)) {
				t.Errorf("the snapshot holds a Secret value (%q)", enc)
			}
		}
	}
	// The same value compares equal, another one differs, as live.
	b64 := func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }
	owned := func(password string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\ndata: {password: " + b64(password) + ", token: " + b64(values[1]) + "}\n"
	}
	apply(t, ns, "ci", owned(values[0]), true)
	file = takeSnapshot(t, env.kubeconfig, ns, "secrets")
	nowhere := nowhereKubeconfig(t)
	m := filepath.Join(t.TempDir(), "secret.yaml")
	paths := func(out string) []string {
		var r struct {
			Changes []struct {
				Path string `json:"path"`
				Kind string `json:"change"`
			} `json:"changes"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("not a diff report: %v\n%s", err, out)
		}
		var p []string
		for _, c := range r.Changes {
			p = append(p, c.Path+" "+c.Kind)
		}
		return p
	}
	for _, tc := range []struct {
		password string
		changed  bool
	}{{values[0], false}, {"another", true}} {
		writeFile(t, m, owned(tc.password))
		d := ssa(t, "diff", "-n", ns, "-f", m, "--snapshot", file, "--kubeconfig", nowhere, "--field-manager", "ci", "--kubectl-upgrade=false", "-o", "json")
		live := ssa(t, "diff", "-n", ns, "-f", m, "--field-manager", "ci", "--kubectl-upgrade=false", "-o", "json")
		got, want := paths(d.stdout), paths(live.stdout)
		if d.code != live.code || !reflect.DeepEqual(got, want) || slices.Contains(got, ".data.password modified") != tc.changed || strings.Contains(d.stdout, values[0]) {
			t.Errorf("password %q: from the snapshot exit %d, changes %v; live exit %d, changes %v (a change of .data.password: %v)\n%s", tc.password, d.code, got, live.code, want, tc.changed, d.stdout)
		}
	}
}

// inNamespace is what snapshot file holds of namespace ns: its lists, the
// OpenAPI documents and the salt, as JSON.
func inNamespace(t *testing.T, file, ns string) []byte {
	t.Helper()
	_, plain := snapshotBytes(t, file)
	var snap struct {
		Salt    string                     `json:"salt"`
		OpenAPI map[string]json.RawMessage `json:"openapi"`
		Lists   []map[string]any           `json:"lists"`
	}
	if err := json.Unmarshal(plain, &snap); err != nil {
		t.Fatal(err)
	}
	var lists []map[string]any
	for _, l := range snap.Lists {
		if l["namespace"] == ns {
			lists = append(lists, l)
		}
	}
	b, err := json.Marshal([]any{snap.Salt, snap.OpenAPI, lists})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Staleness: the age is in the header and the report, --max-age refuses
// an older snapshot (exit 6), --verify names an object changed since.
func TestSnapshotStaleness(t *testing.T) {
	ns := namespace(t)
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n"
	apply(t, ns, "alice", cm, false)
	file := takeSnapshot(t, env.kubeconfig, ns, "configmaps")
	m := filepath.Join(t.TempDir(), "cm.yaml")
	writeFile(t, m, cm)
	nowhere := nowhereKubeconfig(t)
	r := mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", m, "--field-manager", "alice", "--snapshot", file, "--kubeconfig", nowhere)
	if !strings.Contains(r.stdout, "# predicted from snapshot "+file+", taken ") {
		t.Errorf("no snapshot header:\n%s", r.stdout)
	}
	// A kubeconfig that isn't there is not needed with -n (no cluster is
	// read); without -n, one line says to give it.
	missing := filepath.Join(t.TempDir(), "missing-kubeconfig")
	mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", m, "--field-manager", "alice", "--snapshot", file, "--kubeconfig", missing)
	if r := ssa(t, "explain-conflict", "-f", m, "--field-manager", "alice", "--snapshot", file, "--kubeconfig", missing); r.code != 2 || !strings.Contains(r.stderr, "give -n NAMESPACE") {
		t.Errorf("a missing kubeconfig without -n: exit %d\n%s", r.code, r.stderr)
	}
	// Taken again with the same salt, what the namespace holds is the
	// same bytes (cluster-wide lists may change meanwhile: other tests'
	// namespaces).
	salt := strings.Repeat("ab", 32)
	twice := [2][]byte{}
	for i := range twice {
		f := filepath.Join(t.TempDir(), "s")
		mustSSA(t, 0, "snapshot", "configmaps", "-n", ns, "-o", f, "--salt", salt)
		twice[i] = inNamespace(t, f, ns)
	}
	if !bytes.Equal(twice[0], twice[1]) || !bytes.Contains(twice[0], []byte(`"name":"c"`)) {
		t.Errorf("two snapshots of one state differ:\n%s\n%s", twice[0], twice[1])
	}
	time.Sleep(1100 * time.Millisecond) // the snapshot's time is in whole seconds
	if r := ssa(t, "diff", "-n", ns, "-f", m, "--snapshot", file, "--max-age", "1ms", "--kubeconfig", nowhere); r.code != 6 || !strings.Contains(r.stderr, "--max-age") {
		t.Errorf("--max-age: exit %d, want 6\n%s", r.code, r.stderr)
	}
	mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", m, "--field-manager", "alice", "--snapshot", file, "--verify")
	apply(t, ns, "alice", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: changed}\n", false)
	if r := ssa(t, "explain-conflict", "-n", ns, "-f", m, "--field-manager", "alice", "--snapshot", file, "--verify"); r.code != 3 || !strings.Contains(r.stderr, "ConfigMap/"+ns+"/c") {
		t.Errorf("--verify after a change: exit %d, want 3 naming the ConfigMap\n%s", r.code, r.stderr)
	}
}

// A webhook is not called offline (nor is it live without --verify): one
// that matches makes the answer from the snapshot not exact, exit 4, with
// the same admission as the live answer.
func TestSnapshotWebhookNotExact(t *testing.T) {
	ns := namespace(t)
	hook := "e2e-snap-hook-" + rand.String(5)
	clusterObject(t, configMapWebhook(hook, "snap.example.com", ns, "Ignore", `url: "https://127.0.0.1:1/mutate"`))
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  labels: {webhook: \"on\"}\ndata: {a: b}\n"
	file := filepath.Join(t.TempDir(), "cm.yaml")
	writeFile(t, file, cm)
	snap := takeSnapshot(t, env.kubeconfig, ns, "configmaps")
	off := ssa(t, "explain-conflict", "-n", ns, "-f", file, "-o", "json", "--snapshot", snap, "--kubeconfig", nowhereKubeconfig(t))
	live := ssa(t, "explain-conflict", "-n", ns, "-f", file, "-o", "json")
	a, l := admissionOf(t, off.stdout), admissionOf(t, live.stdout)
	if off.code != 4 || a.Admission.Exact || a.steps() != "MutatingWebhook "+hook+"/snap.example.com may-mutate" || a.steps() != l.steps() || live.code != 4 {
		t.Errorf("from the snapshot: exit %d, exact %v, steps %q; live: exit %d, steps %q\n%s", off.code, a.Admission.Exact, a.steps(), live.code, l.steps(), off.stderr)
	}
}

// A Secret applied client-side (kubectl apply), then server-side by
// kubectl with a new value: the apiserver lets "kubectl" take the fields
// the last-applied annotation holds at their live value (its
// lastAppliedManager), so the apply succeeds. From a snapshot, where the
// annotation's values are hashes, the prediction is the same: no
// conflict where there is none.
func TestSnapshotSecretAppliedClientSide(t *testing.T) {
	ns := namespace(t)
	old := "old-" + rand.String(12)
	b64 := func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }
	secret := func(password string) string {
		return "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: " + ns + "}\ndata: {password: " + b64(password) + "}\nstringData: {user: admin}\n"
	}
	kubectlApply(t, ns, secret(old))
	file := takeSnapshot(t, env.kubeconfig, ns, "secrets")
	nowhere := nowhereKubeconfig(t)
	m := filepath.Join(t.TempDir(), "secret.yaml")
	for _, password := range []string{old, "new-" + rand.String(12)} {
		writeFile(t, m, secret(password))
		for _, cmd := range []string{"explain-conflict", "diff"} {
			d := ssa(t, cmd, "-f", m, "--snapshot", file, "--kubeconfig", nowhere, "-o", "json")
			live := ssa(t, cmd, "-f", m, "-o", "json")
			var got, want struct {
				Conflicts []struct{ Path, Manager string } `json:"conflicts"`
			}
			_ = json.Unmarshal([]byte(d.stdout), &got)
			_ = json.Unmarshal([]byte(live.stdout), &want)
			if d.code != live.code || !reflect.DeepEqual(got, want) || len(want.Conflicts) != 0 {
				t.Errorf("%s, password changed %v: from the snapshot exit %d, conflicts %v; live exit %d, conflicts %v\n%s%s", cmd, password != old, d.code, got.Conflicts, live.code, want.Conflicts, d.stdout, d.stderr)
			}
		}
	}
}
