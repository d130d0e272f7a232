package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/defaults"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// What the report says of the fields an apply stops setting, beside the
// conflictReport fields.
type resetEntry struct {
	Path      string `json:"path"`
	Value     any    `json:"value"`
	Unchanged bool   `json:"unchanged"`
}

type maybeResetEntry struct {
	Path      string `json:"path"`
	DependsOn string `json:"dependsOn"`
}

// removalCounts add up, over the corpus, how the fields the appliers
// stopped setting were classified.
var removalCounts struct {
	sync.Mutex
	removed, reset, unchanged, maybe int
}

// checkRemovals holds the report's removed, reset and maybeReset against
// the server's dry run of the same apply: a removed path is absent from
// the result (or null), a reset path holds the reported value, and every
// field the applier stopped owning that left the object or took a value
// nobody owns is listed under one of them.
func checkRemovals(t *testing.T, c applyCase, r conflictReport, live, out *unstructured.Unstructured) {
	t.Helper()
	if live == nil || c.subresource == "scale" {
		return
	}
	removalCounts.Lock()
	removalCounts.removed += len(r.Removed)
	removalCounts.reset += len(r.Reset)
	removalCounts.maybe += len(r.MaybeReset)
	for _, rs := range r.Reset {
		if rs.Unchanged {
			removalCounts.unchanged++
		}
	}
	removalCounts.Unlock()
	t.Logf("removals: %d removed %v, %d reset, %d maybe reset", len(r.Removed), r.Removed, len(r.Reset), len(r.MaybeReset))

	parse := func(s string) fieldpath.Path {
		p, err := pathlang.ParsePath(s, live.Object, out.Object)
		if err != nil {
			t.Fatalf("report path %q: %v", s, err)
		}
		return p
	}
	jsonOf := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	type claim struct {
		kind  string
		path  fieldpath.Path
		value any
	}
	var claims []claim
	for _, s := range r.Removed {
		p := parse(s)
		claims = append(claims, claim{kind: "removed", path: p})
		if v, ok := pathlang.Lookup(out.Object, p); ok && v != nil {
			t.Errorf("predicted removed: %s; the server keeps %s", s, jsonOf(v))
		}
	}
	for _, rs := range r.Reset {
		p := parse(rs.Path)
		claims = append(claims, claim{kind: "reset", path: p, value: rs.Value})
		got, ok := pathlang.Lookup(out.Object, p)
		switch {
		case !ok:
			t.Errorf("predicted reset to %s: %s; the server removes it", jsonOf(rs.Value), rs.Path)
		case jsonOf(got) != jsonOf(rs.Value):
			t.Errorf("predicted reset to %s: %s; the server sets %s", jsonOf(rs.Value), rs.Path, jsonOf(got))
		}
		was, _ := pathlang.Lookup(live.Object, p)
		if unchanged := jsonOf(was) == jsonOf(rs.Value); unchanged != rs.Unchanged {
			t.Errorf("%s: unchanged %v, but it was %s and becomes %s", rs.Path, rs.Unchanged, jsonOf(was), jsonOf(rs.Value))
		}
	}
	for _, m := range r.MaybeReset {
		claims = append(claims, claim{kind: "maybe", path: parse(m.Path)})
	}
	applier := func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == c.manager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == c.subresource
	}
	others := func(e metav1.ManagedFieldsEntry) bool { return !applier(e) }
	before, err := ownership.Union(live.GetManagedFields(), applier)
	if err != nil {
		t.Fatal(err)
	}
	after, err := ownership.Union(out.GetManagedFields(), applier)
	if err != nil {
		t.Fatal(err)
	}
	owned, err := ownership.Union(out.GetManagedFields(), others)
	if err != nil {
		t.Fatal(err)
	}
	before.Difference(after).Iterate(func(p fieldpath.Path) {
		if _, ok := pathlang.Lookup(live.Object, p); !ok {
			return
		}
		below := false
		after.Iterate(func(q fieldpath.Path) { below = below || len(q) > len(p) && q[:len(p)].Equals(p) })
		if below {
			return // the applier still owns it, by its children: atomic at one version, a struct at another
		}
		v, kept := pathlang.Lookup(out.Object, p)
		kept = kept && v != nil
		if kept && owned.Has(p) {
			return // retained by another owner
		}
		var by *claim
		for i := range claims {
			if len(claims[i].path) <= len(p) && p[:len(claims[i].path)].Equals(claims[i].path) {
				by = &claims[i]
			}
		}
		switch {
		case by == nil && kept:
			t.Errorf("the server sets %s to %s, which the applier stopped owning: the report does not list it", p, jsonOf(v))
		case by == nil:
			t.Errorf("the server removes %s: the report does not list it", p)
		case by.kind == "removed" && kept:
			t.Errorf("%s: under removed %s, but the server sets it to %s", p, by.path, jsonOf(v))
		case by.kind == "reset" && !kept:
			if inDefault, ok := pathlang.Lookup(by.value, p[len(by.path):]); ok && inDefault != nil {
				t.Errorf("%s: under reset %s, whose default holds %s, but the server removes it", p, by.path, jsonOf(inDefault))
			}
		}
	})
}

