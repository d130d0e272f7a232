package conflict

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// The apiserver's size limits on a write.
const (
	// MaxRequestBodyBytes is the most a request body may hold: the
	// apiserver reads no more and answers 413 (k8s.io/apiserver
	// pkg/server/config.go, NewConfig's MaxRequestBodyBytes, 3 MiB; the
	// apply handler reads it with limitedReadBody, handlers/patch.go).
	MaxRequestBodyBytes = 3 << 20
	// MaxStoredBytes is the most etcd stores in one request, by default
	// (its --max-request-bytes, 1.5 MiB, which the apiserver's config
	// comment names as the size it expects): a larger object is refused
	// with "etcdserver: request is too large".
	MaxStoredBytes = 3 << 19
	// MaxDataBytes is the most a ConfigMap's or a Secret's values may
	// hold together (k8s.io/api core/v1 MaxSecretSize; ValidateConfigMap
	// and ValidateSecret refuse more).
	MaxDataBytes = 1 << 20
)

// ApplyBody is the manifest as the apiserver reads an apply of it: the
// JSON body kubectl and client-go send, checked against the request size
// limit and decoded as the apply handler decodes it, as YAML
// (k8s.io/apiserver handlers/patch.go: newApplyPatcher with
// k8s.io/apimachinery's yaml.Unmarshal). YAML refuses what JSON allows (a
// control character such as U+007F in a string) and reads some of it
// otherwise (U+0085 is a YAML line break: a space in a quoted string).
// rewritten says the values changed on the way.
func ApplyBody(manifest *unstructured.Unstructured) (obj *unstructured.Unstructured, rewritten bool, err error) {
	name := ownership.ObjectName(manifest.GetKind(), manifest.GetNamespace(), manifest.GetName())
	body, err := json.Marshal(manifest.Object)
	if err != nil {
		return nil, false, fmt.Errorf("%s: encoding the apply: %w", name, err)
	}
	if len(body) > MaxRequestBodyBytes {
		return nil, false, fmt.Errorf("%s: the apiserver refuses the apply: its body is %d bytes, over the %d a request may carry (413 Request Entity Too Large): split the object, or keep the data elsewhere (a volume, an image)", name, len(body), MaxRequestBodyBytes)
	}
	out := map[string]any{}
	if err := yaml.Unmarshal(body, &out); err != nil {
		return nil, false, fmt.Errorf("%s: the apiserver refuses the apply: error decoding patch: %w (it reads an apply as YAML, which allows no control character but tab and line breaks in a value): remove the character", name, err)
	}
	// What reads back the same encodes the same (keys sorted, one way to
	// write each value): no deep comparison of int and int64.
	again, err := json.Marshal(out)
	if err != nil {
		return nil, false, fmt.Errorf("%s: encoding the apply: %w", name, err)
	}
	return &unstructured.Unstructured{Object: out}, !bytes.Equal(again, body), nil
}

// rewrittenWarning says that the apiserver's reading changed values.
const rewrittenWarning = "the apiserver reads an apply as YAML, which changes some of the manifest's values (U+0085 in a string, a YAML line break, is read as a space): the prediction shows them as the server stores them"

// checkEncoding refuses what the apiserver cannot decode once the apply
// is merged: a v1 Secret's data or a v1 ConfigMap's binaryData value that
// is not base64 (the server converts the object to its Go type, whose
// []byte fields encoding/json reads as standard base64, before anything
// else: "failed to convert new object ... illegal base64 data at input
// byte N"). The first such key in the order the server reads them
// (sorted) is named; values are never printed.
func checkEncoding(result *unstructured.Unstructured) error {
	if result == nil || result.GetAPIVersion() != "v1" {
		return nil
	}
	var field, text string
	switch result.GetKind() {
	case "Secret":
		field, text = "data", "stringData"
	case "ConfigMap":
		field, text = "binaryData", "data"
	default:
		return nil
	}
	m, _, _ := unstructured.NestedMap(result.Object, field)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	name := ownership.ObjectName(result.GetKind(), result.GetNamespace(), result.GetName())
	for _, k := range keys {
		s, ok := m[k].(string)
		if !ok {
			if m[k] == nil {
				continue
			}
			return fmt.Errorf("%s: the apiserver refuses the apply: .%s.%s is not a string (it must be base64 text): quote the value, or set it as text under %s", name, field, k, text)
		}
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return fmt.Errorf("%s: the apiserver refuses the apply: failed to convert new object to proper version: .%s.%s is not base64 (%w): encode the value (base64 -w0), or set it as text under %s", name, field, k, err, text)
		}
	}
	return nil
}

// checkSize refuses what the apiserver refuses for its size once the
// apply is merged: a ConfigMap's or a Secret's values over MaxDataBytes
// (validation), or an object over MaxStoredBytes (etcd). The stored size
// is that of the object's JSON: etcd holds built-in kinds as protobuf,
// a little smaller, custom resources as JSON.
func checkSize(result *unstructured.Unstructured) error {
	if result == nil {
		return nil
	}
	name := ownership.ObjectName(result.GetKind(), result.GetNamespace(), result.GetName())
	if n := dataBytes(result); n > MaxDataBytes {
		return fmt.Errorf("%s: the apiserver refuses the apply: its values hold %d bytes, over the %d a %s may hold (422 Invalid: Too long): split it into several, or keep the data elsewhere (a volume, an image)", name, n, MaxDataBytes, result.GetKind())
	}
	body, err := json.Marshal(result.Object)
	if err != nil {
		return fmt.Errorf("%s: encoding the result: %w", name, err)
	}
	if len(body) > MaxStoredBytes {
		return fmt.Errorf("%s: the apiserver refuses the apply: the object would be about %d bytes, over the %d etcd stores in one request (etcdserver: request is too large): split the object, or keep the data elsewhere", name, len(body), MaxStoredBytes)
	}
	return nil
}

// dataBytes is what ValidateConfigMap and ValidateSecret count: the
// length of every value of a v1 ConfigMap's data and binaryData (decoded),
// or of a v1 Secret's data (decoded; stringData is merged into it first).
func dataBytes(obj *unstructured.Unstructured) int {
	if obj.GetAPIVersion() != "v1" {
		return 0
	}
	sizes := map[string]int{}
	add := func(prefix, field string, encoded bool) {
		m, _, _ := unstructured.NestedMap(obj.Object, field)
		for k, v := range m {
			s, _ := v.(string)
			if encoded {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil {
					sizes[prefix+k] = len(b)
					continue
				}
			}
			sizes[prefix+k] = len(s)
		}
	}
	switch obj.GetKind() {
	case "ConfigMap":
		add("data/", "data", false)
		add("binaryData/", "binaryData", true)
	case "Secret":
		add("", "data", true)
		add("", "stringData", false) // wins over data's key
	}
	n := 0
	for _, k := range sizes {
		n += k
	}
	return n
}
