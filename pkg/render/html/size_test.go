package html_test

import (
	"bytes"
	"testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/benchdata"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/html"
)

// maxOwnersPage bounds the who-owns page of a 50-container Deployment
// (issue 40: under 1 MB). Its render time in Chromium is measured by
// bench/html.sh.
const maxOwnersPage = 1 << 20

func TestWhoOwnsPageSize(t *testing.T) {
	var buf bytes.Buffer
	if err := html.WhoOwns(&buf, []*ownership.Report{analyze(t, benchdata.Deployment(50), ownership.Filter{})}, html.OwnersOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("who-owns page of a 50-container Deployment: %d bytes", buf.Len())
	if buf.Len() > maxOwnersPage {
		t.Errorf("the page of a 50-container Deployment is %d bytes, over %d", buf.Len(), maxOwnersPage)
	}
	if buf.Len() < 100_000 {
		t.Errorf("the page of a 50-container Deployment is only %d bytes: are its containers on it?", buf.Len())
	}
}
