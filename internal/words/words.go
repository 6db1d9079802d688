package words

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/internal/catalog"
	"github.com/genform/genform/reconcile/apply"
	"github.com/genform/genform/reconcile/plans"
)

// The words of a plan: why each change is made, and what to watch out for.
// The engine decides with codes (plans.Reason); every view, human,
// markdown and JSON, writes them with the functions here, so a reason
// reads the same everywhere.

// Reason says why a change is planned.
func Reason(c *plans.Change) string {
	if c.Reason == nil {
		return ""
	}
	r := c.Reason
	switch r.Code {
	case plans.ReasonNew:
		return "not yet generated"
	case plans.ReasonAnswerLost:
		if c.Action.Generates() {
			return "an earlier apply sent a create request and did not learn its outcome; -replace sends it again, paying again"
		}
		return "an earlier apply sent a create request and did not learn its outcome: it may have been paid for, so nothing is sent for it until you decide"
	case plans.ReasonAbandoned:
		return "the configuration changed since an interrupted apply submitted its job"
	case plans.ReasonFailed:
		if r.Error != "" {
			return "the last generation failed: " + r.Error
		}
		return "the last generation failed"
	case plans.ReasonRefused:
		return "the provider refused this request for its content (" + r.Error + "), so it is not sent again"
	case plans.ReasonForced:
		return "replacement requested with -replace"
	case plans.ReasonChanged:
		return strings.Join(r.Attrs, ", ") + " changed"
	case plans.ReasonEndpoint:
		return fmt.Sprintf("the endpoint changed from %s to %s", r.From, r.To)
	case plans.ReasonRequest:
		if r.PrevService != "" {
			return fmt.Sprintf("the service changed from %s to %s (-migrate-service), and a generation on one is not one on the other", Service(r.PrevService), Service(r.Service))
		}
		return fmt.Sprintf("the request differs from the recorded one (service %s, or a default changed)", r.Service)
	case plans.ReasonUpstream:
		ups := make([]string, len(r.Upstream))
		for i, u := range r.Upstream {
			ups[i] = u.String()
		}
		return fmt.Sprintf("%s will change, and this resource is made from it", strings.Join(ups, ", "))
	case plans.ReasonInputUnknown:
		return "an input it references will change"
	case plans.ReasonTriggered:
		ups := make([]string, len(r.Upstream))
		for i, u := range r.Upstream {
			ups[i] = u.String()
		}
		return fmt.Sprintf("replace_triggered_by: %s will be generated anew", strings.Join(ups, ", "))
	case plans.ReasonLocal:
		parts := make([]string, len(r.Local))
		for i, l := range r.Local {
			parts[i] = Local(l)
		}
		return strings.Join(parts, "; ")
	case plans.ReasonRenamed:
		return fmt.Sprintf("%s was renamed to %s: the same request, so its state and files move and nothing is generated", c.PrevAddr, c.Addr)
	case plans.ReasonMoved:
		return "a moved block moves it here: its state and files follow, and nothing is generated"
	case plans.ReasonInterrupted:
		return fmt.Sprintf("an earlier apply submitted job %s and did not finish; it is polled, not submitted again", r.GenerationID)
	case plans.ReasonRestored:
		from := "its files come from the local cache"
		switch {
		case !r.Cached && r.Stored:
			from = "its files come from the object store"
		case !r.Cached:
			from = "its files are downloaded again by creation id"
		}
		held := ""
		if r.Holder != c.Addr {
			held = ", last held by " + r.Holder.String()
		}
		if r.Workspace != "" {
			held += " in workspace " + r.Workspace
		}
		return fmt.Sprintf("the history holds generation %s (creation %s) of this request, recorded %s%s; %s", r.GenerationID, r.CreationID, Age(r.Since), held, from)
	case plans.ReasonRemoved:
		return "no longer in the configuration; its files are removed (the creation stays on the service)"
	case plans.ReasonRemovedIntent:
		return "an interrupted submission of a resource no longer in the configuration is forgotten"
	case plans.ReasonDestroy:
		return "destroy: its files are removed (the creation stays on the service)"
	case plans.ReasonDestroyIntent:
		return "destroy: an interrupted submission is forgotten"
	}
	return ""
}

