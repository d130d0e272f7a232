package diff

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// serviceStrategy does what the apiserver's Service strategy does on an
// update after defaulting (dropTypeDependentFields in
// pkg/registry/core/service/strategy.go of k8s.io/kubernetes): a Service
// switched to a type that no longer needs a field it allocated loses it,
// unless the apply changed that field too.
func serviceStrategy(live, res *unstructured.Unstructured) error {
	if live == nil || res.GetAPIVersion() != "v1" || res.GetKind() != "Service" {
		return nil
	}
	var oldSvc, newSvc corev1.Service
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(live.Object, &oldSvc); err != nil {
		return nil //nolint:nilerr // not a Service this code can read: left as the field manager made it
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(res.Object, &newSvc); err != nil {
		return nil //nolint:nilerr // idem
	}
	o, n := &oldSvc.Spec, &newSvc.Spec
	if o.Type != corev1.ServiceTypeExternalName && n.Type == corev1.ServiceTypeExternalName {
		if o.ClusterIP == n.ClusterIP && reflect.DeepEqual(o.ClusterIPs, n.ClusterIPs) {
			n.ClusterIP, n.ClusterIPs = "", nil
		}
		if reflect.DeepEqual(o.IPFamilies, n.IPFamilies) {
			n.IPFamilies = nil
		}
		if reflect.DeepEqual(o.IPFamilyPolicy, n.IPFamilyPolicy) {
			n.IPFamilyPolicy = nil
		}
	}
	if needsNodePort(o.Type) && !needsNodePort(n.Type) && sameNodePorts(o.Ports, n.Ports) {
		for i := range n.Ports {
			n.Ports[i].NodePort = 0
		}
	}
	needsHC := func(s *corev1.ServiceSpec) bool {
		return s.Type == corev1.ServiceTypeLoadBalancer && s.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
	}
	if needsHC(o) && !needsHC(n) && o.HealthCheckNodePort == n.HealthCheckNodePort {
		n.HealthCheckNodePort = 0
	}
	if o.Type == corev1.ServiceTypeLoadBalancer && n.Type != corev1.ServiceTypeLoadBalancer &&
		n.AllocateLoadBalancerNodePorts != nil && o.AllocateLoadBalancerNodePorts != nil && *o.AllocateLoadBalancerNodePorts == *n.AllocateLoadBalancerNodePorts {
		n.AllocateLoadBalancerNodePorts = nil
	}
	if o.Type == corev1.ServiceTypeLoadBalancer && n.Type != corev1.ServiceTypeLoadBalancer && reflect.DeepEqual(o.LoadBalancerClass, n.LoadBalancerClass) {
		n.LoadBalancerClass = nil
	}
	if externallyAccessible(o) && !externallyAccessible(n) && o.ExternalTrafficPolicy == n.ExternalTrafficPolicy {
		n.ExternalTrafficPolicy = ""
	}
	if n.Type != corev1.ServiceTypeLoadBalancer {
		newSvc.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
	out, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&newSvc)
	if err != nil {
		return err
	}
	res.Object = out
	return nil
}

func needsNodePort(t corev1.ServiceType) bool {
	return t == corev1.ServiceTypeNodePort || t == corev1.ServiceTypeLoadBalancer
}

// sameNodePorts: the new ports add no node port the old ones lacked.
func sameNodePorts(old, cur []corev1.ServicePort) bool {
	had := map[int32]bool{}
	for _, p := range old {
		had[p.NodePort] = true
	}
	for _, p := range cur {
		if p.NodePort != 0 && !had[p.NodePort] {
			return false
		}
	}
	return true
}

func externallyAccessible(s *corev1.ServiceSpec) bool {
	return s.Type == corev1.ServiceTypeLoadBalancer || s.Type == corev1.ServiceTypeNodePort ||
		(s.Type == corev1.ServiceTypeClusterIP && len(s.ExternalIPs) > 0)
}

// allocated are the fields the apiserver fills from its pools when it
// creates an object, which no defaulting knows: a Service's cluster IPs
// and IP families, and the node ports its ports lack.
func allocated(res *unstructured.Unstructured) []fieldpath.Path {
	if res.GetAPIVersion() != "v1" || res.GetKind() != "Service" {
		return nil
	}
	var svc corev1.Service
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(res.Object, &svc); err != nil {
		return nil
	}
	var out []fieldpath.Path
	if svc.Spec.Type != corev1.ServiceTypeExternalName {
		for _, f := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} {
			if _, ok, _ := unstructured.NestedFieldNoCopy(res.Object, "spec", f); !ok {
				out = append(out, fieldpath.MakePathOrDie("spec", f))
			}
		}
	}
	if needsNodePort(svc.Spec.Type) {
		for i, p := range svc.Spec.Ports {
			if p.NodePort == 0 {
				out = append(out, fieldpath.MakePathOrDie("spec", "ports", i, "nodePort"))
			}
		}
	}
	return out
}
