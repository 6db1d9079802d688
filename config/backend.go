package config

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Backend is the genform block's backend block: the state kept somewhere
// else than the state file, for a team whose working copies share it.
// Without one the state is the bbolt file at Settings.StateFile.
type Backend struct {
	// Type is the block's label; "pg" (PostgreSQL) is the only one.
	Type string
	// ConnStr is the block's conn_str, or else the PG_CONN_STR environment
	// variable, or else "": libpq's PG* variables (PGHOST, PGUSER,
	// PGPASSWORD, ...) then say where the database is. It may hold a
	// password, so it is never part of a diagnostic or a hash.
	ConnStr string
	// ConnStrWritten is whether ConnStr is the block's conn_str, written
	// in the configuration (whose repository then holds a password written
	// into it), rather than PG_CONN_STR.
	ConnStrWritten bool
	// SchemaName is the PostgreSQL schema holding the state's tables,
	// DefaultSchemaName when the block leaves it out.
	SchemaName string
	// DeclRange is the block's header.
	DeclRange hcl.Range
}

// DefaultSchemaName is the schema_name of a backend "pg" block that sets
// none, as Terraform's pg backend has it.
const DefaultSchemaName = "genform"

var backendSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "conn_str"}, {Name: "schema_name"}},
}

// schemaNameRe is an unquoted, lower-case PostgreSQL identifier (the
// state's package checks the same when it opens one).
var schemaNameRe = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// decodeOne decodes the first of blocks, of type kind, and refuses the
// others: why says why there is one.
func decodeOne(blocks hcl.Blocks, kind, why string, decode func(*hcl.Block) hcl.Diagnostics) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for i, b := range blocks {
		if i > 0 {
			diags = append(diags, errorAt(b.DefRange.Ptr(), fmt.Sprintf("Duplicate %s block", kind),
				fmt.Sprintf("%s: the %s block at %s is the one; remove this one.", why, kind, blocks[0].DefRange)))
			continue
		}
		diags = append(diags, decode(b)...)
	}
	return diags
}

// decodeBackends decodes the backend blocks of the genform block; state
// is the state_file attribute, when set, which a backend replaces.
func (c *Config) decodeBackends(blocks hcl.Blocks, stateFile *hcl.Attribute) hcl.Diagnostics {
	diags := decodeOne(blocks, "backend", "The state is kept in one place", c.decodeBackend)
	if len(blocks) > 0 && stateFile != nil {
		diags = append(diags, errorAt(stateFile.Expr.Range().Ptr(), "Conflicting state settings",
			"state_file names the local state file, which a backend block replaces: keep one of them."))
	}
	return diags
}

func (c *Config) decodeBackend(b *hcl.Block) hcl.Diagnostics {
	if b.Labels[0] != "pg" {
		return hcl.Diagnostics{errorAt(b.LabelRanges[0].Ptr(), "Unsupported backend type",
			fmt.Sprintf("genform keeps the state in the state file (no backend block) or in PostgreSQL (backend \"pg\"), not in %q.", b.Labels[0]))}
	}
	be := &Backend{Type: "pg", SchemaName: DefaultSchemaName, DeclRange: b.DefRange}
	content, diags := b.Body.Content(backendSchema)
	const where = backendWhere
	if a, ok := content.Attributes["conn_str"]; ok {
		v, ok, d := c.settingValue(a, where, cty.String)
		diags = append(diags, d...)
		if ok {
			be.ConnStr, be.ConnStrWritten = v.AsString(), true
			diags = append(diags, checkConnStr(be.ConnStr, b.DefRange)...)
		}
	} else {
		be.ConnStr = c.environ["PG_CONN_STR"]
	}
	if a, ok := content.Attributes["schema_name"]; ok {
		v, ok, d := c.settingValue(a, where, cty.String)
		diags = append(diags, d...)
		if ok {
			if !schemaNameRe.MatchString(v.AsString()) {
				diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid schema_name",
					fmt.Sprintf("schema_name must be a lower-case PostgreSQL identifier (letters a-z, digits and _, not starting with a digit, at most 63), such as %q; got %q.", DefaultSchemaName, v.AsString())))
			} else {
				be.SchemaName = v.AsString()
			}
		}
	}
	if !diags.HasErrors() {
		c.Settings.Backend = be
	}
	return diags
}

// checkConnStr refuses a conn_str that is neither a postgres:// URL nor
// libpq's key=value form, without quoting it (it may hold a password). Its
// diagnostics point at the block's header, so that the snippet printed
// with them (in a CI log, say) never shows the line that may hold a
// password. The rest (a URL pgx cannot read, a password written into it)
// is for the PostgreSQL driver's parser to say: internal/backend does.
func checkConnStr(s string, block hcl.Range) hcl.Diagnostics {
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") || strings.Contains(s, "=") {
		return nil
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid conn_str",
		Detail: "conn_str must be a PostgreSQL connection URL such as \"postgres://user@host:5432/database\", or libpq's key=value form such as \"host=db.example.com dbname=genform\".", Subject: &block}}
}
