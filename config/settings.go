package config

import (
	"fmt"
	"math"
	"math/big"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var genformSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "state_file"}, {Name: "output_dir"},
		{Name: "cache_dir"}, {Name: "cache_max_size"}, {Name: "restore"},
		{Name: "workspace_max_cost"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "backend", LabelNames: []string{"type"}}, {Type: "store", LabelNames: []string{"type"}}},
}

var serviceSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "base_url"}, {Name: "token"}, {Name: "parallelism"},
		{Name: "requests_per_minute"}, {Name: "poll_interval"}, {Name: "timeout"},
		{Name: "max_download_size"},
		{Name: "prices"}, {Name: "currency"},
	},
}

// What settingValue's diagnostics call the genform block and its backend
// block, and how UnlocatedState finds their settings.
const (
	genformWhere = "the genform block"
	backendWhere = "the backend block"
)

// settingValue evaluates an attribute of the genform or service block: it
// may use variables, functions and locals that do not depend on resources.
// ok is false when the value is unusable (already reported) or null.
func (c *Config) settingValue(a *hcl.Attribute, where string, ty cty.Type) (cty.Value, bool, hcl.Diagnostics) {
	_, locals, _, diags := c.analyze(a.Expr, refRules{where: where, locals: true})
	if diags.HasErrors() {
		return cty.NilVal, false, diags
	}
	lv := map[string]cty.Value{}
	for _, n := range locals {
		l := c.Locals[n]
		if !l.static {
			if l.checked {
				diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid reference",
					fmt.Sprintf("local.%s depends on resources, which %s cannot use: its value is needed before any resource is evaluated.", n, where)))
			}
			return cty.NilVal, false, diags
		}
		lv[n] = l.value
	}
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": c.varObj, "local": subObject(lv, locals)},
		Functions: c.funcs,
	}
	v, d := a.Expr.Value(ctx)
	v, _ = v.UnmarkDeep()
	diags = append(diags, d...)
	if d.HasErrors() {
		return cty.NilVal, false, diags
	}
	if !v.IsWhollyKnown() {
		// Only a variable that failed to settle, or one left unset under
		// Options.UnknownUnset, is unknown here: the first is reported
		// already, the second is remembered for UnlocatedState.
		if vars := c.unsetVariablesOf(a.Expr); len(vars) > 0 {
			c.unsetSettings = append(c.unsetSettings, unsetSetting{where: where, name: a.Name, rng: a.Expr.Range(), vars: vars})
		}
		return cty.NilVal, false, diags
	}
	if v.IsNull() {
		return cty.NilVal, false, diags
	}
	conv, err := convert.Convert(v, ty)
	if err != nil {
		diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Incorrect attribute value type",
			fmt.Sprintf("Inappropriate value for attribute %q: %s.", a.Name, err)))
		return cty.NilVal, false, diags
	}
	return conv, true, diags
}

