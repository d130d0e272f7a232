package kube

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/kubectl-ssa/kubectl-ssa/internal/helm"
	"github.com/kubectl-ssa/kubectl-ssa/internal/shell"
)

// HelmStorage is the kind of object Helm keeps releases in, chosen by
// HELM_DRIVER as Helm chooses it.
type HelmStorage string

// The storages kubectl-ssa reads.
const (
	HelmSecrets    HelmStorage = "Secret"
	HelmConfigMaps HelmStorage = "ConfigMap"
)

// HelmStorageFor is the storage HELM_DRIVER names: secret (the default)
// or configmap. Helm's memory and sql drivers keep nothing in the cluster.
func HelmStorageFor(driver string) (HelmStorage, error) {
	switch driver {
	case "secret", "secrets", "":
		return HelmSecrets, nil
	case "configmap", "configmaps":
		return HelmConfigMaps, nil
	}
	return "", fmt.Errorf("HELM_DRIVER=%s: kubectl-ssa reads the releases Helm keeps in Secrets (HELM_DRIVER=secret, the default) or ConfigMaps (configmap) only", driver)
}

func (s HelmStorage) resource() schema.GroupVersionResource {
	if s == HelmConfigMaps {
		return schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	}
	return schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
}

// HelmRelease is one revision of a release, read from the cluster.
type HelmRelease struct {
	*helm.Release
	// Object is the Secret or ConfigMap it was read from, as
	// Kind/namespace/name.
	Object string
	// Latest is the release's highest revision when it is not this one
	// (an upgrade that failed after the last deployed one): helm
	// upgrade's --server-side=auto follows its apply method.
	Latest *helm.Release
}

// ReadHelmRelease reads revision of release name in namespace ns from
// Helm's storage, as helm does: revision 0 is the last deployed one (the
// highest revision labelled status=deployed), any other the object named
// sh.helm.release.v1.NAME.vREVISION. Its errors are one line that says
// what to do.
func (c *Cluster) ReadHelmRelease(ctx context.Context, storage HelmStorage, ns, name string, revision int) (*HelmRelease, error) {
	ri := c.Dynamic.Resource(storage.resource()).Namespace(ns)
	if revision > 0 {
		key := helm.ObjectName(name, revision)
		obj, err := ri.Get(ctx, key, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, c.noRelease(ctx, storage, ns, name, revision)
		}
		if err != nil {
			return nil, fmt.Errorf("reading helm release %q: %w", name, c.Friendly(err))
		}
		return decodeHelm(storage, obj)
	}
	sel := labels.Set{helm.LabelOwner: helm.Owner, helm.LabelName: name, helm.LabelStatus: string(helm.Deployed)}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("reading helm release %q: %w", name, c.Friendly(err))
	}
	if len(list.Items) == 0 {
		return nil, c.noRelease(ctx, storage, ns, name, 0)
	}
	// Helm skips what it can't decode and takes the highest revision:
	// concurrent upgrades can leave several deployed.
	var found []*HelmRelease
	var first error
	for i := range list.Items {
		r, err := decodeHelm(storage, &list.Items[i])
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		found = append(found, r)
	}
	if len(found) == 0 {
		return nil, first
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Version > found[j].Version })
	found[0].Latest = c.latestHelmRevision(ctx, storage, ns, name, found[0].Version)
	return found[0], nil
}

// latestHelmRevision is the release's highest revision of any status, when
// it is above deployed; nil when it is not, or can't be read (the
// deployed revision stands for it then).
func (c *Cluster) latestHelmRevision(ctx context.Context, storage HelmStorage, ns, name string, deployed int) *helm.Release {
	sel := labels.Set{helm.LabelOwner: helm.Owner, helm.LabelName: name}
	list, err := c.Metadata.Resource(storage.resource()).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil
	}
	latest := deployed
	for _, item := range list.Items {
		if v, err := strconv.Atoi(item.Labels[helm.LabelVersion]); err == nil && v > latest {
			latest = v
		}
	}
	if latest == deployed {
		return nil
	}
	obj, err := c.Dynamic.Resource(storage.resource()).Namespace(ns).Get(ctx, helm.ObjectName(name, latest), metav1.GetOptions{})
	if err != nil {
		return nil
	}
	r, err := decodeHelm(storage, obj)
	if err != nil {
		return nil
	}
	return r.Release
}

