package convert_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/convert"
)

// The expected objects follow the apiserver's conversion code
// (k8s.io/kubernetes/pkg/apis/autoscaling/v1/conversion.go, v1.37.1) line
// by line; test/e2e/hpa_conversion_test.go checks the same conversion
// against a real apiserver's reads at both versions.

// object parses YAML the way the apiserver's JSON decoder does (integers
// stay integers).
func object(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatalf("fixture: %v\n%s", err, s)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatalf("fixture: %v\n%s", err, s)
	}
	return u
}

// typed decodes strictly, so that a typo in a fixture fails the test.
func typed(t *testing.T, s string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(s), into); err != nil {
		t.Fatalf("fixture: %v\n%s", err, s)
	}
}

// check converts in to version and compares the result with want (YAML
// of the target version, decoded into a new object of type into) in the
// form the field manager sees: the typed object's unstructured form, where
// empty omitempty lists are absent. The input must not change.
func check(t *testing.T, in *unstructured.Unstructured, version, want string, into runtime.Object) {
	t.Helper()
	before := in.DeepCopy()
	out, ok, err := convert.ToVersion(in, version)
	if err != nil || !ok {
		t.Fatalf("ToVersion(%s): ok %v, err %v", version, ok, err)
	}
	if got := out.GroupVersionKind(); got != (schema.GroupVersionKind{Group: "autoscaling", Version: version, Kind: "HorizontalPodAutoscaler"}) {
		t.Errorf("converted object is a %s", got)
	}
	typed(t, want, into)
	w, err := runtime.DefaultUnstructuredConverter.ToUnstructured(into)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, out.Object); diff != "" {
		t.Errorf("%s -> %s (-want +got):\n%s", in.GroupVersionKind().Version, version, diff)
	}
	if diff := cmp.Diff(before.Object, in.Object); diff != "" {
		t.Errorf("the input changed (-before +after):\n%s", diff)
	}
}

func v2(body string) string {
	return "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\n" + body
}
func v1(body string) string {
	return "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\n" + body
}

const target = `
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10`

// otherMetrics has a metric of every source and target type but CPU
// utilization (testdata/hpa/metrics.yaml), as the items of spec.metrics.
var otherMetrics = testkit.Nested(testkit.MustReadFixture("hpa/metrics.yaml"), "  ")

const cpu60 = `
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}`

// everyMetric has the CPU utilization metric between the others.
var everyMetric = func() string {
	first, rest, _ := strings.Cut(otherMetrics, "\n  - type: ContainerResource")
	return "\n  metrics:" + first + cpu60 + "\n  - type: ContainerResource" + rest
}()

// everyMetricAnnotation is everyMetric less the CPU utilization metric,
// at v1, as the metrics annotation holds it.
const everyMetricAnnotation = `[` +
	`{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}},` +
	`{"type":"ContainerResource","containerResource":{"name":"cpu","targetAverageUtilization":70,"container":"app"}},` +
	`{"type":"Pods","pods":{"metricName":"packets-per-second","targetAverageValue":"1k","selector":{"matchLabels":{"tier":"web"}}}},` +
	`{"type":"Object","object":{"target":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"metricName":"requests-per-second","targetValue":"10k"}},` +
	`{"type":"Object","object":{"target":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"metricName":"requests-per-pod","targetValue":"0","averageValue":"20"}},` +
	`{"type":"External","external":{"metricName":"queue-messages","metricSelector":{"matchLabels":{"queue":"jobs"}},"targetValue":"30"}},` +
	`{"type":"External","external":{"metricName":"queue-latency","targetAverageValue":"250m"}}]`

