package convert

import (
	"encoding/json"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// HorizontalPodAutoscaler, autoscaling/v1 <-> autoscaling/v2.
//
// The apiserver converts through its internal type
// (k8s.io/kubernetes/pkg/apis/autoscaling), which has the shape of v2:
// v2 <-> internal copies every field and drops the round-trip annotations;
// v1 <-> internal is in pkg/apis/autoscaling/v1/conversion.go. This file
// follows that code step by step, with v2 standing in for the internal
// type, so that the result is what the apiserver shows at the other
// version. Where it looks odd (the last CPU status wins, every CPU
// utilization metric is left out of the annotation, decoding errors are
// ignored), that is the apiserver's behaviour, kept on purpose.

// The annotations that carry v2-only fields in v1
// (k8s.io/kubernetes/pkg/apis/autoscaling/annotations.go).
const (
	metricSpecsAnnotation        = "autoscaling.alpha.kubernetes.io/metrics"
	metricStatusesAnnotation     = "autoscaling.alpha.kubernetes.io/current-metrics"
	conditionsAnnotation         = "autoscaling.alpha.kubernetes.io/conditions"
	behaviorSpecsAnnotation      = "autoscaling.alpha.kubernetes.io/behavior"
	toleranceScaleDownAnnotation = "autoscaling.alpha.kubernetes.io/scale-down-tolerance"
	toleranceScaleUpAnnotation   = "autoscaling.alpha.kubernetes.io/scale-up-tolerance"

	// defaultCPUUtilization is what v1 -> internal sets when no metric is
	// given (autoscaling.DefaultCPUUtilization).
	defaultCPUUtilization = 80
)

// internalBehavior is the internal HorizontalPodAutoscalerBehavior, which
// the behavior annotation holds JSON-encoded: the internal types have no
// json tags, so the keys are the Go field names (and decoding matches them
// case-insensitively). Field order is the internal type's.
type internalBehavior struct {
	ScaleUp   *internalScalingRules
	ScaleDown *internalScalingRules
}

type internalScalingRules struct {
	StabilizationWindowSeconds *int32
	SelectPolicy               *autoscalingv2.ScalingPolicySelect
	Policies                   []internalScalingPolicy
	Tolerance                  *resource.Quantity
}

type internalScalingPolicy struct {
	Type          autoscalingv2.HPAScalingPolicyType
	Value         int32
	PeriodSeconds int32
}

func convertHPA(in *unstructured.Unstructured, to string) (*unstructured.Unstructured, error) {
	from := in.GroupVersionKind().Version
	switch {
	case from == "v2" && to == "v1":
		v2 := &autoscalingv2.HorizontalPodAutoscaler{}
		if err := fromUnstructured(in, v2); err != nil {
			return nil, err
		}
		v1, err := hpaV2ToV1(v2)
		if err != nil {
			return nil, err
		}
		return toUnstructured(v1)
	case from == "v1" && to == "v2":
		v1 := &autoscalingv1.HorizontalPodAutoscaler{}
		if err := fromUnstructured(in, v1); err != nil {
			return nil, err
		}
		return toUnstructured(hpaV1ToV2(v1))
	}
	return nil, fmt.Errorf("no conversion from %s to %s", from, to)
}

// dropRoundTrip is DropRoundTripHorizontalPodAutoscalerAnnotations.
func dropRoundTrip(in map[string]string) map[string]string {
	keys := []string{metricSpecsAnnotation, behaviorSpecsAnnotation, toleranceScaleDownAnnotation, toleranceScaleUpAnnotation, metricStatusesAnnotation, conditionsAnnotation}
	found := false
	for _, k := range keys {
		_, ok := in[k]
		found = found || ok
	}
	if !found {
		return in
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func isCPUUtilization(m autoscalingv2.MetricSpec) bool {
	return m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Target.AverageUtilization != nil
}

// hpaV2ToV1 is v2 -> internal -> v1 (Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler).
func hpaV2ToV1(in *autoscalingv2.HorizontalPodAutoscaler) (*autoscalingv1.HorizontalPodAutoscaler, error) {
	out := &autoscalingv1.HorizontalPodAutoscaler{}
	out.APIVersion, out.Kind = autoscalingv1.SchemeGroupVersion.String(), "HorizontalPodAutoscaler"
	out.ObjectMeta = *in.ObjectMeta.DeepCopy()
	out.Annotations = dropRoundTrip(out.Annotations)

	// Spec: the first CPU utilization metric becomes the v1 target.
	out.Spec.ScaleTargetRef = refToV1(in.Spec.ScaleTargetRef)
	out.Spec.MinReplicas = in.Spec.MinReplicas
	out.Spec.MaxReplicas = in.Spec.MaxReplicas
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			out.Spec.TargetCPUUtilizationPercentage = ptr(*m.Resource.Target.AverageUtilization)
			break
		}
	}
	// Status: the last CPU utilization status wins.
	out.Status.ObservedGeneration = in.Status.ObservedGeneration
	out.Status.LastScaleTime = in.Status.LastScaleTime
	out.Status.CurrentReplicas = in.Status.CurrentReplicas
	out.Status.DesiredReplicas = in.Status.DesiredReplicas
	for _, m := range in.Status.CurrentMetrics {
		if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Name == corev1.ResourceCPU && m.Resource.Current.AverageUtilization != nil {
			out.Status.CurrentCPUUtilizationPercentage = ptr(*m.Resource.Current.AverageUtilization)
		}
	}

	otherMetrics := make([]autoscalingv1.MetricSpec, 0, len(in.Spec.Metrics))
	for _, m := range in.Spec.Metrics {
		if isCPUUtilization(m) {
			continue
		}
		otherMetrics = append(otherMetrics, metricSpecToV1(m))
	}
	// Every status is kept, CPU utilization too (for its raw value).
	currentMetrics := make([]autoscalingv1.MetricStatus, len(in.Status.CurrentMetrics))
	for i, m := range in.Status.CurrentMetrics {
		currentMetrics[i] = metricStatusToV1(m)
	}
	conditions := make([]autoscalingv1.HorizontalPodAutoscalerCondition, len(in.Status.Conditions))
	for i, c := range in.Status.Conditions {
		conditions[i] = autoscalingv1.HorizontalPodAutoscalerCondition{
			Type: autoscalingv1.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime,
			Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration,
		}
	}

	set := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[key] = string(b)
		return nil
	}
	if len(otherMetrics) > 0 {
		if err := set(metricSpecsAnnotation, otherMetrics); err != nil {
			return nil, err
		}
	}
	if len(in.Status.CurrentMetrics) > 0 {
		if err := set(metricStatusesAnnotation, currentMetrics); err != nil {
			return nil, err
		}
	}
	if in.Spec.Behavior != nil {
		if err := set(behaviorSpecsAnnotation, behaviorToInternal(in.Spec.Behavior)); err != nil {
			return nil, err
		}
	}
	if len(in.Status.Conditions) > 0 {
		if err := set(conditionsAnnotation, conditions); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hpaV1ToV2 is v1 -> internal -> v2 (Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler).
func hpaV1ToV2(in *autoscalingv1.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	out := &autoscalingv2.HorizontalPodAutoscaler{}
	out.APIVersion, out.Kind = autoscalingv2.SchemeGroupVersion.String(), "HorizontalPodAutoscaler"
	out.ObjectMeta = *in.ObjectMeta.DeepCopy()

	out.Spec.ScaleTargetRef = refToV2(in.Spec.ScaleTargetRef)
	out.Spec.MinReplicas = in.Spec.MinReplicas
	out.Spec.MaxReplicas = in.Spec.MaxReplicas
	if in.Spec.TargetCPUUtilizationPercentage != nil {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(*in.Spec.TargetCPUUtilizationPercentage)}
	}
	out.Status.ObservedGeneration = in.Status.ObservedGeneration
	out.Status.LastScaleTime = in.Status.LastScaleTime
	out.Status.CurrentReplicas = in.Status.CurrentReplicas
	out.Status.DesiredReplicas = in.Status.DesiredReplicas
	if in.Status.CurrentCPUUtilizationPercentage != nil {
		out.Status.CurrentMetrics = []autoscalingv2.MetricStatus{{
			Type:     autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: ptr(*in.Status.CurrentCPUUtilizationPercentage)}},
		}}
	}

	// The annotation's metrics first, then the CPU target of the spec.
	if enc, ok := out.Annotations[metricSpecsAnnotation]; ok {
		var other []autoscalingv1.MetricSpec
		if err := json.Unmarshal([]byte(enc), &other); err == nil {
			metrics := make([]autoscalingv2.MetricSpec, len(other)+len(out.Spec.Metrics))
			for i, m := range other {
				metrics[i] = metricSpecFromV1(m)
			}
			if out.Spec.Metrics != nil {
				metrics[len(other)] = out.Spec.Metrics[0]
			}
			out.Spec.Metrics = metrics
		}
	}
	if enc, ok := out.Annotations[behaviorSpecsAnnotation]; ok {
		var b internalBehavior
		if err := json.Unmarshal([]byte(enc), &b); err == nil && (b.ScaleUp != nil || b.ScaleDown != nil) {
			out.Spec.Behavior = behaviorFromInternal(&b)
		}
	}
	if enc, ok := out.Annotations[metricStatusesAnnotation]; ok {
		var current []autoscalingv1.MetricStatus
		if err := json.Unmarshal([]byte(enc), &current); err == nil {
			out.Status.CurrentMetrics = make([]autoscalingv2.MetricStatus, len(current))
			for i, m := range current {
				out.Status.CurrentMetrics[i] = metricStatusFromV1(m)
			}
		}
	}
	// v1's implicit default, applied by the conversion.
	if len(out.Spec.Metrics) == 0 {
		out.Spec.Metrics = []autoscalingv2.MetricSpec{cpuUtilization(defaultCPUUtilization)}
	}
	if enc, ok := out.Annotations[conditionsAnnotation]; ok {
		var conditions []autoscalingv1.HorizontalPodAutoscalerCondition
		if err := json.Unmarshal([]byte(enc), &conditions); err == nil {
			out.Status.Conditions = make([]autoscalingv2.HorizontalPodAutoscalerCondition, len(conditions))
			for i, c := range conditions {
				out.Status.Conditions[i] = autoscalingv2.HorizontalPodAutoscalerCondition{
					Type: autoscalingv2.HorizontalPodAutoscalerConditionType(c.Type), Status: c.Status, LastTransitionTime: c.LastTransitionTime,
					Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration,
				}
			}
		}
	}
	out.Annotations = dropRoundTrip(out.Annotations)
	return out
}

