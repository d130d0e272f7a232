package conflict

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/schemaconv"
	"k8s.io/kube-openapi/pkg/validation/spec"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/schemacodec"
)

// Schema is a managedfields.TypeConverter over the structured-merge-diff
// types of one or more group-versions, as the apiserver builds them from
// its OpenAPI models. A kind whose group-version was not loaded is reported
// as not registered, which the field manager treats as a version the
// server no longer serves (its managers are dropped), exactly as the
// apiserver does; so callers must load every group-version that appears in
// an object's managedFields.
type Schema struct {
	parser *typed.Parser
	index  map[schema.GroupVersionKind]string
	// Loaded lists the group-versions the schema holds.
	Loaded []schema.GroupVersion
	// Source says where the types came from, for reports.
	Source string
	// FromCache counts group-versions read from the disk cache.
	FromCache int
}

var _ managedfields.TypeConverter = &Schema{}

// ObjectToTyped implements managedfields.TypeConverter.
func (s *Schema) ObjectToTyped(obj runtime.Object, opts ...typed.ValidationOptions) (*typed.TypedValue, error) {
	gvk := obj.GetObjectKind().GroupVersionKind()
	name, ok := s.index[gvk]
	if !ok {
		return nil, runtime.NewNotRegisteredErrForKind("kubectl-ssa schema", gvk)
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("expected an unstructured object, got %T", obj)
	}
	return s.parser.Type(name).FromUnstructured(u.UnstructuredContent(), opts...)
}

// TypedToObject implements managedfields.TypeConverter.
func (s *Schema) TypedToObject(value *typed.TypedValue) (runtime.Object, error) {
	switch o := value.AsValue().Unstructured().(type) {
	case map[string]any:
		return &unstructured.Unstructured{Object: o}, nil
	default:
		return nil, fmt.Errorf("failed to convert value to unstructured for type %T", o)
	}
}

// Has tells whether the schema knows a kind.
func (s *Schema) Has(gvk schema.GroupVersionKind) bool {
	_, ok := s.index[gvk]
	return ok
}

// gvSchema is the converted schema of one group-version document: the
// structured-merge-diff types and which of them are kinds. It is what the
// disk cache holds (encodeCache).
type gvSchema struct {
	Kinds []kindEntry
	Types smdschema.Schema
}

type kindEntry struct {
	Group, Version, Kind, Type string
}

// convertModels converts OpenAPI models as managedfields.NewTypeConverter
// does (preserveUnknownFields false, as for built-ins and v1 CRDs).
func convertModels(models map[string]*spec.Schema) (*gvSchema, error) {
	s, err := schemaconv.ToSchemaFromOpenAPI(models, false)
	if err != nil {
		return nil, fmt.Errorf("failed to convert models to schema: %w", err)
	}
	out := &gvSchema{Types: smdschema.Schema{Types: s.Types}}
	names := make([]string, 0, len(models))
	for n := range models {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, gvk := range gvksOf(models[n].Extensions) {
			out.Kinds = append(out.Kinds, kindEntry{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Type: n})
		}
	}
	return out, nil
}

