package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	krand "k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// fullManifests are full-featured manifests of the kinds users write most:
// most fields a user may set, so that the seeded variants below drop,
// change and add where typical manifests have nothing.
var fullManifests = map[string]string{
	"deploy/full": `apiVersion: apps/v1
kind: Deployment
metadata: {name: full, labels: {rev: '%s', app: full}, annotations: {team: web}}
spec:
  replicas: 0
  revisionHistoryLimit: 3
  progressDeadlineSeconds: 300
  minReadySeconds: 5
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 0}}
  selector: {matchLabels: {app: full}}
  template:
    metadata: {labels: {app: full}, annotations: {prometheus.io/scrape: 'true'}}
    spec:
      serviceAccountName: default
      terminationGracePeriodSeconds: 20
      dnsPolicy: ClusterFirst
      securityContext: {runAsNonRoot: true, runAsUser: 1000, fsGroup: 2000}
      nodeSelector: {kubernetes.io/os: linux}
      tolerations: [{key: example.com/gpu, operator: Exists, effect: NoSchedule}]
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 100
            podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: full}}}
      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: full}}}]
      initContainers:
      - name: init
        image: busybox:1.36
        command: [sh, -c, 'echo init']
      containers:
      - name: app
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        args: [--port=8080]
        ports: [{name: http, containerPort: 8080}, {name: metrics, containerPort: 9090, protocol: TCP}]
        env: [{name: MODE, value: prod}, {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        envFrom: [{configMapRef: {name: settings, optional: true}}]
        resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 500m, memory: 256Mi}}
        readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 5}
        livenessProbe: {tcpSocket: {port: 8080}, initialDelaySeconds: 10}
        securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
        volumeMounts: [{name: cache, mountPath: /cache}, {name: config, mountPath: /etc/app, readOnly: true}]
      - name: sidecar
        image: busybox:1.36
        command: [sleep, infinity]
      volumes:
      - {name: cache, emptyDir: {sizeLimit: 1Gi}}
      - {name: config, configMap: {name: settings, optional: true, items: [{key: app.yaml, path: app.yaml}]}}
`,
	"svc/full": `apiVersion: v1
kind: Service
metadata: {name: full, labels: {rev: '%s'}}
spec:
  type: NodePort
  selector: {app: full}
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 600}}
  externalTrafficPolicy: Local
  publishNotReadyAddresses: true
  ports:
  - {name: http, port: 80, targetPort: http, protocol: TCP}
  - {name: https, port: 443, targetPort: 8443}
  - {name: dns, port: 53, protocol: UDP}
`,
	"job/full": `apiVersion: batch/v1
kind: Job
metadata: {name: full, labels: {rev: '%s'}}
spec:
  backoffLimit: 2
  completions: 3
  parallelism: 1
  activeDeadlineSeconds: 600
  ttlSecondsAfterFinished: 3600
  completionMode: Indexed
  suspend: true
  template:
    metadata: {labels: {app: batch}}
    spec:
      restartPolicy: Never
      containers:
      - name: run
        image: busybox:1.36
        command: [sh, -c, 'echo $JOB_COMPLETION_INDEX']
        resources: {limits: {cpu: 200m}}
`,
	"cronjob/full": `apiVersion: batch/v1
kind: CronJob
metadata: {name: full, labels: {rev: '%s'}}
spec:
  schedule: '*/5 * * * *'
  timeZone: Etc/UTC
  concurrencyPolicy: Forbid
  startingDeadlineSeconds: 60
  successfulJobsHistoryLimit: 1
  failedJobsHistoryLimit: 2
  suspend: true
  jobTemplate:
    metadata: {labels: {app: cron}}
    spec:
      backoffLimit: 1
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: run, image: 'busybox:1.36', args: [date]}]
`,
	"sts/full": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: full, labels: {rev: '%s'}}
spec:
  serviceName: full
  replicas: 0
  podManagementPolicy: Parallel
  updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 0}}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete, whenScaled: Retain}
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: postgres:17
        ports: [{name: pg, containerPort: 5432}]
        volumeMounts: [{name: data, mountPath: /var/lib/postgresql}]
  volumeClaimTemplates:
  - metadata: {name: data, labels: {tier: db}}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
