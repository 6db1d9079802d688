package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestStoreBlock checks the store "s3" block, the GENFORM_STORE_*
// variables over it, and a store made of those variables alone.
func TestStoreBlock(t *testing.T) {
	ignore := cmpopts.IgnoreFields(ObjectStore{}, "DeclRange")
	for _, tc := range []struct {
		name, src string
		env       []string
		want      *ObjectStore
	}{
		{"none", `image "a" { prompt = "x" }`, nil, nil},
		{"block", `genform {
  store "s3" {
    bucket     = "team-media"
    prefix     = "/brand/x/"
    endpoint   = "https://acc.r2.cloudflarestorage.com/"
    region     = "auto"
    path_style = true
  }
}`, nil, &ObjectStore{Type: "s3", Bucket: "team-media", Prefix: "brand/x", Endpoint: "https://acc.r2.cloudflarestorage.com", Region: "auto", PathStyle: true}},
		{"environment over the block", `genform {
  store "s3" {
    bucket = "team-media"
    prefix = "p"
  }
}`, []string{"GENFORM_STORE_BUCKET=ci-media", "GENFORM_STORE_PREFIX=", "GENFORM_STORE_ENDPOINT=http://127.0.0.1:9000"},
			&ObjectStore{Type: "s3", Bucket: "ci-media", Endpoint: "http://127.0.0.1:9000"}},
		{"presign", `genform {
  store "s3" {
    bucket  = "team-media"
    presign = "168h"
  }
}`, nil, &ObjectStore{Type: "s3", Bucket: "team-media", Presign: 168 * time.Hour}},
		{"public_url", `genform {
  store "s3" {
    bucket     = "team-media"
    public_url = "https://cdn.example.com/media/"
  }
}`, nil, &ObjectStore{Type: "s3", Bucket: "team-media", PublicURL: "https://cdn.example.com/media"}},
		{"environment alone", `image "a" { prompt = "x" }`, []string{"GENFORM_STORE_BUCKET=ci-media", "GENFORM_STORE_ENDPOINT=http://127.0.0.1:9000"},
			&ObjectStore{Type: "s3", Bucket: "ci-media", Endpoint: "http://127.0.0.1:9000", PathStyle: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustLoad(t, tc.src, Options{Environ: tc.env})
			if d := cmp.Diff(tc.want, c.Settings.Store, ignore); d != "" {
				t.Errorf("store (-want +got):\n%s", d)
			}
		})
	}
}

// TestStoreBlockInvalid checks that each bad store block is refused with a
// diagnostic saying what to write instead, and never echoes credentials
// written into an endpoint.
func TestStoreBlockInvalid(t *testing.T) {
	for _, tc := range []struct {
		name, src, summary, detail string
		env                        []string
	}{
		{"unknown type", `genform {
  store "gcs" { bucket = "b-1" }
}`, "Unsupported store type", `store "s3"`, nil},
		{"two blocks", `genform {
  store "s3" { bucket = "b-1" }
  store "s3" { bucket = "b-2" }
}`, "Duplicate store block", "main.gen.hcl:2", nil},
		{"no bucket", `genform {
  store "s3" {}
}`, "Missing store bucket", "GENFORM_STORE_BUCKET", nil},
		{"bad bucket", `genform {
  store "s3" { bucket = "Team_Media" }
}`, "Invalid store bucket", `"Team_Media"`, nil},
		{"bad prefix", `genform {
  store "s3" {
    bucket = "team-media"
    prefix = "a/../b"
  }
}`, "Invalid store prefix", "without . or ..", nil},
		{"endpoint with a path", `genform {
  store "s3" {
    bucket   = "team-media"
    endpoint = "http://127.0.0.1:9000/bucket"
  }
}`, "Invalid store endpoint", "without a path", nil},
		{"endpoint with credentials", `genform {
  store "s3" { bucket = "team-media" }
}`, "Invalid store endpoint", "does not show here", []string{"GENFORM_STORE_ENDPOINT=http://key:hunter2@127.0.0.1:9000"}},
		{"endpoint with credentials that does not parse", `genform {
  store "s3" { bucket = "team-media" }
}`, "Invalid store endpoint", "does not show here", []string{"GENFORM_STORE_ENDPOINT=http://key:hunter2@127.0.0.1:9000/x%zz"}},
		{"presign past seven days", `genform {
  store "s3" {
    bucket  = "team-media"
    presign = "169h"
  }
}`, "Invalid presign", "longer than the 168h (7 days)", nil},
		{"presign of zero", `genform {
  store "s3" {
    bucket  = "team-media"
    presign = "0s"
  }
}`, "Invalid presign", "positive duration", nil},
		{"presign negative", `genform {
  store "s3" {
    bucket  = "team-media"
    presign = "-1h"
  }
}`, "Invalid presign", "positive duration", nil},
		{"presign not a duration", `genform {
  store "s3" {
    bucket  = "team-media"
    presign = "7d"
  }
}`, "Invalid presign", `"168h"`, nil},
		{"presign and public_url", `genform {
  store "s3" {
    bucket     = "team-media"
    presign    = "24h"
    public_url = "https://cdn.example.com"
  }
}`, "Conflicting store links", "set one", nil},
		{"public_url not http", `genform {
  store "s3" {
    bucket     = "team-media"
    public_url = "s3://team-media"
  }
}`, "Invalid public_url", "http or https", nil},
		{"public_url with a query", `genform {
  store "s3" {
    bucket     = "team-media"
    public_url = "https://cdn.example.com/m?sig=1"
  }
}`, "Invalid public_url", "without a query", nil},
		{"public_url with credentials", `genform {
  store "s3" {
    bucket     = "team-media"
    public_url = "https://key:hunter2@cdn.example.com"
  }
}`, "Invalid public_url", "does not show here", nil},
		{"unknown argument", `genform {
  store "s3" {
    bucket     = "team-media"
    access_key = "x"
  }
}`, "Unsupported argument", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diags := loadErrors(t, tc.src, Options{Environ: tc.env})
			found := wantDiag(t, diags, tc.summary, tc.detail)
			if strings.Contains(found.Detail, "hunter2") {
				t.Errorf("detail %q shows the password", found.Detail)
			}
		})
	}
}
