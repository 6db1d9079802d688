package openai

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"mime/multipart"
	"net/http"
	"regexp"
	"strings"
)

// The bounds of an edit's files (CreateImageEditRequest in openai-python
// api_reference/openapi.transformed.yml, read 2026-12-07): up to 16
// images, each "a png, webp, or jpg file less than 50MB"; a mask "a valid
// PNG file, less than 4MB, and [with] the same dimensions as image".
const (
	maxEditImages   = 16
	maxEditImage    = 50 << 20
	maxMaskBytes    = 4 << 20
	maxEditFormSize = 64 << 20 // the simulator's own bound on a whole form
)

// editParams are the text parameters of createImageEdit the reference
// lists (its files, image and mask, are read apart).
var editParams = map[string]bool{
	"prompt": true, "model": true, "n": true, "size": true, "quality": true,
	"background": true, "output_format": true, "output_compression": true,
	"response_format": true, "stream": true, "partial_images": true,
	"user": true, "input_fidelity": true,
}

// number is a form value that is a whole number, which the JSON
// parameters it stands for are.
var number = regexp.MustCompile(`^-?[0-9]+$`)

// edit answers POST /v1/images/edits: a multipart/form-data form with the
// images to start from (one "image" file, or "image[]" files), an
// optional mask, and the text parameters, checked as the reference
// documents them; then the images are made as a generation's are. The
// job keeps the form as JSON: its text fields, and each file's sha256.
func (s *Server) edit(w http.ResponseWriter, r *http.Request, owner string) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "multipart/form-data") {
		invalid(w, "", "Invalid Content-Type header ("+ct+"), expected multipart/form-data.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxEditFormSize)
	if err := r.ParseMultipartForm(maxEditFormSize); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			invalid(w, "", fmt.Sprintf("The simulator reads edit forms of at most %d bytes.", maxEditFormSize))
			return
		}
		invalid(w, "", "Could not parse multipart form: "+err.Error())
		return
	}
	defer r.MultipartForm.RemoveAll()
	form := r.MultipartForm
	in := map[string]any{}
	kept := map[string]any{}
	for k, vs := range form.Value {
		if len(vs) != 1 {
			invalid(w, k, "Parameter '"+k+"' is given more than once.")
			return
		}
		kept[k] = vs[0]
		switch v := vs[0]; {
		case k == "stream" && (v == "true" || v == "false"):
			in[k] = v == "true"
		case (k == "n" || k == "output_compression" || k == "partial_images") && number.MatchString(v):
			in[k] = json.Number(v)
		default:
			in[k] = v
		}
	}
	for k := range form.File {
		if k != "image" && k != "image[]" && k != "mask" {
			apiError(w, http.StatusBadRequest, "Unknown parameter: '"+k+"'.", "invalid_request_error", k, codeUnknownParam)
			return
		}
	}
	images := append(append([]*multipart.FileHeader(nil), form.File["image"]...), form.File["image[]"]...)
	switch {
	case len(images) == 0:
		invalid(w, "image", "Missing required parameter: 'image'.")
		return
	case len(images) > maxEditImages:
		invalid(w, "image", fmt.Sprintf("Invalid 'image': at most %d images may be provided, not %d.", maxEditImages, len(images)))
		return
	}
	q, ok := checkRequest(w, in, editParams)
	if !ok {
		return
	}
	if v, set := in["input_fidelity"]; set && v != "high" && v != "low" {
		invalid(w, "input_fidelity", "Invalid 'input_fidelity': expected one of high, low.")
		return
	}
	digests := make([]string, len(images))
	var first image.Config
	for i, fh := range images {
		data, mediaType, err := readFile(fh)
		if err != nil {
			invalid(w, "image", fmt.Sprintf("Invalid 'image' %d: %v", i, err))
			return
		}
		if mediaType != "image/png" && mediaType != "image/jpeg" && mediaType != "image/webp" {
			invalid(w, "image", fmt.Sprintf("Invalid file 'image' %d: unsupported mimetype ('%s'). Supported file formats are 'image/jpeg', 'image/png', and 'image/webp'.", i, mediaType))
			return
		}
		if len(data) >= maxEditImage {
			invalid(w, "image", fmt.Sprintf("Invalid 'image' %d: it is %d bytes; each image must be less than 50MB.", i, len(data)))
			return
		}
		if i == 0 {
			first, _, _ = image.DecodeConfig(bytes.NewReader(data))
		}
		digests[i] = digest(data)
	}
	kept["image"] = digests
	if masks := form.File["mask"]; len(masks) > 0 {
		data, mediaType, err := readFile(masks[0])
		switch {
		case err != nil:
			invalid(w, "mask", "Invalid 'mask': "+err.Error())
			return
		case mediaType != "image/png" || len(data) >= maxMaskBytes:
			invalid(w, "mask", "Invalid 'mask': it must be a PNG file of less than 4MB.")
			return
		}
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil || (first.Width > 0 && (cfg.Width != first.Width || cfg.Height != first.Height)) {
			invalid(w, "mask", "Invalid 'mask': it must be a PNG of the same dimensions as the (first) image.")
			return
		}
		kept["mask"] = digest(data)
	}
	body, err := json.Marshal(kept)
	if err != nil {
		apiError(w, http.StatusInternalServerError, err.Error(), "server_error", "", "")
		return
	}
	s.makeImages(w, r, owner, body, q)
}

// readFile is the bytes of an uploaded file and their media type, as they
// sniff.
func readFile(fh *multipart.FileHeader) ([]byte, string, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, "", err
	}
	if buf.Len() == 0 {
		return nil, "", errors.New("the file is empty")
	}
	return buf.Bytes(), http.DetectContentType(buf.Bytes()), nil
}

// digest names a file the job keeps by its sha256.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