func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{
			Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(percent),
		}},
	}
}

func metricSpecToV1(in autoscalingv2.MetricSpec) autoscalingv1.MetricSpec {
	out := autoscalingv1.MetricSpec{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		o := &autoscalingv1.ObjectMetricSource{
			Target:       refToV1(s.DescribedObject),
			MetricName:   s.Metric.Name,
			Selector:     s.Metric.Selector,
			AverageValue: s.Target.AverageValue,
		}
		if s.Target.Value != nil {
			o.TargetValue = *s.Target.Value
		}
		out.Object = o
	}
	if s := in.Pods; s != nil {
		p := &autoscalingv1.PodsMetricSource{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Target.AverageValue != nil {
			p.TargetAverageValue = *s.Target.AverageValue
		}
		out.Pods = p
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv1.ResourceMetricSource{Name: s.Name, TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv1.ContainerResourceMetricSource{Name: s.Name, Container: s.Container, TargetAverageUtilization: s.Target.AverageUtilization, TargetAverageValue: s.Target.AverageValue}
	}
	if s := in.External; s != nil {
		out.External = &autoscalingv1.ExternalMetricSource{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector, TargetValue: s.Target.Value, TargetAverageValue: s.Target.AverageValue}
	}
	return out
}

func metricSpecFromV1(in autoscalingv1.MetricSpec) autoscalingv2.MetricSpec {
	out := autoscalingv2.MetricSpec{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		t := autoscalingv2.MetricTarget{AverageValue: s.AverageValue}
		value := s.TargetValue
		if s.AverageValue == nil {
			t.Type, t.Value = autoscalingv2.ValueMetricType, &value
		} else {
			// v1 can't omit targetValue: it is kept only when not zero.
			t.Type = autoscalingv2.AverageValueMetricType
			if !value.IsZero() {
				t.Value = &value
			}
		}
		out.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: refToV2(s.Target),
			Target:          t,
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
		}
	}
	if s := in.Pods; s != nil {
		v := s.TargetAverageValue
		out.Pods = &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: &v},
		}
	}
	if s := in.Resource; s != nil {
		out.Resource = &autoscalingv2.ResourceMetricSource{Name: s.Name, Target: resourceTarget(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := in.ContainerResource; s != nil {
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: s.Name, Container: s.Container, Target: resourceTarget(s.TargetAverageUtilization, s.TargetAverageValue)}
	}
	if s := in.External; s != nil {
		t := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: s.TargetValue, AverageValue: s.TargetAverageValue}
		if s.TargetValue == nil {
			t.Type = autoscalingv2.AverageValueMetricType
		}
		out.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector}, Target: t}
	}
	return out
}

