// Command demo shows kubectl-ssa at work: it starts the local test bed
// (a real kube-apiserver, etcd and kube-controller-manager), creates
// objects whose ownership tells a story with real writes, runs each
// subcommand against them with a caption, and stops the server (or, with
// --keep, leaves it up and prints the KUBECONFIG to use).
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/test/testbed"
)

var (
	testbedBin = flag.String("testbed", "", "the test bed kube-apiserver binary (make testbed-path)")
	plugin     = flag.String("plugin", "bin/kubectl-ssa", "the kubectl-ssa binary")
	keep       = flag.Bool("keep", false, "leave the server running at the end and print how to use and stop it")
)

var dyn dynamic.Interface

func main() {
	runtime.LockOSThread() // Pdeathsig is tied to the starting thread
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "demo: "+err.Error())
		os.Exit(1)
	}
}

func run() error {
	if *testbedBin == "" {
		return fmt.Errorf("--testbed is required (run make demo)")
	}
	abs, err := filepath.Abs(*plugin)
	if err != nil {
		return err
	}
	*plugin = abs
	dir, err := os.MkdirTemp("", "kubectl-ssa-demo-")
	if err != nil {
		return err
	}
	caption("Starting a local kube-apiserver, etcd and kube-controller-manager (logs: %s)", filepath.Join(dir, "server.log"))
	srv, err := testbed.Start(*testbedBin, testbed.Options{Dir: dir, Detach: *keep})
	if err != nil {
		return err
	}
	defer func() {
		if !*keep {
			srv.Stop()
			_ = os.RemoveAll(dir)
		}
	}()
	kubeconfig := srv.Kubeconfig
	_ = os.Setenv("KUBECONFIG", kubeconfig)
	dyn = dynamic.NewForConfigOrDie(srv.Config)

	if err := story(); err != nil {
		return err
	}
	if *keep {
		fmt.Printf("\nThe server is still running (PID %d).\n  export KUBECONFIG=%s\n  kubectl ssa who-owns deploy/web -o blame\nStop it with: kill %d\n", srv.PID(), kubeconfig, srv.PID())
	} else {
		caption("Stopping the server (make demo DEMO_ARGS=--keep leaves it up)")
	}
	return nil
}

func caption(format string, args ...any) {
	fmt.Printf("\n\033[1m==> %s\033[0m\n", fmt.Sprintf(format, args...))
}

