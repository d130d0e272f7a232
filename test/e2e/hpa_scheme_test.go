package e2e

import (
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	autoscalinginstall "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	api "k8s.io/kubernetes/pkg/apis/core"
	"sigs.k8s.io/randfill"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/convert"
)

// TestHPAConversionMatchesTheScheme compares pkg/convert with the
// apiserver's own conversion code (its scheme, in process) over random
// objects, the way the apiserver's field manager converts: an unstructured
// object through the internal version to the target version. The v1
// objects are the scheme's conversions of random internal objects, so
// their annotations carry what v1 carries, with random annotations beside
// them and, for some, undecodable ones.
func TestHPAConversionMatchesTheScheme(t *testing.T) {
	scheme := runtime.NewScheme()
	autoscalinginstall.Install(scheme)
	codecs := serializer.NewCodecFactory(scheme)
	const n = 3000
	f := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, hpaFuzzerFuncs), rand.NewSource(1), codecs).NilChance(0.3).NumElements(0, 4)
	internalGV := schema.GroupVersion{Group: "autoscaling", Version: runtime.APIVersionInternal}

	// theirs converts as the apiserver's field manager does.
	theirs := func(in *unstructured.Unstructured, to schema.GroupVersion) map[string]any {
		t.Helper()
		internal, err := scheme.ConvertToVersion(in.DeepCopy(), internalGV)
		if err != nil {
			t.Fatal(err)
		}
		out, err := scheme.ConvertToVersion(internal, to)
		if err != nil {
			t.Fatal(err)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(out)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	external := func(in *autoscaling.HorizontalPodAutoscaler, gv schema.GroupVersion) *unstructured.Unstructured {
		t.Helper()
		out, err := scheme.ConvertToVersion(in.DeepCopy(), gv)
		if err != nil {
			t.Fatal(err)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(out)
		if err != nil {
			t.Fatal(err)
		}
		return &unstructured.Unstructured{Object: m}
	}
	undecodable := []string{"not json", "{", `[{"type":1}]`, `{"ScaleUp":{"Policies":"x"}}`, "null", "[]", "{}"}
	keys := []string{"autoscaling.alpha.kubernetes.io/metrics", "autoscaling.alpha.kubernetes.io/current-metrics",
		"autoscaling.alpha.kubernetes.io/conditions", "autoscaling.alpha.kubernetes.io/behavior",
		"autoscaling.alpha.kubernetes.io/scale-up-tolerance", "autoscaling.alpha.kubernetes.io/scale-down-tolerance"}
	r := rand.New(rand.NewSource(2))

	compared, differ := 0, 0
	for i := 0; i < n && differ < 5; i++ {
		obj := &autoscaling.HorizontalPodAutoscaler{}
		f.Fill(obj)
		v2 := external(obj, autoscalingv2.SchemeGroupVersion)
		v1 := external(obj, autoscalingv1.SchemeGroupVersion)
		if i%3 == 0 {
			// Round-trip annotations a client wrote by hand, on either.
			for _, u := range []*unstructured.Unstructured{v1, v2} {
				a := u.GetAnnotations()
				if a == nil {
					a = map[string]string{}
				}
				a[keys[r.Intn(len(keys))]] = undecodable[r.Intn(len(undecodable))]
				u.SetAnnotations(a)
			}
		}
		for _, c := range []struct {
			in *unstructured.Unstructured
			to schema.GroupVersion
		}{{v2, autoscalingv1.SchemeGroupVersion}, {v1, autoscalingv2.SchemeGroupVersion}} {
			want := theirs(c.in, c.to)
			got, ok, err := convert.ToVersion(c.in, c.to.Version)
			if !ok || err != nil {
				t.Fatalf("convert: ok %v, err %v", ok, err)
			}
			compared++
			if diff := cmp.Diff(want, got.Object); diff != "" {
				differ++
				t.Errorf("object %d, %s -> %s (-apiserver +ours):\n%s", i, c.in.GetAPIVersion(), c.to, diff)
			}
		}
	}
	if differ == 0 {
		t.Logf("%d random conversions equal to the apiserver's scheme", compared)
	}
}

// hpaFuzzerFuncs fill metrics with the source types, resource names and
// target types the conversion tells apart, and quantities with valid ones.
func hpaFuzzerFuncs(serializer.CodecFactory) []any {
	sources := []autoscaling.MetricSourceType{autoscaling.ResourceMetricSourceType, autoscaling.ContainerResourceMetricSourceType,
		autoscaling.PodsMetricSourceType, autoscaling.ObjectMetricSourceType, autoscaling.ExternalMetricSourceType}
	targets := []autoscaling.MetricTargetType{autoscaling.UtilizationMetricType, autoscaling.ValueMetricType, autoscaling.AverageValueMetricType}
	names := []api.ResourceName{api.ResourceCPU, api.ResourceCPU, api.ResourceMemory}
	return []any{
		func(q *resource.Quantity, c randfill.Continue) {
			*q = *resource.NewMilliQuantity(c.Int63n(1<<40), []resource.Format{resource.DecimalSI, resource.BinarySI, resource.DecimalExponent}[c.Intn(3)])
		},
		func(m *autoscaling.MetricSpec, c randfill.Continue) {
			c.FillNoCustom(m)
			m.Type = sources[c.Intn(len(sources))]
			if m.Resource != nil {
				m.Resource.Name = names[c.Intn(len(names))]
			}
		},
		func(m *autoscaling.MetricStatus, c randfill.Continue) {
			c.FillNoCustom(m)
			m.Type = sources[c.Intn(len(sources))]
			if m.Resource != nil {
				m.Resource.Name = names[c.Intn(len(names))]
			}
		},
		func(m *autoscaling.MetricTarget, c randfill.Continue) {
			c.FillNoCustom(m)
			m.Type = targets[c.Intn(len(targets))]
		},
		func(p *autoscaling.ScalingPolicySelect, c randfill.Continue) {
			*p = []autoscaling.ScalingPolicySelect{autoscaling.MaxPolicySelect, autoscaling.MinPolicySelect, autoscaling.DisabledPolicySelect}[c.Intn(3)]
		},
	}
}