var dialOnce sync.Once

// applyDialCRD installs the Dial CRD (testdata/crd/dials.yaml: structural
// defaults) once for the suite.
func applyDialCRD(t *testing.T) {
	t.Helper()
	dialOnce.Do(func() {
		apply(t, "", "test-setup", testkit.Fixture(t, "crd/dials.yaml"), true)
		waitEstablished(t, "dials.example.com")
	})
}

// exportedDeployment is a Deployment as kubectl get -o yaml shows it, with
// the apiserver's defaults, applied back as a manifest.
const exportedDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  labels: {team: a}
spec:
  replicas: 2
  revisionHistoryLimit: 10
  progressDeadlineSeconds: 600
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      dnsPolicy: ClusterFirst
      restartPolicy: Always
      schedulerName: default-scheduler
      securityContext: {}
      terminationGracePeriodSeconds: 30
      containers:
      - name: main
        image: nginx:1
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
        terminationMessagePolicy: File
        resources: {}
        ports:
        - {containerPort: 80, protocol: TCP, name: http}
        livenessProbe:
          httpGet: {path: /, port: 80, scheme: HTTP}
          timeoutSeconds: 1
          periodSeconds: 10
          successThreshold: 1
          failureThreshold: 3
      - name: side
        image: busybox:1
        imagePullPolicy: IfNotPresent
`

// trimmedDeployment is what the user means: the sidecar and the team
// label gone, and none of the defaults.
const trimmedDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers:
      - name: main
        image: nginx:1
        ports:
        - {containerPort: 80, protocol: TCP, name: http}
        livenessProbe:
          httpGet: {port: 80}
`

