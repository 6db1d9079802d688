package config

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// EnvVarPrefix prefixes the environment variables that set input variables.
const EnvVarPrefix = "GENFORM_VAR_"

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"}, {Name: "default"}, {Name: "description"}, {Name: "sensitive"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true}, {Name: "error_message", Required: true},
	},
}

func decodeVariable(block *hcl.Block) (*Variable, *typeexpr.Defaults, hcl.Diagnostics) {
	v := &Variable{
		Name:      block.Labels[0],
		Type:      cty.DynamicPseudoType,
		DeclRange: block.DefRange,
		literal:   true,
	}
	var diags hcl.Diagnostics
	diags = append(diags, checkName(v.Name, "variable", block.LabelRanges[0])...)
	content, d := block.Body.Content(variableSchema)
	diags = append(diags, d...)
	var defaults *typeexpr.Defaults
	if a, ok := content.Attributes["type"]; ok {
		ty, defs, d := typeexpr.TypeConstraintWithDefaults(a.Expr)
		diags = append(diags, d...)
		if !d.HasErrors() {
			v.Type, defaults = ty, defs
			// Like Terraform: values given as strings on the command line or
			// in the environment are taken literally for primitive types and
			// parsed as HCL for structured ones.
			v.literal = ty.IsPrimitiveType()
		}
	}
	diags = append(diags, decodeDescribed(content, &v.Description, &v.Sensitive)...)
	if a, ok := content.Attributes["default"]; ok {
		val, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if defaults != nil {
				val = defaults.Apply(val)
			}
			conv, err := convert.Convert(val, v.Type)
			if err != nil {
				diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid default value for variable",
					fmt.Sprintf("This default value is not compatible with the variable's type constraint: %s.", err)))
				conv = cty.UnknownVal(v.Type)
			}
			v.Default = conv
			v.valueExpr = a.Expr.Range()
		}
	}
	for _, b := range content.Blocks {
		vc, d := b.Body.Content(validationSchema)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		v.Validations = append(v.Validations, &VariableValidation{
			Condition:    vc.Attributes["condition"].Expr,
			ErrorMessage: vc.Attributes["error_message"].Expr,
			DeclRange:    b.DefRange,
		})
	}
	return v, defaults, diags
}

// decodeDescribed decodes the description and sensitive arguments, which
// a variable and an output both take as literals, into description and
// sensitive; an argument left out leaves its value as it was.
func decodeDescribed(content *hcl.BodyContent, description *string, sensitive *bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	if a, ok := content.Attributes["description"]; ok {
		s, d := literalString(a)
		diags = append(diags, d...)
		*description = s
	}
	if a, ok := content.Attributes["sensitive"]; ok {
		sens, d := literalBool(a, "sensitive")
		diags = append(diags, d...)
		*sensitive = sens
	}
	return diags
}

// attributesInOrder is the attributes of body (a locals block, a
// variable definitions file), in the order they are written.
func attributesInOrder(body hcl.Body) ([]*hcl.Attribute, hcl.Diagnostics) {
	attrs, diags := body.JustAttributes()
	list := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		list = append(list, a)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Range.Start.Byte < list[j].Range.Start.Byte })
	return list, diags
}

func literalString(a *hcl.Attribute) (string, hcl.Diagnostics) {
	val, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return "", diags
	}
	s, err := convert.Convert(val, cty.String)
	if err != nil || s.IsNull() || !s.IsKnown() {
		return "", hcl.Diagnostics{errorAt(a.Expr.Range().Ptr(), "Invalid "+a.Name+" value",
			a.Name+" takes a string.")}
	}
	return s.AsString(), nil
}

