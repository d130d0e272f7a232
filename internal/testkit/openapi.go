package testkit

import (
	"fmt"

	"k8s.io/client-go/openapi"
)

// OpenAPIDocument is an OpenAPI v3 document of example.com/v1 declaring
// kinds, each with a string spec.size.
func OpenAPIDocument(kinds ...string) []byte { return OpenAPIDocumentAt("v1", kinds...) }

// OpenAPIDocumentAt is OpenAPIDocument at another version of example.com.
func OpenAPIDocumentAt(version string, kinds ...string) []byte {
	out := `{"openapi":"3.0.0","info":{"title":"t","version":"v1"},"paths":{},"components":{"schemas":{`
	for i, k := range kinds {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf(`"com.example.%s.%s":{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"spec":{"type":"object","properties":{"size":{"type":"string"}}}},"x-kubernetes-group-version-kind":[{"group":"example.com","version":%q,"kind":%q}]}`, version, k, version, k)
	}
	return []byte(out + "}}}")
}

// OpenAPIDoc is a group-version document of an index, at an old hash.
type OpenAPIDoc struct{ Body []byte }

// Schema implements openapi.GroupVersion.
func (f OpenAPIDoc) Schema(string) ([]byte, error) { return f.Body, nil }

// ServerRelativeURL implements openapi.GroupVersion.
func (OpenAPIDoc) ServerRelativeURL() string { return "/openapi/v3/apis/example.com/v1?hash=OLD" }

// OpenAPIIndex is an OpenAPI v3 index (openapi.Client).
type OpenAPIIndex map[string]openapi.GroupVersion

// Paths implements openapi.Client.
func (f OpenAPIIndex) Paths() (map[string]openapi.GroupVersion, error) { return f, nil }