// decodeHelm decodes the release in a storage object.
func decodeHelm(storage HelmStorage, obj *unstructured.Unstructured) (*HelmRelease, error) {
	where := ObjectName(obj)
	data, _, _ := unstructured.NestedString(obj.Object, "data", helm.DataKey)
	if storage == HelmSecrets {
		// The Secret's own base64, under Helm's.
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot decode the helm release it holds: its data is not base64: %w", where, err)
		}
		data = string(b)
	}
	if data == "" {
		return nil, fmt.Errorf("%s: holds no helm release (no data.%s): is it Helm's?", where, helm.DataKey)
	}
	r, err := helm.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot decode the helm release it holds: %w", where, err)
	}
	return &HelmRelease{Release: r, Object: where}, nil
}

// noRelease explains why the release or its revision was not found, from
// the labels of the release's storage objects.
func (c *Cluster) noRelease(ctx context.Context, storage HelmStorage, ns, name string, revision int) error {
	sel := labels.Set{helm.LabelOwner: helm.Owner, helm.LabelName: name}
	list, err := c.Metadata.Resource(storage.resource()).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return fmt.Errorf("reading helm release %q: %w", name, c.Friendly(err))
	}
	if len(list.Items) == 0 {
		words := append([]string{"kubectl", "get", strings.ToLower(string(storage)) + "s", "-A", "-l", helm.LabelOwner + "=" + helm.Owner}, c.CommandFlags...)
		driver := ""
		if storage == HelmSecrets {
			driver = " (and HELM_DRIVER=configmap for a release Helm stores in ConfigMaps)"
		}
		return &HelmReleaseNotFoundError{msg: fmt.Sprintf("helm release %q not found in namespace %q (no %s labelled %s): check the release name and -n%s; %s lists the releases", name, ns, storage, sel, driver, shell.Join(words))}
	}
	type rev struct {
		n      int
		status string
	}
	var revs []rev
	for _, it := range list.Items {
		n, err := strconv.Atoi(it.Labels[helm.LabelVersion])
		if err != nil {
			continue
		}
		revs = append(revs, rev{n, it.Labels[helm.LabelStatus]})
	}
	sort.Slice(revs, func(i, j int) bool { return revs[i].n > revs[j].n })
	var have []string
	for i, r := range revs {
		if i == 5 {
			have = append(have, fmt.Sprintf("and %d more", len(revs)-i))
			break
		}
		have = append(have, fmt.Sprintf("%d %s", r.n, r.status))
	}
	if revision > 0 {
		return fmt.Errorf("helm release %q in namespace %q has no revision %d (its revisions: %s): give one of them with --helm-revision", name, ns, revision, strings.Join(have, ", "))
	}
	return &HelmNoDeployedError{msg: fmt.Sprintf("helm release %q in namespace %q has no deployed revision (its revisions: %s): give one with --helm-revision", name, ns, strings.Join(have, ", "))}
}

// HelmManifests are the objects of a release's manifest. Secrets among
// them are remembered by the process's Secret filter, as ReadManifests
// remembers them. Their Source is empty: they come from no file.
func HelmManifests(r *HelmRelease) ([]Manifest, error) {
	name := fmt.Sprintf("helm release %s revision %d", r.Name, r.Version)
	res := resource.NewLocalBuilder().Unstructured().Local().Stream(bytes.NewReader([]byte(r.Manifest)), name).Flatten().ContinueOnError().Do()
	out, err := manifestsOf(res)
	if errors.Is(err, ErrNoObjects) {
		return nil, fmt.Errorf("%s has an empty manifest (a chart of hooks only?): nothing to compare", name)
	}
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Source = ""
	}
	return out, nil
}

// AsHelmApplies makes ms what Helm sends when it applies them as release
// r: an object without a namespace is in the release's namespace (ns when
// the release names none) if its kind is namespaced, and every object
// carries the label and annotations Helm adds.
func (c *Cluster) AsHelmApplies(ms []Manifest, r *HelmRelease, ns string) {
	if r.Namespace != "" {
		ns = r.Namespace
	}
	for _, m := range ms {
		helm.SetMetadata(m.Object, r.Name, ns)
		c.inNamespace(m.Object, ns)
	}
}

// inNamespace puts obj in ns when it names none and its kind is
// namespaced, as Helm's resource builder does.
func (c *Cluster) inNamespace(obj *unstructured.Unstructured, ns string) {
	if obj.GetNamespace() != "" {
		return
	}
	// A kind not served is left as it is: predicting it says so.
	if mp, err := c.Mapping(obj.GroupVersionKind()); err == nil && mp.Scope.Name() == meta.RESTScopeNameNamespace {
		obj.SetNamespace(ns)
	}
}