// settleVariables gives every variable its effective value:
// default < GENFORM_VAR_<name> < -var-file (in order) < -var (in order).
func (c *Config) settleVariables(opts Options, parser *hclparse.Parser, defaults map[string]*typeexpr.Defaults) hcl.Diagnostics {
	var diags hcl.Diagnostics
	raw := map[string]cty.Value{}

	// Environment: undeclared names are ignored, as Terraform does, since
	// the environment is shared with other configurations.
	for _, kv := range opts.Environ {
		if !strings.HasPrefix(kv, EnvVarPrefix) {
			continue
		}
		name, val, _ := strings.Cut(kv[len(EnvVarPrefix):], "=")
		v, ok := c.Variables[name]
		if !ok {
			continue
		}
		rng := hcl.Range{Filename: "<environment " + EnvVarPrefix + name + ">", Start: hcl.InitialPos, End: hcl.InitialPos}
		val2, d := c.parseRawValue(v, val, rng.Filename)
		diags = append(diags, d...)
		raw[name] = val2
		v.valueExpr = rng
	}

	for _, path := range opts.VarFiles {
		diags = append(diags, c.readVarFile(path, parser, raw)...)
	}

	for i, arg := range opts.Vars {
		name, val, ok := strings.Cut(arg, "=")
		cmdline := hcl.Range{Filename: "<command line>", Start: hcl.InitialPos, End: hcl.InitialPos}
		if !ok || name == "" {
			// What was given is not quoted: it may be the value alone.
			diags = append(diags, errorAt(&cmdline, "Invalid -var option",
				fmt.Sprintf("The -var option number %d is not correctly specified (what it holds is not repeated here, as it may be a secret). It must be a variable name and value separated by an equals sign, like -var=\"key=value\".", i+1)))
			continue
		}
		name = strings.TrimSpace(name)
		v, declared := c.Variables[name]
		if !declared {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Value for undeclared variable",
				Detail: fmt.Sprintf("A variable named %q was assigned on the command line, but the configuration does not declare a variable of that name. To use this value, add a \"variable\" block to the configuration.", name) +
					didYouMean(name, c.variableNames()),
				Subject: &cmdline,
			})
			continue
		}
		fname := "<value for var." + name + ">"
		val2, d := c.parseRawValue(v, val, fname)
		diags = append(diags, d...)
		raw[name] = val2
		v.valueExpr = hcl.Range{Filename: fname, Start: hcl.InitialPos, End: hcl.Pos{Line: 1, Column: len(val) + 1, Byte: len(val)}}
	}

	names := c.variableNames()
	sort.Strings(names)
	vals := make(map[string]cty.Value, len(names))
	for _, name := range names {
		v := c.Variables[name]
		val, given := raw[name]
		switch {
		case given:
			if defs := defaults[name]; defs != nil {
				val = defs.Apply(val)
			}
			conv, err := convert.Convert(val, v.Type)
			if err != nil {
				diags = append(diags, errorAt(v.valueExpr.Ptr(), "Invalid value for variable",
					fmt.Sprintf("The value given for variable %q is not suitable: %s. The variable is declared at %s.", name, err, v.DeclRange)))
				conv = cty.UnknownVal(v.Type)
			}
			v.Value = conv
			v.hasValue = true
		case v.Default != cty.NilVal:
			v.Value = v.Default
			v.hasValue = true
		case opts.UnknownUnset:
			v.Value = cty.UnknownVal(v.Type)
		default:
			diags = append(diags, errorAt(v.DeclRange.Ptr(), "No value for required variable",
				fmt.Sprintf("The input variable %q is not set, and has no default value. Use a -var or -var-file command line argument, or set %s%s, to provide a value for this variable.", name, EnvVarPrefix, name)))
			v.Value = cty.UnknownVal(v.Type)
		}
		vals[name] = v.Value
		if c.Secret(name) {
			// Marked, so that every value made from it is known to be
			// sensitive however it was computed.
			vals[name] = v.Value.Mark(markSensitive)
		}
	}
	if len(vals) == 0 {
		c.varObj = cty.EmptyObjectVal
	} else {
		c.varObj = cty.ObjectVal(vals)
	}
	c.baseCtx = &hcl.EvalContext{Variables: map[string]cty.Value{"var": c.varObj, "path": c.pathObj}, Functions: c.funcs}
	return diags
}

// parseRawValue turns a value given as a string (environment, -var) into a
// value, literally or as an HCL expression depending on the variable's type.
func (c *Config) parseRawValue(v *Variable, raw, fname string) (cty.Value, hcl.Diagnostics) {
	if v.literal {
		return cty.StringVal(raw), nil
	}
	if d := checkNesting([]byte(raw), fname, scanConfig); d != nil {
		return cty.DynamicVal, d
	}
	if !c.Secret(v.Name) {
		c.Files[fname] = &hcl.File{Bytes: []byte(raw)}
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), fname, hcl.InitialPos)
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	val, diags := expr.Value(nil)
	if diags.HasErrors() {
		return cty.DynamicVal, diags
	}
	return val, nil
}