// Local is one local change of an update.
func Local(l plans.LocalChange) string {
	switch l.What {
	case plans.DirMoved:
		return fmt.Sprintf("dir changed from %s to %s: files move", l.From, l.To)
	case plans.WatermarkChanged:
		return "watermark_free changed: the other file is downloaded"
	case plans.OutputMissing:
		return fmt.Sprintf("output %d (%s) is missing%s", l.Output, l.Path, fetchedFrom(l))
	case plans.OutputModified:
		return fmt.Sprintf("output %d (%s) changed on disk%s", l.Output, l.Path, fetchedFrom(l))
	case plans.OutputUnstored:
		return fmt.Sprintf("output %d (%s) is not in the object store: it is uploaded", l.Output, l.Path)
	case plans.IntentSettled:
		if l.GenerationID != "" {
			return fmt.Sprintf("the state already holds the declared request, so job %s, submitted by an interrupted apply for another one, is settled and nothing is generated", l.GenerationID)
		}
		return "the state already holds the declared request, so the create request an interrupted apply sent for another one is settled and nothing is generated"
	case plans.ProtectionChanged:
		if l.Protect {
			return "prevent_destroy is set: the state records the protection"
		}
		return "prevent_destroy is lifted: the state no longer protects it"
	}
	return l.What.String()
}

// fetchedFrom says where a missing or changed file comes back from.
func fetchedFrom(l plans.LocalChange) string {
	if l.Cached {
		return ": restored from the local cache"
	}
	if l.Stored {
		return ": fetched from the object store"
	}
	return ": downloaded again"
}

// FileChange reports whether a local change is about one output file
// (missing, changed on disk, not in the object store): the views list
// these one a line, saying which files an update brings back.
func FileChange(l plans.LocalChange) bool {
	switch l.What {
	case plans.OutputMissing, plans.OutputModified, plans.OutputUnstored:
		return true
	}
	return false
}

// ServiceDefault is what the views say beside a value the service's
// default gives, which the configuration does not write out.
const ServiceDefault = "the service's default"

// ImagesPerGeneration says how many images one generation of c makes,
// and whether that count is the service's default: "4 images per
// generation (the service's default)". A block that sets no image_number
// pays for the default count, which may be several images. A count a
// field of input leaves out is "at least", saying which field.
func ImagesPerGeneration(c *plans.Change) string {
	s := fmt.Sprintf("%d image%s per generation", c.Media, Plural(c.Media))
	switch {
	case c.Uncounted != nil:
		s = "at least " + s + " (" + Uncounted(c) + ")"
	case c.AtMost:
		s = "at most " + s
	}
	if c.MediaDefault {
		s += " (" + ServiceDefault + ")"
	}
	return s
}

// ShowsImageCount reports whether a view says how many images c's
// generation makes: for an image it generates when that is more than
// one, the service's default gives it, or a count field of its input
// cannot be counted, unless image_number is made from a sensitive value.
func ShowsImageCount(c *plans.Change) bool {
	return c.Kind() == addrs.Image && c.Action.Generates() && (c.Media > 1 || c.MediaDefault || c.Uncounted != nil) &&
		!slices.Contains(c.Sensitive, "image_number")
}

// CountShownBy reports whether attribute a of c, as a view lists it,
// already says how many images c's generation makes: image_number, when
// the count is its value (or the most it may be) and no count field of
// the input multiplies it or is left out.
func CountShownBy(c *plans.Change, a plans.AttrChange) bool {
	if a.Name != "image_number" || c.Uncounted != nil {
		return false
	}
	if a.Unknown {
		return true
	}
	switch n := a.After.(type) {
	case json.Number:
		v, err := n.Int64()
		return err == nil && v == int64(c.Media)
	case float64:
		return n == float64(c.Media)
	}
	return false
}

// Warnings are what a reviewer must know before applying a change:
// a job an interrupted apply left, which may have been paid for.
func Warnings(c *plans.Change) []string {
	r := c.Reason
	switch {
	case r == nil:
		return nil
	case r.Code == plans.ReasonAnswerLost && c.Action.Generates():
		return []string{fmt.Sprintf("an earlier apply sent the create request for %s at %s and did not learn its outcome; that generation may already have been paid for, and -replace pays for it again", c.Addr, r.Since.UTC().Format("2006-01-02 15:04:05Z"))}
	case r.Code == plans.ReasonAnswerLost:
		return []string{PossiblyPaid(c.Addr, c.Provider(), r.Since)}
	case r.Code == plans.ReasonRefused:
		return []string{fmt.Sprintf("the provider refused the request of %s for its content (%s); genform does not send it again: change the prompt or the input, or apply with -replace=%s to send it as it is, paying if the provider charges for it", c.Addr, r.Error, c.Addr.Shell())}
	case r.KeptJob() != "":
		return []string{fmt.Sprintf("job %s, left by an interrupted apply, may have been paid for; apply follows it to its end and keeps it in the history (declaring its request again restores it at no cost) instead of writing its files to the output directory", r.KeptJob())}
	case r.Code == plans.ReasonRemovedIntent || r.Code == plans.ReasonDestroyIntent:
		return []string{fmt.Sprintf("an earlier apply sent the create request for %s at %s and was interrupted before the service answered; that generation may already have been paid for, and is forgotten",
			c.Addr, r.Since.UTC().Format("2006-01-02 15:04:05Z"))}
	case r.Code == plans.ReasonLocal:
		var out []string
		for _, l := range r.Local {
			if l.What == plans.IntentSettled && l.GenerationID == "" {
				out = append(out, fmt.Sprintf("an earlier apply sent a create request for %s at %s, for a request no longer declared, and was interrupted before the service answered; that generation may have been paid for, and is forgotten",
					c.Addr, l.Since.UTC().Format("2006-01-02 15:04:05Z")))
			}
		}
		return out
	}
	return nil
}