func (c *Config) decodeSettings(b *hcl.Block) hcl.Diagnostics {
	c.Settings.DeclRange = b.DefRange
	content, diags := b.Body.Content(genformSchema)
	var backends, stores hcl.Blocks
	for _, blk := range content.Blocks {
		if blk.Type == "store" {
			stores = append(stores, blk)
		} else {
			backends = append(backends, blk)
		}
	}
	diags = append(diags, c.decodeBackends(backends, content.Attributes["state_file"])...)
	diags = append(diags, c.decodeStores(stores)...)
	for _, name := range []string{"state_file", "output_dir", "cache_dir"} {
		a, ok := content.Attributes[name]
		if !ok {
			continue
		}
		v, ok, d := c.settingValue(a, genformWhere, cty.String)
		diags = append(diags, d...)
		if !ok {
			continue
		}
		p, err := insidePath(v.AsString())
		if err != nil {
			diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid "+name,
				fmt.Sprintf("%s %s.", name, err)))
			continue
		}
		if name == "state_file" {
			if p == "." {
				diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid state_file",
					"state_file must name a file inside the working directory, such as \".genform/state.db\"."))
				continue
			}
			c.Settings.StateFile = p
		} else if name == "output_dir" {
			c.Settings.OutputDir = p
		} else {
			c.Settings.CacheDir = p
		}
	}
	if a, ok := content.Attributes["cache_max_size"]; ok {
		v, ok, d := c.settingValue(a, genformWhere, cty.String)
		diags = append(diags, d...)
		if ok {
			n, err := humanize.ParseBytes(v.AsString())
			if err != nil || n > math.MaxInt64 {
				diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid cache_max_size",
					fmt.Sprintf("cache_max_size must be a size such as \"5GiB\", \"500MB\" or \"0\" (keep nothing); got %q.", v.AsString())))
			} else {
				c.Settings.CacheMaxSize = int64(n)
			}
		}
	}
	if a, ok := content.Attributes["workspace_max_cost"]; ok {
		v, ok, d := c.settingValue(a, genformWhere, cty.Number)
		diags = append(diags, d...)
		if ok {
			m, err := ParseMoney(v.AsBigFloat().Text('f', -1))
			if err == nil && m <= 0 {
				err = fmt.Errorf("it must be more than 0")
			}
			if err != nil {
				diags = append(diags, errorAt(a.Expr.Range().Ptr(), "Invalid workspace_max_cost",
					fmt.Sprintf("workspace_max_cost is what each workspace but default may spend in all, in the currency of the prices, such as 20: %v.", err)))
			} else {
				c.Settings.WorkspaceMaxCost = &m
			}
		}
	}
	if a, ok := content.Attributes["restore"]; ok {
		v, ok, d := c.settingValue(a, genformWhere, cty.Bool)
		diags = append(diags, d...)
		if ok {
			c.Settings.Restore = v.True()
		}
	}
	// The state file is never where outputs or cached files are written:
	// an apply would write an image over the database, or prune it.
	if c.Settings.Backend == nil {
		sf, od, cd := c.Settings.StateFile, c.Settings.OutputDir, c.Settings.CacheDir
		rng := b.DefRange
		if a, ok := content.Attributes["state_file"]; ok {
			rng = a.Expr.Range()
		}
		var where string
		switch {
		case od != "." && within(sf, od), within(od, sf):
			where = fmt.Sprintf("output_dir %q", od)
		case within(sf, cd), within(cd, sf):
			where = fmt.Sprintf("cache_dir %q", cd)
		}
		if where != "" {
			diags = append(diags, errorAt(&rng, "Invalid state_file",
				fmt.Sprintf("state_file %q lies inside %s (or holds it), where apply writes and removes files: an output would overwrite the state. Keep the state file apart, such as %q.", sf, where, DefaultStateFile)))
		}
	}
	// The cache keeps files the output directory no longer holds; neither
	// may hold the other (an output_dir that is the working directory
	// itself aside), or pruning one would remove files of the other.
	if cd, od := c.Settings.CacheDir, c.Settings.OutputDir; cd == "." || od != "." && within(cd, od) || within(od, cd) || cd == c.Settings.StateFile {
		rng := b.DefRange
		if a, ok := content.Attributes["cache_dir"]; ok {
			rng = a.Expr.Range()
		}
		diags = append(diags, errorAt(&rng, "Invalid cache_dir",
			fmt.Sprintf("cache_dir %q and output_dir %q must be separate directories (neither inside the other), and cache_dir is not the working directory or the state file; the default is %q.", cd, od, DefaultCacheDir)))
	}
	return diags
}

// within reports whether the clean relative path p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// insidePath cleans a path that must stay inside the working directory, or
// says why it does not.
func insidePath(p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("must not be empty")
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || filepath.VolumeName(p) != "" {
		return "", fmt.Errorf("must be a path relative to the working directory, not the absolute path %q", p)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("must not contain a NUL character")
	}
	clean := filepath.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("must stay inside the working directory, and %q leads out of it", p)
	}
	return clean, nil
}

func (c *Config) decodeService(b *hcl.Block) hcl.Diagnostics {
	c.Service.DeclRange = b.DefRange
	content, diags := b.Body.Content(serviceSchema)
	diags = append(diags, c.decodeConn(content, "the service block", "token", &c.Service)...)
	prices, d := c.decodePrices(content.Attributes["prices"], content.Attributes["currency"], "the service block")
	c.Service.Prices = prices
	return append(diags, d...)
}

