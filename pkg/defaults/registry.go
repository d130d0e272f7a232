package defaults

import (
	"bytes"
	"encoding/json"
	"net"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Kept tells whether the apiserver's storage of a built-in kind keeps a
// field's live value when an update leaves it out, and that value. These
// are values the apiserver allocated (a Service's cluster IPs and node
// ports): its storage copies them from the stored object before it
// validates, so an apply that stops setting them leaves them as they are.
// This is the storage's code (k8s.io/kubernetes pkg/registry), not
// defaulting: the generator can't see it, the e2e corpus checks it.
// known is false when the field is kept but its value can't be told here.
func Kept(gvk schema.GroupVersionKind, p fieldpath.Path, live, result map[string]any) (v any, kept, known bool) {
	if gvk == (schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "DaemonSet"}) {
		return keptTemplateGeneration(p, live, result)
	}
	if gvk != (schema.GroupVersionKind{Version: "v1", Kind: "Service"}) || len(p) < 2 || !isField(p[0], "spec") {
		return nil, false, true
	}
	oldSpec, _ := live["spec"].(map[string]any)
	newSpec, _ := result["spec"].(map[string]any)
	switch {
	case len(p) == 2 && (isField(p[1], "clusterIP") || isField(p[1], "clusterIPs")):
		// patchAllocatedValues
		if !needsClusterIP(oldSpec) || !needsClusterIP(newSpec) {
			return nil, false, true
		}
		v, ok := oldSpec[*p[1].FieldName]
		return v, ok, true
	case len(p) == 2 && isField(p[1], "ipFamilyPolicy"):
		// initIPFamilyFields: an update without a policy adopts the old one.
		v, ok := oldSpec["ipFamilyPolicy"]
		return v, ok, true
	case len(p) == 2 && isField(p[1], "ipFamilies"):
		// initIPFamilyFields infers the families of the (kept) cluster IPs.
		if !needsClusterIP(oldSpec) || !needsClusterIP(newSpec) {
			return nil, false, true
		}
		ips, _ := newSpec["clusterIPs"].([]any)
		if _, set := newSpec["clusterIPs"]; !set {
			ips, _ = oldSpec["clusterIPs"].([]any)
		}
		var families []any
		for _, ip := range ips {
			s, _ := ip.(string)
			parsed := net.ParseIP(s)
			if parsed == nil {
				// Headless or not allocated: the cluster's default family.
				return nil, true, false
			}
			if parsed.To4() != nil {
				families = append(families, "IPv4")
			} else {
				families = append(families, "IPv6")
			}
		}
		if len(families) == 0 {
			return nil, true, false
		}
		return families, true, true
	case len(p) == 2 && isField(p[1], "healthCheckNodePort"):
		if !needsHCNodePort(oldSpec) || !needsHCNodePort(newSpec) {
			return nil, false, true
		}
		v, ok := oldSpec["healthCheckNodePort"]
		return v, ok, true
	case len(p) == 4 && isField(p[1], "ports") && p[2].FieldName == nil && isField(p[3], "nodePort"):
		return keptNodePort(oldSpec, newSpec, p)
	}
	return nil, false, true
}

// templateGenerationAnnotation is how apps/v1 shows a DaemonSet's
// templateGeneration, which the storage keeps and bumps when the template
// changes.
const templateGenerationAnnotation = "deprecated.daemonset.template.generation"

func keptTemplateGeneration(p fieldpath.Path, live, result map[string]any) (any, bool, bool) {
	if len(p) != 3 || !isField(p[0], "metadata") || !isField(p[1], "annotations") || !isField(p[2], templateGenerationAnnotation) {
		return nil, false, true
	}
	md, _ := live["metadata"].(map[string]any)
	annotations, _ := md["annotations"].(map[string]any)
	v, ok := annotations[templateGenerationAnnotation]
	if !ok {
		return nil, false, true
	}
	oldSpec, _ := live["spec"].(map[string]any)
	newSpec, _ := result["spec"].(map[string]any)
	if !SameJSON(oldSpec["template"], newSpec["template"]) {
		return nil, true, false // bumped if the defaulted template differs
	}
	return v, true, true
}

// keptNodePort follows patchAllocatedValues: a port without a node port
// gets the old one of the port of the same name, unless another port
// uses it before and after.
func keptNodePort(oldSpec, newSpec map[string]any, p fieldpath.Path) (any, bool, bool) {
	if !needsNodePort(oldSpec) || !needsNodePort(newSpec) {
		return nil, false, true
	}
	oldPorts, _ := oldSpec["ports"].([]any)
	newPorts, _ := newSpec["ports"].([]any)
	var port map[string]any
	for _, it := range newPorts {
		m, _ := it.(map[string]any)
		if matchesKey(m, p[2]) {
			port = m
		}
	}
	if port == nil {
		return nil, false, true
	}
	used := func(ports []any) map[int64]bool {
		out := map[int64]bool{}
		for _, it := range ports {
			m, _ := it.(map[string]any)
			if n, ok := m["nodePort"].(int64); ok && n != 0 {
				out[n] = true
			}
		}
		return out
	}
	before, after := used(oldPorts), used(newPorts)
	for _, it := range oldPorts {
		m, _ := it.(map[string]any)
		if m["name"] != port["name"] {
			continue
		}
		n, ok := m["nodePort"].(int64)
		if !ok || n == 0 || before[n] && after[n] {
			return nil, false, true
		}
		return n, true, true
	}
	return nil, false, true
}

func matchesKey(item map[string]any, pe fieldpath.PathElement) bool {
	if pe.Key == nil || item == nil {
		return false
	}
	for _, f := range *pe.Key {
		v, ok := item[f.Name]
		if !ok || !value.Equals(f.Value, value.NewValueInterface(v)) {
			return false
		}
	}
	return true
}

func isField(pe fieldpath.PathElement, name string) bool {
	return pe.FieldName != nil && *pe.FieldName == name
}

func serviceType(spec map[string]any) string {
	t, _ := spec["type"].(string)
	if t == "" {
		return "ClusterIP"
	}
	return t
}

func needsClusterIP(spec map[string]any) bool {
	return serviceType(spec) != "ExternalName"
}

func needsNodePort(spec map[string]any) bool {
	switch serviceType(spec) {
	case "NodePort":
		return true
	case "LoadBalancer":
		alloc, ok := spec["allocateLoadBalancerNodePorts"].(bool)
		return !ok || alloc
	}
	return false
}

func needsHCNodePort(spec map[string]any) bool {
	return serviceType(spec) == "LoadBalancer" && spec["externalTrafficPolicy"] == "Local"
}

// SameJSON tells whether two values are the same JSON (int and int64,
// whole float64s alike).
func SameJSON(a, b any) bool {
	ab, err1 := json.Marshal(a)
	bb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}