func (c *Config) readVarFile(path string, parser *hclparse.Parser, raw map[string]cty.Value) hcl.Diagnostics {
	src, err := os.ReadFile(filepath.Join(c.Dir, path))
	if err != nil {
		return hcl.Diagnostics{errorAt(&hcl.Range{Filename: path, Start: hcl.InitialPos, End: hcl.InitialPos}, "Failed to read variables file",
			fmt.Sprintf("Given variables file %s could not be read: %v.", path, err))}
	}
	var f *hcl.File
	var diags hcl.Diagnostics
	mode := scanConfig
	if strings.HasSuffix(path, ".json") {
		mode = scanJSON
	}
	if d := checkNesting(src, path, mode); d != nil {
		return d
	}
	if mode == scanJSON {
		f, diags = parser.ParseJSON(src, path)
	} else {
		f, diags = parser.ParseHCL(src, path)
	}
	if f != nil {
		c.Files[path] = f
	}
	if diags.HasErrors() || f == nil {
		return diags
	}
	list, d := attributesInOrder(f.Body)
	diags = append(diags, d...)
	for _, a := range list {
		v, ok := c.Variables[a.Name]
		if !ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagWarning,
				Summary:  "Value for undeclared variable",
				Detail:   fmt.Sprintf("The variables file sets %q, but the configuration does not declare a variable of that name.", a.Name) + didYouMean(a.Name, c.variableNames()),
				Subject:  a.NameRange.Ptr(),
			})
			continue
		}
		val, d := a.Expr.Value(nil)
		diags = append(diags, d...)
		if d.HasErrors() {
			val = cty.DynamicVal
		}
		raw[a.Name] = val
		v.valueExpr = a.Expr.Range()
	}
	return diags
}

func (c *Config) variableNames() []string {
	names := make([]string, 0, len(c.Variables))
	for n := range c.Variables {
		names = append(names, n)
	}
	return names
}

// checkVariableValidations runs every validation block against the settled
// values.
func (c *Config) checkVariableValidations() hcl.Diagnostics {
	var diags hcl.Diagnostics
	names := c.variableNames()
	sort.Strings(names)
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{"var": c.varObj}, Functions: c.funcs}
	for _, name := range names {
		v := c.Variables[name]
		for _, val := range v.Validations {
			_, _, _, d := c.analyze(val.Condition, refRules{where: "a variable validation"})
			_, _, _, d2 := c.analyze(val.ErrorMessage, refRules{where: "a variable validation"})
			diags = append(diags, d...)
			diags = append(diags, d2...)
			if d.HasErrors() || d2.HasErrors() {
				continue
			}
			ok, d := val.Condition.Value(ctx)
			ok, _ = ok.UnmarkDeep()
			diags = append(diags, d...)
			if d.HasErrors() || !ok.IsKnown() {
				continue
			}
			okb, err := convert.Convert(ok, cty.Bool)
			if err != nil || okb.IsNull() {
				diags = append(diags, errorAt(val.Condition.Range().Ptr(), "Invalid validation condition",
					"The condition must be true or false."))
				continue
			}
			if okb.True() {
				continue
			}
			msg := "The value is not valid."
			if m, d := val.ErrorMessage.Value(ctx); !d.HasErrors() && m.IsKnown() && !m.IsNull() {
				m, marks := m.UnmarkDeep()
				if s, err := convert.Convert(m, cty.String); err == nil {
					msg = s.AsString()
				}
				if hasSensitive(marks) {
					msg = "The value is not valid. (The error message is made from a sensitive value, so it is not shown.)"
				}
			}
			subject := v.valueExpr
			if subject.Filename == "" {
				subject = v.DeclRange
			}
			diags = append(diags, errorAt(subject.Ptr(), "Invalid value for variable",
				fmt.Sprintf("%s\n\nThis was checked by the validation rule at %s.", msg, val.Condition.Range())))
		}
	}
	return diags
}