// decodeConn reads what the service block and the provider blocks share
// into svc: base_url, the key (named keyName: token or key), parallelism,
// requests_per_minute, poll_interval, timeout and max_download_size.
func (c *Config) decodeConn(content *hcl.BodyContent, where, keyName string, svc *Service) hcl.Diagnostics {
	var diags hcl.Diagnostics
	bad := func(a *hcl.Attribute, summary, detail string) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: a.Expr.Range().Ptr()})
	}
	if a, ok := content.Attributes["base_url"]; ok {
		v, ok, d := c.settingValue(a, where, cty.String)
		diags = append(diags, d...)
		if ok {
			s := strings.TrimRight(v.AsString(), "/")
			u, err := url.Parse(s)
			switch {
			case s == "" && keyName == "key":
				// A provider block's empty base_url is the provider's own
				// address, as when it is unset: base_url = env("X", "")
				// points a configuration at a simulator only when X is set.
			case HasCredentials(s):
				// No subject: the snippet would print the line, and the
				// line may hold the password.
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  "Credentials in base_url",
					Detail: fmt.Sprintf("base_url (%s, line %d) holds a user name or password before the host. genform would print and store the URL (in plans, the state, saved plans and logs), so it refuses it, and does not show it here: remove them from base_url, and give the service its token with GENFORM_TOKEN or the service block's token.",
						a.Expr.Range().Filename, a.Expr.Range().Start.Line),
				})
			case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
				bad(a, "Invalid base_url", "base_url must be an http or https URL such as \"https://gen.example.com\".")
			default:
				svc.BaseURL = s
			}
		}
	}
	if a, ok := content.Attributes[keyName]; ok {
		// The value is never put in a diagnostic: only its type is checked.
		v, ok, d := c.settingValue(a, where, cty.String)
		diags = append(diags, d...)
		if ok {
			svc.Token = v.AsString()
		}
	}
	for _, n := range []struct {
		name string
		dst  *int
	}{{"parallelism", &svc.Parallelism}, {"requests_per_minute", &svc.RequestsPerMinute}} {
		a, ok := content.Attributes[n.name]
		if !ok {
			continue
		}
		v, ok, d := c.settingValue(a, where, cty.Number)
		diags = append(diags, d...)
		if !ok {
			continue
		}
		i, acc := v.AsBigFloat().Int64()
		if acc != big.Exact || i < 1 || i > 1_000_000 {
			bad(a, "Invalid "+n.name, fmt.Sprintf("%s must be a whole number from 1 to 1000000; got %s.", n.name, numberText(v)))
			continue
		}
		*n.dst = int(i)
	}
	for _, n := range []struct {
		name string
		dst  *time.Duration
	}{{"poll_interval", &svc.PollInterval}, {"timeout", &svc.Timeout}} {
		a, ok := content.Attributes[n.name]
		if !ok {
			continue
		}
		v, ok, d := c.settingValue(a, where, cty.String)
		diags = append(diags, d...)
		if !ok {
			continue
		}
		dur, err := time.ParseDuration(v.AsString())
		if err != nil || dur <= 0 {
			bad(a, "Invalid "+n.name, fmt.Sprintf("%s must be a positive duration such as \"5s\", \"2m\" or \"1h30m\"; got %q.", n.name, v.AsString()))
			continue
		}
		*n.dst = dur
	}
	if a, ok := content.Attributes["max_download_size"]; ok {
		v, ok, d := c.settingValue(a, where, cty.String)
		diags = append(diags, d...)
		if ok {
			size, err := humanize.ParseBytes(v.AsString())
			if err != nil || size < 1 || size > math.MaxInt64 {
				bad(a, "Invalid max_download_size", fmt.Sprintf("max_download_size must be a size such as \"4GiB\", \"500MB\" or \"1048576\" (bytes); got %q.", v.AsString()))
			} else {
				svc.MaxDownloadSize = int64(size)
			}
		}
	}
	return diags
}

// priceNames are the keys of service.prices and what each one prices.
var priceNames = []struct{ key, what string }{
	{"image", "one output image"},
	{"video_second", "one second of video"},
	{"megapixel", "one megapixel of an output image"},
}