// ImportWarning says what an import warning is about. When the
// declared prompt is made from a sensitive variable (promptSensitive),
// neither prompt is quoted.
func ImportWarning(addr addrs.Instance, id string, w apply.ImportWarning, promptSensitive bool) string {
	switch w.Kind {
	case apply.PromptDiffers:
		if promptSensitive {
			return fmt.Sprintf("the creation's prompt differs from the one %s declares, which is made from a sensitive variable (so neither is shown); the next plan will not show this difference, because the declaration is recorded as its request", addr)
		}
		return fmt.Sprintf("the creation's prompt is %q, but %s declares %q; the next plan will not show this difference, because the declaration is recorded as its request", w.Got, addr, w.Want)
	case apply.ImageCountDiffers:
		return fmt.Sprintf("the creation has %d image%s, but %s declares %d a generation", w.GotN, Plural(w.GotN), addr, w.WantN)
	case apply.AlsoRecorded:
		return fmt.Sprintf("creation %s is also recorded for %s; both now hold copies of its files", id, w.Other)
	case apply.JobAbandoned:
		return fmt.Sprintf("job %s, submitted for %s by an interrupted apply, is abandoned: the imported creation takes its place", w.GenerationID, addr)
	}
	return ""
}

// Service names a service identity in a sentence.
func Service(id string) string {
	if id == config.SimulatorService {
		return "the built-in simulator"
	}
	return id
}

// Age says how long ago t was, to the unit that matters: "just now"
// under a minute, "3 minutes ago", "2 hours ago", "2 days ago".
func Age(t time.Time) string { return AgeAt(t, time.Now()) }

// AgeAt is Age as of now. A time more than a minute after now was set by
// a clock ahead of this one (another machine's, for a state a team
// shares): it is given as it is, rather than as "just now".
func AgeAt(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return "at an unknown time"
	case d <= -time.Minute:
		return "at " + t.UTC().Format("2006-01-02 15:04:05Z")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return ago(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return ago(int(d/time.Hour), "hour")
	default:
		return ago(int(d/(24*time.Hour)), "day")
	}
}

func ago(n int, unit string) string {
	return fmt.Sprintf("%d %s%s ago", n, unit, Plural(n))
}

func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// PossiblyPaid says what is known of a create request for addr, sent at
// sentAt to provider ("" for the reference service), whose outcome
// genform did not learn, and the user's ways out.
func PossiblyPaid(addr addrs.Instance, provider string, sentAt time.Time) string {
	adopt := fmt.Sprintf("if you find the creation on the service, adopt it with: genform import %s CREATION_ID; ", addr.Shell())
	if !Adoptable(provider) {
		adopt = NotAdoptable(provider) + "; "
	}
	return fmt.Sprintf("an earlier apply sent the create request for %s at %s and did not learn its outcome (its answer was lost, or was an error the service may have given after making the job); that generation may already have been paid for, so genform sends nothing for it until you decide: %sto generate it again, paying again, run: genform apply -replace=%s",
		addr, sentAt.UTC().Format("2006-01-02 15:04:05Z"), adopt, addr.Shell())
}

// Adoptable reports whether a job of provider ("" for the reference
// service) can be adopted by import: a provider that answers the files
// themselves keeps no job to fetch them from again.
func Adoptable(provider string) bool {
	p := catalog.Lookup(provider)
	return p == nil || !p.InlineOutputs
}

// NotAdoptable says why a job of provider cannot be adopted.
func NotAdoptable(provider string) string {
	title := provider
	if p := catalog.Lookup(provider); p != nil {
		title = p.Title
	}
	return title + " keeps no job to adopt (its answer carried the files, and was lost)"
}

// List joins items for a sentence: "a, b and c", with "and N more" past
// most of them.
func List(items []string, most int) string {
	if len(items) > most {
		return strings.Join(items[:most], ", ") + fmt.Sprintf(" and %d more", len(items)-most)
	}
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
