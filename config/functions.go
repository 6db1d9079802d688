package config

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// functions returns the function table every expression of c sees: the
// go-cty standard library under the names Terraform users know, try and
// can, a few hashing and encoding helpers, and genform's own env, file,
// filebase64, file_data_uri and templatefile. Nothing in it depends on the
// time or on randomness, so the same configuration always yields the same
// requests. The file functions read only inside the working directory.
func (c *Config) functions() map[string]function.Function {
	fs := map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"alltrue":         allTrueFunc,
		"anytrue":         anyTrueFunc,
		"base64decode":    base64DecodeFunc,
		"base64encode":    base64EncodeFunc,
		"can":             tryfunc.CanFunc,
		"ceil":            stdlib.CeilFunc,
		"chomp":           stdlib.ChompFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        coalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"csvdecode":       stdlib.CSVDecodeFunc,
		"distinct":        stdlib.DistinctFunc,
		"element":         stdlib.ElementFunc,
		"endswith":        endsWithFunc,
		"flatten":         stdlib.FlattenFunc,
		"floor":           stdlib.FloorFunc,
		"format":          stdlib.FormatFunc,
		"formatdate":      stdlib.FormatDateFunc,
		"formatlist":      stdlib.FormatListFunc,
		"indent":          stdlib.IndentFunc,
		"join":            stdlib.JoinFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"keys":            stdlib.KeysFunc,
		"length":          lengthFunc,
		"log":             stdlib.LogFunc,
		"lookup":          stdlib.LookupFunc,
		"lower":           stdlib.LowerFunc,
		"max":             stdlib.MaxFunc,
		"md5":             hashFunc(func(b []byte) []byte { s := md5.Sum(b); return s[:] }),
		"merge":           stdlib.MergeFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"pow":             stdlib.PowFunc,
		"range":           stdlib.RangeFunc,
		"regex":           stdlib.RegexFunc,
		"regexall":        stdlib.RegexAllFunc,
		"replace":         stdlib.ReplaceFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setsubtract":     stdlib.SetSubtractFunc,
		"setunion":        stdlib.SetUnionFunc,
		"sha1":            hashFunc(func(b []byte) []byte { s := sha1.Sum(b); return s[:] }),
		"sha256":          hashFunc(func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }),
		"signum":          stdlib.SignumFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"split":           stdlib.SplitFunc,
		"startswith":      startsWithFunc,
		"strcontains":     strContainsFunc,
		"strrev":          stdlib.ReverseFunc,
		"substr":          stdlib.SubstrFunc,
		"sum":             sumFunc,
		"timeadd":         stdlib.TimeAddFunc,
		"title":           stdlib.TitleFunc,
		"tobool":          stdlib.MakeToFunc(cty.Bool),
		"tolist":          fastCollectionFunc(cty.List, stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType))),
		"tomap":           stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
		"tonumber":        stdlib.MakeToFunc(cty.Number),
		"toset":           fastCollectionFunc(cty.Set, stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType))),
		"tostring":        stdlib.MakeToFunc(cty.String),
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"try":             tryfunc.TryFunc,
		"upper":           stdlib.UpperFunc,
		"urlencode":       urlEncodeFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,

		"env":           c.envFunc(),
		"file":          c.fileFunc(fileText),
		"filebase64":    c.fileFunc(fileBase64),
		"file_data_uri": c.fileFunc(fileDataURI),
	}
	// templatefile sees every function but itself, so a template cannot
	// recurse into templates.
	inner := make(map[string]function.Function, len(fs))
	for k, v := range fs {
		inner[k] = v
	}
	fs["templatefile"] = c.templateFileFunc(inner)
	return fs
}

// fastCollectionFunc wraps tolist or toset: a tuple whose elements all have
// one type converts straight to a collection of that type. go-cty's own
// conversion unifies the element types pairwise, which takes minutes for a
// for_each over tens of thousands of keys; the result is the same.
func fastCollectionFunc(collection func(cty.Type) cty.Type, slow function.Function) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "v", Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowNull: true, AllowUnknown: true}},
		Type: func(args []cty.Value) (cty.Type, error) {
			if ety, ok := uniformTuple(args[0]); ok {
				return collection(ety), nil
			}
			return slow.ReturnType([]cty.Type{args[0].Type()})
		},
		Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
			if _, ok := uniformTuple(args[0]); ok {
				return convert.Convert(args[0], retType)
			}
			return slow.Call(args)
		},
	})
}

// uniformTuple reports whether v is a non-empty tuple of one known,
// primitive element type.
func uniformTuple(v cty.Value) (cty.Type, bool) {
	ty := v.Type()
	if !ty.IsTupleType() {
		return cty.NilType, false
	}
	etys := ty.TupleElementTypes()
	if len(etys) == 0 || !etys[0].IsPrimitiveType() {
		return cty.NilType, false
	}
	for _, t := range etys[1:] {
		if t != etys[0] {
			return cty.NilType, false
		}
	}
	return etys[0], true
}