func ssa(args ...string) {
	fmt.Printf("\033[2m$ kubectl ssa %s\033[0m\n", strings.Join(args, " "))
	cmd := exec.Command(*plugin, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	if err := cmd.Run(); err != nil {
		fmt.Printf("\033[2m(exit status %d)\033[0m\n", cmd.ProcessState.ExitCode())
	}
}

var gvrs = map[string]schema.GroupVersionResource{
	"Deployment":               {Group: "apps", Version: "v1", Resource: "deployments"},
	"ConfigMap":                {Version: "v1", Resource: "configmaps"},
	"HorizontalPodAutoscaler":  {Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"},
	"CustomResourceDefinition": {Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
	"Widget":                   {Group: "example.com", Version: "v1", Resource: "widgets"},
	// Cluster-scoped.
	"ValidatingAdmissionPolicy":        {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"},
	"ValidatingAdmissionPolicyBinding": {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"},
	"MutatingAdmissionPolicy":          {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicies"},
	"MutatingAdmissionPolicyBinding":   {Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingadmissionpolicybindings"},
	"StorageClass":                     {Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses"},
	"Secret":                           {Version: "v1", Resource: "secrets"},
	"Service":                          {Version: "v1", Resource: "services"},
}

func obj(manifest string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		panic(err)
	}
	return u
}

func res(u *unstructured.Unstructured) dynamic.ResourceInterface {
	r := dyn.Resource(gvrs[u.GetKind()])
	switch u.GetKind() {
	case "CustomResourceDefinition", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "StorageClass":
		return r
	}
	return r.Namespace("default")
}

func apply(manager, manifest string) error {
	u := obj(manifest)
	_, err := res(u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: manager, Force: true})
	return err
}

func clientSideApply(manifest string) error {
	u := obj(manifest)
	last, _ := json.Marshal(u.Object)
	u.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(last) + "\n"})
	_, err := res(u).Create(context.Background(), u, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
	return err
}

func patch(kind, name, manager, body string, sub ...string) error {
	_, err := dyn.Resource(gvrs[kind]).Namespace("default").Patch(context.Background(), name, types.MergePatchType, []byte(body), metav1.PatchOptions{FieldManager: manager}, sub...)
	return err
}

const web = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app.kubernetes.io/name: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.27", ports: [{containerPort: 80, protocol: TCP}]}
`

const api = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: 1
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers: [{name: api, image: "nginx:1.27", resources: {requests: {cpu: 10m}}}]
`

func story() error {
	dir, err := os.MkdirTemp("", "kubectl-ssa-demo-manifests-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		_ = os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	chapters := []func(func(name, content string) string) error{
		setUp, ownershipStory, handoverStory, diffStory,
		func(write func(name, content string) string) error { return migrateStory(dir) },
		auditStory, watchStory, admissionStory, helmStory,
	}
	for _, chapter := range chapters {
		if err := chapter(write); err != nil {
			return err
		}
	}
	return nil
}

// setUp makes the objects the first chapters show.
func setUp(func(name, content string) string) error {
	// The Widget CRD of the tests: spec.endpoints a map list keyed by
	// host and port.
	widgetCRD, err := testkit.ReadFixture("crd/widgets.yaml")
	if err != nil {
		return err
	}
	steps := []error{
		apply("kubectl", web),
		patch("Deployment", "web", "kubectl", `{"spec":{"replicas":4}}`, "scale"),
		apply("team-a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"color":"blue","size":"large"}}`),
		apply("team-b", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"color":"blue","owner":"b"}}`),
		clientSideApply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"legacy"},"data":{"mode":"old","level":"3"}}`),
		apply("demo-setup", widgetCRD),
	}
	for _, err := range steps {
		if err != nil {
			return err
		}
	}
	time.Sleep(2 * time.Second) // the CRD becomes served
	if err := apply("ci", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"gizmo"},"spec":{"endpoints":[{"host":"a.example.com","port":443,"weight":1},{"host":"a.example.com","port":80,"weight":2}]}}`); err != nil {
		return err
	}
	if err := apply("ops", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"gizmo"},"spec":{"endpoints":[{"host":"a.example.com","port":80,"weight":2}]}}`); err != nil {
		return err
	}
	return nil
}

// ownershipStory: who-owns' views, and explain-conflict.
func ownershipStory(write func(name, content string) string) error {
	caption("who-owns: a Deployment applied with kubectl, then scaled with kubectl scale (the /scale subresource)")
	ssa("who-owns", "deploy/web")
	caption("who-owns -o blame: the same object as YAML, each line with its owners")
	ssa("who-owns", "deploy/web", "-o", "blame")
	caption("who-owns -o tree, and the managedFields entries")
	ssa("who-owns", "deploy/web", "-o", "tree")
	ssa("who-owns", "deploy/web", "-o", "managers")
	caption("Shared ownership: two appliers set color to the same value")
	ssa("who-owns", "cm/settings", "-o", "wide", "--shared")
	caption("A custom resource with a list keyed by host and port, two appliers")
	ssa("who-owns", "widget/gizmo", "-o", "blame", "--time", "none")
	caption("An object created with client-side kubectl apply")
	ssa("who-owns", "cm/legacy", "-o", "managers")

	caption("explain-conflict: the manifest still says replicas: 2, but kubectl scale set 4")
	ssa("explain-conflict", "-f", write("web.yaml", web), "--verify")
	return nil
}

// handoverStory: .spec.replicas handed to an HPA.
func handoverStory(write func(name, content string) string) error {
	caption("handover: give .spec.replicas to the HorizontalPodAutoscaler without ever resetting it")
	if err := apply("kubectl", api); err != nil {
		return err
	}
	go func() {
		time.Sleep(2 * time.Second)
		_ = apply("kubectl", `
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: api}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: api}
  minReplicas: 3
  maxReplicas: 5
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
`)
	}()
	ssa("handover", "deploy/api", "--field", ".spec.replicas", "--from", "kubectl", "--to", "kube-controller-manager", "--wait", "--timeout", "60s")
	caption("Now the manifest without replicas applies cleanly")
	ssa("explain-conflict", "-f", write("api.yaml", strings.Replace(api, "  replicas: 1\n", "", 1)))
	return nil
}

// diffStory: diff and extract over a Helm-made Deployment.
func diffStory(write func(name, content string) string) error {
	caption("diff: Argo CD takes over a Helm-made Deployment. What changes, and what stays?")
	shop := `
apiVersion: apps/v1
kind: Deployment
metadata: {name: shop, labels: {app: shop, helm.sh/chart: shop-1.0.0}}
spec:
  replicas: 2
  selector: {matchLabels: {app: shop}}
  template:
    metadata: {labels: {app: shop}}
    spec:
      containers:
      - name: app
        image: "nginx:1.27"
        env: [{name: OLD_FLAG, value: "1"}, {name: MODE, value: prod}]
`
	if _, err := res(obj(shop)).Create(context.Background(), obj(shop), metav1.CreateOptions{FieldManager: "helm"}); err != nil {
		return err
	}
	// kubectl set image: a strategic merge patch, by manager kubectl-set.
	if _, err := dyn.Resource(gvrs["Deployment"]).Namespace("default").Patch(context.Background(), "shop", types.StrategicMergePatchType,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:1.27-hotfix"}]}}}}`), metav1.PatchOptions{FieldManager: "kubectl-set"}); err != nil {
		return err
	}
	argo := write("shop.yaml", strings.NewReplacer(", helm.sh/chart: shop-1.0.0", "", `"nginx:1.27"`, `"nginx:1.28"`, `{name: OLD_FLAG, value: "1"}, `, "").Replace(shop))
	ssa("diff", "-f", argo, "--field-manager", "argocd-controller")
	caption("extract: what did Helm apply? Its fields as a manifest")
	ssa("extract", "deploy/shop", "--manager", "helm")
	return nil
}

// migrateStory: migrate's check, dry run, real run and undo; the backup
// goes under dir.
func migrateStory(dir string) error {
	caption("migrate: what still carries client-side apply?")
	ssa("migrate", "configmaps", "--check")
	caption("migrate --dry-run=client: the plan and the managedFields diff")
	ssa("migrate", "cm/legacy", "--dry-run=client")
	caption("migrate for real, verified, with a backup")
	backup := filepath.Join(dir, "backup")
	ssa("migrate", "cm/legacy", "--verify", "--backup-dir", backup)
	ssa("who-owns", "cm/legacy", "-o", "managers")
	caption("Undo the migration")
	ssa("migrate", "undo", "--backup-dir", backup)
	return nil
}

// auditStory: audit, and audit as a CI gate.
func auditStory(func(name, content string) string) error {
	caption("audit: what is wrong with the field managers of every kind here (someone edits a ConfigMap by hand first)")
	if err := patch("ConfigMap", "settings", "kubectl-edit", `{"data":{"size":"small"}}`); err != nil {
		return err
	}
	ssa("audit", "-o", "wide")
	caption("audit as a CI gate: only team-a may own the ConfigMaps' fields")
	ssa("audit", "configmaps", "--expect-manager", "team-a", "--fail-on", "error")
	return nil
}

// watchStory: a fight over replicas.
func watchStory(func(name, content string) string) error {
	caption("watch: a GitOps tool and an autoscaler take replicas from each other")
	stop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
			if i%2 == 0 {
				_ = patch("Deployment", "web", "autoscaler", `{"spec":{"replicas":5}}`, "scale")
			} else {
				_ = apply("gitops", web)
			}
		}
	}()
	ssa("watch", "deploy/web", "--timeout", "6s")
	close(stop)
	return nil
}

