package views

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/operation/outcome"
	"github.com/genform/genform/internal/provider"
	"github.com/genform/genform/reconcile/apply"
)

// TestServiceFailedSaysWhatToFix: an unreachable service or a refused token
// is told once, in one sentence naming the setting to fix; other errors as
// they are.
func TestServiceFailedSaysWhatToFix(t *testing.T) {
	refusal := &provider.Error{HTTPStatus: 401, Message: "invalid API key", Code: "H-10001001", Op: "GET /v1/jobs/00000000-0000-0000-0000-000000000000/status"}
	tests := []struct {
		name     string
		tokenSet bool
		err      error
		want     string
	}{
		{"unreachable", true,
			fmt.Errorf("checking the service: %w", &provider.UnreachableError{Scheme: "http", Addr: "127.0.0.1:9", Reason: "connection refused"}),
			"Error: cannot reach the service at 127.0.0.1:9 (http): connection refused; nothing was submitted. Check GENFORM_BASE_URL (or base_url in the service block, which takes precedence), that the service is running at that address, and the network in between.\n"},
		{"refused token", true, fmt.Errorf("checking the service: %w", refusal),
			"Error: the service refused the token: 401 Unauthorized: invalid API key (code H-10001001); nothing was submitted. Set GENFORM_TOKEN (or token in the service block, which takes precedence) to a token the service accepts, then run the command again.\n"},
		{"no token", false, refusal,
			"Error: the service wants a token and none is set: 401 Unauthorized: invalid API key (code H-10001001); nothing was submitted. Set GENFORM_TOKEN (or token in the service block, which takes precedence) to a token the service accepts, then run the command again.\n"},
		{"another error", true, fmt.Errorf("checking the service: %w", &provider.Error{HTTPStatus: 500, Op: "GET /x"}),
			"Error: checking the service: GET /x: 500 Internal Server Error\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			serviceFailed(&Streams{Stdout: &stdout, Stderr: &stderr}, tt.tokenSet, tt.err, "nothing was submitted")
			if stderr.String() != tt.want || stdout.Len() != 0 {
				t.Errorf("stderr:\n%s\nwant:\n%s(stdout %q)", stderr.String(), tt.want, stdout.String())
			}
		})
	}
}

// TestUnstoredNamesTheHistorysFiles: a file of a generation filed in the
// history is named with its generation and what uploads it, beside the
// recorded instances' files.
func TestUnstoredNamesTheHistorysFiles(t *testing.T) {
	down := errors.New("the store cannot be reached")
	res := &apply.Result{Unstored: []apply.Unstored{
		{Addr: addrs.MustParseInstance("image.keep"), Path: "generated/image/keep/0.png", Object: "s3://b/sha256/aa/aa", Err: down},
		{Addr: addrs.MustParseInstance("image.gone"), Path: "generated/image/gone/0.png", Generation: "g-1", Object: "s3://b/sha256/bb/bb", Err: down},
	}}
	var stdout, stderr bytes.Buffer
	renderUnstored(&Streams{Stdout: &stdout, Stderr: &stderr}, res)
	const want = `Error: 2 files are not in the object store; they are kept here with their records, and the next 'genform apply' (or 'genform push') uploads them:
  image.keep: generated/image/keep/0.png (s3://b/sha256/aa/aa)
    the store cannot be reached
  image.gone: generated/image/gone/0.png of generation g-1 in the history (s3://b/sha256/bb/bb): genform push uploads it from the local cache
`
	if stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
	// Only the history's: apply does not upload them, push does.
	stderr.Reset()
	writeUnstored(&Streams{Stdout: &stdout, Stderr: &stderr}, res.Unstored[1:])
	if got := strings.SplitN(stderr.String(), "\n", 2)[0]; got != "Error: 1 file of generations in the history is not in the object store; the local cache keeps it, and 'genform push' uploads it:" {
		t.Errorf("header: %s", got)
	}
}

// TestPushNamesTheHistorysFiles: push names a file of a generation in the
// history it could not upload by that generation.
func TestPushNamesTheHistorysFiles(t *testing.T) {
	res := &outcome.Transfer{Moved: 1, Bytes: 2048, Failed: []outcome.TransferFailure{
		{Addr: addrs.MustParseInstance("image.gone"), Path: "generated/image/gone/0.png", Generation: "g-1", Err: errors.New("the store cannot be reached")},
	}}
	var stdout, stderr bytes.Buffer
	writeTransfer(&Streams{Stdout: &stdout, Stderr: &stderr}, false, res, 0)
	if want := "Error: image.gone: generated/image/gone/0.png (generation g-1 in the history): the store cannot be reached\n"; stderr.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", stderr.String(), want)
	}
	if !strings.Contains(stdout.String(), "1 file uploaded to the store (2.0 KiB), 0 already in the store.") {
		t.Errorf("stdout: %s", stdout.String())
	}
}
