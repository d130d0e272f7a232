package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/convert"
)

// HorizontalPodAutoscaler is served at autoscaling/v1 and v2, which differ
// in shape: the apiserver converts (through its internal type, with
// annotations carrying v2-only fields in v1), and its field manager
// compares each manager's fields at the version the manager wrote. These
// tests hold pkg/convert and the prediction to what the apiserver does.
// The test bed runs the HPA controller, which writes status (conditions)
// at v2 on its own: reads are paired by resourceVersion, and predictions
// retaken when it wrote in between.

func hpaStub(ns, name, version string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("autoscaling/" + version)
	u.SetKind("HorizontalPodAutoscaler")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// readBoth reads an HPA at v1 and at v2, at one resourceVersion.
func readBoth(t *testing.T, ns, name string) (v1, v2 *unstructured.Unstructured) {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		v1 = get(t, hpaStub(ns, name, "v1"))
		v2 = get(t, hpaStub(ns, name, "v2"))
		if v1.GetResourceVersion() == v2.GetResourceVersion() {
			return v1, v2
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: no pair of reads at one resourceVersion (the controller keeps writing?)", name)
	return nil, nil
}

// corpusMetrics: the metrics of every source and target type
// (testdata/hpa/metrics.yaml), CPU utilization not first, and a second
// ContainerResource metric (memory, an average value).
var corpusMetrics = func() string {
	metrics := testkit.Nested(testkit.MustReadFixture("hpa/metrics.yaml"), "  ")
	first, rest, _ := strings.Cut(metrics, "\n  - type: ContainerResource")
	cpu := "\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}"
	memory := "\n  - type: ContainerResource\n    containerResource: {name: memory, container: app, target: {type: AverageValue, averageValue: 1Gi}}"
	containerCPU, others, _ := strings.Cut(rest, "\n  - type: Pods")
	return "\n  metrics:" + first + cpu + "\n  - type: ContainerResource" + containerCPU + memory + "\n  - type: Pods" + others
}()

const corpusBehavior = `
  behavior:
    scaleUp:
      stabilizationWindowSeconds: 30
      selectPolicy: Max
      policies:
      - {type: Pods, value: 4, periodSeconds: 15}
      - {type: Percent, value: 100, periodSeconds: 15}
      tolerance: 50m
    scaleDown:
      selectPolicy: Min
      policies:
      - {type: Percent, value: 10, periodSeconds: 60}`

// corpusStatus has a current value of every metric type and conditions.
const corpusStatus = `{"status":{"observedGeneration":1,"lastScaleTime":"2026-01-02T03:04:05Z","currentReplicas":4,"desiredReplicas":5,` +
	`"currentMetrics":[` +
	`{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":40,"averageValue":"200m"}}},` +
	`{"type":"Resource","resource":{"name":"memory","current":{"averageValue":"300Mi"}}},` +
	`{"type":"ContainerResource","containerResource":{"name":"cpu","container":"app","current":{"averageUtilization":45,"averageValue":"220m"}}},` +
	`{"type":"Pods","pods":{"metric":{"name":"packets-per-second"},"current":{"averageValue":"900"}}},` +
	`{"type":"Object","object":{"describedObject":{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","name":"main"},"metric":{"name":"requests-per-second"},"current":{"value":"8k"}}},` +
	`{"type":"Object","object":{"describedObject":{"apiVersion":"networking.k8s.io/v1","kind":"Ingress","name":"main"},"metric":{"name":"requests-per-pod"},"current":{"averageValue":"15"}}},` +
	`{"type":"External","external":{"metric":{"name":"queue-messages"},"current":{"value":"25","averageValue":"5"}}},` +
	`{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":41}}}],` +
	`"conditions":[` +
	`{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-02T03:00:00Z","reason":"ReadyForNewScale","message":"recommended size matches current size"},` +
	`{"type":"ScalingLimited","status":"False","lastTransitionTime":"2026-01-02T03:01:00Z","reason":"DesiredWithinRange","observedGeneration":1}]}}`

// v1Annotations carries v2-only fields in annotations, as a v1 client
// that read them would write them back.
const v1Annotations = `
  annotations:
    team: a
    autoscaling.alpha.kubernetes.io/metrics: '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}},{"type":"ContainerResource","containerResource":{"name":"cpu","targetAverageUtilization":70,"container":"app"}},{"type":"Pods","pods":{"metricName":"pps","targetAverageValue":"1k"}},{"type":"Object","object":{"target":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"metricName":"rps","targetValue":"10k"}},{"type":"Object","object":{"target":{"kind":"Ingress","name":"main","apiVersion":"networking.k8s.io/v1"},"metricName":"rpp","targetValue":"0","averageValue":"20"}},{"type":"External","external":{"metricName":"queue","metricSelector":{"matchLabels":{"queue":"jobs"}},"targetValue":"30"}},{"type":"External","external":{"metricName":"latency","targetAverageValue":"250m"}}]'
    autoscaling.alpha.kubernetes.io/behavior: '{"ScaleUp":{"StabilizationWindowSeconds":30,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}],"Tolerance":"50m"},"ScaleDown":null}'`

func hpaManifest(version, name, metadata, spec string) string {
	return fmt.Sprintf("apiVersion: autoscaling/%s\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: %s%s\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 2\n  maxReplicas: 10%s\n", version, name, metadata, spec)
}

// TestHPAConversionCorpus: HPAs written at either version, with every
// metric type, behavior, annotations and status.
//   - v2 -> v1: the server reads its stored object (v2) at v1 with its
//     conversion, so our conversion of the v2 read must be the v1 read of
//     the same resourceVersion, exactly.
//   - v1 -> v2: v1 -> v2 is not the inverse of v2 -> v1 (CPU utilization
//     moves last, v1's required values come back as zeros), so the server
//     has to convert a v1 object itself: the v1 read is written back at v1
//     (spec with a PUT, status with a PUT to /status) and read at v2 as of
//     that write; our conversion of the v1 read must be that, metadata
//     bookkeeping aside (resourceVersion, generation, managedFields).
func TestHPAConversionCorpus(t *testing.T) {
	ns := namespace(t)
	corpus := []struct {
		name, version, manifest string
		// status is a merge patch to the status subresource at statusVersion.
		status, statusVersion string
	}{
		{name: "v1-cpu", version: "v1", manifest: hpaManifest("v1", "v1-cpu", "", "\n  targetCPUUtilizationPercentage: 50")},
		{name: "v1-default", version: "v1", manifest: hpaManifest("v1", "v1-default", "", "")},
		{name: "v1-annotations", version: "v1", manifest: hpaManifest("v1", "v1-annotations", v1Annotations, "\n  targetCPUUtilizationPercentage: 60")},
		{name: "v1-annotations-no-cpu", version: "v1", manifest: hpaManifest("v1", "v1-annotations-no-cpu", v1Annotations, "")},
		{name: "v1-bad-annotations", version: "v1", manifest: hpaManifest("v1", "v1-bad-annotations", `
  annotations:
    autoscaling.alpha.kubernetes.io/metrics: 'not json'
    autoscaling.alpha.kubernetes.io/behavior: '{"ScaleUp":null,"ScaleDown":null}'`, "")},
		{name: "v1-status", version: "v1", manifest: hpaManifest("v1", "v1-status", "", "\n  targetCPUUtilizationPercentage: 50"),
			status: `{"status":{"currentReplicas":2,"desiredReplicas":3,"currentCPUUtilizationPercentage":35}}`, statusVersion: "v1"},
		{name: "v2-every-metric", version: "v2", manifest: hpaManifest("v2", "v2-every-metric", "\n  annotations: {team: a}", corpusMetrics+corpusBehavior),
			status: corpusStatus, statusVersion: "v2"},
		{name: "v2-no-cpu", version: "v2", manifest: hpaManifest("v2", "v2-no-cpu", "", `
  metrics:
  - type: Pods
    pods: {metric: {name: pps}, target: {type: AverageValue, averageValue: "3"}}`),
			status: corpusStatus, statusVersion: "v2"},
		{name: "v2-two-cpu", version: "v2", manifest: hpaManifest("v2", "v2-two-cpu", "", `
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}
  - type: Resource
    resource: {name: cpu, target: {type: AverageValue, averageValue: 500m}}
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 90}}`)},
		{name: "v2-defaults", version: "v2", manifest: hpaManifest("v2", "v2-defaults", "", "\n  behavior: {scaleDown: {stabilizationWindowSeconds: 60}}")},
		{name: "v2-round-trip-annotations", version: "v2", manifest: hpaManifest("v2", "v2-round-trip-annotations", `
  annotations:
    autoscaling.alpha.kubernetes.io/metrics: '[]'
    autoscaling.alpha.kubernetes.io/conditions: '[]'
    other: x`, "")},
	}
	compared := 0
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			obj := apply(t, ns, "writer", c.manifest, false)
			if c.status != "" {
				patch(t, hpaStub(ns, obj.GetName(), c.statusVersion), "status-writer", c.status, "status")
				v1, v2 := readBoth(t, ns, c.name)
				if _, found, _ := unstructured.NestedSlice(v2.Object, "status", "currentMetrics"); !found {
					t.Errorf("the status written is not in the read: %v", v1.Object["status"])
				}
			}
			compared += checkToV1(t, ns, c.name)
			compared += checkToV2(t, ns, c.name)
			// The object as the v1 write-back left it, read at both versions.
			compared += checkToV1(t, ns, c.name)
		})
	}
	t.Logf("conversion corpus: %d objects, %d conversions equal to the server's", len(corpus), compared)
}