// admissionStory: admission policies evaluated, and built-in admission.
func admissionStory(write func(name, content string) string) error {
	caption("Admission: a ValidatingAdmissionPolicy caps replicas at 5, a MutatingAdmissionPolicy labels Deployments, and a default StorageClass exists")
	for _, m := range []string{`
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-replicas}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  validations: [{expression: "object.spec.replicas <= 5", message: "at most 5 replicas"}]
`, `
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-replicas}
spec: {policyName: max-replicas, validationActions: [Deny]}
`, `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicy
metadata: {name: audited}
spec:
  reinvocationPolicy: Never
  matchConstraints:
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}]
  mutations:
  - patchType: ApplyConfiguration
    applyConfiguration: {expression: 'Object{metadata: Object.metadata{labels: {"audited": "true"}}}'}
`, `
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingAdmissionPolicyBinding
metadata: {name: audited}
spec: {policyName: audited}
`, `
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: example.com/none
`} {
		if err := apply("demo-setup", m); err != nil {
			return err
		}
	}
	time.Sleep(2 * time.Second) // the apiserver's policy informer has it
	big := write("big.yaml", strings.NewReplacer("replicas: 2", "replicas: 8", "name: web", "name: big", "app: web", "app: big").Replace(web))
	caption("The policies are evaluated here, with the apiserver's own code (ssa-admission-eval): the label is in the prediction, and the denial is the server's, word for word (exit 1)")
	ssa("explain-conflict", "-f", big)
	caption("--verify asks the server's dry run, which agrees (exit 1: the apply would fail)")
	ssa("explain-conflict", "-f", big, "--verify")
	caption("diff shows the label the mutating policy sets, and names the policy (its JSON has setBy on each change)")
	ssa("diff", "-f", write("small.yaml", strings.NewReplacer("name: web", "name: small", "app: web", "app: small").Replace(web)))
	caption("Built-in admission is modelled: a PVC gets the default StorageClass and its protection finalizer")
	ssa("diff", "-f", write("pvc.yaml", "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n"))
	return nil
}