`,
	"ds/full": `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: full, labels: {rev: '%s'}}
spec:
  selector: {matchLabels: {app: agent}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      hostNetwork: true
      priorityClassName: system-node-critical
      tolerations: [{operator: Exists}]
      containers:
      - name: agent
        image: busybox:1.36
        ports: [{containerPort: 9100}]
        volumeMounts: [{name: proc, mountPath: /host/proc, readOnly: true}]
      volumes: [{name: proc, hostPath: {path: /proc, type: Directory}}]
`,
	"ingress/full": `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: full, labels: {rev: '%s'}, annotations: {nginx.ingress.kubernetes.io/rewrite-target: /}}
spec:
  ingressClassName: nginx
  tls: [{hosts: [a.example.com], secretName: a-tls}]
  defaultBackend: {service: {name: web, port: {number: 80}}}
  rules:
  - host: a.example.com
    http:
      paths:
      - {path: /api, pathType: Prefix, backend: {service: {name: api, port: {name: http}}}}
      - {path: /, pathType: ImplementationSpecific, backend: {service: {name: web, port: {number: 80}}}}
`,
	"hpa/full": `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: full, labels: {rev: '%s'}}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: full}
  minReplicas: 1
  maxReplicas: 10
  metrics:
  - {type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}
  - {type: Pods, pods: {metric: {name: rps}, target: {type: AverageValue, averageValue: '100'}}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 120, policies: [{type: Percent, value: 50, periodSeconds: 60}]}