// coalesceFunc is Terraform's coalesce: the first argument that is neither
// null nor an empty string (go-cty's stops at the first non-null one).
var coalesceFunc = function.New(&function.Spec{
	VarParam: &function.Parameter{Name: "vals", Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowNull: true, AllowUnknown: true},
	Type: func(args []cty.Value) (cty.Type, error) {
		return stdlib.CoalesceFunc.ReturnTypeForValues(args)
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		for _, a := range args {
			if !a.IsKnown() {
				return cty.UnknownVal(retType), nil
			}
			if a.IsNull() {
				continue
			}
			v, err := convert.Convert(a, retType)
			if err != nil {
				return cty.UnknownVal(retType), err
			}
			if v.Type() == cty.String && v.AsString() == "" {
				continue
			}
			return v, nil
		}
		return cty.NilVal, fmt.Errorf("no non-null, non-empty-string arguments")
	},
})

var stringParam = func(name string) function.Parameter {
	return function.Parameter{Name: name, Type: cty.String}
}

// lengthFunc is Terraform's length: collections and strings alike.
var lengthFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowUnknown: true}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v := args[0]
		if v.Type() == cty.String {
			return stdlib.Strlen(v)
		}
		return stdlib.Length(v)
	},
})

var startsWithFunc = stringPredicate("prefix", strings.HasPrefix)
var endsWithFunc = stringPredicate("suffix", strings.HasSuffix)
var strContainsFunc = stringPredicate("substr", strings.Contains)

func stringPredicate(second string, f func(string, string) bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{stringParam("str"), stringParam(second)},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(f(args[0].AsString(), args[1].AsString())), nil
		},
	})
}

var base64EncodeFunc = function.New(&function.Spec{
	Params: []function.Parameter{stringParam("str")},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.StringVal(base64.StdEncoding.EncodeToString([]byte(args[0].AsString()))), nil
	},
})

var base64DecodeFunc = function.New(&function.Spec{
	Params: []function.Parameter{stringParam("str")},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		b, err := base64.StdEncoding.DecodeString(args[0].AsString())
		if err != nil {
			return cty.UnknownVal(cty.String), function.NewArgErrorf(0, "invalid base64 data: %v", err)
		}
		if !utf8.Valid(b) {
			return cty.UnknownVal(cty.String), function.NewArgErrorf(0, "the decoded bytes are not valid UTF-8")
		}
		return cty.StringVal(string(b)), nil
	},
})

var urlEncodeFunc = function.New(&function.Spec{
	Params: []function.Parameter{stringParam("str")},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		return cty.StringVal(url.QueryEscape(args[0].AsString())), nil
	},
})

func hashFunc(sum func([]byte) []byte) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{stringParam("str")},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.StringVal(hex.EncodeToString(sum([]byte(args[0].AsString())))), nil
		},
	})
}

var allTrueFunc = boolReduce(true)
var anyTrueFunc = boolReduce(false)

// boolReduce builds alltrue (all=true) and anytrue (all=false).
func boolReduce(all bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			result := all
			for it := args[0].ElementIterator(); it.Next(); {
				_, v := it.Element()
				if !v.IsKnown() {
					return cty.UnknownVal(cty.Bool), nil
				}
				if v.IsNull() {
					continue
				}
				if v.True() != all {
					result = !all
				}
			}
			return cty.BoolVal(result), nil
		},
	})
}

var sumFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Number)}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if args[0].LengthInt() == 0 {
			return cty.NilVal, function.NewArgErrorf(0, "cannot sum an empty list")
		}
		total := cty.Zero
		for it := args[0].ElementIterator(); it.Next(); {
			_, v := it.Element()
			if v.IsNull() {
				return cty.NilVal, function.NewArgErrorf(0, "cannot sum a list containing null")
			}
			total = total.Add(v)
		}
		return total, nil
	},
})

// envFunc reads the environment given to Load. An unset variable is an
// error unless a default is given, so a typo in a name cannot quietly turn
// a prompt or a token into an empty string.
func (c *Config) envFunc() function.Function {
	return function.New(&function.Spec{
		Params:   []function.Parameter{stringParam("name")},
		VarParam: &function.Parameter{Name: "default", Type: cty.String},
		Type:     function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if len(args) > 2 {
				return cty.UnknownVal(cty.String), function.NewArgErrorf(2, "env takes a name and at most one default")
			}
			name := args[0].AsString()
			if v, ok := c.environ[name]; ok {
				return cty.StringVal(v), nil
			}
			if len(args) == 2 {
				return args[1], nil
			}
			return cty.UnknownVal(cty.String), function.NewArgErrorf(0, "environment variable %q is not set; set it, or give a default as a second argument: env(%q, \"\")", name, name)
		},
	})
}

