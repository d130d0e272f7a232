package source

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
)

// aggregatedDiscovery is the content type of the aggregated discovery
// documents a snapshot keeps (and client-go's discovery reads).
const aggregatedDiscovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

// snapshotTransport answers the requests of source.Cluster's readers from
// a snapshot, as the apiserver would have when it was taken: discovery,
// /version, OpenAPI v3, and the gets and lists of the objects it listed.
// It never dials: a request it can't answer is an error.
type snapshotTransport struct {
	file *v1alpha1.Snapshot
	// kinds are the kinds of the resources served (list responses name
	// them).
	kinds map[schema.GroupVersionResource]string
}

func newSnapshotTransport(f *v1alpha1.Snapshot) (*snapshotTransport, error) {
	t := &snapshotTransport{file: f, kinds: map[schema.GroupVersionResource]string{}}
	for _, path := range []string{"/api", "/apis"} {
		var l apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(f.Discovery[path], &l); err != nil {
			return nil, fmt.Errorf("its discovery document %s can't be read: %w", path, err)
		}
		for _, g := range l.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					if r.ResponseKind != nil {
						t.kinds[schema.GroupVersionResource{Group: g.Name, Version: v.Version, Resource: r.Resource}] = r.ResponseKind.Kind
					}
				}
			}
		}
	}
	return t, nil
}

func (t *snapshotTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	path := req.URL.Path
	switch {
	case req.Method != http.MethodGet:
		// (Who the credentials are, a SelfSubjectReview, is not known
		// offline: policies that read it are then not exact.)
		return statusResponse(req, apierrors.NewMethodNotSupported(schema.GroupResource{Resource: path}, req.Method))
	case path == "/version":
		return jsonResponse(req, t.file.ServerVersion)
	case path == "/api" || path == "/apis":
		doc, ok := t.file.Discovery[path]
		if !ok {
			return statusResponse(req, apierrors.NewNotFound(schema.GroupResource{}, path))
		}
		return rawResponse(req, http.StatusOK, doc, aggregatedDiscovery), nil
	case path == "/openapi/v3":
		return jsonResponse(req, t.openAPIIndex())
	case strings.HasPrefix(path, "/openapi/v3/"):
		doc, ok := t.file.OpenAPI[strings.TrimPrefix(path, "/openapi/v3/")]
		if !ok {
			return statusResponse(req, apierrors.NewNotFound(schema.GroupResource{}, path))
		}
		return rawResponse(req, http.StatusOK, doc, "application/json"), nil
	}
	return t.object(req)
}

// openAPIIndex is /openapi/v3: the documents kept, each named with its
// hash as the server names them.
func (t *snapshotTransport) openAPIIndex() map[string]any {
	paths := map[string]any{}
	for p, doc := range t.file.OpenAPI {
		sum := sha256.Sum256(doc)
		paths[p] = map[string]string{"serverRelativeURL": "/openapi/v3/" + p + "?hash=" + strings.ToUpper(hex.EncodeToString(sum[:]))}
	}
	return map[string]any{"paths": paths}
}

// request is a get or list of objects, parsed from its path.
type request struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
	sub       string
}

// parseRequest parses /api/v1/... and /apis/GROUP/VERSION/... paths.
func parseRequest(path string) (request, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var r request
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		r.gvr.Version, parts = parts[1], parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		r.gvr.Group, r.gvr.Version, parts = parts[1], parts[2], parts[3:]
	default:
		return r, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		r.namespace, parts = parts[1], parts[2:]
	}
	r.gvr.Resource = parts[0]
	if len(parts) > 1 {
		r.name = parts[1]
	}
	if len(parts) > 2 {
		r.sub = strings.Join(parts[2:], "/")
	}
	return r, true
}