`,
}

// TestDiffSeeded is the differential test of issue 22: for every kind of
// kindManifests, clusterManifests and fullManifests, seeded random
// applies (fields dropped, values changed, list items and labels added,
// by the applier of the object or after a second manager co-owned a
// field or took one over) must get from diff exactly the object the
// server's dry run returns, as checkDiffIn checks. SSA_DIFF_SEED picks
// the seed (1 in CI) and SSA_DIFF_VARIANTS the variants a kind (2).
// Variants the server refuses as invalid are drawn again.
func TestDiffSeeded(t *testing.T) {
	seed, variants := envInt(t, "SSA_DIFF_SEED", 1), envInt(t, "SSA_DIFF_VARIANTS", 2)
	rng := rand.New(rand.NewSource(int64(seed)))
	manifests := map[string]string{}
	for k, m := range kindManifests {
		manifests[k] = m
	}
	for k, m := range fullManifests {
		manifests[k] = m
	}
	for k, m := range clusterManifests {
		manifests[k] = m
	}
	kinds := make([]string, 0, len(manifests))
	for k := range manifests {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	run := strings.ToLower(krand.String(5))
	var compared, refused, unserved int
	for _, kind := range kinds {
		if !served(t, fmt.Sprintf(manifests[kind], "1")) {
			t.Logf("%s: not served by this apiserver", kind)
			unserved++
			continue
		}
		for i := 0; i < variants; i++ {
			name := fmt.Sprintf("seeded-%s-%s-%d", strings.SplitN(kind, "/", 2)[0], run, i)
			base := strings.NewReplacer("@IP@", fmt.Sprintf("10.251.%d.%d", i, 10+rng.Intn(200)), "@CIDR@", fmt.Sprintf("10.%d.%d.0/24", 100+rng.Intn(50), i), "NAME", name).Replace(fmt.Sprintf(manifests[kind], "1"))
			plan := drawPlan(rng)
			t.Run(fmt.Sprintf("%s/%d", kind, i), func(t *testing.T) {
				if runVariant(t, kind, base, plan) {
					compared++
				} else {
					refused++
				}
			})
		}
	}
	t.Logf("seed %d: %d kinds (%d not served), %d variants compared with the server's dry run, %d refused by the server as invalid after every draw", seed, len(kinds)-unserved, unserved, compared, refused)
}

// plan is one variant: what a second manager does first, and the draws
// of the applier's changes (a seed of their own, so that the server's
// refusals do not shift the variants of the kinds after).
type plan struct {
	coOwner  string // "", "shares" a field with the same value, "takes" a field with another value
	draws    int64
	mutation int // how many changes
}

func drawPlan(rng *rand.Rand) plan {
	p := plan{draws: rng.Int63(), mutation: 1 + rng.Intn(3)}
	switch rng.Intn(4) {
	case 0:
		p.coOwner = "shares"
	case 1:
		p.coOwner = "takes"
	}
	return p
}

// runVariant applies base as platform (after a co-owner, per p), then
// compares diff's prediction of a drawn change with the server's dry
// run. It returns false when the server refused every draw as invalid.
func runVariant(t *testing.T, kind, base string, p plan) bool {
	ns := namespace(t)
	base = strings.ReplaceAll(base, nsPlaceholder, ns)
	baseObj := parse(t, base)
	setNamespace(t, baseObj, ns)
	t.Cleanup(func() { deleteObject(baseObj) })
	rng := rand.New(rand.NewSource(p.draws))
	apply(t, ns, "platform", base, false)
	settle(t, baseObj)

	// The second manager's field, as a path of the base manifest.
	var shared []any
	if p.coOwner != "" {
		for try := 0; try < 10 && shared == nil; try++ {
			leaf := randomNode(rng, baseObj.Object, true)
			if leaf == nil {
				break
			}
			co := identityOf(baseObj)
			part := along(baseObj.Object, leaf).(map[string]any)
			if p.coOwner == "takes" {
				v, _ := lookupNode(baseObj.Object, leaf)
				if err := setIn(part, inPart(leaf), changedScalar(rng, v)); err != nil {
					t.Fatal(err)
				}
			}
			merge(co.Object, part)
			if _, err := resourceFor(t, co).Apply(context.Background(), co.GetName(), co, metav1.ApplyOptions{FieldManager: "other", Force: true}); err != nil {
				// Refused (invalid, or not even decoded): draw again.
				t.Logf("apply by other refused: %v", err)
				continue
			}
			shared = leaf
		}
		settle(t, baseObj)
	}

	for try := 0; try < 12; try++ {
		variant := baseObj.DeepCopy()
		for m := 0; m < p.mutation; m++ {
			mutate(rng, variant.Object, shared, m == 0 && p.coOwner == "shares")
		}
		res := resourceFor(t, variant)
		dryRun := func(force bool) error {
			_, err := res.Apply(context.Background(), variant.GetName(), variant, metav1.ApplyOptions{FieldManager: "platform", Force: force, DryRun: []string{metav1.DryRunAll}})
			return err
		}
		err := dryRun(false)
		conflicts := 0
		if apierrors.IsConflict(err) {
			if st, ok := err.(apierrors.APIStatus); ok && st.Status().Details != nil {
				conflicts = len(st.Status().Details.Causes)
			}
			// The conflict comes before validation: the forced apply
			// must be valid too.
			err = dryRun(true)
		}
		if err != nil {
			// Refused (invalid, or not even decoded): draw again.
			t.Logf("variant refused: %v", err)
			continue
		}
		b, err := yaml.Marshal(variant.Object)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("co-owner %q of %v; applied:\n%s", p.coOwner, shared, b)
		checkDiffIn(t, diffCase{name: kind, kind: kindArg(variant), applied: string(b), manager: "platform", code: anyChange, conflicts: conflicts}, ns)
		return true
	}
	return false
}

// kindArg is the resource argument of u for extract.
func kindArg(u *unstructured.Unstructured) string {
	m, err := restMapper().RESTMapping(u.GroupVersionKind().GroupKind(), u.GroupVersionKind().Version)
	if err != nil {
		return strings.ToLower(u.GetKind()) + "/" + u.GetName()
	}
	if m.Resource.Group == "" {
		return m.Resource.Resource + "/" + u.GetName()
	}
	return m.Resource.Resource + "." + m.Resource.Version + "." + m.Resource.Group + "/" + u.GetName()
}

// identityOf is u's apiVersion, kind, name and namespace, and a label of
// the second manager's.
func identityOf(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := &unstructured.Unstructured{}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetName(u.GetName())
	out.SetNamespace(u.GetNamespace())
	out.SetLabels(map[string]string{"other": "1"})
	return out
}

// A node path is a list of map keys (string) and list indices (int).

// protected are the paths no variant touches: the identity.
func protected(path []any) bool {
	if len(path) == 0 {
		return true
	}
	switch path[0] {
	case "apiVersion", "kind":
		return true
	case "metadata":
		return len(path) == 1 || path[1] == "name" || path[1] == "namespace"
	}
	return false
}

// randomNode picks a node of obj (a scalar leaf when leaf), nil when
// there is none.
func randomNode(rng *rand.Rand, obj map[string]any, leaf bool) []any {
	var all [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(t[k], append(append([]any{}, path...), k))
			}
		case []any:
			for i, e := range t {
				walk(e, append(append([]any{}, path...), i))
			}
		}
		_, isMap := v.(map[string]any)
		_, isList := v.([]any)
		if !protected(path) && (!leaf || !isMap && !isList) {
			all = append(all, path)
		}
	}
	walk(obj, nil)
	if len(all) == 0 {
		return nil
	}
	return all[rng.Intn(len(all))]
}

func lookupNode(v any, path []any) (any, bool) {
	for _, s := range path {
		switch k := s.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			v = l[k]
		}
	}
	return v, true
}

// along is the part of v on the way to path: each map with only the key
// on the path, and the list item on it whole (its keys identify it).
func along(v any, path []any) any {
	if len(path) == 0 {
		return runtime.DeepCopyJSONValue(v)
	}
	if k, ok := path[0].(string); ok {
		return map[string]any{k: along(v.(map[string]any)[k], path[1:])}
	}
	return []any{runtime.DeepCopyJSONValue(v.([]any)[path[0].(int)])}
}

// inPart is path in along's part: its first list item is the only one.
func inPart(path []any) []any {
	out := append([]any{}, path...)
	for i, s := range out {
		if isIndex(s) {
			out[i] = 0
			break
		}
	}
	return out
}

// merge puts src's fields into dst, map by map.
func merge(dst, src map[string]any) {
	for k, v := range src {
		sm, isMap := v.(map[string]any)
		if dm, ok := dst[k].(map[string]any); ok && isMap {
			merge(dm, sm)
			continue
		}
		dst[k] = v
	}
}

func isIndex(s any) bool { _, ok := s.(int); return ok }

// setIn sets path below v.
func setIn(v any, path []any, to any) error {
	if len(path) == 0 {
		return nil
	}
	parent, ok := lookupNode(v, path[:len(path)-1])
	if !ok {
		return fmt.Errorf("no parent")
	}
	switch k := path[len(path)-1].(type) {
	case string:
		m, ok := parent.(map[string]any)
		if !ok {
			return fmt.Errorf("not a map")
		}
		m[k] = to
	case int:
		l, ok := parent.([]any)
		if !ok || k >= len(l) {
			return fmt.Errorf("not a list")
		}
		l[k] = to
	}
	return nil
}

// mutate makes one change to obj: drop a node, change a scalar, add a
// list item (a changed copy of one), or add a label. dropShared drops the
// second manager's field.
func mutate(rng *rand.Rand, obj map[string]any, shared []any, dropShared bool) {
	if dropShared && shared != nil {
		removeNode(obj, shared)
		return
	}
	switch rng.Intn(5) {
	case 0, 1:
		if p := randomNode(rng, obj, false); p != nil {
			removeNode(obj, p)
		}
	case 2:
		if p := randomNode(rng, obj, true); p != nil {
			v, _ := lookupNode(obj, p)
			_ = setIn(obj, p, changedScalar(rng, v))
		}
	case 3:
		if p := randomNode(rng, obj, false); p != nil && isIndex(p[len(p)-1]) {
			list, _ := lookupNode(obj, p[:len(p)-1])
			item, _ := lookupNode(obj, p)
			item = runtime.DeepCopyJSONValue(item)
			if leaf := randomNode(rng, map[string]any{"x": item}, true); leaf != nil {
				v, _ := lookupNode(map[string]any{"x": item}, leaf)
				if len(leaf) == 1 {
					item = changedScalar(rng, v)
				} else {
					_ = setIn(item, leaf[1:], changedScalar(rng, v))
				}
			}
			_ = setIn(obj, p[:len(p)-1], append(list.([]any), item))
		}
	default:
		labels, _, _ := unstructured.NestedStringMap(obj, "metadata", "labels")
		if labels == nil {
			labels = map[string]string{}
		}
		labels["v"+strconv.Itoa(rng.Intn(100))] = "x"
		_ = unstructured.SetNestedStringMap(obj, labels, "metadata", "labels")
	}
}

// changedScalar is another value of v's type.
func changedScalar(rng *rand.Rand, v any) any {
	switch t := v.(type) {
	case string:
		return t + string(rune('a'+rng.Intn(26)))
	case int64:
		return t + 1 + int64(rng.Intn(3))
	case float64:
		return t + 1
	case bool:
		return !t
	}
	return v
}

// removeNode deletes path from obj.
func removeNode(obj map[string]any, path []any) {
	parent, ok := lookupNode(obj, path[:len(path)-1])
	if !ok {
		return
	}
	switch k := path[len(path)-1].(type) {
	case string:
		if m, ok := parent.(map[string]any); ok {
			delete(m, k)
		}
	case int:
		if l, ok := parent.([]any); ok && k < len(l) {
			_ = setIn(obj, path[:len(path)-1], append(append([]any{}, l[:k]...), l[k+1:]...))
		}
	}
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s=%q: want a number", name, v)
	}
	return n
}

// notApplied are the resources the test bed serves for create and patch
// that the differential tests leave out, and why.
var notApplied = map[string]string{
	"apiservices.apiregistration.k8s.io":             "registering an API service changes discovery for every test running beside it",
	"podcertificaterequests.certificates.k8s.io":     "needs a running Pod's UID and a proof of possession signed by its key",
	"componentstatuses":                              "read-only",
	"bindings":                                       "create-only subresource-like resource, never applied",
	"tokenreviews.authentication.k8s.io":             "create-only review, never stored",
	"selfsubjectreviews.authentication.k8s.io":       "create-only review, never stored",
	"subjectaccessreviews.authorization.k8s.io":      "create-only review, never stored",
	"localsubjectaccessreviews.authorization.k8s.io": "create-only review, never stored",
}

// TestDiffCoversEveryKind: every resource the apiserver serves for
// create and patch has a manifest in the differential tests (or is in
// notApplied with its reason).
func TestDiffCoversEveryKind(t *testing.T) {
	covered := map[string]bool{}
	for _, set := range []map[string]string{kindManifests, fullManifests, clusterManifests} {
		for _, m := range set {
			u := parse(t, strings.ReplaceAll(fmt.Sprintf(m, "1"), "@IP@", "10.0.0.1"))
			// Any version: an older minor serves some kinds at a beta
			// version only (the tests say so, kind by kind).
			m, err := restMapper().RESTMapping(u.GroupVersionKind().GroupKind())
			if err != nil {
				continue
			}
			covered[m.Resource.GroupResource().String()] = true
		}
	}
	lists, err := env.client.Discovery().ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	served := 0
	for _, l := range lists {
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "create", "patch") {
				continue
			}
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			if err != nil || conflict.IsCustom(gv.WithKind(r.Kind)) {
				continue // the CRDs of other tests
			}
			gr := schema.GroupResource{Group: gv.Group, Resource: r.Name}.String()
			served++
			if !covered[gr] && notApplied[gr] == "" {
				t.Errorf("%s: served for apply, but no differential test has a manifest of it (add one to kindManifests or clusterManifests, or say why not in notApplied)", gr)
			}
		}
	}
	t.Logf("%d resources served for apply: %d with manifests, %d left out with a reason", served, len(covered), served-len(covered))
}

func hasVerbs(verbs []string, want ...string) bool {
	n := 0
	for _, v := range verbs {
		for _, w := range want {
			if v == w {
				n++
			}
		}
	}
	return n == len(want)
}