// checkToV1 compares our conversion of the v2 read with the v1 read.
func checkToV1(t *testing.T, ns, name string) int {
	t.Helper()
	v1, v2 := readBoth(t, ns, name)
	got, ok, err := convert.ToVersion(v2, "v1")
	if !ok || err != nil {
		t.Fatalf("convert: ok %v, err %v", ok, err)
	}
	if diff := cmp.Diff(v1.Object, got.Object); diff != "" {
		t.Errorf("v2 -> v1: our conversion of the server's v2 read differs from its v1 read (-server +ours):\n%s", diff)
		return 0
	}
	return 1
}

// checkToV2 writes the v1 read back at v1 and compares the server's v2
// view of that write with our conversion of the v1 read.
func checkToV2(t *testing.T, ns, name string) int {
	t.Helper()
	ctx := context.Background()
	for attempt := 0; attempt < 10; attempt++ {
		v1 := get(t, hpaStub(ns, name, "v1"))
		want, ok, err := convert.ToVersion(v1, "v2")
		if !ok || err != nil {
			t.Fatalf("convert: ok %v, err %v", ok, err)
		}
		res := resourceFor(t, v1)
		out, err := res.Update(ctx, v1.DeepCopy(), metav1.UpdateOptions{FieldManager: "v1-writer"})
		if apierrors.IsConflict(err) {
			continue // the controller wrote status in between
		}
		if err != nil {
			t.Fatalf("writing the v1 read back: %v", err)
		}
		back := v1.DeepCopy()
		back.SetResourceVersion(out.GetResourceVersion())
		out, err = res.UpdateStatus(ctx, back, metav1.UpdateOptions{FieldManager: "v1-writer"})
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			t.Fatalf("writing the v1 read's status back: %v", err)
		}
		list, err := resourceFor(t, hpaStub(ns, name, "v2")).List(ctx, metav1.ListOptions{
			FieldSelector: "metadata.name=" + name, ResourceVersion: out.GetResourceVersion(), ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("reading the write back at v2: %v (%d items)", err, len(list.Items))
		}
		got := list.Items[0]
		for _, u := range []*unstructured.Unstructured{want, &got} {
			unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
			unstructured.RemoveNestedField(u.Object, "metadata", "generation")
			unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		}
		if diff := cmp.Diff(got.Object, want.Object); diff != "" {
			t.Errorf("v1 -> v2: our conversion of the server's v1 read differs from what the server made of it (-server +ours):\n%s", diff)
			return 0
		}
		return 1
	}
	t.Fatalf("%s: the controller kept writing during the write-back", name)
	return 0
}