func gvksOf(ext spec.Extensions) []schema.GroupVersionKind {
	raw, ok := ext["x-kubernetes-group-version-kind"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var list []schema.GroupVersionKind
	if err := json.Unmarshal(b, &list); err != nil {
		return nil
	}
	out := list[:0]
	for _, g := range list {
		if g.Kind != "" {
			out = append(out, g)
		}
	}
	return out
}

// newSchema merges converted group-versions into one converter. Types of
// the same name are the same type from the same server, so the first wins.
func newSchema(source string, parts map[schema.GroupVersion]*gvSchema) *Schema {
	s := &Schema{parser: &typed.Parser{}, index: map[schema.GroupVersionKind]string{}, Source: source}
	seen := map[string]bool{}
	gvs := make([]schema.GroupVersion, 0, len(parts))
	for gv := range parts {
		gvs = append(gvs, gv)
	}
	sort.Slice(gvs, func(i, j int) bool { return gvs[i].String() < gvs[j].String() })
	for _, gv := range gvs {
		p := parts[gv]
		for _, t := range p.Types.Types {
			if !seen[t.Name] {
				seen[t.Name] = true
				s.parser.Schema.Types = append(s.parser.Schema.Types, t)
			}
		}
		for _, k := range p.Kinds {
			gvk := schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
			if _, ok := s.index[gvk]; !ok {
				s.index[gvk] = k.Type
			}
		}
		s.Loaded = append(s.Loaded, gv)
	}
	// Scale is published without its group-version-kind (it is served only
	// as a subresource): index it by its name.
	scale := schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
	if _, ok := s.index[scale]; !ok && seen[scaleType] {
		s.index[scale] = scaleType
	}
	return s
}

const scaleType = "io.k8s.api.autoscaling.v1.Scale"

// Loader fetches group-version schemas from a cluster's /openapi/v3, one
// document at a time, and caches the converted result on disk keyed by the
// hash the server puts in each document's URL.
type Loader struct {
	Client openapi.Client
	// CacheDir is the per-cluster cache directory; empty disables caching.
	CacheDir string
	// Fetch reads a document ("apis/G/V") from the server as it is now,
	// past the index and every cache; nil: Refresh does nothing.
	Fetch func(ctx context.Context, path string) ([]byte, error)
	// Get reads a document by the server-relative URL the index names
	// (with its hash), past the HTTP cache: the converted schema is what
	// is cached, and an HTTP cache would copy and write every
	// document, about 1 MB for the core group, on a first run. nil: the
	// Client reads it.
	Get func(ctx context.Context, serverRelativeURL string) ([]byte, error)

	paths map[string]openapi.GroupVersion
	// index, when Prefetch started it, is closed once the index is read
	// (indexPaths, indexErr); pending are the documents PrefetchDocuments
	// started loading.
	index      chan struct{}
	indexPaths map[string]openapi.GroupVersion
	indexErr   error
	pending    map[schema.GroupVersion]chan partResult
	// prefetches runs Prefetch's and PrefetchDocuments' reads: nothing
	// waits for them all, Load takes each result from its channel.
	prefetches errgroup.Group
	// parts and built memoize the run: many objects of one kind read and
	// merge the same documents once. Loader is not safe for concurrent use.
	parts map[schema.GroupVersion]*gvSchema
	built map[string]*Schema
}

type partResult struct {
	part   *gvSchema // nil: not published
	cached bool
	err    error
}

// Prefetch starts reading the server's OpenAPI v3 index, which every Load
// needs first: its round trip (and the connection's TLS handshake, when it
// is the run's first request) then overlaps the reading of the input. Call
// it once, before the first Load.
func (l *Loader) Prefetch() {
	if l.paths != nil || l.index != nil {
		return
	}
	l.index = make(chan struct{})
	l.prefetches.Go(func() error {
		defer close(l.index)
		l.indexPaths, l.indexErr = l.Client.Paths()
		return nil
	})
}

// PrefetchDocuments starts loading the documents of gvs (from the cache,
// or from the server) once the index is read: on a first run against a
// cluster, a manifest's own group-version, which its Load needs, is then
// fetched while the live object is read, not after it. Load takes what it
// started.
func (l *Loader) PrefetchDocuments(ctx context.Context, gvs ...schema.GroupVersion) {
	l.Prefetch()
	if l.pending == nil {
		l.pending = map[schema.GroupVersion]chan partResult{}
	}
	for _, gv := range uniqueGVs(gvs) {
		if _, ok := l.parts[gv]; ok {
			continue
		}
		if _, ok := l.pending[gv]; ok {
			continue
		}
		done := make(chan partResult, 1)
		l.pending[gv] = done
		index, paths := l.index, l.paths
		l.prefetches.Go(func() error {
			if paths == nil {
				<-index
				paths = l.indexPaths
			}
			doc, ok := paths[openAPIPath(gv)]
			if !ok {
				done <- partResult{}
				return nil
			}
			p, cached, err := l.loadOne(ctx, gv, doc)
			done <- partResult{p, cached, err}
			return nil
		})
	}
}

// Load returns a schema holding every group-version in gvs that the server
// publishes. Group-versions it does not publish are left out: their
// managers are then dropped, as the server drops them.
func (l *Loader) Load(ctx context.Context, gvs []schema.GroupVersion) (*Schema, error) {
	if l.paths == nil {
		var paths map[string]openapi.GroupVersion
		var err error
		if l.index != nil {
			<-l.index
			paths, err = l.indexPaths, l.indexErr
		} else {
			paths, err = l.Client.Paths()
		}
		if err != nil {
			return nil, fmt.Errorf("reading the cluster's OpenAPI v3 index (/openapi/v3): %w", err)
		}
		l.paths = paths
	}
	unique := uniqueGVs(gvs)
	keys := make([]string, len(unique))
	for i, gv := range unique {
		keys[i] = gv.String()
	}
	sort.Strings(keys)
	memo := strings.Join(keys, ",")
	if s, ok := l.built[memo]; ok {
		return s, nil
	}
	if l.parts == nil {
		l.parts, l.built = map[schema.GroupVersion]*gvSchema{}, map[string]*Schema{}
	}
	parts := map[schema.GroupVersion]*gvSchema{}
	fromCache := 0
	for _, gv := range unique {
		if p, ok := l.parts[gv]; ok {
			parts[gv] = p
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var p *gvSchema
		var cached bool
		var err error
		if done, ok := l.pending[gv]; ok {
			delete(l.pending, gv)
			r := <-done
			if r.part == nil && r.err == nil {
				continue // not published
			}
			p, cached, err = r.part, r.cached, r.err
		} else {
			doc, ok := l.paths[openAPIPath(gv)]
			if !ok {
				continue
			}
			p, cached, err = l.loadOne(ctx, gv, doc)
		}
		if err != nil {
			return nil, err
		}
		if cached {
			fromCache++
		}
		parts[gv], l.parts[gv] = p, p
	}
	s := newSchema("cluster OpenAPI v3", parts)
	s.FromCache = fromCache
	l.built[memo] = s
	return s, nil
}

// Refresh reads gv's document again from the server, past the index and
// every cache, and forgets what was built from the old one. The index can
// name a document the server has already replaced: the aggregator reads
// its delegates' indexes again about a second after a CRD changes, and
// until then the hash it names is the old one, whose content a cache
// keeps (the server marks it immutable); until then, a group-version a
// CRD has just added is not in the index at all. A group-version neither
// in the index nor served (as discovery says) is not read. It tells
// whether it read one (false: the server has none).
func (l *Loader) Refresh(ctx context.Context, gv schema.GroupVersion, served bool) (bool, error) {
	if l.Fetch == nil || l.parts == nil {
		return false, nil
	}
	if _, ok := l.paths[openAPIPath(gv)]; !ok && !served {
		return false, nil
	}
	raw, err := l.Fetch(ctx, openAPIPath(gv))
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("fetching the OpenAPI v3 schema of %s: %w", gv, err)
	}
	p, err := parseDocument(gv, raw)
	if err != nil {
		return false, err
	}
	l.parts[gv] = p
	l.built = map[string]*Schema{}
	return true, nil
}

func parseDocument(gv schema.GroupVersion, raw []byte) (*gvSchema, error) {
	models, err := componentSchemas(raw)
	if err != nil {
		return nil, fmt.Errorf("parsing the OpenAPI v3 schema of %s: %w", gv, err)
	}
	if models == nil {
		return nil, fmt.Errorf("the OpenAPI v3 schema of %s has no components", gv)
	}
	p, err := convertModels(models)
	if err != nil {
		return nil, fmt.Errorf("converting the OpenAPI v3 schema of %s: %w", gv, err)
	}
	return p, nil
}

// componentSchemas reads components.schemas of an OpenAPI v3 document,
// each schema as spec3's own decoding reads it, and skips the rest: the
// paths are three quarters of a group-version's document, and decoding
// them was half of a first run's time. Nil when the document has no
// components.
func componentSchemas(raw []byte) (map[string]*spec.Schema, error) {
	var models map[string]*spec.Schema
	err := eachMember(raw, func(key string, v []byte) error {
		if key != "components" {
			return nil
		}
		return eachMember(v, func(key string, v []byte) error {
			if key != "schemas" {
				return nil
			}
			models = map[string]*spec.Schema{}
			return eachMember(v, func(name string, v []byte) error {
				s := &spec.Schema{}
				if err := s.UnmarshalJSON(v); err != nil {
					return fmt.Errorf("schema %s: %w", name, err)
				}
				models[name] = s
				return nil
			})
		})
	})
	if err != nil {
		return nil, err
	}
	return models, nil
}

// eachMember calls fn with each member of the JSON object obj, its value
// as raw bytes. It checks the object's structure, not the values it only
// skips: what fn reads, fn checks.
func eachMember(obj []byte, fn func(key string, value []byte) error) error {
	i := skipSpace(obj, 0)
	if i == len(obj) || obj[i] != '{' {
		return errors.New("not a JSON object")
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for {
		if i == len(obj) || obj[i] != '"' {
			return fmt.Errorf("offset %d: want a member name", i)
		}
		end, err := skipValue(obj, i)
		if err != nil {
			return err
		}
		var key string
		if err := json.Unmarshal(obj[i:end], &key); err != nil {
			return fmt.Errorf("offset %d: %w", i, err)
		}
		i = skipSpace(obj, end)
		if i == len(obj) || obj[i] != ':' {
			return fmt.Errorf("offset %d: want ':'", i)
		}
		start := skipSpace(obj, i+1)
		if end, err = skipValue(obj, start); err != nil {
			return err
		}
		if err := fn(key, obj[start:end]); err != nil {
			return err
		}
		i = skipSpace(obj, end)
		switch {
		case i < len(obj) && obj[i] == ',':
			i = skipSpace(obj, i+1)
		case i < len(obj) && obj[i] == '}':
			return nil
		default:
			return fmt.Errorf("offset %d: want ',' or '}'", i)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipValue returns where the JSON value that starts at b[i] ends: a
// string, an object or array (brackets counted outside strings), or a
// literal or number.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errors.New("unexpected end of JSON")
	}
	if c := b[i]; c != '{' && c != '[' && c != '"' {
		j := i
		for j < len(b) && bytes.IndexByte([]byte(",}] \n\r\t:"), b[j]) < 0 {
			j++
		}
		if j == i {
			return 0, fmt.Errorf("offset %d: unexpected %q", i, b[i])
		}
		return j, nil
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			k := bytes.IndexByte(b[j+1:], '"')
			for k >= 0 && escaped(b[j+1:], k) {
				n := bytes.IndexByte(b[j+1+k+1:], '"')
				if n < 0 {
					k = -1
					break
				}
				k += 1 + n
			}
			if k < 0 {
				return 0, errors.New("unexpected end of JSON in a string")
			}
			j += 1 + k
		case '{', '[':
			depth++
			continue
		case '}', ']':
			depth--
		default:
			continue
		}
		if depth == 0 {
			return j + 1, nil
		}
	}
	return 0, errors.New("unexpected end of JSON")
}

// escaped tells whether the quote at s[k] is escaped: an odd number of
// backslashes before it.
func escaped(s []byte, k int) bool {
	n := 0
	for k > 0 && s[k-1] == '\\' {
		n++
		k--
	}
	return n%2 == 1
}

func (l *Loader) loadOne(ctx context.Context, gv schema.GroupVersion, doc openapi.GroupVersion) (*gvSchema, bool, error) {
	file := ""
	if l.CacheDir != "" {
		file = filepath.Join(l.CacheDir, cacheName(gv, doc.ServerRelativeURL()))
		if b, err := os.ReadFile(file); err == nil {
			if p, err := decodeCache(b); err == nil && len(p.Types.Types) > 0 {
				return p, true, nil
			}
		}
	}
	var raw []byte
	var err error
	if l.Get != nil {
		raw, err = l.Get(ctx, doc.ServerRelativeURL())
	} else {
		raw, err = doc.Schema("application/json")
	}
	if err != nil {
		return nil, false, fmt.Errorf("fetching the OpenAPI v3 schema of %s: %w", gv, err)
	}
	p, err := parseDocument(gv, raw)
	if err != nil {
		return nil, false, err
	}
	if file != "" {
		if b, err := encodeCache(p); err == nil {
			_ = writeAtomic(file, b) // a cache that can't be written is only slower
		}
	}
	return p, false, nil
}

func openAPIPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api/" + gv.Version
	}
	return "apis/" + gv.Group + "/" + gv.Version
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// cacheName keys a document by its group-version and the hash in its URL;
// a URL without a hash is keyed by the URL's digest.
func cacheName(gv schema.GroupVersion, serverURL string) string {
	hash := ""
	if u, err := url.Parse(serverURL); err == nil {
		hash = u.Query().Get("hash")
	}
	if hash == "" {
		sum := sha256.Sum256([]byte(serverURL))
		hash = hex.EncodeToString(sum[:8])
	}
	group := gv.Group
	if group == "" {
		group = "core"
	}
	return unsafeChars.ReplaceAllString(group+"_"+gv.Version+"_"+hash, "_") + ".smd"
}

// CacheDirFor returns the schema cache directory of a cluster under base.
func CacheDirFor(base, host string) string {
	if base == "" {
		return ""
	}
	h := strings.TrimPrefix(strings.TrimPrefix(host, "https://"), "http://")
	return filepath.Join(base, "kubectl-ssa", "schema", unsafeChars.ReplaceAllString(h, "_"))
}

func writeAtomic(file string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o750); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), file)
}

