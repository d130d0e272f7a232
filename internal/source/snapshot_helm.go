package source

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/internal/helm"
)

// helmRelease keeps, in place of the release a Helm storage object holds
// (data.release: for a Secret under the Secret's own base64), only what
// kubectl-ssa reads of it (helm.Release: its name, namespace, revision,
// status, apply method and manifest), with each value of the Secrets of
// its manifest replaced by its salted hash, encoded as Helm encodes it.
// The release's values (config), its chart, its hooks and the rest of
// its info are dropped: they may hold secrets. false when the release
// can't be read: the caller then hashes the value whole.
func helmRelease(data string, secret bool, salt []byte) (string, bool) {
	raw := data
	if secret {
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return "", false
		}
		raw = string(b)
	}
	r, err := helm.Decode(raw)
	if err != nil {
		return "", false
	}
	if r.Manifest, err = hashManifestSecrets(r.Manifest, salt); err != nil {
		return "", false
	}
	if r.Info != nil {
		r.Info = &helm.Info{Status: r.Info.Status}
	}
	out, err := helm.Encode(r)
	if err != nil {
		return "", false
	}
	if secret {
		out = base64.StdEncoding.EncodeToString([]byte(out))
	}
	return out, true
}

// hashManifestSecrets replaces each value of the Secrets of a
// multi-document manifest (and of the Secrets a List holds) by its
// salted hash: in data, base64 of the hash, so the Secret stays one the
// server accepts. The other documents are kept as they are; one that is
// not YAML is refused (it could hold anything).
func hashManifestSecrets(manifest string, salt []byte) (string, error) {
	rd := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	var out []string
	for {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return "", err
		}
		if hashObjectSecrets(obj, salt) {
			if doc, err = yaml.Marshal(obj); err != nil {
				return "", err
			}
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			out = append(out, strings.TrimSuffix(string(doc), "\n")+"\n")
		}
	}
	return "---\n" + strings.Join(out, "---\n"), nil
}

// hashObjectSecrets hashes the values of obj if it is a Secret, or of
// the Secrets among its items; true when it changed obj.
func hashObjectSecrets(obj map[string]any, salt []byte) bool {
	if obj == nil {
		return false
	}
	if obj["kind"] == "Secret" && obj["apiVersion"] == "v1" {
		hashValues(obj, salt)
		m, _ := obj["data"].(map[string]any)
		for k, v := range m {
			m[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
		}
		return true
	}
	items, _ := obj["items"].([]any)
	changed := false
	for _, it := range items {
		m, _ := it.(map[string]any)
		changed = hashObjectSecrets(m, salt) || changed
	}
	return changed
}

// helmStorage tells whether a listed item of resource (secrets or
// configmaps) is a storage object of Helm's: a Secret of Helm's type, or
// a ConfigMap Helm labelled as its own (HELM_DRIVER=configmap).
func helmStorage(resource string, item map[string]any) bool {
	if resource == "secrets" {
		return item["type"] == helm.SecretType
	}
	return metaOf(item).Labels[helm.LabelOwner] == helm.Owner
}

// sanitizeHelmData keeps item's data.release as helmRelease does; a
// release that can't be read is hashed whole.
func sanitizeHelmData(item map[string]any, secret bool, salt []byte) {
	data, _ := item["data"].(map[string]any)
	v, ok := data[helm.DataKey].(string)
	if !ok {
		return
	}
	if out, ok := helmRelease(v, secret, salt); ok {
		data[helm.DataKey] = out
		return
	}
	data[helm.DataKey] = HashValue(salt, []byte(v))
}
