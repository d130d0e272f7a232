package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// snapshotDeploy is deploy/snapshot built by kustomize's own packages,
// moved into ns, its cluster-wide names suffixed with ns.
func snapshotDeploy(t *testing.T, ns string) []*unstructured.Unstructured {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(repoRoot(), "deploy", "snapshot"))
	if err != nil {
		t.Fatalf("kustomize build deploy/snapshot: %v", err)
	}
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		switch u.GetKind() {
		case "ClusterRole":
			u.SetName(u.GetName() + "-" + ns)
		case "ClusterRoleBinding":
			u.SetName(u.GetName() + "-" + ns)
			_ = unstructured.SetNestedField(u.Object, u.GetName(), "roleRef", "name")
			subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
			for _, s := range subjects {
				if s.(map[string]any)["namespace"] != "kubectl-ssa" {
					t.Errorf("the binding's subject is not in the kustomization's namespace: %v", s)
				}
				s.(map[string]any)["namespace"] = ns
			}
			_ = unstructured.SetNestedSlice(u.Object, subjects, "subjects")
		default:
			if u.GetNamespace() != "kubectl-ssa" {
				t.Errorf("%s/%s: namespace %q, want kubectl-ssa", u.GetKind(), u.GetName(), u.GetNamespace())
			}
			u.SetNamespace(ns)
		}
		out = append(out, u)
	}
	return out
}

// applyStrict is a server-side apply of u that refuses unknown and
// duplicate fields (dry: a dry run).
func applyStrict(t *testing.T, u *unstructured.Unstructured, dry bool) error {
	t.Helper()
	b, err := json.Marshal(u.Object)
	if err != nil {
		t.Fatal(err)
	}
	opts := metav1.PatchOptions{FieldManager: "e2e", FieldValidation: "Strict"}
	if dry {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = resourceFor(t, u).Patch(context.Background(), u.GetName(), types.ApplyPatchType, b, opts)
	return err
}

// TestSnapshotCronJobDeploy: deploy/snapshot (the CronJob that refreshes
// the snapshot in the cluster) passes a server dry run with strict field
// validation; its ClusterRole only gets and lists; applied for real, its
// ServiceAccount may list every kind (Secrets too: their values are
// hashed) and read the schemas, and may write nothing.
func TestSnapshotCronJobDeploy(t *testing.T) {
	ns := namespace(t)
	objs := snapshotDeploy(t, ns)
	var kinds []string
	for _, u := range objs {
		kinds = append(kinds, u.GetKind())
		if err := applyStrict(t, u, true); err != nil {
			t.Errorf("%s %s: server dry run with strict validation: %v", u.GetKind(), u.GetName(), err)
		}
		if u.GetKind() == "ClusterRole" {
			rules, _, _ := unstructured.NestedSlice(u.Object, "rules")
			for _, r := range rules {
				verbs, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "verbs")
				for _, v := range verbs {
					if v != "get" && v != "list" {
						t.Errorf("the ClusterRole grants %q: the snapshot's account only gets and lists", v)
					}
				}
			}
		}
	}
	slices.Sort(kinds)
	if got := strings.Join(kinds, ","); got != "ClusterRole,ClusterRoleBinding,CronJob,ServiceAccount" {
		t.Fatalf("deploy/snapshot holds %s", got)
	}

	for _, u := range objs {
		if err := applyStrict(t, u, false); err != nil {
			t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
		}
		if u.GetNamespace() == "" {
			t.Cleanup(func() { _ = resourceFor(t, u).Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
		}
	}
	user := "system:serviceaccount:" + ns + ":kubectl-ssa-snapshot"
	allowed := func(attrs *authorizationv1.ResourceAttributes, path string) bool {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}, ResourceAttributes: attrs}}
		if path != "" {
			sar.Spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: path, Verb: "get"}
		}
		r, err := env.client.AuthorizationV1().SubjectAccessReviews().Create(context.Background(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r.Status.Allowed
	}
	for _, c := range []struct {
		verb, group, resource string
		want                  bool
	}{
		{"list", "apps", "deployments", true},
		{"get", "", "secrets", true},
		{"list", "admissionregistration.k8s.io", "validatingadmissionpolicies", true},
		{"list", "apiextensions.k8s.io", "customresourcedefinitions", true},
		{"watch", "apps", "deployments", false},
		{"create", "", "configmaps", false},
		{"patch", "apps", "deployments", false},
		{"update", "apps", "deployments", false},
		{"delete", "", "secrets", false},
	} {
		if got := allowed(&authorizationv1.ResourceAttributes{Verb: c.verb, Group: c.group, Resource: c.resource, Namespace: ns}, ""); got != c.want {
			t.Errorf("%s %s.%s: allowed %v, want %v", c.verb, c.resource, c.group, got, c.want)
		}
	}
	for _, path := range []string{"/openapi/v3", "/openapi/v3/apis/apps/v1", "/version", "/apis"} {
		if !allowed(nil, path) {
			t.Errorf("get %s: refused", path)
		}
	}
}