const everyStatus = `
status:
  observedGeneration: 3
  lastScaleTime: "2026-01-02T03:04:05Z"
  currentReplicas: 4
  desiredReplicas: 5
  currentMetrics:
  - type: Resource
    resource: {name: cpu, current: {averageUtilization: 40, averageValue: 200m}}
  - type: Resource
    resource: {name: memory, current: {averageValue: 300Mi}}
  - type: ContainerResource
    containerResource: {name: cpu, container: app, current: {averageUtilization: 45, averageValue: 220m}}
  - type: Pods
    pods: {metric: {name: packets-per-second}, current: {averageValue: "900"}}
  - type: Object
    object:
      describedObject: {apiVersion: networking.k8s.io/v1, kind: Ingress, name: main}
      metric: {name: requests-per-second}
      current: {value: 8k}
  - type: External
    external: {metric: {name: queue-messages}, current: {value: "25", averageValue: "5"}}
  conditions:
  - {type: AbleToScale, status: "True", lastTransitionTime: "2026-01-02T03:00:00Z", reason: ReadyForNewScale, message: recommended size matches current size}
  - {type: ScalingActive, status: "False", lastTransitionTime: "2026-01-02T03:01:00Z", reason: FailedGetResourceMetric, observedGeneration: 3}`

const everyStatusCurrentMetricsAnnotation = `[` +
	`{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"200m"}},` +
	`{"type":"Resource","resource":{"name":"memory","currentAverageValue":"300Mi"}},` +
	`{"type":"ContainerResource","containerResource":{"name":"cpu","currentAverageUtilization":45,"currentAverageValue":"220m","container":"app"}},` +
	`{"type":"Pods","pods":{"metricName":"packets-per-second","currentAverageValue":"900"}},` +
	`{"type":"Object","object":{"target":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"metricName":"requests-per-second","currentValue":"8k"}},` +
	`{"type":"External","external":{"metricName":"queue-messages","currentValue":"25","currentAverageValue":"5"}}]`

const everyStatusConditionsAnnotation = `[` +
	`{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-02T03:00:00Z","reason":"ReadyForNewScale","message":"recommended size matches current size"},` +
	`{"type":"ScalingActive","status":"False","lastTransitionTime":"2026-01-02T03:01:00Z","reason":"FailedGetResourceMetric","observedGeneration":3}]`

const behavior = `
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 0
      selectPolicy: Max
      policies:
      - {type: Pods, value: 4, periodSeconds: 15}
      - {type: Percent, value: 100, periodSeconds: 15}
      tolerance: 50m
    scaleDown:
      selectPolicy: Min
      policies: []`

// The behavior annotation holds the internal type, which has no json
// tags: Go field names, nil pointers as null.
const behaviorAnnotation = `{` +
	`"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":"50m"},` +
	`"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Min","Policies":[],"Tolerance":null}}`

