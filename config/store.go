package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// ObjectStore is the genform block's store block: the S3-compatible object store
// a team keeps its outputs' bytes in, so that a working copy or a CI
// runner without the files fetches them there instead of from the
// provider. Credentials are never part of it: they come from the standard
// AWS environment variables and shared files, when the store is used.
type ObjectStore struct {
	// Type is the block's label; "s3" is the only one.
	Type string
	// Bucket is the bucket; GENFORM_STORE_BUCKET overrides it.
	Bucket string
	// Prefix is where in the bucket genform's objects go, "" for its top,
	// without leading or trailing slashes; GENFORM_STORE_PREFIX overrides it.
	Prefix string
	// Endpoint is the store's URL (http or https, no path), "" for Amazon
	// S3; GENFORM_STORE_ENDPOINT overrides it.
	Endpoint string
	// Region is the bucket's region, "" to let the client find it (AWS
	// then reads AWS_REGION).
	Region string
	// PathStyle addresses the bucket in the URL's path rather than its
	// host name, as most stores other than Amazon's want.
	PathStyle bool
	// Presign is how long the links genform gallery writes into a pull
	// request's comment stay valid: presigned GET URLs, which anyone who
	// has the comment can open until they expire. 0 when not set; at
	// most MaxPresign.
	Presign time.Duration
	// PublicURL is the base URL under which the bucket's objects are
	// readable by anyone (a CDN, or a public bucket), without a trailing
	// slash: an object's link is PublicURL + "/" + its key. "" when not
	// set; Presign and PublicURL are never both set.
	PublicURL string
	// DeclRange is the block's header, or an empty range when the store
	// comes from the environment alone.
	DeclRange hcl.Range
}

// Where names the store for messages: s3://bucket/prefix.
func (s *ObjectStore) Where() string {
	if s.Prefix == "" {
		return "s3://" + s.Bucket
	}
	return "s3://" + s.Bucket + "/" + s.Prefix
}

var storeSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "bucket"}, {Name: "prefix"}, {Name: "endpoint"}, {Name: "region"}, {Name: "path_style"},
		{Name: "presign"}, {Name: "public_url"},
	},
}

// bucketRe is an S3 bucket name as every S3-compatible store accepts it.
var bucketRe = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// decodeStores decodes the store blocks of the genform block.
func (c *Config) decodeStores(blocks hcl.Blocks) hcl.Diagnostics {
	return decodeOne(blocks, "store", "Outputs are kept in one object store", c.decodeStore)
}

func (c *Config) decodeStore(b *hcl.Block) hcl.Diagnostics {
	if b.Labels[0] != "s3" {
		return hcl.Diagnostics{errorAt(b.LabelRanges[0].Ptr(), "Unsupported store type",
			fmt.Sprintf("genform keeps outputs in an S3-compatible object store (store \"s3\": Amazon S3, Cloudflare R2, Google Cloud Storage, MinIO, SeaweedFS, Ceph...), not in %q.", b.Labels[0]))}
	}
	st := &ObjectStore{Type: "s3", DeclRange: b.DefRange}
	content, diags := b.Body.Content(storeSchema)
	const where = "the store block"
	str := func(name string, dst *string) {
		if a, ok := content.Attributes[name]; ok {
			v, ok, d := c.settingValue(a, where, cty.String)
			diags = append(diags, d...)
			if ok {
				*dst = v.AsString()
			}
		}
	}
	str("bucket", &st.Bucket)
	str("prefix", &st.Prefix)
	str("endpoint", &st.Endpoint)
	str("region", &st.Region)
	if a, ok := content.Attributes["path_style"]; ok {
		v, ok, d := c.settingValue(a, where, cty.Bool)
		diags = append(diags, d...)
		if ok {
			st.PathStyle = v.True()
		}
	}
	diags = append(diags, c.decodeStoreLinks(content, st)...)
	if diags.HasErrors() {
		return diags
	}
	c.Settings.Store = st
	return diags
}

// MaxPresign is the longest a presigned URL may stay valid: Amazon S3
// refuses Signature V4 links of more than seven days.
const MaxPresign = 7 * 24 * time.Hour