func TestExplainConflictDefaults(t *testing.T) {
	applyDialCRD(t)
	deployment := func(spec string) string {
		return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"app"},"spec":{"selector":{"matchLabels":{"app":"app"}},` + spec + `}}`
	}
	podTemplate := func(containers string, extra string) string {
		return `"template":{"metadata":{"labels":{"app":"app"}},"spec":{` + extra + `"containers":[` + containers + `]}}`
	}
	service := func(spec string) string {
		return `{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc"},"spec":{"selector":{"app":"app"},` + spec + `}}`
	}

	scenarios := []struct {
		name    string
		first   string
		applied string
		// want lists, as "removed PATH", "reset PATH VALUE [unchanged]" or
		// "maybe PATH", what the report must say (besides what the
		// server comparison checks).
		want []string
	}{
		{
			name:    "deployment: an exported manifest trimmed",
			first:   exportedDeployment,
			applied: trimmedDeployment,
			want: []string{
				`removed .spec.template.spec.containers[name="side"]`,
				`removed .metadata.labels.team`,
				`reset .spec.replicas 1`,
				`reset .spec.template.spec.restartPolicy "Always" unchanged`,
				`reset .spec.template.spec.securityContext {} unchanged`,
				`reset .spec.template.spec.containers[name="main"].imagePullPolicy "IfNotPresent" unchanged`,
				`reset .spec.template.spec.containers[name="main"].livenessProbe.httpGet.path "/" unchanged`,
				`reset .spec.strategy.rollingUpdate.maxSurge "25%" unchanged`,
			},
		},
		{
			name:    "deployment: the pull policy follows the image",
			first:   deployment(podTemplate(`{"name":"main","image":"nginx:1","imagePullPolicy":"IfNotPresent"}`, "")),
			applied: deployment(podTemplate(`{"name":"main","image":"nginx:latest"}`, "")),
			want:    []string{`reset .spec.template.spec.containers[name="main"].imagePullPolicy "Always"`},
		},
		{
			name:    "deployment: Recreate drops the rolling update parameters",
			first:   deployment(`"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}},` + podTemplate(`{"name":"main","image":"nginx:1"}`, "")),
			applied: deployment(`"strategy":{"type":"Recreate"},` + podTemplate(`{"name":"main","image":"nginx:1"}`, "")),
			want:    []string{`removed .spec.strategy.rollingUpdate.maxSurge`},
		},
		{
			name:    "deployment: a security context with a field",
			first:   deployment(podTemplate(`{"name":"main","image":"nginx:1"}`, `"securityContext":{"runAsNonRoot":true},`)),
			applied: deployment(podTemplate(`{"name":"main","image":"nginx:1"}`, "")),
			want:    []string{`removed .spec.template.spec.securityContext.runAsNonRoot`},
		},
		{
			name:    "deployment: the rolling update of the default strategy",
			first:   deployment(`"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":2,"maxUnavailable":0}},` + podTemplate(`{"name":"main","image":"nginx:1"}`, "")),
			applied: deployment(podTemplate(`{"name":"main","image":"nginx:1"}`, "")),
			want: []string{
				`reset .spec.strategy.type "RollingUpdate" unchanged`,
				`reset .spec.strategy.rollingUpdate.maxSurge "25%"`,
				`reset .spec.strategy.rollingUpdate.maxUnavailable "25%"`,
			},
		},
		{
			name: "pod template: exported and trimmed",
			first: `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"pt"},"template":{"metadata":{"labels":{"app":"x"}},"spec":{
				"restartPolicy":"OnFailure","dnsPolicy":"ClusterFirst","enableServiceLinks":true,"terminationGracePeriodSeconds":30,
				"containers":[{"name":"main","image":"nginx","imagePullPolicy":"Always","ports":[{"containerPort":8080,"protocol":"TCP"}],
				"readinessProbe":{"tcpSocket":{"port":8080},"periodSeconds":10,"failureThreshold":5}}],
				"volumes":[{"name":"cfg","configMap":{"name":"cfg","defaultMode":420}},{"name":"tmp","emptyDir":{}}]}}}`,
			applied: `{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"pt"},"template":{"metadata":{"labels":{"app":"x"}},"spec":{
				"containers":[{"name":"main","image":"nginx","ports":[{"containerPort":8080,"protocol":"TCP"}],"readinessProbe":{"tcpSocket":{"port":8080}}}],
				"volumes":[{"name":"cfg","configMap":{"name":"cfg"}}]}}}`,
			want: []string{
				`reset .template.spec.restartPolicy "Always"`,
				`reset .template.spec.containers[name="main"].imagePullPolicy "Always" unchanged`,
				`reset .template.spec.containers[name="main"].readinessProbe.failureThreshold 3`,
				`reset .template.spec.volumes[name="cfg"].configMap.defaultMode 420 unchanged`,
				`removed .template.spec.volumes[name="tmp"]`,
			},
		},
		{
			name: "service: exported and trimmed",
			first: service(`"type":"ClusterIP","sessionAffinity":"None","internalTrafficPolicy":"Cluster",
				"ports":[{"name":"http","port":80,"targetPort":80,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}]`),
			applied: service(`"ports":[{"name":"http","port":80,"protocol":"TCP"}]`),
			want: []string{
				`reset .spec.type "ClusterIP" unchanged`,
				`reset .spec.sessionAffinity "None" unchanged`,
				`reset .spec.internalTrafficPolicy "Cluster" unchanged`,
				`reset .spec.ports[port=80,protocol="TCP"].targetPort 80 unchanged`,
				`removed .spec.ports[port=9090,protocol="TCP"]`,
			},
		},
		{
			name: "service: the allocated values are kept",
			first: service(`"type":"NodePort","clusterIP":"10.96.200.10","clusterIPs":["10.96.200.10"],"ipFamilies":["IPv4"],"ipFamilyPolicy":"SingleStack",
				"externalTrafficPolicy":"Cluster","ports":[{"name":"http","port":80,"targetPort":80,"protocol":"TCP","nodePort":30080}]`),
			applied: service(`"type":"NodePort","ports":[{"name":"http","port":80,"protocol":"TCP"}]`),
			want: []string{
				`reset .spec.clusterIP "10.96.200.10" unchanged`,
				`reset .spec.clusterIPs ["10.96.200.10"] unchanged`,
				`reset .spec.ipFamilies ["IPv4"] unchanged`,
				`reset .spec.ipFamilyPolicy "SingleStack" unchanged`,
				`reset .spec.ports[port=80,protocol="TCP"].nodePort 30080 unchanged`,
				`reset .spec.externalTrafficPolicy "Cluster" unchanged`,
			},
		},
		{
			name: "daemon set: the template generation is kept",
			first: `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds","annotations":{"deprecated.daemonset.template.generation":"1"}},
				"spec":{"selector":{"matchLabels":{"app":"ds"}},"revisionHistoryLimit":10,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":0}},
				"template":{"metadata":{"labels":{"app":"ds"}},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}}`,
			applied: `{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds"},"spec":{"selector":{"matchLabels":{"app":"ds"}},
				"template":{"metadata":{"labels":{"app":"ds"}},"spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}}`,
			want: []string{
				`reset .metadata.annotations.deprecated.daemonset.template.generation "1" unchanged`,
				`reset .spec.updateStrategy.rollingUpdate.maxUnavailable 1 unchanged`,
				`reset .spec.revisionHistoryLimit 10 unchanged`,
			},
		},
		{
			name:    "service: targetPort comes back as the port",
			first:   service(`"ports":[{"name":"http","port":80,"targetPort":8080,"protocol":"TCP"}]`),
			applied: service(`"ports":[{"name":"http","port":80,"protocol":"TCP"}]`),
			want:    []string{`reset .spec.ports[port=80,protocol="TCP"].targetPort 80`},
		},
		{
			name:    "service: the client IP timeout comes back",
			first:   service(`"sessionAffinity":"ClientIP","sessionAffinityConfig":{"clientIP":{"timeoutSeconds":300}},"ports":[{"port":80,"protocol":"TCP"}]`),
			applied: service(`"sessionAffinity":"ClientIP","ports":[{"port":80,"protocol":"TCP"}]`),
			want:    []string{`reset .spec.sessionAffinityConfig.clientIP.timeoutSeconds 10800`},
		},
		{
			name:    "service: a node port's traffic policy",
			first:   service(`"type":"NodePort","externalTrafficPolicy":"Local","ports":[{"port":80,"protocol":"TCP"}]`),
			applied: service(`"type":"NodePort","ports":[{"port":80,"protocol":"TCP"}]`),
			want:    []string{`reset .spec.externalTrafficPolicy "Cluster"`},
		},
		{
			name: "job: exported and trimmed",
			first: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"suspend":true,"backoffLimit":6,"completions":1,"parallelism":1,
				"completionMode":"NonIndexed","podReplacementPolicy":"TerminatingOrFailed","ttlSecondsAfterFinished":100,
				"template":{"spec":{"restartPolicy":"Never","dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler",
				"containers":[{"name":"c","image":"busybox:1","imagePullPolicy":"IfNotPresent","terminationMessagePolicy":"File"}]}}}}`,
			applied: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"suspend":true,
				"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1"}]}}}}`,
			want: []string{
				`reset .spec.backoffLimit 6 unchanged`,
				`reset .spec.completions 1 unchanged`,
				`reset .spec.parallelism 1 unchanged`,
				`reset .spec.completionMode "NonIndexed" unchanged`,
				`reset .spec.podReplacementPolicy "TerminatingOrFailed" unchanged`,
				`reset .spec.template.spec.dnsPolicy "ClusterFirst" unchanged`,
				`removed .spec.ttlSecondsAfterFinished`,
			},
		},
		{
			name:    "job: a mutable default that changes",
			first:   `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"suspend":true,"backoffLimit":2,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1"}]}}}}`,
			applied: `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"suspend":true,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1"}]}}}}`,
			want:    []string{`reset .spec.backoffLimit 6`},
		},
		{
			name:    "custom resource: schema defaults",
			first:   `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"d"},"spec":{"size":"l","replicas":3,"note":"x","tls":{"enabled":false,"minVersion":"1.3"},"ports":[{"name":"http","protocol":"UDP"},{"name":"admin"}]}}`,
			applied: `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"d"},"spec":{"ports":[{"name":"http"}]}}`,
			want: []string{
				`removed .spec.note`,
				`removed .spec.tls.minVersion`,
				`removed .spec.ports[name="admin"]`,
				`reset .spec.size "m"`,
				`reset .spec.replicas 1`,
				`reset .spec.tls.enabled true`,
				`reset .spec.ports[name="http"].protocol "TCP"`,
			},
		},
		{
			name:    "custom resource: a default the object already had",
			first:   `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"d"},"spec":{"size":"m","tls":{}}}`,
			applied: `{"apiVersion":"example.com/v1","kind":"Dial","metadata":{"name":"d"},"spec":{}}`,
			want:    []string{`reset .spec.size "m" unchanged`, `reset .spec.tls {"enabled":true} unchanged`},
		},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			ns := namespace(t)
			apply(t, ns, "ci", s.first, false)
			r := agreeWithServer(t, ns, applyCase{manifest: s.applied, manager: "ci"})
			got := map[string]bool{}
			for _, p := range r.Removed {
				got["removed "+p] = true
			}
			for _, rs := range r.Reset {
				b, _ := json.Marshal(rs.Value)
				line := fmt.Sprintf("reset %s %s", rs.Path, b)
				if rs.Unchanged {
					line += " unchanged"
				}
				got[line] = true
			}
			for _, m := range r.MaybeReset {
				got["maybe "+m.Path] = true
			}
			for _, w := range s.want {
				if !got[w] {
					t.Errorf("the report lacks %q; it says:\n%s", w, strings.Join(sortedKeys(got), "\n"))
				}
			}
		})
	}
	removalCounts.Lock()
	defer removalCounts.Unlock()
	t.Logf("corpus so far: %d removed, %d reset (%d unchanged), %d maybe reset", removalCounts.removed, removalCounts.reset, removalCounts.unchanged, removalCounts.maybe)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The text view says which fields come back, with what, and whether that