// decodePrices reads prices and currency of the block where names; nil
// prices when the block sets none.
func (c *Config) decodePrices(prices, currency *hcl.Attribute, where string) (*Prices, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	bad := func(a *hcl.Attribute, summary, detail string) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: a.Expr.Range().Ptr()})
	}
	p := &Prices{Currency: "USD"}
	if currency != nil {
		v, ok, d := c.settingValue(currency, where, cty.String)
		diags = append(diags, d...)
		if ok {
			cur := strings.TrimSpace(v.AsString())
			if cur == "" || len(cur) > 12 || strings.ContainsFunc(cur, func(r rune) bool { return r < '!' || r > '~' }) {
				bad(currency, "Invalid currency", fmt.Sprintf("currency names the unit of the prices, such as \"USD\", \"EUR\" or \"credits\": up to 12 printable characters without spaces; got %q.", v.AsString()))
			} else {
				p.Currency = cur
			}
		}
		if prices == nil {
			bad(currency, "Currency without prices", "currency names the unit of service.prices, which is not set; set prices = { image = 0.02, video_second = 0.05 } in the service block, or remove currency.")
		}
	}
	if prices == nil {
		return nil, diags
	}
	v, ok, d := c.settingValue(prices, where, cty.DynamicPseudoType)
	diags = append(diags, d...)
	if !ok {
		return nil, diags
	}
	p, d = c.pricesOf(prices, v, p, where != "the service block")
	return p, append(diags, d...)
}

// pricesOf reads one prices object v (of attribute prices) into p. sized
// allows the prices that follow the size of what is made (megapixel,
// video_second by resolution): a live provider's tables read the size
// from its request; the reference service's prices are by the file.
func (c *Config) pricesOf(prices *hcl.Attribute, v cty.Value, p *Prices, sized bool) (*Prices, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	bad := func(a *hcl.Attribute, summary, detail string) {
		diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: a.Expr.Range().Ptr()})
	}
	keys := make([]string, len(priceNames))
	for i, n := range priceNames {
		keys[i] = n.key
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		bad(prices, "Invalid prices", fmt.Sprintf("prices must be an object such as { image = 0.02, video_second = 0.05 }: the price of %s and of %s, in currency units.", priceNames[0].what, priceNames[1].what))
		return nil, diags
	}
	for it := v.ElementIterator(); it.Next(); {
		k, pv := it.Element()
		key := k.AsString()
		var dst **Money
		switch key {
		case "image":
			dst = &p.Image
		case "video_second":
			if pv.Type().IsObjectType() || pv.Type().IsMapType() {
				if !sized {
					bad(prices, "Invalid prices", "prices.video_second by resolution prices a live provider's model, whose tables read the resolution from its request; the service block's video_second is one number, the price of one second of video.")
					continue
				}
				p.VideoSecondAt, diags = videoSecondsAt(prices, pv, diags)
				continue
			}
			dst = &p.VideoSecond
		case "megapixel":
			if !sized {
				bad(prices, "Invalid prices", "prices.megapixel prices a live provider's model, whose tables read the size of its images from its request; the service block prices by the image: set image instead.")
				continue
			}
			dst = &p.Megapixel
		default:
			bad(prices, "Unknown price", fmt.Sprintf("prices has no %q; the prices are %s.%s", key, strings.Join(keys, ", "), didYouMean(key, keys)))
			continue
		}
		m, ok := priceValue(prices, key, pv, &diags)
		if ok {
			*dst = &m
		}
	}
	if p.Image == nil && p.VideoSecond == nil && p.Megapixel == nil && p.VideoSecondAt == nil && !diags.HasErrors() {
		bad(prices, "Invalid prices", "prices sets no price; set image (the price of one output image) and video_second (the price of one second of video), such as { image = 0.02, video_second = 0.05 }.")
	}
	return p, diags
}

