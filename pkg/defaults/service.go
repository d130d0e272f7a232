package defaults

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// DropTypeDependent does to a Service what its storage does on an update
// after defaulting (dropTypeDependentFields in k8s.io/kubernetes
// pkg/registry/core/service/strategy.go): switched to a type that no
// longer needs a field the apiserver allocated, the Service loses it,
// unless the update changed that field too. Like Kept, this is storage
// code the defaults generator can't see; the diff e2e corpus checks it.
func DropTypeDependent(live, result *unstructured.Unstructured) {
	if live == nil || result.GetAPIVersion() != "v1" || result.GetKind() != "Service" {
		return
	}
	o, _ := live.Object["spec"].(map[string]any)
	n, _ := result.Object["spec"].(map[string]any)
	if o == nil || n == nil {
		return
	}
	same := func(f string) bool { return SameJSON(o[f], n[f]) }
	if needsClusterIP(o) && !needsClusterIP(n) {
		if same("clusterIP") && same("clusterIPs") {
			delete(n, "clusterIP")
			delete(n, "clusterIPs")
		}
		for _, f := range []string{"ipFamilies", "ipFamilyPolicy"} {
			if same(f) {
				delete(n, f)
			}
		}
	}
	if usesNodePorts(o) && !usesNodePorts(n) && noNewNodePorts(o, n) {
		ports, _ := n["ports"].([]any)
		for _, p := range ports {
			if m, ok := p.(map[string]any); ok {
				delete(m, "nodePort")
			}
		}
	}
	if needsHCNodePort(o) && !needsHCNodePort(n) && same("healthCheckNodePort") {
		delete(n, "healthCheckNodePort")
	}
	if serviceType(o) == "LoadBalancer" && serviceType(n) != "LoadBalancer" {
		if _, set := n["allocateLoadBalancerNodePorts"]; set && o["allocateLoadBalancerNodePorts"] != nil && same("allocateLoadBalancerNodePorts") {
			delete(n, "allocateLoadBalancerNodePorts")
		}
		if same("loadBalancerClass") {
			delete(n, "loadBalancerClass")
		}
	}
	if externallyAccessible(o) && !externallyAccessible(n) && same("externalTrafficPolicy") {
		delete(n, "externalTrafficPolicy")
	}
	if serviceType(n) != "LoadBalancer" {
		_ = unstructured.SetNestedMap(result.Object, map[string]any{}, "status", "loadBalancer")
	}
}

// usesNodePorts is the strategy's needsNodePort: by type alone.
func usesNodePorts(spec map[string]any) bool {
	t := serviceType(spec)
	return t == "NodePort" || t == "LoadBalancer"
}

// noNewNodePorts: the update adds no node port the old ports lacked
// (sameNodePorts).
func noNewNodePorts(o, n map[string]any) bool {
	had := map[int64]bool{}
	ports, _ := o["ports"].([]any)
	for _, p := range ports {
		m, _ := p.(map[string]any)
		if v, ok := m["nodePort"].(int64); ok {
			had[v] = true
		}
	}
	ports, _ = n["ports"].([]any)
	for _, p := range ports {
		m, _ := p.(map[string]any)
		if v, ok := m["nodePort"].(int64); ok && v != 0 && !had[v] {
			return false
		}
	}
	return true
}

func externallyAccessible(spec map[string]any) bool {
	switch serviceType(spec) {
	case "LoadBalancer", "NodePort":
		return true
	case "ClusterIP":
		ips, _ := spec["externalIPs"].([]any)
		return len(ips) > 0
	}
	return false
}

// Allocated are the fields the apiserver fills from its pools when it
// creates or updates a Service and the object lacks them, which no
// defaulting knows: its cluster IPs and IP families (a Service that
// needs them, created or changed from ExternalName), the node ports of
// its ports (NodePort, or LoadBalancer allocating them: created, changed
// to such a type, or a port added) and its health-check node port
// (LoadBalancer with externalTrafficPolicy Local). obj is the predicted
// object, with what an update keeps of the live one already in it. A
// port is named by its key (port, protocol), as the field manager and
// --verify's comparison name it.
func Allocated(obj *unstructured.Unstructured) []fieldpath.Path {
	if obj.GetAPIVersion() != "v1" || obj.GetKind() != "Service" {
		return nil
	}
	spec, _ := obj.Object["spec"].(map[string]any)
	var out []fieldpath.Path
	if needsClusterIP(spec) {
		for _, f := range []string{"clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"} {
			if _, ok := spec[f]; !ok {
				out = append(out, fieldpath.MakePathOrDie("spec", f))
			}
		}
	}
	if needsNodePort(spec) {
		ports, _ := spec["ports"].([]any)
		for _, p := range ports {
			m, _ := p.(map[string]any)
			if !allocatedPort(m["nodePort"]) {
				out = append(out, fieldpath.MakePathOrDie("spec", "ports", portKey(m), "nodePort"))
			}
		}
	}
	if needsHCNodePort(spec) {
		if !allocatedPort(spec["healthCheckNodePort"]) {
			out = append(out, fieldpath.MakePathOrDie("spec", "healthCheckNodePort"))
		}
	}
	return out
}

// portKey is the key of a Service port: port and protocol (TCP when the
// port leaves it out, as the field manager and the apiserver default it).
func portKey(m map[string]any) *value.FieldList {
	protocol, _ := m["protocol"].(string)
	if protocol == "" {
		protocol = "TCP"
	}
	return fieldpath.KeyByFields("port", m["port"], "protocol", protocol)
}

// allocatedPort tells whether v is a port number (0 asks for one).
func allocatedPort(v any) bool {
	switch n := v.(type) {
	case int64:
		return n != 0
	case float64:
		return n != 0
	}
	return false
}