func TestHPAToV1(t *testing.T) {
	tests := []struct {
		name string
		in   string // autoscaling/v2
		want string // autoscaling/v1
	}{
		{
			name: "cpu utilization only",
			in: v2(`metadata: {name: web, namespace: shop}
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}`),
			want: v1(`metadata: {name: web, namespace: shop}
spec:` + target + `
  targetCPUUtilizationPercentage: 50`),
		},
		{
			name: "no metrics",
			in:   v2(`metadata: {name: web}` + "\nspec:" + target),
			want: v1(`metadata: {name: web}` + "\nspec:" + target),
		},
		{
			name: "every metric type: CPU utilization to the field, the others to the annotation in order",
			in:   v2(`metadata: {name: web, annotations: {team: a}}` + "\nspec:" + target + everyMetric),
			want: v1(`metadata:
  name: web
  annotations:
    team: a
    autoscaling.alpha.kubernetes.io/metrics: '` + everyMetricAnnotation + `'
spec:` + target + `
  targetCPUUtilizationPercentage: 60`),
		},
		{
			name: "the first CPU utilization target wins and every one is left out of the annotation",
			in: v2(`metadata: {name: web}
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 90, averageValue: "1"}}
  - type: Resource
    resource: {name: cpu, target: {type: AverageValue, averageValue: 500m}}`),
			want: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/metrics: '[{"type":"Resource","resource":{"name":"cpu","targetAverageValue":"500m"}}]'
spec:` + target + `
  targetCPUUtilizationPercentage: 50`),
		},
		{
			name: "behavior",
			in:   v2(`metadata: {name: web}` + "\nspec:" + target + behavior),
			want: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/behavior: '` + behaviorAnnotation + `'
spec:` + target),
		},
		{
			name: "empty behavior is kept",
			in:   v2(`metadata: {name: web}` + "\nspec:" + target + "\n  behavior: {}"),
			want: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/behavior: '{"ScaleUp":null,"ScaleDown":null}'
spec:` + target),
		},
		{
			name: "status: the last CPU utilization to the field, every metric and the conditions to annotations",
			in: v2(`metadata: {name: web}` + "\nspec:" + target + `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}` + strings.Replace(everyStatus, "\n  conditions:", `
  - type: Resource
    resource: {name: cpu, current: {averageUtilization: 41}}
  conditions:`, 1)),
			want: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/current-metrics: '` + everyStatusCurrentMetricsAnnotation[:len(everyStatusCurrentMetricsAnnotation)-1] +
				`,{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":41,"currentAverageValue":"0"}}]'
    autoscaling.alpha.kubernetes.io/conditions: '` + everyStatusConditionsAnnotation + `'
spec:` + target + `
  targetCPUUtilizationPercentage: 50
status:
  observedGeneration: 3
  lastScaleTime: "2026-01-02T03:04:05Z"
  currentReplicas: 4
  desiredReplicas: 5
  currentCPUUtilizationPercentage: 41`),
		},
		{
			name: "round-trip annotations of the v2 object are replaced",
			in: v2(`metadata:
  name: web
  annotations:
    team: a
    autoscaling.alpha.kubernetes.io/metrics: '[{"type":"Pods"}]'
    autoscaling.alpha.kubernetes.io/behavior: '{}'
    autoscaling.alpha.kubernetes.io/current-metrics: '[]'
    autoscaling.alpha.kubernetes.io/conditions: '[]'
    autoscaling.alpha.kubernetes.io/scale-up-tolerance: '1'
    autoscaling.alpha.kubernetes.io/scale-down-tolerance: '1'
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: memory, target: {type: Utilization, averageUtilization: 80}}`),
			want: v1(`metadata:
  name: web
  annotations:
    team: a
    autoscaling.alpha.kubernetes.io/metrics: '[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":80}}]'
spec:` + target),
		},
		{
			name: "only round-trip annotations: none left",
			in: v2(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/conditions: '[]'
spec:` + target),
			want: v1(`metadata: {name: web}` + "\nspec:" + target),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, object(t, tt.in), "v1", tt.want, &autoscalingv1.HorizontalPodAutoscaler{})
		})
	}
}

func TestHPAToV2(t *testing.T) {
	defaultCPU := `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}`
	tests := []struct {
		name string
		in   string // autoscaling/v1
		want string // autoscaling/v2
	}{
		{
			name: "kubectl autoscale --cpu-percent",
			in: v1(`metadata: {name: web, namespace: shop}
spec:` + target + `
  targetCPUUtilizationPercentage: 50`),
			want: v2(`metadata: {name: web, namespace: shop}
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}`),
		},
		{
			name: "no target: the conversion sets the default CPU utilization",
			in:   v1(`metadata: {name: web}` + "\nspec:" + target),
			want: v2(`metadata: {name: web}` + "\nspec:" + target + defaultCPU),
		},
		{
			name: "annotation metrics first, then the CPU target",
			in: v1(`metadata:
  name: web
  annotations:
    team: a
    autoscaling.alpha.kubernetes.io/metrics: '` + everyMetricAnnotation + `'
spec:` + target + `
  targetCPUUtilizationPercentage: 60`),
			want: v2(`metadata:
  name: web
  annotations: {team: a}
