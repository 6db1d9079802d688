package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/genform/genform/internal/apiclient"
)

// maxSourceBytes bounds one image an edit starts from: "each image should
// be a png, webp, or jpg file less than 50MB" (CreateImageEditRequest,
// image, in openai-python api_reference/openapi.transformed.yml; read
// 2026-12-07).
const maxSourceBytes = 50 << 20

// sourceTypes are the types an edit takes its images in, as their bytes
// sniff, with the extension their file is named with.
var sourceTypes = map[string]string{"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}

// editForm is the body of an edit, POST /v1/images/edits, as OpenAI's
// clients send it (openai-node images.edit and its multipart encoding,
// src/internal/uploads.ts; read 2026-12-07): a multipart/form-data form
// whose image is one file in the field "image" (source_image) or several
// in repeated "image[]" fields (source_images, an array, which the
// clients name with "[]", as the reference's curl example does), an
// optional mask file, and every other parameter as a text field (model,
// prompt, n, size, quality, …; numbers as written, booleans as true or
// false). Each image is read before anything is sent: a data: URI
// decoded, an http(s) URL downloaded by genform (the images are sent as
// files, never as links OpenAI fetches); it must be a PNG, JPEG or WebP
// of less than 50 MB. It returns the body and its Content-Type, with the
// form's boundary.
func (p *Provider) editForm(ctx context.Context, in map[string]any) ([]byte, string, error) {
	var sources []string
	field := "image"
	switch v := in["image"].(type) {
	case string:
		sources = []string{v}
	case []any:
		field = "image[]"
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, "", fmt.Errorf("openai: image %d of the edit is not a string (an http(s) URL or a data: URI); nothing was sent to OpenAI", i)
			}
			sources = append(sources, s)
		}
	default:
		return nil, "", fmt.Errorf("openai: the edit's image is neither an image nor a list of them; nothing was sent to OpenAI")
	}
	if len(sources) == 0 || len(sources) > maxSourceImages {
		return nil, "", fmt.Errorf("openai: an edit starts from 1 to %d images, not %d; nothing was sent to OpenAI", maxSourceImages, len(sources))
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	keys := make([]string, 0, len(in))
	for k := range in {
		if k != "image" && k != "mask" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, ok, err := formValue(in[k])
		if err != nil {
			return nil, "", fmt.Errorf("openai: input %s: %w; nothing was sent to OpenAI", k, err)
		}
		if ok {
			if err := mw.WriteField(k, v); err != nil {
				return nil, "", fmt.Errorf("openai: writing the edit's form: %w", err)
			}
		}
	}
	for i, src := range sources {
		if err := p.writeSource(ctx, mw, field, fmt.Sprintf("image %d", i), fmt.Sprintf("image-%d", i), src); err != nil {
			return nil, "", err
		}
	}
	if m, ok := in["mask"]; ok && m != nil {
		src, isText := m.(string)
		if !isText {
			return nil, "", fmt.Errorf("openai: input mask is not a string (an http(s) URL or a data: URI); nothing was sent to OpenAI")
		}
		if err := p.writeSource(ctx, mw, "mask", "the mask", "mask", src); err != nil {
			return nil, "", err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", fmt.Errorf("openai: writing the edit's form: %w", err)
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// formValue is a parameter of an edit as a text field: a string as it is,
// a number as written, a boolean as true or false; ok is false for null,
// which is left out. A list or an object has no form of its own.
func formValue(v any) (string, bool, error) {
	switch x := v.(type) {
	case nil:
		return "", false, nil
	case string:
		return x, true, nil
	case json.Number:
		return x.String(), true, nil
	case bool:
		if x {
			return "true", true, nil
		}
		return "false", true, nil
	}
	return "", false, fmt.Errorf("an edit takes text, numbers and true or false, not %T", v)
}

// writeSource writes src, the image called what (an http(s) URL or a
// data: URI), into mw as a file of field named base and the extension
// of its type.
func (p *Provider) writeSource(ctx context.Context, mw *multipart.Writer, field, what, base, src string) error {
	data, err := p.sourceBytes(ctx, src)
	if err != nil {
		return fmt.Errorf("openai: %s of the edit: %w; nothing was sent to OpenAI", what, err)
	}
	mediaType := http.DetectContentType(data)
	ext, ok := sourceTypes[mediaType]
	if !ok {
		return fmt.Errorf("openai: %s of the edit is %s; OpenAI edits PNG, JPEG and WebP images; nothing was sent to OpenAI", what, mediaType)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, field, base+"."+ext))
	h.Set("Content-Type", mediaType)
	w, err := mw.CreatePart(h)
	if err == nil {
		_, err = w.Write(data)
	}
	if err != nil {
		return fmt.Errorf("openai: writing the edit's form: %w", err)
	}
	return nil
}

// sourceBytes is the image src names: a data:image/…;base64 URI decoded,
// or an http(s) URL downloaded (through the client's downloads: no
// link-local address, the key only to OpenAI's own origin, an image by
// its type), each less than 50 MB.
func (p *Provider) sourceBytes(ctx context.Context, src string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(src, "data:"); ok {
		meta, payload, found := strings.Cut(rest, ",")
		if !found || !strings.HasPrefix(meta, "image/") || !strings.HasSuffix(meta, ";base64") {
			return nil, fmt.Errorf("it is not a data:image/<type>;base64,<data> URI")
		}
		if base64.StdEncoding.DecodedLen(len(payload)) > maxSourceBytes+3 {
			return nil, fmt.Errorf("it holds more than the 50 MB OpenAI takes")
		}
		data, err := base64.StdEncoding.DecodeString(payload)
		if err != nil {
			return nil, fmt.Errorf("its data URI is not base64: %w", err)
		}
		return checkSize(data)
	}
	u, err := url.Parse(src)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("it is neither an http(s) URL nor a data: URI")
	}
	dir, err := os.MkdirTemp("", "genform-openai-source-")
	if err != nil {
		return nil, fmt.Errorf("making a directory to fetch it into: %w", err)
	}
	defer os.RemoveAll(dir)
	d, err := p.Client.Download(ctx, src, dir, "source")
	if err != nil {
		// Not the provider's answer: the source's, written out so that it
		// is never taken for OpenAI refusing the request.
		return nil, fmt.Errorf("fetching %s: %v", redactURL(u), err)
	}
	if d.Size > maxSourceBytes {
		return nil, fmt.Errorf("%s is %d bytes, more than the 50 MB OpenAI takes", redactURL(u), d.Size)
	}
	data, err := os.ReadFile(d.Path)
	if err != nil {
		return nil, fmt.Errorf("reading what %s answered: %w", redactURL(u), err)
	}
	return checkSize(data)
}

func checkSize(data []byte) ([]byte, error) {
	switch {
	case len(data) == 0:
		return nil, fmt.Errorf("it is empty")
	case len(data) > maxSourceBytes:
		return nil, fmt.Errorf("it is %d bytes, more than the 50 MB OpenAI takes", len(data))
	}
	return data, nil
}

// redactURL shows a URL without its query, credentials or fragment: which
// image it was, nothing that grants access to it.
func redactURL(u *url.URL) string {
	v := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	return apiclient.Printable(v.String())
}