// readFile reads a file named relative to the working directory, refusing
// absolute paths and paths that lead outside it, through ".." or symbolic
// links.
func (c *Config) readFile(name string) ([]byte, error) {
	if name == "" {
		return nil, fmt.Errorf("the path is empty")
	}
	if filepath.IsAbs(name) || strings.HasPrefix(name, `\`) || filepath.VolumeName(name) != "" {
		return nil, fmt.Errorf("%q is an absolute path; file functions read only inside the working directory, so give a path relative to it", name)
	}
	clean := filepath.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%q leads outside the working directory; file functions read only inside it", name)
	}
	full := filepath.Join(c.absDir, clean)
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return nil, fmt.Errorf("no file %q in the working directory", name)
	}
	rel, err := filepath.Rel(c.absDir, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("%q is a link to a file outside the working directory; file functions read only inside it", name)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", name, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%q is a directory, not a file", name)
	}
	b, err := os.ReadFile(real)
	if err != nil {
		return nil, fmt.Errorf("reading %q: %w", name, err)
	}
	return b, nil
}

// fileFunc is a function of one path that reads the file (readFile's
// rules) and answers the string text makes of its bytes; an error of
// either is the path's.
func (c *Config) fileFunc(text func(name string, b []byte) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{stringParam("path")},
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			b, err := c.readFile(name)
			var s string
			if err == nil {
				s, err = text(name, b)
			}
			if err != nil {
				return cty.UnknownVal(cty.String), function.NewArgError(0, err)
			}
			return cty.StringVal(s), nil
		},
	})
}

// fileText is file's answer: the file as text, which must be UTF-8.
func fileText(name string, b []byte) (string, error) {
	if !utf8.Valid(b) {
		return "", fmt.Errorf("%q is not valid UTF-8 text; use filebase64 or file_data_uri for binary files", name)
	}
	return string(b), nil
}

// fileBase64 is filebase64's answer: the file's bytes in base64.
func fileBase64(_ string, b []byte) (string, error) {
	return base64.StdEncoding.EncodeToString(b), nil
}

// mediaTypes maps the extensions of media files to their types. It is a
// fixed table rather than mime.TypeByExtension, which consults the system's
// mime.types: the type is part of the request, so it must not change from
// one machine to another.
var mediaTypes = map[string]string{
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
	".bmp":  "image/bmp",
	".avif": "image/avif",
	".svg":  "image/svg+xml",
	".mp4":  "video/mp4",
	".webm": "video/webm",
	".txt":  "text/plain",
}

// fileDataURI is file_data_uri's answer: the file as a data URI, of
// the type its extension names (mediaTypes), or else the type its bytes
// look like.
func fileDataURI(name string, b []byte) (string, error) {
	typ, ok := mediaTypes[strings.ToLower(filepath.Ext(name))]
	if !ok {
		typ = http.DetectContentType(b)
		if i := strings.IndexByte(typ, ';'); i >= 0 {
			typ = typ[:i]
		}
	}
	return "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(b), nil
}

// templateFileFunc renders a template file with the given variables, as
// Terraform's templatefile does.
func (c *Config) templateFileFunc(funcs map[string]function.Function) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{
			stringParam("path"),
			{Name: "vars", Type: cty.DynamicPseudoType},
		},
		Type: function.StaticReturnType(cty.DynamicPseudoType),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			vars := args[1]
			if !vars.IsWhollyKnown() {
				return cty.DynamicVal, nil
			}
			ty := vars.Type()
			if vars.IsNull() || !(ty.IsObjectType() || ty.IsMapType()) {
				return cty.DynamicVal, function.NewArgErrorf(1, "vars must be an object or a map")
			}
			src, err := c.readFile(name)
			if err != nil {
				return cty.DynamicVal, function.NewArgError(0, err)
			}
			diags := checkNesting(src, name, scanTemplate)
			if diags.HasErrors() {
				return cty.DynamicVal, function.NewArgErrorf(0, "template %s: %s", name, diags.Error())
			}
			expr, diags := hclsyntax.ParseTemplate(src, name, hcl.InitialPos)
			if diags.HasErrors() {
				return cty.DynamicVal, function.NewArgErrorf(0, "parsing template %s: %s", name, diags.Error())
			}
			ctxVars := map[string]cty.Value{}
			for it := vars.ElementIterator(); it.Next(); {
				k, v := it.Element()
				ctxVars[k.AsString()] = v
			}
			for _, tr := range expr.Variables() {
				if _, ok := ctxVars[tr.RootName()]; !ok {
					return cty.DynamicVal, function.NewArgErrorf(1, "vars has no key %q, which the template uses at %s", tr.RootName(), tr.SourceRange())
				}
			}
			val, diags := expr.Value(&hcl.EvalContext{Variables: ctxVars, Functions: funcs})
			if diags.HasErrors() {
				return cty.DynamicVal, function.NewArgErrorf(0, "rendering template %s: %s", name, diags.Error())
			}
			return val, nil
		},
	})
}