// HelmOriginals are release r's objects as its manifest renders them, by
// HelmKey: what Helm's client-side upgrade patches from (its resource
// builder puts them in the release's namespace; Helm's label and
// annotations are added to the new render only).
func (c *Cluster) HelmOriginals(r *HelmRelease, ns string) (map[string]*unstructured.Unstructured, error) {
	ms, err := HelmManifests(r)
	if err != nil {
		return nil, err
	}
	if r.Namespace != "" {
		ns = r.Namespace
	}
	out := make(map[string]*unstructured.Unstructured, len(ms))
	for _, m := range ms {
		c.inNamespace(m.Object, ns)
		out[HelmKey(m.Object)] = m.Object
	}
	return out, nil
}

// HelmReleaseNames lists the releases Helm keeps in namespace ns, from
// the labels of its storage objects (their metadata alone).
func (c *Cluster) HelmReleaseNames(ctx context.Context, storage HelmStorage, ns string) ([]string, error) {
	sel := labels.Set{helm.LabelOwner: helm.Owner}
	list, err := c.Metadata.Resource(storage.resource()).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, it := range list.Items {
		if n := it.Labels[helm.LabelName]; n != "" {
			names[n] = true
		}
	}
	out := make([]string, 0, len(names))
	for n := range names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}

// HelmPlan is what Helm does besides applying the render: it checks the
// objects the render adds to the release (pkg/action/upgrade.go: the
// resources to be created, which existingResourceConflict checks), and
// one that exists already fails the upgrade unless its label and
// annotations name the release (refusals; objects of the release's
// revision are not checked, as Helm does not); and it deletes the
// release's objects the render no longer has, but those annotated
// helm.sh/resource-policy: keep (deletes).
func (c *Cluster) HelmPlan(ctx context.Context, ms []Manifest, r *HelmRelease) (map[string]string, []string, error) {
	var prev []Manifest
	if r.Version > 0 {
		var err error
		if prev, err = HelmManifests(r); err != nil {
			return nil, nil, err
		}
	}
	c.AsHelmApplies(prev, r, c.Namespace)
	have, next := map[string]bool{}, map[string]bool{}
	for _, m := range prev {
		have[HelmKey(m.Object)] = true
	}
	for _, m := range ms {
		next[HelmKey(m.Object)] = true
	}
	var deletes []string
	for _, m := range prev {
		if next[HelmKey(m.Object)] {
			continue
		}
		live, _, err := c.Live(ctx, m.Object)
		if err != nil || live == nil || live.GetAnnotations()[helm.ResourcePolicyAnnotation] == "keep" {
			continue
		}
		deletes = append(deletes, ObjectName(m.Object))
	}
	verb := "update"
	if r.Version == 0 {
		verb = "install" // a release not installed yet
	}
	out := map[string]string{}
	for _, m := range ms {
		key := HelmKey(m.Object)
		if have[key] {
			continue
		}
		live, _, err := c.Live(ctx, m.Object)
		if err != nil || live == nil {
			// Not there (created), or not readable: the prediction says
			// which.
			continue
		}
		ns := m.Object.GetAnnotations()[helm.ReleaseNamespaceAnnotation]
		if msg := helm.CheckOwnership(live, r.Name, ns); msg != "" {
			out[key] = "unable to continue with " + verb + ": " + msg // Helm 4's words (helm 4.2.4)
		}
	}
	return out, deletes, nil
}

// HelmKey is an object as Helm tells its resources apart: group, kind,
// namespace and name.
func HelmKey(u *unstructured.Unstructured) string {
	gk := u.GroupVersionKind().GroupKind()
	return gk.String() + "/" + u.GetNamespace() + "/" + u.GetName()
}

// HelmReleaseNotFoundError: Helm's storage holds no revision at all of
// the release (it was never installed, or was uninstalled).
type HelmReleaseNotFoundError struct{ msg string }

func (e *HelmReleaseNotFoundError) Error() string { return e.msg }

// HelmNoDeployedError: the release has revisions, none deployed.
type HelmNoDeployedError struct{ msg string }

func (e *HelmNoDeployedError) Error() string { return e.msg }

// LastHelmRelease is what helm upgrade builds on when no revision is
// deployed: the last revision, when it failed or was superseded
// (pkg/action/upgrade.go); nil when it is neither or can't be read.
func (c *Cluster) LastHelmRelease(ctx context.Context, storage HelmStorage, ns, name string) *HelmRelease {
	r := c.latestHelmRevision(ctx, storage, ns, name, 0)
	if r == nil || (r.Status() != "failed" && r.Status() != "superseded") {
		return nil
	}
	return &HelmRelease{Release: r, Object: string(storage) + "/" + ns + "/" + helm.ObjectName(name, r.Version)}
}