func resourceTarget(utilization *int32, averageValue *resource.Quantity) autoscalingv2.MetricTarget {
	t := autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageValue: averageValue, AverageUtilization: utilization}
	if utilization == nil {
		t.Type = autoscalingv2.AverageValueMetricType
	}
	return t
}

func metricStatusToV1(in autoscalingv2.MetricStatus) autoscalingv1.MetricStatus {
	out := autoscalingv1.MetricStatus{Type: autoscalingv1.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		o := &autoscalingv1.ObjectMetricStatus{
			Target:     refToV1(s.DescribedObject),
			MetricName: s.Metric.Name,
			Selector:   s.Metric.Selector,
		}
		if s.Current.Value != nil {
			o.CurrentValue = *s.Current.Value
		}
		if s.Current.AverageValue != nil {
			o.AverageValue = ptr(*s.Current.AverageValue)
		}
		out.Object = o
	}
	if s := in.Pods; s != nil {
		p := &autoscalingv1.PodsMetricStatus{MetricName: s.Metric.Name, Selector: s.Metric.Selector}
		if s.Current.AverageValue != nil {
			p.CurrentAverageValue = *s.Current.AverageValue
		}
		out.Pods = p
	}
	if s := in.Resource; s != nil {
		r := &autoscalingv1.ResourceMetricStatus{Name: s.Name, CurrentAverageUtilization: s.Current.AverageUtilization}
		if s.Current.AverageValue != nil {
			r.CurrentAverageValue = *s.Current.AverageValue
		}
		out.Resource = r
	}
	if s := in.ContainerResource; s != nil {
		r := &autoscalingv1.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container, CurrentAverageUtilization: s.Current.AverageUtilization}
		if s.Current.AverageValue != nil {
			r.CurrentAverageValue = *s.Current.AverageValue
		}
		out.ContainerResource = r
	}
	if s := in.External; s != nil {
		e := &autoscalingv1.ExternalMetricStatus{MetricName: s.Metric.Name, MetricSelector: s.Metric.Selector, CurrentAverageValue: s.Current.AverageValue}
		if s.Current.Value != nil {
			e.CurrentValue = *s.Current.Value
		}
		out.External = e
	}
	return out
}