func uniqueGVs(gvs []schema.GroupVersion) []schema.GroupVersion {
	seen := map[schema.GroupVersion]bool{}
	var out []schema.GroupVersion
	for _, gv := range gvs {
		if !seen[gv] {
			seen[gv] = true
			out = append(out, gv)
		}
	}
	return out
}

// encodeCache writes a converted group-version schema for the disk cache:
// its kinds, then its types in pkg/schemacodec's form, which reads back
// equal (field defaults keep the Go types the conversion from the
// server's JSON gave them).
func encodeCache(p *gvSchema) ([]byte, error) {
	w := schemacodec.NewWriter()
	w.Uint(uint64(len(p.Kinds)))
	for _, k := range p.Kinds {
		w.String(k.Group)
		w.String(k.Version)
		w.String(k.Kind)
		w.String(k.Type)
	}
	w.Schema(&p.Types)
	return w.Bytes()
}

// decodeCache reads a cached group-version schema.
func decodeCache(b []byte) (*gvSchema, error) {
	p := &gvSchema{}
	r := schemacodec.NewReader(b)
	n := r.Uint()
	for i := uint64(0); i < n && r.Err() == nil; i++ {
		p.Kinds = append(p.Kinds, kindEntry{Group: r.String(), Version: r.String(), Kind: r.String(), Type: r.String()})
	}
	r.Schema(&p.Types)
	if err := r.Done(); err != nil {
		return nil, err
	}
	return p, nil
}

// ErrNoSchema is returned when no schema source fits an object.
var ErrNoSchema = errors.New("no schema")

// TypeOf returns the structured-merge-diff schema and type of a kind,
// false when the schema does not hold it.
func (s *Schema) TypeOf(gvk schema.GroupVersionKind) (*smdschema.Schema, smdschema.TypeRef, bool) {
	name, ok := s.index[gvk]
	if !ok {
		return nil, smdschema.TypeRef{}, false
	}
	return &s.parser.Schema, smdschema.TypeRef{NamedType: &name}, true
}
