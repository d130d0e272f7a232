package defaults

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Finish does to an object what the apiserver's defaulting and conversion
// do beyond per-field defaults, which the generated tables can't express:
// a field dropped because another has some value, type metadata that
// conversion writes. It runs on every predicted object, created or
// updated; the diff e2e corpus checks each case against the server.
func Finish(u *unstructured.Unstructured) {
	gv, kind := u.GroupVersionKind().GroupVersion(), u.GetKind()
	switch {
	case gv.Group == "" && gv.Version == "v1" && kind == "Service":
		dropAffinityConfig(u.Object)
	case gv.Group == "apps" && kind == "StatefulSet":
		claimTemplateTypeMeta(u.Object)
	case gv.Group == "" && gv.Version == "v1" && kind == "LimitRange":
		limitRangeDefaults(u.Object)
	}
	if spec := podSpecOf(u.Object, gv.Group, kind); spec != nil {
		serviceAccountAlias(spec)
	}
}

// podSpecOf is the pod spec a built-in kind holds (nil: none).
func podSpecOf(obj map[string]any, group, kind string) map[string]any {
	path := PodSpecPath(group, kind)
	if path == nil {
		return nil
	}
	m, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	spec, _ := m.(map[string]any)
	return spec
}

// PodSpecPath is where a built-in kind holds a pod spec (nil: none).
func PodSpecPath(group, kind string) []string {
	switch {
	case group == "" && kind == "Pod":
		return []string{"spec"}
	case group == "" && kind == "PodTemplate":
		return []string{"template", "spec"}
	case group == "" && kind == "ReplicationController", group == "apps", group == "batch" && kind == "Job":
		return []string{"spec", "template", "spec"}
	case group == "batch" && kind == "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	return nil
}

// serviceAccountAlias: SetDefaults_PodSpec keeps serviceAccount, the
// deprecated alias, equal to serviceAccountName, which wins when both are
// set (an apply that changes one changes both).
func serviceAccountAlias(spec map[string]any) {
	name, _ := spec["serviceAccountName"].(string)
	if name == "" {
		name, _ = spec["serviceAccount"].(string)
	}
	if name == "" {
		return
	}
	spec["serviceAccountName"], spec["serviceAccount"] = name, name
}

// dropAffinityConfig: SetDefaults_Service clears sessionAffinityConfig
// when sessionAffinity is None (the default).
func dropAffinityConfig(obj map[string]any) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if a, _ := spec["sessionAffinity"].(string); a == "" || a == "None" {
		delete(spec, "sessionAffinityConfig")
	}
}

// claimTemplateTypeMeta: converting a StatefulSet to an apps version
// writes apiVersion v1 and kind PersistentVolumeClaim into each volume
// claim template (pkg/apis/apps/v1/conversion.go, issue 87583).
func claimTemplateTypeMeta(obj map[string]any) {
	spec, _ := obj["spec"].(map[string]any)
	templates, _ := spec["volumeClaimTemplates"].([]any)
	for _, t := range templates {
		if m, ok := t.(map[string]any); ok {
			m["apiVersion"] = "v1"
			m["kind"] = "PersistentVolumeClaim"
		}
	}
}

// limitRangeDefaults: SetDefaults_LimitRangeItem, for Container items: a
// missing default limit is the max, a missing default request the
// default limit, else the min.
func limitRangeDefaults(obj map[string]any) {
	spec, _ := obj["spec"].(map[string]any)
	limits, _ := spec["limits"].([]any)
	for _, l := range limits {
		item, ok := l.(map[string]any)
		if !ok || item["type"] != "Container" {
			continue
		}
		fill := func(field string, from ...string) {
			to, _ := item[field].(map[string]any)
			for _, f := range from {
				src, _ := item[f].(map[string]any)
				for k, v := range src {
					if _, set := to[k]; !set {
						if to == nil {
							to = map[string]any{}
						}
						to[k] = v
					}
				}
			}
			if to != nil {
				item[field] = to
			}
		}
		fill("default", "max")
		fill("defaultRequest", "default", "min")
	}
}
