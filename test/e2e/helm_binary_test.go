package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
)

// These tests run the real helm (Helm 4, built from the module proxy in
// test/helm, a module of its own) against the test bed, and compare what
// kubectl-ssa predicts of an upgrade with what helm upgrade then does.

var helmBuild struct {
	once sync.Once
	path string
	err  error
}

// helmBin builds helm once into the private PATH.
func helmBin(t *testing.T) string {
	t.Helper()
	helmBuild.once.Do(func() {
		helmBuild.path = filepath.Join(env.binDir, "helm")
		build := exec.Command("go", "build", "-o", helmBuild.path, "helm.sh/helm/v4/cmd/helm")
		build.Dir = filepath.Join(repoRoot(), "test", "helm")
		var out bytes.Buffer
		build.Stdout, build.Stderr = &out, &out
		if err := build.Run(); err != nil {
			helmBuild.err = err
			helmBuild.path = out.String()
		}
	})
	if helmBuild.err != nil {
		t.Fatalf("building helm: %v\n%s", helmBuild.err, helmBuild.path)
	}
	return helmBuild.path
}

// helmRun runs helm with the test bed's kubeconfig and a private home.
func helmRun(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(helmBin(t), args...)
	home := filepath.Join(env.dir, "helm-home")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+filepath.Join(home, "cache"), "HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// webChart writes a chart whose Deployment sets replicas only when
// .Values.replicas is set (not 0), with its own autoscaler when
// .Values.hpa.enabled.
func webChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "web")
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: web\nversion: 0.1.0\n",
		"values.yaml": "replicas: 2\nimage: nginx:1.27\nhpa:\n  enabled: false\n  min: 3\n  max: 5\n",
		"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  {{- with .Values.replicas }}
  replicas: {{ . }}
  {{- end }}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: {{ .Values.image }}
        ports:
        - containerPort: 80
