package pgstate_test

import (
	"slices"
	"testing"

	"github.com/genform/genform/statefile/pgstate"
)

// TestSecrets checks which secrets a connection string holds itself, as
// pgx reads it, in every form; the environment's are not its own.
func TestSecrets(t *testing.T) {
	clearPGEnv(t)
	t.Setenv("PGPASSWORD", "fromenv")
	for _, c := range []struct {
		conn string
		want []string
	}{
		{"postgres://team@db/media", nil},
		{"postgres://team:hunter2@db/media", []string{"password"}},
		{"postgres://team:@db/media", nil},
		{"postgres://team@db/media?password=hunter2", []string{"password"}},
		{"postgres://team@db/media?pass%77ord=hunter2", []string{"password"}},
		{"postgres://team@db1:5432,db2:5433/media?sslpassword=k&application_name=x", []string{"sslpassword"}},
		{"postgresql://team:hunter2@db/media?sslpassword=k", []string{"password", "sslpassword"}},
		{"host=db user=team dbname=media", nil},
		{"host=db password=hunter2", []string{"password"}},
		{"host=db password = hunter2", []string{"password"}},
		{`host=db password=hunter\ two`, []string{"password"}},
		{`host=db password='it\'s two'`, []string{"password"}},
		{"host=db sslpassword=k passfile=/tmp/x", []string{"sslpassword"}},
		{"host=db application_name=password", nil},
		{"", nil},
	} {
		if got := pgstate.Secrets(c.conn); !slices.Equal(got, c.want) {
			t.Errorf("Secrets(%q) = %v, want %v", c.conn, got, c.want)
		}
	}
}
