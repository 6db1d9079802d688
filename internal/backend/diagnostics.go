package backend

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/hashicorp/hcl/v2"

	"github.com/genform/genform/config"
	"github.com/genform/genform/statefile/pgstate"
)

// Diagnostics checks the backend block's conn_str as the PostgreSQL
// driver reads it, for every command that loads the configuration
// (validate included), once: a string it cannot read is an error, and a
// password written into it draws a warning, since the configuration's
// repository then holds it too. Neither quotes the string, and both point
// at the block's header, so that the snippet printed with them never shows
// the line holding it. A connection string from PG_CONN_STR is checked
// when the state is opened, and may hold a password: that is where one
// belongs, with PGPASSWORD and ~/.pgpass.
func Diagnostics(cfg *config.Config) hcl.Diagnostics {
	if cfg == nil || cfg.Settings.Backend == nil || !cfg.Settings.Backend.ConnStrWritten {
		return nil
	}
	be := cfg.Settings.Backend
	rng := be.DeclRange.Ptr()
	var diags hcl.Diagnostics
	// A file the string names (an sslrootcert, say) that is missing here
	// is this machine's matter, for the command that connects.
	if _, err := pgstate.Locate(pgstate.Config{ConnString: be.ConnStr}); err != nil && !errors.As(err, new(*fs.PathError)) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid conn_str",
			Detail:  "conn_str cannot be read as a PostgreSQL connection string (it is not shown here, since it may hold a password): write it as a URL such as \"postgres://user@host:5432/database?sslmode=require\", or libpq's key=value pairs such as \"host=db.example.com dbname=genform\", with values holding spaces quoted.",
			Subject: rng})
	}
	if secrets := pgstate.Secrets(be.ConnStr); len(secrets) > 0 {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Password in conn_str",
			Detail: "conn_str holds a secret (" + strings.Join(secrets, " and ") + "), which the configuration's repository then holds too. " +
				"Leave it out of conn_str and give it to the PostgreSQL client the usual way: the password in PGPASSWORD or ~/.pgpass (the client key's passphrase in PGSSLPASSWORD), " +
				"or the whole connection string in PG_CONN_STR, as for Terraform's pg backend.",
			Subject: rng})
	}
	return diags
}