`,
		"templates/hpa.yaml": `{{- if .Values.hpa.enabled }}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: {{ .Values.hpa.min }}
  maxReplicas: {{ .Values.hpa.max }}
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
{{- end }}
`,
	}
	return writeChart(t, dir, files)
}

// writeChart writes files (by path) under dir, and returns dir.
func writeChart(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, content)
	}
	return dir
}

// externalHPA makes an autoscaler outside the chart (min 3) and waits for
// its controller to scale the Deployment to 3 through /scale.
func externalHPA(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web-ext"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To(int32(3)), MaxReplicas: 5}}
	if _, err := env.client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		d, err := env.client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		scaled := false
		for _, e := range d.ManagedFields {
			scaled = scaled || e.Manager == "kube-controller-manager" && e.Subresource == "scale"
		}
		if scaled && *d.Spec.Replicas == 3 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the autoscaler's controller did not scale deploy/web to 3: replicas %d, managedFields %+v", *d.Spec.Replicas, d.ManagedFields)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// replicasDuring watches deploy/web while run runs and returns every
// .spec.replicas it was written with, in order.
func replicasDuring(t *testing.T, ns string, run func()) []int32 {
	t.Helper()
	ctx := context.Background()
	d, err := env.client.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := env.client.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=web", ResourceVersion: d.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	run()
	// A marker written after run: every write before it has been seen
	// once the watch reaches it.
	marked, err := env.client.AppsV1().Deployments(ns).Patch(ctx, "web", "application/merge-patch+json", []byte(`{"metadata":{"annotations":{"e2e/marker":"`+time.Now().Format(time.RFC3339Nano)+`"}}}`), metav1.PatchOptions{FieldManager: "e2e-marker"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []int32
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("the watch ended")
			}
			if ev.Type != watch.Modified {
				continue
			}
			dep := ev.Object.(*appsv1.Deployment)
			if dep.Generation != d.Generation {
				seen = append(seen, *dep.Spec.Replicas)
				d = dep
			}
			if dep.ResourceVersion == marked.ResourceVersion {
				return seen
			}
		case <-timeout:
			t.Fatalf("the watch did not reach the marker; replicas seen: %v", seen)
		}
	}
}

type helmPrediction struct {
	Items []helmReport `json:"items"`
}

type helmReport struct {
	Object           struct{ Kind string } `json:"object"`
	ControlledResets []struct {
		Path       string `json:"path"`
		Controller string `json:"controller"`
		InInput    bool   `json:"inInput"`
		Value      any    `json:"value"`
		Was        any    `json:"was"`
	} `json:"controlledResets"`
	HelmUpgrade *struct {
		Mode  string `json:"mode"`
		Flag  string `json:"flag"`
		Other *struct {
			Mode  string   `json:"mode"`
			Keeps []string `json:"keeps"`
		} `json:"other"`
	} `json:"helmUpgrade"`
	Resolutions []struct {
		Kind    string `json:"kind"`
		Command string `json:"command"`
		Snippet string `json:"snippet"`
	} `json:"resolutions"`
	Verify *struct {
		Status string `json:"status"`
	} `json:"verify"`
}

func predictHelm(t *testing.T, wantCode int, render string, args ...string) helmPrediction {
	t.Helper()
	r := ssaIn(t, render, append(args, "-o", "json")...)
	if r.code != wantCode {
		t.Fatalf("kubectl-ssa %s: exit %d, want %d\n%s%s", strings.Join(args, " "), r.code, wantCode, r.stdout, r.stderr)
	}
	var p helmPrediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(p.Items) == 0 {
		// One object prints as itself, not as a List.
		var one helmReport
		if err := json.Unmarshal([]byte(r.stdout), &one); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		p.Items = []helmReport{one}
	}
	return p
}

// TestHelmClientSideUpgradeWithExternalHPA: a release Helm installed
// client-side, an autoscaler made outside the chart that took
// .spec.replicas (3), and a render that stops setting replicas. helm
// upgrade's default keeps the release client-side, and its patch deletes
// replicas (the last revision rendered it): kubectl-ssa predicts that
// write, exits 5 with the reset of replicas to 1, and says that
// --server-side=true keeps it. helm upgrade then does exactly that (3 ->
// 1); following the advice in another namespace scales nothing down.
func TestHelmClientSideUpgradeWithExternalHPA(t *testing.T) {
	chart := webChart(t)
	for _, follow := range []bool{false, true} {
		ns := namespace(t)
		helmRun(t, "install", "web", chart, "-n", ns, "--server-side=false")
		externalHPA(t, ns)
		// The same chart and values: the client-side patch sets the chart's
		// 2 over the autoscaler's 3 (it never conflicts).
		same := predictHelm(t, 5, helmRun(t, "template", "web", chart, "-n", ns), "explain-conflict", "-n", ns, "--helm-release", "web", "-f", "-")
		if cr := same.Items[0].ControlledResets; len(cr) != 1 || cr[0].Path != ".spec.replicas" || cr[0].Value != float64(2) || cr[0].Was != float64(3) {
			t.Errorf("the chart's replicas written over the autoscaler's: %+v", cr)
		}
		render := helmRun(t, "template", "web", chart, "-n", ns, "--set", "replicas=0")

		p := predictHelm(t, 5, render, "explain-conflict", "-n", ns, "--helm-release", "web", "-f", "-", "--verify")
		dep := p.Items[0]
		if dep.Object.Kind != "Deployment" || len(dep.ControlledResets) != 1 || dep.ControlledResets[0].Path != ".spec.replicas" ||
			dep.ControlledResets[0].Controller != "HorizontalPodAutoscaler web-ext" || dep.ControlledResets[0].Value != float64(1) || dep.ControlledResets[0].Was != float64(3) {
			t.Fatalf("the reset of replicas by the default (client-side) upgrade: %+v", dep)
		}
		if h := dep.HelmUpgrade; h == nil || h.Mode != "client-side" || h.Flag != "auto" || h.Other == nil || h.Other.Mode != "server-side" || strings.Join(h.Other.Keeps, ",") != ".spec.replicas" {
			t.Errorf("the upgrade's way and the other way: %+v", dep.HelmUpgrade)
		}
		if dep.Verify == nil || dep.Verify.Status != "agrees" {
			t.Errorf("--verify of the client-side patch: %+v", dep.Verify)
		}
		advice := false
		for _, rm := range dep.Resolutions {
			advice = advice || rm.Kind == "helm-server-side" && rm.Snippet == "--server-side=true"
		}
		if !advice {
			t.Errorf("no --server-side=true among the ways out: %+v", dep.Resolutions)
		}
		text := ssaIn(t, render, "explain-conflict", "-n", ns, "--helm-release", "web", "-f", "-")
		for _, want := range []string{
			"the prediction below is of Helm's client-side patch (--server-side=auto)",
			"# Deployment/" + ns + "/web: RESETS what a controller sets: the client-side upgrade as \"helm\" succeeds, and .spec.replicas (below)",
			"note: helm upgrade --server-side=true (server-side) leaves .spec.replicas as it is, which this one changes",
			"RESET: helm upgrade (client-side, --server-side=auto) of Deployment/" + ns + "/web resets .spec.replicas to 1 (was 3), which HorizontalPodAutoscaler web-ext sets",
			`add to the helm upgrade of release "web": --server-side=true`,
		} {
			if text.code != 5 || !strings.Contains(text.stdout, want) {
				t.Errorf("exit %d, the text does not say %q:\n%s%s", text.code, want, text.stdout, text.stderr)
			}
		}
		predictHelm(t, 5, render, "diff", "-n", ns, "--helm-release", "web", "-f", "-")
		// The switch, predicted: replicas stays with the autoscaler.
		predictHelm(t, 0, render, "diff", "-n", ns, "--helm-release", "web", "-f", "-", "--helm-server-side=true")
		predictHelm(t, 0, render, "explain-conflict", "-n", ns, "--helm-release", "web", "-f", "-", "--helm-server-side=true")

		upgrade := []string{"upgrade", "web", chart, "-n", ns, "--set", "replicas=0"}
		if follow {
			upgrade = append(upgrade, "--server-side=true")
		}
		seen := replicasDuring(t, ns, func() { helmRun(t, upgrade...) })
		switch {
		case !follow && (len(seen) == 0 || seen[0] != 1):
			t.Errorf("helm upgrade (default): replicas written %v, predicted 1 first", seen)
		case follow:
			for _, n := range seen {
				if n < 3 {
					t.Errorf("helm upgrade --server-side=true, as advised: replicas written %v, nothing below 3 predicted", seen)
				}
			}
		}
	}
}

// TestHelmChartSwitchesToItsOwnHPA: a release applied server-side whose
// replicas only helm owns (4), and a render that drops replicas and
// brings its own autoscaler (min 3): the upgrade would reset replicas to 1
// before the autoscaler scales it up. kubectl-ssa exits 5 and gives the
// handover; pasted before the upgrade, it makes the upgrade scale nothing
// down.
func TestHelmChartSwitchesToItsOwnHPA(t *testing.T) {
	chart := webChart(t)
	ns := namespace(t)
	helmRun(t, "install", "web", chart, "-n", ns, "--set", "replicas=4")
	render := helmRun(t, "template", "web", chart, "-n", ns, "--set", "replicas=0", "--set", "hpa.enabled=true")

	p := predictHelm(t, 5, render, "explain-conflict", "-n", ns, "--helm-release", "web", "-f", "-")
	var handover string
	for _, it := range p.Items {
		if it.Object.Kind != "Deployment" {
			continue
		}
		if len(it.ControlledResets) != 1 || !it.ControlledResets[0].InInput || it.ControlledResets[0].Was != float64(4) || it.ControlledResets[0].Value != float64(1) {
			t.Fatalf("the reset of replicas to 1 (was 4), undone by the render's own autoscaler: %+v", it.ControlledResets)
		}
		for _, rm := range it.Resolutions {
			if rm.Kind == "handover-to-autoscaler" {
				handover = rm.Command
			}
		}
	}
	words := strings.Fields(handover)
	if len(words) < 3 || words[0] != "kubectl" || words[1] != "ssa" || strings.ContainsAny(handover, `'"\`) {
		t.Fatalf("no handover among the ways out (or one that needs a shell's quoting): %q", handover)
	}
	// Pasted as printed (kubectl ssa is this binary on the PATH).
	if r := ssa(t, words[2:]...); r.code != 0 && r.code != 1 {
		t.Fatalf("%s: exit %d\n%s%s", handover, r.code, r.stdout, r.stderr)
	}
	p = predictHelm(t, 0, render, "explain-conflict", "-n", ns, "--helm-release", "web", "-f", "-")
	for _, it := range p.Items {
		if len(it.ControlledResets) > 0 {
			t.Errorf("after the handover, still a reset: %+v", it.ControlledResets)
		}
	}
	seen := replicasDuring(t, ns, func() {
		helmRun(t, "upgrade", "web", chart, "-n", ns, "--set", "replicas=0", "--set", "hpa.enabled=true")
	})
	for _, n := range seen {
		if n < 3 {
			t.Errorf("helm upgrade after the handover: replicas written %v, nothing below 3 predicted", seen)
		}
	}
}