spec:` + target + "\n  metrics:" + otherMetrics + cpu60),
		},
		{
			name: "annotation metrics without a CPU target: no default",
			in: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/metrics: '[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":80,"targetAverageValue":"1Gi"}}]'
spec:` + target),
			want: v2(`metadata: {name: web}
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: memory, target: {type: Utilization, averageUtilization: 80, averageValue: 1Gi}}`),
		},
		{
			name: "an object metric with a non-zero value beside its average keeps both",
			in: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/metrics: '[{"type":"Object","object":{"target":{"kind":"Service","name":"s"},"metricName":"m","targetValue":"3","averageValue":"2"}},{"type":"External","external":{"metricName":"e"}}]'
spec:` + target),
			want: v2(`metadata: {name: web}
spec:` + target + `
  metrics:
  - type: Object
    object:
      describedObject: {kind: Service, name: s}
      metric: {name: m}
      target: {type: AverageValue, value: "3", averageValue: "2"}
  - type: External
    external:
      metric: {name: e}
      target: {type: AverageValue}`),
		},
		{
			name: "an empty metrics annotation: the default",
			in: v1(`metadata:
  name: web
  annotations: {autoscaling.alpha.kubernetes.io/metrics: '[]'}
spec:` + target),
			want: v2(`metadata: {name: web}` + "\nspec:" + target + defaultCPU),
		},
		{
			name: "behavior, keys matched case-insensitively",
			in: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/behavior: '` + behaviorAnnotation + `'
spec:` + target + `
  targetCPUUtilizationPercentage: 50`),
			want: v2(`metadata: {name: web}
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}` + behavior),
		},
		{
			name: "behavior written by hand with json tag names",
			in: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/behavior: '{"scaleDown":{"stabilizationWindowSeconds":300}}'
spec:` + target + `
  targetCPUUtilizationPercentage: 50`),
			want: v2(`metadata: {name: web}
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 300}`),
		},
		{
			name: "behavior with neither rule is no behavior",
			in: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/behavior: '{"ScaleUp":null,"ScaleDown":null}'
spec:` + target),
			want: v2(`metadata: {name: web}` + "\nspec:" + target + defaultCPU),
		},
		{
			name: "annotations that don't decode are dropped and ignored",
			in: v1(`metadata:
  name: web
  annotations:
    team: a
    autoscaling.alpha.kubernetes.io/metrics: 'not json'
    autoscaling.alpha.kubernetes.io/behavior: '{"ScaleUp":{"Policies":"x"}}'
    autoscaling.alpha.kubernetes.io/current-metrics: '{'
    autoscaling.alpha.kubernetes.io/conditions: '[{"type":1}]'
    autoscaling.alpha.kubernetes.io/scale-up-tolerance: '0.1'
spec:` + target + `
  targetCPUUtilizationPercentage: 50
status: {currentReplicas: 1, desiredReplicas: 1, currentCPUUtilizationPercentage: 10}`),
			want: v2(`metadata:
  name: web
  annotations: {team: a}
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
status:
  currentReplicas: 1
  desiredReplicas: 1
  currentMetrics:
  - type: Resource
    resource: {name: cpu, current: {averageUtilization: 10}}`),
		},
		{
			name: "status: the annotation's metrics replace the CPU utilization field; conditions",
			in: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/current-metrics: '` + everyStatusCurrentMetricsAnnotation + `'
    autoscaling.alpha.kubernetes.io/conditions: '` + everyStatusConditionsAnnotation + `'
spec:` + target + `
  targetCPUUtilizationPercentage: 50
status:
  observedGeneration: 3
  lastScaleTime: "2026-01-02T03:04:05Z"
  currentReplicas: 4
  desiredReplicas: 5
  currentCPUUtilizationPercentage: 99`),
			want: v2(`metadata: {name: web}
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}` + everyStatus),
		},
		{
			name: "statuses in the annotation fill the v1-only required values",
			in: v1(`metadata:
  name: web
  annotations:
    autoscaling.alpha.kubernetes.io/current-metrics: '[{"type":"Pods","pods":{"metricName":"p"}},{"type":"Object","object":{"target":{"kind":"Service","name":"s"},"metricName":"o"}},{"type":"External","external":{"metricName":"e"}},{"type":"Resource","resource":{"name":"memory"}}]'
    autoscaling.alpha.kubernetes.io/conditions: '[]'