func metricStatusFromV1(in autoscalingv1.MetricStatus) autoscalingv2.MetricStatus {
	out := autoscalingv2.MetricStatus{Type: autoscalingv2.MetricSourceType(in.Type)}
	if s := in.Object; s != nil {
		v := s.CurrentValue
		out.Object = &autoscalingv2.ObjectMetricStatus{
			Metric:          autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector},
			Current:         autoscalingv2.MetricValueStatus{Value: &v, AverageValue: s.AverageValue},
			DescribedObject: refToV2(s.Target),
		}
	}
	if s := in.Pods; s != nil {
		v := s.CurrentAverageValue
		out.Pods = &autoscalingv2.PodsMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.Selector}, Current: autoscalingv2.MetricValueStatus{AverageValue: &v}}
	}
	if s := in.Resource; s != nil {
		v := s.CurrentAverageValue
		out.Resource = &autoscalingv2.ResourceMetricStatus{Name: s.Name, Current: autoscalingv2.MetricValueStatus{AverageValue: &v, AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := in.ContainerResource; s != nil {
		v := s.CurrentAverageValue
		out.ContainerResource = &autoscalingv2.ContainerResourceMetricStatus{Name: s.Name, Container: s.Container, Current: autoscalingv2.MetricValueStatus{AverageValue: &v, AverageUtilization: s.CurrentAverageUtilization}}
	}
	if s := in.External; s != nil {
		v := s.CurrentValue
		out.External = &autoscalingv2.ExternalMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: s.MetricName, Selector: s.MetricSelector}, Current: autoscalingv2.MetricValueStatus{Value: &v, AverageValue: s.CurrentAverageValue}}
	}
	return out
}

func behaviorToInternal(in *autoscalingv2.HorizontalPodAutoscalerBehavior) *internalBehavior {
	rules := func(r *autoscalingv2.HPAScalingRules) *internalScalingRules {
		if r == nil {
			return nil
		}
		out := &internalScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		if r.Policies != nil {
			out.Policies = make([]internalScalingPolicy, len(r.Policies))
			for i, p := range r.Policies {
				out.Policies[i] = internalScalingPolicy{Type: p.Type, Value: p.Value, PeriodSeconds: p.PeriodSeconds}
			}
		}
		return out
	}
	return &internalBehavior{ScaleUp: rules(in.ScaleUp), ScaleDown: rules(in.ScaleDown)}
}

func behaviorFromInternal(in *internalBehavior) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	rules := func(r *internalScalingRules) *autoscalingv2.HPAScalingRules {
		if r == nil {
			return nil
		}
		out := &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: r.StabilizationWindowSeconds, SelectPolicy: r.SelectPolicy, Tolerance: r.Tolerance}
		if r.Policies != nil {
			out.Policies = make([]autoscalingv2.HPAScalingPolicy, len(r.Policies))
			for i, p := range r.Policies {
				out.Policies[i] = autoscalingv2.HPAScalingPolicy{Type: p.Type, Value: p.Value, PeriodSeconds: p.PeriodSeconds}
			}
		}
		return out
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(in.ScaleUp), ScaleDown: rules(in.ScaleDown)}
}

// The references are the same struct at both versions (the apiserver
// converts them with an unsafe cast).
func refToV1(r autoscalingv2.CrossVersionObjectReference) autoscalingv1.CrossVersionObjectReference {
	return autoscalingv1.CrossVersionObjectReference(r)
}

func refToV2(r autoscalingv1.CrossVersionObjectReference) autoscalingv2.CrossVersionObjectReference {
	return autoscalingv2.CrossVersionObjectReference(r)
}

func ptr[T any](v T) *T { return &v }