// decodeStoreLinks reads presign and public_url, how the links of genform
// gallery's pictures are made: one of them, or neither (the gallery's
// comment then says what to set).
func (c *Config) decodeStoreLinks(content *hcl.BodyContent, st *ObjectStore) hcl.Diagnostics {
	var diags hcl.Diagnostics
	const where = "the store block"
	presign, hasPresign := content.Attributes["presign"]
	public, hasPublic := content.Attributes["public_url"]
	if hasPresign && hasPublic {
		return hcl.Diagnostics{errorAt(public.NameRange.Ptr(), "Conflicting store links",
			"presign and public_url are two ways to link the gallery's pictures; set one: presign = \"168h\" makes links that expire, public_url names where the bucket's objects are public.")}
	}
	if hasPresign {
		v, ok, d := c.settingValue(presign, where, cty.String)
		diags = append(diags, d...)
		if ok {
			dur, err := time.ParseDuration(v.AsString())
			switch {
			case err != nil || dur <= 0:
				diags = append(diags, errorAt(presign.Expr.Range().Ptr(), "Invalid presign",
					fmt.Sprintf("presign must be a positive duration such as \"24h\" or \"168h\" (7 days, the most S3 allows); got %q.", v.AsString())))
			case dur > MaxPresign:
				diags = append(diags, errorAt(presign.Expr.Range().Ptr(), "Invalid presign",
					fmt.Sprintf("presign is %q, longer than the 168h (7 days) S3 lets a presigned link live; set at most \"168h\", or use public_url for links that do not expire.", v.AsString())))
			default:
				st.Presign = dur
			}
		}
	}
	if hasPublic {
		v, ok, d := c.settingValue(public, where, cty.String)
		diags = append(diags, d...)
		if ok {
			u, err := checkPublicURL(v.AsString())
			if err != nil {
				diags = append(diags, errorAt(public.Expr.Range().Ptr(), "Invalid public_url", err.Error()))
			} else {
				st.PublicURL = u
			}
		}
	}
	return diags
}

// checkPublicURL checks a public_url and returns it without its trailing
// slash.
func checkPublicURL(s string) (string, error) {
	if HasCredentials(s) {
		// Not shown: what precedes the @ may be a password.
		return "", errors.New("public_url holds a user name or password before the host, which genform does not show here: the links are written into comments for anyone to read; remove them")
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", fmt.Errorf("public_url must be the http or https URL the bucket's objects are public under, without a query or fragment, such as \"https://cdn.example.com/media\"; got %q", s)
	}
	return strings.TrimRight(s, "/"), nil
}

// settleStore applies the GENFORM_STORE_* environment variables over the
// store block (a CI job's own bucket, say), makes a store of them alone
// when there is no block, and checks the result.
func (c *Config) settleStore() hcl.Diagnostics {
	st := c.Settings.Store
	bucket, hasBucket := c.environ["GENFORM_STORE_BUCKET"]
	if st == nil {
		if !hasBucket || bucket == "" {
			return nil
		}
		st = &ObjectStore{Type: "s3", PathStyle: true}
	}
	if hasBucket && bucket != "" {
		st.Bucket = bucket
	}
	if v, ok := c.environ["GENFORM_STORE_PREFIX"]; ok {
		st.Prefix = v
	}
	if v, ok := c.environ["GENFORM_STORE_ENDPOINT"]; ok && v != "" {
		st.Endpoint = v
	}
	rng := st.DeclRange.Ptr()
	if st.DeclRange.Filename == "" {
		rng = nil
	}
	bad := func(summary, detail string) hcl.Diagnostics {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng}}
	}
	if st.Bucket == "" {
		return bad("Missing store bucket", "The store block needs the bucket the outputs are kept in: set bucket = \"...\", or GENFORM_STORE_BUCKET.")
	}
	if !bucketRe.MatchString(st.Bucket) {
		return bad("Invalid store bucket", fmt.Sprintf("%q is not a bucket name: 3 to 63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit.", st.Bucket))
	}
	st.Prefix = strings.Trim(st.Prefix, "/")
	if strings.Contains(st.Prefix, "//") || strings.Contains("/"+st.Prefix+"/", "/../") || strings.Contains("/"+st.Prefix+"/", "/./") {
		return bad("Invalid store prefix", fmt.Sprintf("The store prefix %q must be a path of names separated by single slashes, without . or .. parts, such as \"team/media\".", st.Prefix))
	}
	if st.Endpoint != "" {
		if HasCredentials(st.Endpoint) {
			// Not shown: what precedes the @ may be a password.
			return bad("Invalid store endpoint", "The store endpoint holds a user name or password before the host, which genform does not show here: remove them, and give the store's credentials with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE).")
		}
		u, err := url.Parse(st.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
			return bad("Invalid store endpoint", fmt.Sprintf("The store endpoint must be the store's http or https URL without a path or credentials, such as \"https://<account>.r2.cloudflarestorage.com\" or \"http://127.0.0.1:9000\"; got %q.", st.Endpoint))
		}
		st.Endpoint = u.Scheme + "://" + u.Host
	}
	c.Settings.Store = st
	return nil
}