// literalBool decodes an attribute that takes a literal true or false.
func literalBool(a *hcl.Attribute, name string) (bool, hcl.Diagnostics) {
	val, diags := a.Expr.Value(nil)
	if diags.HasErrors() {
		return false, diags
	}
	b, err := convert.Convert(val, cty.Bool)
	if err != nil || b.IsNull() || !b.IsKnown() {
		return false, append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid "+name+" value",
			name+" takes true or false."))
	}
	return b.True(), diags
}

// checkName refuses a block label that cannot be used in a reference.
func checkName(name, what string, rng hcl.Range) hcl.Diagnostics {
	if plainIdentifier(name) || hclsyntax.ValidIdentifier(name) {
		return nil
	}
	return hcl.Diagnostics{errorAt(rng.Ptr(), "Invalid "+what+" name",
		"A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.")}
}

// plainIdentifier reports whether name is an ASCII identifier: a letter or
// underscore, then letters, digits, underscores and dashes. Every such name
// is one hclsyntax.ValidIdentifier accepts, without running the lexer (and
// its allocations) for each of a large configuration's resources.
func plainIdentifier(name string) bool {
	if name == "" || !isIdentStart(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isIdentByte(name[i]) {
			return false
		}
	}
	return true
}

// unsetSetting is an attribute of the genform, backend, service, store or
// provider block whose value is unknown because it is made from variables
// given no value.
type unsetSetting struct {
	where string // the block, as settingValue names it
	name  string
	rng   hcl.Range
	vars  []string
}

// unsetVariablesOf lists, sorted, the variables given no value that expr
// refers to, directly or through locals.
func (c *Config) unsetVariablesOf(expr hcl.Expression) []string {
	names := c.variablesOf([]hcl.Expression{expr}, func(v *Variable) bool { return v != nil && !v.hasValue })
	sort.Strings(names)
	return names
}

// variablesOf lists the variables exprs refer to, directly or through
// locals, that keep says to list, in the order first met.
func (c *Config) variablesOf(exprs []hcl.Expression, keep func(*Variable) bool) []string {
	var names []string
	seen := map[string]bool{}
	var walk func(hcl.Expression)
	walk = func(expr hcl.Expression) {
		for _, tr := range expr.Variables() {
			if len(tr) < 2 {
				continue
			}
			at, ok := tr[1].(hcl.TraverseAttr)
			if !ok {
				continue
			}
			switch tr.RootName() {
			case "var":
				if keep(c.Variables[at.Name]) {
					names = appendUnique(names, at.Name)
				}
			case "local":
				if l := c.Locals[at.Name]; l != nil && !seen[at.Name] {
					seen[at.Name] = true
					walk(l.Expr)
				}
			}
		}
	}
	for _, e := range exprs {
		walk(e)
	}
	return names
}

// UnlocatedState reports, as errors, the settings that say where the state
// is kept (state_file, a backend's conn_str and schema_name) which are
// made from a variable given no value. Load leaves such a setting at its
// default under Options.UnknownUnset, which would name another state:
// init, which loads that way, must stop instead of preparing it.
func (c *Config) UnlocatedState() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, s := range c.unsetSettings {
		switch {
		case s.where == genformWhere && s.name == "state_file":
		case s.where == backendWhere && (s.name == "conn_str" || s.name == "schema_name"):
		default:
			continue
		}
		refs := make([]string, len(s.vars))
		for i, n := range s.vars {
			refs[i] = "var." + n
		}
		which, set := "which has", "Set it"
		if len(refs) > 1 {
			which, set = "which have", "Set them"
		}
		first := s.vars[0]
		rng := s.rng
		if s.name == "conn_str" {
			// As checkConnStr's: the header, so that the snippet never
			// shows the line, which may hold a password besides.
			rng = c.Settings.DeclRange
			if be := c.Settings.Backend; be != nil {
				rng = be.DeclRange
			}
		}
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Cannot locate the state",
			Detail: fmt.Sprintf("%s is made from %s, %s no value, so there is no telling where the state is kept. %s with -var '%s=VALUE', a -var-file or %s%s.",
				s.name, joinList(refs), which, set, first, EnvVarPrefix, first),
			Subject: &rng,
		})
	}
	return diags
}