// object answers a get or a list from the lists the snapshot made.
func (t *snapshotTransport) object(req *http.Request) (*http.Response, error) {
	r, ok := parseRequest(req.URL.Path)
	kind, served := t.kinds[r.gvr]
	if !ok || !served || r.sub != "" {
		return statusResponse(req, apierrors.NewNotFound(r.gvr.GroupResource(), r.name))
	}
	selector := req.URL.Query().Get("labelSelector")
	sel, err := labels.Parse(selector)
	if err != nil {
		return statusResponse(req, apierrors.NewBadRequest(err.Error()))
	}
	l := t.covering(r, selector)
	switch {
	case l == nil:
		return statusResponse(req, apierrors.NewServiceUnavailable(t.uncovered(r)))
	case l.Refused != "":
		return statusResponse(req, apierrors.NewForbidden(r.gvr.GroupResource(), r.name, fmt.Errorf("when the snapshot was taken: %s", l.Refused)))
	}
	var items []map[string]any
	for _, it := range l.Items {
		m := metaOf(it)
		if r.namespace != "" && m.Namespace != r.namespace || r.name != "" && m.Name != r.name || !sel.Matches(labels.Set(m.Labels)) {
			continue
		}
		items = append(items, it)
	}
	if r.name != "" {
		if len(items) == 0 {
			return statusResponse(req, apierrors.NewNotFound(r.gvr.GroupResource(), r.name))
		}
		return jsonResponse(req, items[0])
	}
	if items == nil {
		items = []map[string]any{}
	}
	list := map[string]any{"apiVersion": r.gvr.GroupVersion().String(), "kind": kind + "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items}
	return jsonResponse(req, list)
}

// covering is the list of the snapshot that covers r with selector: of
// its resource and version, in its namespace or all, with no selector or
// the same one.
func (t *snapshotTransport) covering(r request, selector string) *v1alpha1.SnapshotList {
	for i := range t.file.Lists {
		l := &t.file.Lists[i]
		if l.Group != r.gvr.Group || l.Version != r.gvr.Version || l.Resource != r.gvr.Resource {
			continue
		}
		if l.Namespace != "" && l.Namespace != r.namespace {
			continue
		}
		if l.LabelSelector == "" || l.LabelSelector == selector && r.name == "" {
			return l
		}
	}
	return nil
}

// uncovered says why no list of the snapshot covers r, and what to do:
// a list of the resource in another version, or with a selector, or none.
func (t *snapshotTransport) uncovered(r request) string {
	what := r.gvr.GroupResource().String()
	if r.namespace != "" {
		what += " in namespace " + r.namespace
	}
	for _, l := range t.file.Lists {
		if l.Group != r.gvr.Group || l.Resource != r.gvr.Resource {
			continue
		}
		switch {
		case l.Namespace != "" && l.Namespace != r.namespace && r.namespace != "":
			return fmt.Sprintf("the snapshot lists %s in namespace %s, not in namespace %s: give -n %s if the manifest names no namespace, or take a snapshot of namespace %s", r.gvr.GroupResource(), l.Namespace, r.namespace, l.Namespace, r.namespace)
		case l.Namespace != "" && l.Namespace != r.namespace:
			continue
		case l.Version != r.gvr.Version:
			return fmt.Sprintf("the snapshot lists %s in version %s, not %s: write the manifest in %s", what, l.Version, r.gvr.Version, schema.GroupVersion{Group: l.Group, Version: l.Version})
		case l.LabelSelector != "":
			return fmt.Sprintf("the snapshot's list of %s holds only what -l %s selects: take a snapshot whose selection holds the object (or no -l)", what, l.LabelSelector)
		}
	}
	return fmt.Sprintf("the snapshot holds no list of %s (%s): take a snapshot that selects it", what, r.gvr.Version)
}

// metaOf reads an item's namespace, name and labels.
func metaOf(item map[string]any) metav1.ObjectMeta {
	var m metav1.ObjectMeta
	md, _ := item["metadata"].(map[string]any)
	m.Namespace, _ = md["namespace"].(string)
	m.Name, _ = md["name"].(string)
	if ls, ok := md["labels"].(map[string]any); ok {
		m.Labels = map[string]string{}
		for k, v := range ls {
			m.Labels[k], _ = v.(string)
		}
	}
	return m
}

func jsonResponse(req *http.Request, v any) (*http.Response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return rawResponse(req, http.StatusOK, b, "application/json"), nil
}

func statusResponse(req *http.Request, err *apierrors.StatusError) (*http.Response, error) {
	st := err.Status()
	st.APIVersion, st.Kind = "v1", "Status"
	b, merr := json.Marshal(st)
	if merr != nil {
		return nil, merr
	}
	return rawResponse(req, int(st.Code), b, "application/json"), nil
}

func rawResponse(req *http.Request, code int, body []byte, contentType string) *http.Response {
	return &http.Response{StatusCode: code, Status: http.StatusText(code), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {contentType}}, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}
}
