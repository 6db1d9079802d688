package views

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/genform/genform/internal/service"
)

// TestServiceFailedSaysWhatToFix: an unreachable service or a refused token
// is told once, in one sentence naming the setting to fix; other errors as
// they are.
func TestServiceFailedSaysWhatToFix(t *testing.T) {
	refusal := &service.Error{HTTPStatus: 401, Message: "invalid API key", Code: "H-10001001", Op: "GET /v1/jobs/00000000-0000-0000-0000-000000000000/status"}
	tests := []struct {
		name     string
		tokenSet bool
		err      error
		want     string
	}{
		{"unreachable", true,
			fmt.Errorf("checking the service: %w", &service.UnreachableError{Scheme: "http", Addr: "127.0.0.1:9", Reason: "connection refused"}),
			"Error: cannot reach the service at 127.0.0.1:9 (http): connection refused; nothing was submitted. Check GENFORM_BASE_URL (or base_url in the service block, which takes precedence), that the service is running at that address, and the network in between.\n"},
		{"refused token", true, fmt.Errorf("checking the service: %w", refusal),
			"Error: the service refused the token: 401 Unauthorized: invalid API key (code H-10001001); nothing was submitted. Set GENFORM_TOKEN (or token in the service block, which takes precedence) to a token the service accepts, then run the command again.\n"},
		{"no token", false, refusal,
			"Error: the service wants a token and none is set: 401 Unauthorized: invalid API key (code H-10001001); nothing was submitted. Set GENFORM_TOKEN (or token in the service block, which takes precedence) to a token the service accepts, then run the command again.\n"},
		{"another error", true, fmt.Errorf("checking the service: %w", &service.Error{HTTPStatus: 500, Op: "GET /x"}),
			"Error: checking the service: GET /x: 500 Internal Server Error\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			ServiceFailed(&Streams{Stdout: &stdout, Stderr: &stderr}, tt.tokenSet, tt.err, "nothing was submitted")
			if stderr.String() != tt.want || stdout.Len() != 0 {
				t.Errorf("stderr:\n%s\nwant:\n%s(stdout %q)", stderr.String(), tt.want, stdout.String())
			}
		})
	}
}
