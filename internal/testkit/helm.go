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
// It is the tests' own encoder, apart from internal/helm's Encode: the
// decoder is checked against an encoder it does not share.
func HelmRelease(release any) (string, error) {
	js, err := json.Marshal(release)
	if err != nil {
		return "", err
	}
	return HelmPadded(string(js), 0, "")
}

// HelmPadded is HelmRelease's encoding of prefix, pad spaces and suffix,
// written without holding the spaces in memory: a release as large once
// decompressed as a crafted storage object can make it (gzip shrinks
// spaces about a thousandfold).
func HelmPadded(prefix string, pad int, suffix string) (string, error) {
	var buf bytes.Buffer
	w, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	chunk := bytes.Repeat([]byte{' '}, 1<<16)
	_, err = w.Write([]byte(prefix))
	for left := pad; err == nil && left > 0; left -= len(chunk) {
		_, err = w.Write(chunk[:min(left, len(chunk))])
	}
	if err == nil {
		_, err = w.Write([]byte(suffix))
	}
	if err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", fmt.Errorf("gzip: %w", err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}