// changes them.
func TestExplainConflictDefaultsText(t *testing.T) {
	ns := namespace(t)
	apply(t, ns, "ci", exportedDeployment, false)
	file := filepath.Join(t.TempDir(), "app.yaml")
	writeFile(t, file, trimmedDeployment)
	res := mustSSA(t, 0, "explain-conflict", "-n", ns, "-f", file, "--field-manager", "ci", "--color", "never")
	for _, want := range []string{
		"The apply removes (you owned them alone, no longer set them, and they have no default):\n  .metadata.labels.team\n",
		`  .spec.template.spec.containers[name="side"]` + "\n",
		"The apply resets (you owned them alone and no longer set them; the apiserver sets them again):\n",
		`  .spec.replicas  reset to its default 1 (was 2)` + "\n",
		`  .spec.template.spec.restartPolicy  reset to its default "Always" (unchanged)` + "\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, res.stdout)
		}
	}
}

// dataProbes are objects with most of their optional structure present
// and their defaulted fields left out: created (dry run) on the server,
// they show what its defaulting does, to hold the generated data against.
var dataProbes = []string{
	`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"app":"d"}},"strategy":{},
	  "template":{"metadata":{"labels":{"app":"d"}},"spec":{"securityContext":{"runAsNonRoot":true},
	  "initContainers":[{"name":"init","image":"busybox","resources":{"limits":{"cpu":"1"}}}],
	  "containers":[{"name":"main","image":"nginx:1.27","ports":[{"containerPort":80}],
	    "env":[{"name":"POD","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
	    "livenessProbe":{"httpGet":{"port":80}},"readinessProbe":{"tcpSocket":{"port":80}},"startupProbe":{"exec":{"command":["true"]}},
	    "lifecycle":{"preStop":{"httpGet":{"port":80}}},"volumeMounts":[{"name":"cfg","mountPath":"/cfg"}]},
	    {"name":"side","image":"busybox"}],
	  "volumes":[{"name":"cfg","configMap":{"name":"cfg"}},{"name":"sec","secret":{"secretName":"s"}},{"name":"dapi","downwardAPI":{"items":[{"path":"n","fieldRef":{"fieldPath":"metadata.name"}}]}},
	    {"name":"proj","projected":{"sources":[{"serviceAccountToken":{"path":"t"}}]}},{"name":"empty","emptyDir":{}}]}}}}`,
	`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"s"},"spec":{"selector":{"matchLabels":{"app":"s"}},"serviceName":"s","updateStrategy":{},
	  "template":{"metadata":{"labels":{"app":"s"}},"spec":{"containers":[{"name":"main","image":"nginx"}]}},
	  "volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}}`,
	`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds"},"spec":{"selector":{"matchLabels":{"app":"ds"}},"updateStrategy":{"type":"RollingUpdate"},
	  "template":{"metadata":{"labels":{"app":"ds"}},"spec":{"containers":[{"name":"main","image":"nginx:latest"}]}}}}`,
	`{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"rs"},"spec":{"selector":{"matchLabels":{"app":"rs"}},
	  "template":{"metadata":{"labels":{"app":"rs"}},"spec":{"containers":[{"name":"main","image":"nginx"}]}}}}`,
	`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"suspend":true,"podFailurePolicy":{"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]},
	  "template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox:1"}]}}}}`,
	`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj"},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{
	  "template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"c","image":"busybox"}]}}}}}}`,
	`{"apiVersion":"v1","kind":"Service","metadata":{"name":"svc"},"spec":{"selector":{"app":"x"},"sessionAffinity":"ClientIP","ports":[{"name":"http","port":80},{"name":"udp","port":53,"protocol":"UDP"}]}}`,
	`{"apiVersion":"v1","kind":"Service","metadata":{"name":"lb"},"spec":{"type":"LoadBalancer","selector":{"app":"x"},"ports":[{"port":443}]}}`,
	`{"apiVersion":"v1","kind":"PodTemplate","metadata":{"name":"pt"},"template":{"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":8080}]}]}}}`,
	`{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"rc"},"spec":{"template":{"metadata":{"labels":{"app":"rc"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`,
	`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"sec"},"stringData":{"a":"b"}}`,
	`{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"pvc"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}`,
	`{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"np"},"spec":{"podSelector":{},"egress":[{"ports":[{"port":53}]}],"ingress":[{"ports":[{"port":80}]}]}}`,
	`{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"hpa"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"},"maxReplicas":3,
	  "metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":50}}}]}}`,
	`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"pdb"},"spec":{"selector":{"matchLabels":{"app":"x"}},"minAvailable":1}}`,
	`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"rb"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"Role","name":"r"},"subjects":[{"kind":"User","name":"u"},{"kind":"ServiceAccount","name":"default"}]}`,
	`{"apiVersion":"v1","kind":"LimitRange","metadata":{"name":"lr"},"spec":{"limits":[{"type":"Container","max":{"cpu":"2"}}]}}`,
	`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"vwc-probe"},"webhooks":[{"name":"v.example.com","sideEffects":"None","admissionReviewVersions":["v1"],
	  "clientConfig":{"service":{"namespace":"default","name":"wh"}},"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"]}]}]}`,
	`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration","metadata":{"name":"mwc-probe"},"webhooks":[{"name":"m.example.com","sideEffects":"None","admissionReviewVersions":["v1"],
	  "clientConfig":{"url":"https://example.com/m"},"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"]}]}]}`,
	`{"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":{"name":"sc-probe"},"provisioner":"example.com/p"}`,
	`{"apiVersion":"storage.k8s.io/v1","kind":"CSIDriver","metadata":{"name":"csi.example.com"},"spec":{}}`,
	`{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"pc-probe"},"value":1000}`,
	`{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"PriorityLevelConfiguration","metadata":{"name":"plc-probe"},"spec":{"type":"Limited","limited":{"limitResponse":{"type":"Queue","queuing":{}}}}}`,
	`{"apiVersion":"flowcontrol.apiserver.k8s.io/v1","kind":"FlowSchema","metadata":{"name":"fs-probe"},"spec":{"priorityLevelConfiguration":{"name":"global-default"},
	  "rules":[{"subjects":[{"kind":"Group","group":{"name":"system:authenticated"}}],"resourceRules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"],"namespaces":["*"]}]}]}}`,
	`{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"rq"},"spec":{"hard":{"pods":"10"}}}`,
	`{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","metadata":{"name":"ing"},"spec":{"rules":[{"host":"a.example.com","http":{"paths":[{"path":"/","pathType":"Prefix","backend":{"service":{"name":"svc","port":{"number":80}}}}]}}]}}`,
}

