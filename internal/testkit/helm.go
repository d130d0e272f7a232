package testkit

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// HelmRelease is a release as Helm's storage drivers encode it in the
// "release" key of a Secret or ConfigMap (helm/helm pkg/storage/driver
// encodeRelease): its JSON, gzipped at gzip.BestCompression, in standard
// base64. A Secret's data is base64 once more, as the API serves it.
func HelmRelease(release any) (string, error) {
	js, err := json.Marshal(release)
	if err != nil {
		return "", err
	}
	return HelmEncode(js)
}

// HelmEncode is HelmRelease of JSON already marshalled.
func HelmEncode(js []byte) (string, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if _, err := w.Write(js); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("gzip: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