// priceValue reads the price named key, appending why it is refused to
// diags.
func priceValue(prices *hcl.Attribute, key string, pv cty.Value, diags *hcl.Diagnostics) (Money, bool) {
	bad := func(detail string) {
		*diags = append(*diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid prices", Detail: detail, Subject: prices.Expr.Range().Ptr()})
	}
	nv, err := convert.Convert(pv, cty.Number)
	if err != nil || nv.IsNull() || !nv.IsKnown() {
		bad(fmt.Sprintf("prices.%s must be a number, the price of %s in currency units, such as 0.02.", key, priceFor(key)))
		return 0, false
	}
	// The shortest decimal that reads back as the number: HCL keeps
	// 0.02 as a binary fraction, which is not 0.02 exactly.
	m, err := ParseMoney(nv.AsBigFloat().Text('f', -1))
	if err != nil {
		bad(fmt.Sprintf("prices.%s: %v; write the price of %s in currency units, such as 0.02.", key, err, priceFor(key)))
		return 0, false
	}
	return m, true
}

// videoSecondsAt reads video_second = { "720p" = 0.2, "1080p" = 0.4 }:
// the price of one second of video at each resolution, by its short
// side in lines ("4k" is 2160).
func videoSecondsAt(prices *hcl.Attribute, v cty.Value, diags hcl.Diagnostics) (map[int64]Money, hcl.Diagnostics) {
	at := map[int64]Money{}
	for it := v.ElementIterator(); it.Next(); {
		k, pv := it.Element()
		lines, ok := ParseResolution(k.AsString())
		if !ok {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid prices",
				Detail:  fmt.Sprintf("prices.video_second is keyed by resolution, such as { \"720p\" = 0.2, \"1080p\" = 0.4, \"4k\" = 0.6 }; %q is not one.", k.AsString()),
				Subject: prices.Expr.Range().Ptr()})
			continue
		}
		if m, ok := priceValue(prices, "video_second."+k.AsString(), pv, &diags); ok {
			at[lines] = m
		}
	}
	if len(at) == 0 {
		return nil, diags
	}
	return at, diags
}

// ParseResolution reads a resolution as prices name it: "720p", "1080p",
// "540p", or "4k" (2160 lines); the number of lines of the short side.
func ParseResolution(s string) (int64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "4k" {
		return 2160, true
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(s, "p"), 10, 64)
	if err != nil || !strings.HasSuffix(s, "p") || n < 1 || n > 10000 {
		return 0, false
	}
	return n, true
}

// priceFor says what the price named key is for.
func priceFor(key string) string {
	if strings.HasPrefix(key, "video_second.") {
		return "one second of video at " + strings.TrimPrefix(key, "video_second.")
	}
	for _, n := range priceNames {
		if n.key == key {
			return n.what
		}
	}
	return key
}

// secretVariables lists the variables the credentials are made from,
// directly or through locals: the service block's token and the pg
// backend's conn_str (which may carry a password). Their values are as
// secret as the credentials, so they are marked sensitive and never saved
// (Config.Secret).
func (c *Config) secretVariables(serviceBlock, genformBlock *hcl.Block, providerBlocks []*hcl.Block) []string {
	var exprs []hcl.Expression
	if serviceBlock != nil {
		content, _, _ := serviceBlock.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "token"}}})
		if content != nil && content.Attributes["token"] != nil {
			exprs = append(exprs, content.Attributes["token"].Expr)
		}
	}
	for _, b := range providerBlocks {
		content, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "key"}}})
		if content != nil && content.Attributes["key"] != nil {
			exprs = append(exprs, content.Attributes["key"].Expr)
		}
	}
	if genformBlock != nil {
		content, _, _ := genformBlock.Body.PartialContent(&hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{{Type: "backend", LabelNames: []string{"type"}}}})
		for _, b := range content.Blocks {
			bc, _, _ := b.Body.PartialContent(&hcl.BodySchema{Attributes: []hcl.AttributeSchema{{Name: "conn_str"}}})
			if bc != nil && bc.Attributes["conn_str"] != nil {
				exprs = append(exprs, bc.Attributes["conn_str"].Expr)
			}
		}
	}
	return c.variablesOf(exprs, func(*Variable) bool { return true })
}

// HasCredentials reports whether the URL s holds a user name or password
// before its host (http://user:password@host), whether or not it parses.
func HasCredentials(s string) bool {
	rest := s
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return strings.Contains(rest, "@")
}