// Fields a create sets that no update or apply does: the server
// allocates or generates them when it creates the object.
var createOnly = map[string]string{
	"v1/Service .spec.clusterIP":                               "allocated on create",
	"v1/Service .spec.clusterIPs":                              "allocated on create",
	"v1/Service .spec.ipFamilies":                              "allocated on create",
	"v1/Service .spec.ipFamilyPolicy":                          "allocated on create",
	"v1/Service .spec.ports[*].nodePort":                       "allocated on create",
	"batch/v1/Job .spec.selector":                              "generated on create",
	"batch/v1/Job .spec.template.metadata.labels":              "generated on create",
	"batch/v1/Job .metadata.labels":                            "copied from the generated template labels on create",
	"v1/PersistentVolumeClaim .spec.storageClassName":          "set by the DefaultStorageClass admission plugin",
	"apps/v1/StatefulSet .spec.volumeClaimTemplates[*].status": "status of a template",
}

// TestDefaultsDataAgreesWithServer creates objects of the common kinds
// (server dry run) with their defaulted fields left out and holds every
// path of the generated data that the object leaves out, under a parent it
// has, against what the server made of it.
func TestDefaultsDataAgreesWithServer(t *testing.T) {
	ns := namespace(t)
	total, agree, depends := 0, 0, 0
	for _, m := range dataProbes {
		u := parse(t, m)
		u.SetNamespace(ns)
		gvk := u.GroupVersionKind()
		t.Run(gvk.Kind+"/"+u.GetName(), func(t *testing.T) {
			out, err := resourceFor(t, u).Create(context.Background(), u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Fatalf("dry-run create: %v", err)
			}
			table, ok := defaults.Builtin(gvk)
			if !ok {
				t.Fatalf("no defaults data for %s", gvk)
			}
			for _, f := range table.Fields() {
				if why := createOnly[defaults.KindKey(gvk)+" "+f.Path]; why != "" {
					continue
				}
				for _, at := range absentUnder(u.Object, defaults.SplitPattern(f.Path)) {
					total++
					ans := f.Answer(at.name, at.ancestors)
					got, present := lookupIndexed(out.Object, at.path)
					present = present && got != nil
					switch {
					case ans.Outcome == defaults.Depends:
						depends++
					case ans.Outcome == defaults.Removed && !present:
						agree++
					case ans.Outcome == defaults.Removed:
						t.Errorf("%s %s: the data says no default, the server sets %s", gvk.Kind, at, jsonText(got))
					case !present:
						t.Errorf("%s %s: the data says %s, the server leaves it out", gvk.Kind, at, jsonText(ans.Value))
					case jsonText(got) != jsonText(ans.Value):
						t.Errorf("%s %s: the data says %s, the server sets %s", gvk.Kind, at, jsonText(ans.Value), jsonText(got))
					default:
						agree++
					}
				}
			}
		})
	}
	t.Logf("%d paths the probes left out: %d agree with the server, %d depend on other fields", total, agree, depends)
	if agree+depends != total {
		t.Errorf("%d paths disagree", total-agree-depends)
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// absentField is a field a probe leaves out under a parent it has.
type absentField struct {
	path      []any // field names and list indexes
	name      string
	ancestors []any
}

func (a absentField) String() string {
	var b strings.Builder
	for _, e := range a.path {
		if i, ok := e.(int); ok {
			fmt.Fprintf(&b, "[%d]", i)
		} else {
			b.WriteString("." + fmt.Sprint(e))
		}
	}
	return b.String()
}

// absentUnder expands a pattern over obj: every concrete place whose
// parent obj has and whose field it lacks. Map keys (*) are not expanded
// at the end (which keys would be a guess).
func absentUnder(obj map[string]any, segs []string) []absentField {
	var out []absentField
	var walk func(cur any, i int, path, anc []any)
	walk = func(cur any, i int, path, anc []any) {
		anc = append(append([]any{}, anc...), cur)
		seg := segs[i]
		last := i == len(segs)-1
		switch seg {
		case "[*]":
			l, _ := cur.([]any)
			for j, it := range l {
				if !last {
					walk(it, i+1, append(append([]any{}, path...), j), anc)
				}
			}
		case "*":
			m, _ := cur.(map[string]any)
			for k, v := range m {
				if !last {
					walk(v, i+1, append(append([]any{}, path...), k), anc)
				}
			}
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return
			}
			v, has := m[seg]
			p := append(append([]any{}, path...), seg)
			switch {
			case last && !has:
				out = append(out, absentField{path: p, name: seg, ancestors: anc})
			case !last && has:
				walk(v, i+1, p, anc)
			}
		}
	}
	walk(obj, 0, nil, nil)
	return out
}

func lookupIndexed(obj any, path []any) (any, bool) {
	cur := obj
	for _, e := range path {
		switch k := e.(type) {
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			cur = l[k]
		default:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[fmt.Sprint(k)]; !ok {
				return nil, false
			}
		}
	}
	return cur, true
}
