package views

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// RawValue is a primitive value as a shell script wants it.
func RawValue(v cty.Value) (string, error) {
	if !v.IsWhollyKnown() {
		return "", fmt.Errorf("the value is known only after apply")
	}
	if v.IsNull() {
		return "", fmt.Errorf("the value is null")
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), nil
	case cty.Number:
		return v.AsBigFloat().Text('f', -1), nil
	case cty.Bool:
		if v.True() {
			return "true", nil
		}
		return "false", nil
	}
	return "", fmt.Errorf("-raw prints only strings, numbers and bools, and this value is %s; use -json", v.Type().FriendlyName())
}

// Value writes a value as HCL would, collections one element a line,
// and "(known after apply)" for what is not known yet.
func Value(v cty.Value, indent string) string {
	var b strings.Builder
	writeCty(&b, v, indent)
	return b.String()
}

func writeCty(w io.StringWriter, v cty.Value, indent string) {
	if !v.IsKnown() {
		w.WriteString("(known after apply)")
		return
	}
	if v.IsNull() {
		w.WriteString("null")
		return
	}
	ty := v.Type()
	inner := indent + "  "
	switch {
	case ty == cty.String:
		w.WriteString(fmt.Sprintf("%q", v.AsString()))
	case ty == cty.Number:
		w.WriteString(v.AsBigFloat().Text('f', -1))
	case ty == cty.Bool:
		if v.True() {
			w.WriteString("true")
		} else {
			w.WriteString("false")
		}
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		if v.LengthInt() == 0 {
			w.WriteString("[]")
			return
		}
		w.WriteString("[\n")
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			w.WriteString(inner)
			writeCty(w, e, inner)
			w.WriteString(",\n")
		}
		w.WriteString(indent + "]")
	case ty.IsMapType() || ty.IsObjectType():
		if v.LengthInt() == 0 {
			w.WriteString("{}")
			return
		}
		keys := make([]string, 0, v.LengthInt())
		vals := map[string]cty.Value{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			keys = append(keys, k.AsString())
			vals[k.AsString()] = e
		}
		sort.Strings(keys)
		width := 0
		for _, k := range keys {
			width = max(width, len(objectKey(k)))
		}
		w.WriteString("{\n")
		for _, k := range keys {
			w.WriteString(fmt.Sprintf("%s%-*s = ", inner, width, objectKey(k)))
			writeCty(w, vals[k], inner)
			w.WriteString("\n")
		}
		w.WriteString(indent + "}")
	default:
		w.WriteString(v.GoString())
	}
}

// objectKey writes a key bare when it is an identifier, quoted otherwise.
func objectKey(k string) string {
	if hclsyntax.ValidIdentifier(k) {
		return k
	}
	return fmt.Sprintf("%q", k)
}