spec:` + target + `
  targetCPUUtilizationPercentage: 50`),
			want: v2(`metadata: {name: web}
spec:` + target + `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
status:
  desiredReplicas: 0
  currentMetrics:
  - type: Pods
    pods: {metric: {name: p}, current: {averageValue: "0"}}
  - type: Object
    object: {describedObject: {kind: Service, name: s}, metric: {name: o}, current: {value: "0"}}
  - type: External
    external: {metric: {name: e}, current: {value: "0"}}
  - type: Resource
    resource: {name: memory, current: {averageValue: "0"}}
  conditions: []`),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, object(t, tt.in), "v2", tt.want, &autoscalingv2.HorizontalPodAutoscaler{})
		})
	}
}

// A v2 object whose CPU utilization target comes last survives the trip
// through v1 unchanged: what the apiserver stores for a v1 client that
// writes back what it read.
func TestHPARoundTrip(t *testing.T) {
	in := object(t, v2(`metadata: {name: web, annotations: {team: a}}`+"\nspec:"+target+`
  metrics:
  - type: Pods
    pods: {metric: {name: p}, target: {type: AverageValue, averageValue: "3"}}
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}`+behavior+everyStatus))
	mid, ok, err := convert.ToVersion(in, "v1")
	if err != nil || !ok {
		t.Fatalf("to v1: %v %v", ok, err)
	}
	want, err := yaml.Marshal(in.Object)
	if err != nil {
		t.Fatal(err)
	}
	check(t, mid, "v2", string(want), &autoscalingv2.HorizontalPodAutoscaler{})
}

func TestToVersion(t *testing.T) {
	hpa := schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}
	for _, c := range []struct {
		gk       schema.GroupKind
		from, to string
		want     bool
	}{
		{hpa, "v1", "v2", true},
		{hpa, "v2", "v1", true},
		{hpa, "v2", "v2", true},
		{hpa, "v2beta2", "v2", false},
		{hpa, "v1", "v2beta1", false},
		{schema.GroupKind{Group: "apps", Kind: "Deployment"}, "v1", "v1beta2", false},
		{schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, "v1", "v2", false},
	} {
		if got := convert.Handles(c.gk, c.from, c.to); got != c.want {
			t.Errorf("Handles(%s, %s, %s) = %v, want %v", c.gk, c.from, c.to, got, c.want)
		}
	}

	in := object(t, v2(`metadata: {name: web}`+"\nspec:"+target))
	same, ok, err := convert.ToVersion(in, "v2")
	if err != nil || !ok {
		t.Fatalf("same version: ok %v err %v", ok, err)
	}
	if diff := cmp.Diff(in.Object, same.Object); diff != "" {
		t.Errorf("same version changed the object (-in +out):\n%s", diff)
	}
	same.SetName("changed")
	if in.GetName() != "web" {
		t.Error("same version returned the input, not a copy")
	}
	if _, ok, err := convert.ToVersion(in, "v2beta2"); ok || err != nil {
		t.Errorf("to an unregistered version: ok %v, err %v", ok, err)
	}
	bad := object(t, v1(`metadata: {name: web}
spec: {maxReplicas: many}`))
	if _, ok, err := convert.ToVersion(bad, "v2"); !ok || err == nil {
		t.Errorf("an object that doesn't decode: ok %v, err %v; want an error", ok, err)
	}
}