// catalog is a chart's render: what helm template prints.
const catalog = `apiVersion: apps/v1
kind: Deployment
metadata: {name: catalog}
spec:
  replicas: 2
  selector: {matchLabels: {app: catalog}}
  template:
    metadata: {labels: {app: catalog}}
    spec:
      containers: [{name: catalog, image: "nginx:1.27"}]
`

// helmStory installs a release as Helm 4 does (server-side apply as
// "helm", Helm's label and annotations, the release stored in a Secret
// the way Helm's Secrets driver writes it), then someone scales it.
func helmStory(write func(name, content string) string) error {
	caption("Helm 4: release catalog applied server-side by helm, then scaled by hand with kubectl scale")
	u := obj(catalog)
	u.SetLabels(map[string]string{"app.kubernetes.io/managed-by": "Helm"})
	u.SetAnnotations(map[string]string{"meta.helm.sh/release-name": "catalog", "meta.helm.sh/release-namespace": "default"})
	if _, err := res(u).Apply(context.Background(), u.GetName(), u, metav1.ApplyOptions{FieldManager: "helm", Force: true}); err != nil {
		return err
	}
	if err := helmRelease("catalog", 1, catalog); err != nil {
		return err
	}
	if err := patch("Deployment", "catalog", "kubectl", `{"spec":{"replicas":5}}`, "scale"); err != nil {
		return err
	}
	caption("diff --helm-release: what the cluster drifted from, read from the release's Secret (no helm binary)")
	ssa("diff", "--helm-release", "catalog", "--time", "none")
	caption("Upgrade preflight: helm template ... | kubectl ssa explain-conflict --helm-release catalog -f - (the next render, a new image)")
	ssa("explain-conflict", "--helm-release", "catalog", "-f", write("catalog-next.yaml", strings.Replace(catalog, "nginx:1.27", "nginx:1.28", 1)))
	return argoStory(write)
}

const storefront = `apiVersion: v1
kind: Service
metadata: {name: storefront, labels: {app: storefront}}
spec:
  selector: {app: storefront}
  ports: [{name: http, port: 80, protocol: TCP, targetPort: 8080}]
`

// argoStory: Argo CD syncs a Service server-side, someone changes its
// targetPort in Argo CD's UI, and git changes a label.
func argoStory(write func(name, content string) string) error {
	caption("Argo CD: a Service synced server-side (argocd-controller), then its targetPort edited in Argo CD's UI (argocd-server)")
	if err := apply("argocd-controller", storefront); err != nil {
		return err
	}
	if err := patch("Service", "storefront", "argocd-server", `{"spec":{"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":9090}]}}`); err != nil {
		return err
	}
	ssa("who-owns", "svc/storefront", "--field", ".spec.ports[*].targetPort", "--time", "none")
	caption("The next sync from git (a new label): explained as Argo CD's UI, with the Application's ignoreDifferences that keeps the edit")
	ssa("explain-conflict", "-f", write("storefront.yaml", strings.Replace(storefront, "labels: {app: storefront}", "labels: {app: storefront, tier: web}", 1)), "--field-manager", "argocd-controller")
	return nil
}

// helmRelease stores revision 1 of a release as Helm 4's Secrets driver
// does: the release as JSON, gzipped, base64-encoded, in the Secret's
// "release" key.
func helmRelease(name string, revision int, manifest string) error {
	value, err := testkit.HelmRelease(map[string]any{
		"name": name, "namespace": "default", "version": revision, "apply_method": "ssa",
		"info":     map[string]any{"status": "deployed", "description": "Install complete"},
		"chart":    map[string]any{"metadata": map[string]any{"name": name, "version": "1.0.0", "apiVersion": "v2"}},
		"manifest": "---\n# Source: " + name + "/templates/deployment.yaml\n" + manifest,
	})
	if err != nil {
		return err
	}
	secret := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "helm.sh/release.v1",
		"metadata": map[string]any{
			"name":   fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, revision),
			"labels": map[string]any{"owner": "helm", "name": name, "status": "deployed", "version": fmt.Sprint(revision)},
		},
		"data": map[string]any{"release": base64.StdEncoding.EncodeToString([]byte(value))},
	}}
	_, err = res(secret).Create(context.Background(), secret, metav1.CreateOptions{FieldManager: "helm"})
	return err
}
