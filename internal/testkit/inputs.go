package testkit

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// InputServer serves files (path: content) and two inputs no reader
// should wait for: /endless.yaml, a body that never ends, and /slow.yaml,
// headers and then nothing until the client gives up. Other paths are 404.
func InputServer(t *testing.T, files map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/endless.yaml":
			chunk := bytes.Repeat([]byte("# endless\n"), 1<<12)
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		case "/slow.yaml":
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			if body, ok := files[r.URL.Path]; ok {
				_, _ = w.Write([]byte(body))
				return
			}
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
