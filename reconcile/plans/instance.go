package plans

import (
	"encoding/base64"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/internal/workdir"
	"github.com/genform/genform/statefile"
)

// This file holds what the planner and the engine both read of a declared
// instance and of its record: how many files one generation yields and how
// long a video is, the statuses a record holds, and the value a record
// gives the instances that refer to it.

// StatusSucceed is the service's status of a finished generation.
const StatusSucceed = "succeed"

// StatusFailed is the service's status of a failed generation.
const StatusFailed = "failed"

// StatusRefused is the status of a generation the provider refused for
// its content (moderation): the same request is never sent again.
const StatusRefused = "refused"

// Failed reports whether a record's last generation ended without files:
// failed, or refused for its content.
func Failed(status string) bool { return status == StatusFailed || status == StatusRefused }

// MediaCount is how many files one generation of inst yields: one video,
// or image_number images (the most the model makes when that is not
// known yet, and the service's default when it is not set, or null),
// times what the count fields of a live provider's input ask for
// (InputCount).
func MediaCount(inst *config.Instance) int {
	n, _ := MediaOf(inst)
	return n
}

// MediaDefault reports whether MediaCount of inst is the service's (or
// the model's) default count of images: a bare image block pays for it,
// several images on the reference service, without a word in the
// configuration saying so, so the plan says it.
//
// The configuration fills the reference service's defaults into every
// request before the planner sees it, so an image_number written out as
// the default reads the same as one left out: both are the default here.
func MediaDefault(inst *config.Instance) bool {
	_, def := MediaOf(inst)
	return def
}

// MediaOf is MediaCount and MediaDefault at once, reading image_number
// once. A count the input's count fields set is not the default.
func MediaOf(inst *config.Instance) (count int, fromDefault bool) {
	count, fromDefault, _ = CountOf(inst)
	return count, fromDefault
}

// CountOf is MediaOf, and the count field of inst's input the count
// leaves out, if any (InputCount), reading each once: the planner asks
// it of every instance, and a large no-op plan must not pay twice for
// it.
func CountOf(inst *config.Instance) (count int, fromDefault bool, uncounted *Uncounted) {
	n, def := mediaOf(inst)
	if inst.Endpoint.Provider() == addrs.Reference {
		return n, def, nil
	}
	factor, counted, uncounted := InputCount(inst)
	return int(min(int64(n)*int64(factor), maxCount)), def && !counted && uncounted == nil, uncounted
}

// mediaOf is MediaOf before the input's count fields: one video, or
// image_number images.
func mediaOf(inst *config.Instance) (count int, fromDefault bool) {
	if inst.Resource.Kind == addrs.Video {
		return 1, false
	}
	def, most := int64(1), int64(1)
	if p := catalog.Lookup(inst.Endpoint.Provider()); p != nil {
		caps := p.Caps(inst.Endpoint.Target())
		def, most = max(caps.DefaultImageNumber, 1), caps.MostImages()
	}
	v, set := inst.Attr("image_number")
	switch {
	case !set || v.IsKnown() && v.IsNull():
		return int(def), true
	case !v.IsKnown():
		return int(most), false
	case v.Type() == cty.Number:
		// The configuration fills in the default: whether the block
		// left it out is the instance's to say, not the number's (a
		// block that writes image_number = 4 chose it).
		n, _ := v.AsBigFloat().Int64()
		return int(n), inst.ImageNumberDefaulted()
	}
	return int(def), true
}

// VideoSeconds is how long the video inst declares is, in seconds: its
// duration, or the endpoint's default when it sets none, or the longest
// the endpoint allows when its duration is not known yet (AtMost). 0 for
// an image.
func VideoSeconds(inst *config.Instance) int {
	if inst.Resource.Kind != addrs.Video {
		return 0
	}
	v, set := inst.Attr("duration")
	if set && v.IsKnown() && !v.IsNull() && v.Type() == cty.Number {
		if n, acc := v.AsBigFloat().Int64(); acc == 0 && n > 0 {
			return int(n)
		}
	}
	p := catalog.Lookup(inst.Endpoint.Provider())
	if p == nil {
		return 0
	}
	caps := p.Caps(inst.Endpoint.Target())
	if set && !v.IsKnown() {
		return int(caps.MostSeconds())
	}
	return int(caps.DefaultDuration)
}

// AtMost reports whether a value inst's price depends on (image_number,
// duration) is not known until apply, so that MediaCount and VideoSeconds
// are the most the service allows, and an estimate of its cost an upper
// bound.
func AtMost(inst *config.Instance) bool {
	for _, name := range []string{"image_number", "duration"} {
		if v, ok := inst.Attr(name); ok && !v.IsWhollyKnown() {
			return true
		}
	}
	return false
}

// RecordValue is the value other resources see of a recorded instance,
// with its output paths in dir. root is the working directory: an output
// the provider answered as bytes, with no URL (OpenAI's images), has its
// file's data: URI as its media_url, read from root when the file is
// there as recorded, so that a provider taking data URIs is passed it as
// one ("" when it is not there).
func RecordValue(root string, rec *statefile.Resource, dir string) cty.Value {
	outs := make([]config.OutputValue, len(rec.Outputs))
	for i, o := range rec.Outputs {
		path := o.Path
		if dir != "" && dir != rec.Dir {
			path = filepath.ToSlash(filepath.Join(dir, filepath.Base(o.Path)))
		}
		media := o.MediaURL
		if media == "" {
			media = inlineDataURI(root, o)
		}
		outs[i] = config.OutputValue{ID: o.ID, MediaURL: media, ThumbnailURL: o.ThumbnailURL, Path: path, SHA256: o.SHA256}
	}
	return config.InstanceValue(rec.CreationID, rec.GenerationID, rec.Status, outs)
}

// inlineDataURI is the data: URI of output o's file under root, or ""
// when the file is not what the record says.
func inlineDataURI(root string, o statefile.Output) string {
	if workdir.CheckFile(root, o) != workdir.FileOK {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(o.Path)))
	if err != nil {
		return ""
	}
	typ := o.ContentType
	if t, _, err := mime.ParseMediaType(typ); err == nil {
		typ = t
	}
	if !strings.HasPrefix(typ, "image/") && !strings.HasPrefix(typ, "video/") {
		typ, _, _ = strings.Cut(http.DetectContentType(b), ";")
	}
	return "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(b)
}