// kubectlAutoscaleV1 is the object kubectl autoscale creates when it falls
// back to autoscaling/v1 (createHorizontalPodAutoscalerV1 in
// k8s.io/kubectl/pkg/cmd/autoscale), created the way it does.
func kubectlAutoscaleV1(t *testing.T, ns string, min, max, cpu int32) {
	t.Helper()
	hpa := &autoscalingv1.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: autoscalingv1.HorizontalPodAutoscalerSpec{
			ScaleTargetRef:                 autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MaxReplicas:                    max,
			MinReplicas:                    &min,
			TargetCPUUtilizationPercentage: &cpu,
		},
	}
	if _, err := env.client.AutoscalingV1().HorizontalPodAutoscalers(ns).Create(context.Background(), hpa, metav1.CreateOptions{FieldManager: "kubectl-autoscale"}); err != nil {
		t.Fatal(err)
	}
}

// kubectlAutoscaleV2 is what kubectl autoscale creates at autoscaling/v2
// (createHorizontalPodAutoscalerV2), with --cpu 60% --memory 500Mi.
func kubectlAutoscaleV2(t *testing.T, ns string) {
	t.Helper()
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To[int32](1),
			MaxReplicas:    5,
			Metrics: []autoscalingv2.MetricSpec{
				{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}}},
			},
		},
	}
	if _, err := env.client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(context.Background(), hpa, metav1.CreateOptions{FieldManager: "kubectl-autoscale"}); err != nil {
		t.Fatal(err)
	}
}

// updateAt reads the HPA at version, changes it and writes it back (a PUT
// at that version) as manager.
func updateAt(t *testing.T, ns, version, manager string, change func(u *unstructured.Unstructured)) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		u := get(t, hpaStub(ns, "web", version))
		change(u)
		_, err := resourceFor(t, u).Update(context.Background(), u, metav1.UpdateOptions{FieldManager: manager})
		if err == nil {
			return
		}
		if attempt == 5 {
			t.Fatalf("update at %s by %s: %v", version, manager, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func setAnnotation(key, value string) func(u *unstructured.Unstructured) {
	return func(u *unstructured.Unstructured) {
		a := u.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		a[key] = value
		u.SetAnnotations(a)
	}
}

// TestHPAApplyAcrossVersions: managers at one version, an apply at the
// other, forced and not; the prediction (conflicts and message, or the
// resulting managedFields) must be what the server's dry run answers.
func TestHPAApplyAcrossVersions(t *testing.T) {
	cpu := func(p int) string {
		return fmt.Sprintf("\n  - type: Resource\n    resource: {name: cpu, target: {type: Utilization, averageUtilization: %d}}", p)
	}
	memory := "\n  - type: Resource\n    resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}"
	v2 := func(max int, metrics, extra string) string {
		return fmt.Sprintf("apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  minReplicas: 1\n  maxReplicas: %d\n  metrics:%s%s\n", max, metrics, extra)
	}
	v1 := func(max, cpu int, extra string) string {
		return fmt.Sprintf("apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata: {name: web%s}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: %d\n  targetCPUUtilizationPercentage: %d\n", extra, max, cpu)
	}
	autoscaledV1 := func(t *testing.T, ns string) { kubectlAutoscaleV1(t, ns, 1, 3, 80) }
	platformV2 := func(t *testing.T, ns string) { apply(t, ns, "platform", v2(5, cpu(50)+memory, ""), false) }
	legacyV1Annotation := func(t *testing.T, ns string) {
		u := apply(t, ns, "legacy", v1(5, 50, `, annotations: {`+metricsAnnotation+`: '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"500Mi"}}]'}`), false)
		if !owns(u.GetManagedFields(), "legacy", metricsAnnotation) {
			t.Fatalf("setup: legacy does not own the metrics annotation: %+v", u.GetManagedFields())
		}
	}
	behavior := func(window int) string {
		return fmt.Sprintf("\n  behavior:\n    scaleDown: {stabilizationWindowSeconds: %d}", window)
	}

	// (No commas in the names: they end up in the manifest's path, and -f
	// splits its value on commas, as kubectl's does.)
	scenarios := []struct {
		name  string
		setup func(t *testing.T, ns string)
		apply applyCase
		// conflicts are the expected "path by manager" of the unforced apply
		conflicts []string
		check     func(t *testing.T, r conflictReport)
	}{
		{
			name:  "kubectl autoscale v1 then v2 apply of maxReplicas",
			setup: autoscaledV1, apply: applyCase{manifest: v2(4, cpu(80), ""), manager: "kubectl"},
			conflicts: []string{".spec.maxReplicas by kubectl-autoscale"},
		},
		{
			name:  "kubectl autoscale v1 then v2 apply of maxReplicas and the CPU target",
			setup: autoscaledV1, apply: applyCase{manifest: v2(4, cpu(60), ""), manager: "kubectl"},
			conflicts: []string{".spec.maxReplicas by kubectl-autoscale", ".spec.targetCPUUtilizationPercentage by kubectl-autoscale"},
		},
		{
			name:  "kubectl autoscale v1 then forced v2 apply",
			setup: autoscaledV1, apply: applyCase{manifest: v2(4, cpu(60), ""), manager: "kubectl", force: true},
		},
		{
			name:  "kubectl autoscale v1 then v2 apply of the same values and another metric",
			setup: autoscaledV1, apply: applyCase{manifest: v2(3, cpu(80)+memory, ""), manager: "kubectl"},
		},
		{
			name:  "kubectl autoscale v1 then v2 apply of another metric only: the CPU target is dropped at v1",
			setup: autoscaledV1, apply: applyCase{manifest: v2(3, memory, ""), manager: "kubectl"},
		},
		{
			name:  "kubectl autoscale v2 then v1 apply of another CPU target",
			setup: kubectlAutoscaleV2, apply: applyCase{manifest: v1(5, 70, ""), manager: "legacy"},
			conflicts: []string{".spec.metrics by kubectl-autoscale"},
		},
		{
			name:  "kubectl autoscale v2 then forced v1 apply",
			setup: kubectlAutoscaleV2, apply: applyCase{manifest: v1(5, 70, ""), manager: "legacy", force: true},
		},
		{
			name:  "v2 applier then v1 apply of the same values",
			setup: platformV2, apply: applyCase{manifest: v1(5, 50, ""), manager: "legacy"},
		},
		{
			name:  "v2 applier then v1 apply of another CPU target and maxReplicas",
			setup: platformV2, apply: applyCase{manifest: v1(6, 70, ""), manager: "legacy"},
			conflicts: []string{".spec.maxReplicas by platform", ".spec.metrics by platform"},
		},
		{
			name:  "v2 applier then forced v1 apply",
			setup: platformV2, apply: applyCase{manifest: v1(6, 70, ""), manager: "legacy", force: true},
		},
		{
			name: "v1 update of maxReplicas then v2 apply",
			setup: func(t *testing.T, ns string) {
				platformV2(t, ns)
				updateAt(t, ns, "v1", "hpa-editor", func(u *unstructured.Unstructured) {
					_ = unstructured.SetNestedField(u.Object, int64(8), "spec", "maxReplicas")
				})
			},
			apply:     applyCase{manifest: v2(5, cpu(50)+memory, ""), manager: "platform"},
			conflicts: []string{".spec.maxReplicas by hpa-editor"},
		},
		{
			name: "v1 update of the behavior annotation then v2 apply of another behavior",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "platform", v2(5, cpu(50), behavior(60)), false)
				updateAt(t, ns, "v1", "hpa-editor", setAnnotation("autoscaling.alpha.kubernetes.io/behavior", `{"ScaleDown":{"StabilizationWindowSeconds":120,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}]}}`))
			},
			apply:     applyCase{manifest: v2(5, cpu(50), behavior(30)), manager: "platform"},
			conflicts: []string{".metadata.annotations.autoscaling.alpha.kubernetes.io/behavior by hpa-editor"},
		},
		{
			name: "v1 update of the behavior annotation then forced v2 apply",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "platform", v2(5, cpu(50), behavior(60)), false)
				updateAt(t, ns, "v1", "hpa-editor", setAnnotation("autoscaling.alpha.kubernetes.io/behavior", `{"ScaleDown":{"StabilizationWindowSeconds":120,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}]}}`))
			},
			apply: applyCase{manifest: v2(5, cpu(50), behavior(30)), manager: "platform", force: true},
		},
		{
			// The v1 applier owns the annotation; at v1 the apply removes
			// it (the memory metric goes), which is no conflict: the owner
			// just loses it.
			name:  "v1 applier of the metrics annotation then v2 apply without that metric",
			setup: legacyV1Annotation,
			apply: applyCase{manifest: v2(5, cpu(50), ""), manager: "platform"},
			check: func(t *testing.T, r conflictReport) {
				if owns(r.ManagedFields, "legacy", metricsAnnotation) {
					t.Errorf("legacy still owns the metrics annotation: %+v", r.ManagedFields)
				}
			},
		},
		{
			name:      "v1 applier of the metrics annotation then v2 apply of another CPU target",
			setup:     legacyV1Annotation,
			apply:     applyCase{manifest: v2(5, memory+cpu(60), ""), manager: "platform"},
			conflicts: []string{".spec.targetCPUUtilizationPercentage by legacy"},
		},
		{
			name:  "v1 applier of the metrics annotation then forced v2 apply of another CPU target",
			setup: legacyV1Annotation,
			apply: applyCase{manifest: v2(5, memory+cpu(60), ""), manager: "platform", force: true},
			check: func(t *testing.T, r conflictReport) {
				if !owns(r.ManagedFields, "legacy", metricsAnnotation) {
					t.Errorf("legacy lost the metrics annotation the apply left alone: %+v", r.ManagedFields)
				}
			},
		},
		{
			name: "an applier moves from v1 to v2 and drops fields",
			setup: func(t *testing.T, ns string) {
				apply(t, ns, "platform", v1(5, 50, ""), false)
				kubectlAutoscaleV1Edit(t, ns)
			},
			apply: applyCase{manifest: "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: web}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 5\n  metrics:" + memory + "\n", manager: "platform"},
		},
		{
			name: "a v2 applier with a v1 applier of the same values drops the CPU metric",
			setup: func(t *testing.T, ns string) {
				platformV2(t, ns)
				apply(t, ns, "legacy", v1(5, 50, ""), false)
			},
			apply: applyCase{manifest: v2(5, memory, ""), manager: "platform"},
		},
	}
	agreed := 0
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			ns := namespace(t)
			s.setup(t, ns)
			r := agreeWithServer(t, ns, s.apply)
			var got []string
			for _, c := range r.Conflicts {
				got = append(got, c.Path+" by "+c.Manager)
			}
			if !s.apply.force {
				if diff := cmp.Diff(s.conflicts, got); diff != "" {
					t.Errorf("conflicts (-want +got):\n%s", diff)
				}
			} else if len(got) == 0 {
				t.Errorf("a forced apply that takes nothing: the scenario tests nothing")
			}
			if s.check != nil {
				s.check(t, r)
			}
			if !t.Failed() {
				agreed++
			}
			b, _ := json.Marshal(r.ManagedFields)
			t.Logf("conflicts %v; managedFields %s", got, b)
		})
	}
	t.Logf("apply corpus: %d of %d scenarios agree with the server's dry run", agreed, len(scenarios))
}

const metricsAnnotation = "autoscaling.alpha.kubernetes.io/metrics"

// owns tells whether manager's entry holds a field (an annotation, say) of that name.
func owns(entries []metav1.ManagedFieldsEntry, manager, annotation string) bool {
	for _, e := range entries {
		if e.Manager == manager && e.FieldsV1 != nil && strings.Contains(string(e.FieldsV1.GetRawBytes()), `"f:`+annotation+`"`) {
			return true
		}
	}
	return false
}

// kubectlAutoscaleV1Edit makes kubectl-autoscale a v1 writer of
// minReplicas beside an applier.
func kubectlAutoscaleV1Edit(t *testing.T, ns string) {
	t.Helper()
	updateAt(t, ns, "v1", "kubectl-autoscale", func(u *unstructured.Unstructured) {
		_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "minReplicas")
	})
}
