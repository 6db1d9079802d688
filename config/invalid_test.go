package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestInvalidConfigurations loads every configuration of testdata/invalid
// and checks that it fails with the diagnostic a user needs: its summary,
// and the line it points at. A configuration that loads cleanly, panics, or
// is missing from the table fails the test.
func TestInvalidConfigurations(t *testing.T) {
	tests := []struct {
		file    string
		summary string
		line    int
		detail  string // a substring of the detail, when the wording matters
		opts    Options
	}{
		{file: "unknown_block.gen.hcl", summary: "Unsupported block type", line: 2, detail: `Did you mean "image"?`},
		{file: "cache_dir_in_output.gen.hcl", summary: "Invalid cache_dir", line: 3, detail: `must be separate directories`},
		{file: "cache_dir_outside.gen.hcl", summary: "Invalid cache_dir", line: 2, detail: `leads out of it`},
		{file: "cache_max_size_bad.gen.hcl", summary: "Invalid cache_max_size", line: 2, detail: `"5GiB"`},
		{file: "restore_not_bool.gen.hcl", summary: "Incorrect attribute value type", line: 2, detail: `a bool is required`},
		{file: "replace_triggered_by_undeclared.gen.hcl", summary: "Reference to undeclared resource", line: 4, detail: "replace_triggered_by refers to image.nope"},
		{file: "replace_triggered_by_not_a_resource.gen.hcl", summary: "Invalid replace_triggered_by reference", line: 4, detail: "takes references to resources"},
		{file: "unknown_argument.gen.hcl", summary: "Unsupported argument", line: 2, detail: `Did you mean "prompt"?`},
		{file: "missing_prompt.gen.hcl", summary: "Missing required argument", line: 1, detail: `"prompt" is required`},
		{file: "image_number_range.gen.hcl", summary: "Invalid image_number", line: 3, detail: "Got 5"},
		{file: "image_number_fraction.gen.hcl", summary: "Invalid image_number", line: 3, detail: "Got 2.5"},
		{file: "aspect_ratio_bad.gen.hcl", summary: "Invalid aspect_ratio", line: 3, detail: `"21:9"`},
		{file: "resolution_bad.gen.hcl", summary: "Invalid resolution", line: 3, detail: "720 or 1080"},
		{file: "gen_mode_image2video.gen.hcl", summary: "Invalid gen_mode", line: 3, detail: `image-to-video, where gen_mode must be "smooth" or "enhanced". Got "standard".`},
		{file: "gen_mode_text2video.gen.hcl", summary: "Invalid gen_mode", line: 3, detail: `"standard", "smooth" or "enhanced"`},
		{file: "both_sources.gen.hcl", summary: "Conflicting video inputs", line: 2},
		{file: "aspect_ratio_image2video.gen.hcl", summary: "Unsupported argument", line: 3, detail: "image-to-video takes its frame from the source image"},
		{file: "watermark_free_image.gen.hcl", summary: "Unsupported argument", line: 3, detail: "videos only"},
		{file: "frame_indices_mismatch.gen.hcl", summary: "Mismatched frame_indices", line: 3, detail: "must have one entry per source image (2 of them), not 3"},
		{file: "source_images_too_many.gen.hcl", summary: "Invalid source_images", line: 2, detail: "2 to 6"},
		{file: "keyframes_missing_width.gen.hcl", summary: "Missing required argument", line: 1, detail: `"input_width"`},
		{file: "cycle.gen.hcl", summary: "Cycle: image.a, video.b", line: 1},
		{file: "self_reference.gen.hcl", summary: "Cycle: image.a", line: 1, detail: "refers to itself"},
		{file: "undeclared_resource.gen.hcl", summary: "Reference to undeclared resource", line: 6, detail: `Did you mean "hero"?`},
		{file: "undeclared_variable.gen.hcl", summary: "Reference to undeclared input variable", line: 6, detail: `Did you mean "style"?`},
		{file: "undeclared_local.gen.hcl", summary: "Reference to undeclared local value", line: 6, detail: `Did you mean "brand"?`},
		{file: "duplicate_resource.gen.hcl", summary: "Duplicate resource", line: 5, detail: "duplicate_resource.gen.hcl:1"},
		{file: "duplicate_variable.gen.hcl", summary: "Duplicate variable declaration", line: 5, detail: "duplicate_variable.gen.hcl:1"},
		{file: "duplicate_output.gen.hcl", summary: "Duplicate output definition", line: 6, detail: "duplicate_output.gen.hcl:5"},
		{file: "duplicate_genform.gen.hcl", summary: "Duplicate genform block", line: 5},
		{file: "required_variable.gen.hcl", summary: "No value for required variable", line: 1, detail: "GENFORM_VAR_style"},
		{file: "variable_validation.gen.hcl", summary: "Invalid value for variable", line: 3, detail: "At most four images per request."},
		{file: "variable_default_type.gen.hcl", summary: "Invalid default value for variable", line: 3},
		{file: "count_and_for_each.gen.hcl", summary: `Invalid combination of "count" and "for_each"`, line: 3},
		{file: "count_negative.gen.hcl", summary: "Invalid count argument", line: 2},
		{file: "for_each_list.gen.hcl", summary: "Invalid for_each argument", line: 2, detail: "toset"},
		{file: "count_without_count.gen.hcl", summary: `Reference to "count" in non-counted context`, line: 2},
		{file: "each_without_for_each.gen.hcl", summary: `Reference to "each" in context without for_each`, line: 3},
		{file: "output_dir_escape.gen.hcl", summary: "Invalid output_dir", line: 2, detail: "inside the working directory"},
		{file: "state_file_absolute.gen.hcl", summary: "Invalid state_file", line: 2, detail: "relative"},
		{file: "dir_escape.gen.hcl", summary: "Invalid dir", line: 3},
		{file: "poll_interval_bad.gen.hcl", summary: "Invalid poll_interval", line: 2},
		{file: "max_download_size_bad.gen.hcl", summary: "Invalid max_download_size", line: 2, detail: `"4GiB"`},
		{file: "parallelism_zero.gen.hcl", summary: "Invalid parallelism", line: 2},
		{file: "rpm_huge.gen.hcl", summary: "Invalid requests_per_minute", line: 2, detail: "got 100000000."},
		{file: "base_url_bad.gen.hcl", summary: "Invalid base_url", line: 2},
		{file: "prices_unknown.gen.hcl", summary: "Unknown price", line: 2, detail: `Did you mean "image"?`},
		{file: "prices_negative.gen.hcl", summary: "Invalid prices", line: 2, detail: "negative"},
		{file: "prices_decimals.gen.hcl", summary: "Invalid prices", line: 2, detail: "more than six decimal places"},
		{file: "prices_not_object.gen.hcl", summary: "Invalid prices", line: 2, detail: "must be an object"},
		{file: "prices_not_number.gen.hcl", summary: "Invalid prices", line: 2, detail: "must be a number"},
		{file: "currency_without_prices.gen.hcl", summary: "Currency without prices", line: 2},
		{file: "file_outside.gen.hcl", summary: "Invalid function argument", line: 2, detail: "outside the working directory"},
		{file: "env_unset.gen.hcl", summary: "Invalid function argument", line: 2, detail: "is not set"},
		{file: "unknown_function.gen.hcl", summary: "Call to unknown function", line: 2, detail: `Did you mean "upper"?`},
		{file: "syntax_error.gen.hcl", summary: "Unclosed configuration block", line: 1},
		{file: "for_each_key_path.gen.hcl", summary: "Invalid instance key for a directory", line: 2, detail: `"../up"`},
		{file: "duplicate_dir.gen.hcl", summary: "Duplicate output directory", line: 8, detail: "image.a and image.b"},
		{file: "depends_on_undeclared.gen.hcl", summary: "Reference to undeclared resource", line: 3},
		{file: "depends_on_attribute.gen.hcl", summary: "Invalid depends_on reference", line: 7},
		{file: "ignore_changes_typo.gen.hcl", summary: "Invalid ignore_changes entry", line: 4, detail: `Did you mean "prompt"?`},
		{file: "service_refers_resource.gen.hcl", summary: "Invalid reference", line: 6, detail: "cannot refer to resources"},
		{file: "local_cycle.gen.hcl", summary: "Cycle in local values", line: 2, detail: "local.a and local.b"},
		{file: "source_image_path.gen.hcl", summary: "Invalid source_image", line: 2, detail: "file_data_uri"},
		{file: "empty_prompt.gen.hcl", summary: "Empty prompt", line: 2},
		{file: "seed_type.gen.hcl", summary: "Incorrect attribute value type", line: 3},
		{file: "index_out_of_range.gen.hcl", summary: "Invalid index", line: 7},
		{file: "prevent_destroy_expression.gen.hcl", summary: "Variables not allowed", line: 8},
		{file: "count_not_number.gen.hcl", summary: "Invalid count argument", line: 6},
		{file: "image_gen_mode.gen.hcl", summary: "Unsupported argument", line: 3, detail: "setting of the video endpoints"},
		{file: "frame_indices_without_sources.gen.hcl", summary: "Unsupported argument", line: 3, detail: "key-frame conditioning"},
		{file: "cycle_through_local.gen.hcl", summary: "Cycle: image.hero", line: 5, detail: "refers to itself"},
		{file: "output_undeclared_resource.gen.hcl", summary: "Reference to undeclared resource", line: 6, detail: `Did you mean "hero"?`},
		{file: "service_unknown_argument.gen.hcl", summary: "Unsupported argument", line: 2, detail: `Did you mean "parallelism"?`},
		{file: "unknown_nested_block.gen.hcl", summary: "Unsupported block type", line: 3, detail: `Did you mean "lifecycle"?`},
		{file: "json_unknown_property.gen.json", summary: "Extraneous JSON object property", line: 5, detail: `Did you mean "prompt"?`},
		// The service's rules (package rules), one case for each.
		{file: "duration_bad.gen.hcl", summary: "Invalid duration", line: 3, detail: "duration must be 2, 4, 6 or 8 (seconds). Got 5."},
		{file: "duration_fraction.gen.hcl", summary: "Invalid duration", line: 3, detail: "duration must be a whole number. Got 4.5."},
		{file: "seed_range.gen.hcl", summary: "Invalid seed", line: 3, detail: "seed must be -1 (random) or from 0 to 4294967295. Got 4294967296."},
		{file: "seed_fraction.gen.hcl", summary: "Invalid seed", line: 3, detail: "seed must be a whole number. Got 1.5."},
		{file: "seed_infinite.gen.hcl", summary: "Invalid seed", line: 3, detail: "seed must be a whole number. Got +Inf."},
		{file: "prompt_too_long.gen.hcl", summary: "Invalid prompt", line: 2, detail: "prompt must be at most 2048 characters (Unicode code points) long, not 2049."},
		{file: "negative_prompt_too_long.gen.hcl", summary: "Invalid negative_prompt", line: 3, detail: "negative_prompt must be at most 2048 characters"},
		{file: "aspect_ratio_text2video.gen.hcl", summary: "Invalid aspect_ratio", line: 3, detail: `text-to-video, where aspect_ratio must be "21:9", "16:9", "9:16", "3:4", "4:3" or "1:1". Got "16/9". Did you mean "16:9"?`},
		{file: "frame_indices_past_end.gen.hcl", summary: "Invalid frame_indices", line: 3, detail: "frame_indices[1] must be a frame position from 0 to 15 for a 2-second video (8 frames a second). Got 16."},
		{file: "frame_indices_default_duration.gen.hcl", summary: "Invalid frame_indices", line: 5, detail: "from 0 to 31 for a 4-second video (8 frames a second). Got 32. The video lasts 4 seconds unless duration says otherwise."},
		{file: "frame_indices_order.gen.hcl", summary: "Invalid frame_indices", line: 3, detail: "frame_indices[2] must be more than the index before it (20): frame indices are strictly increasing. Got 10."},
		{file: "frame_indices_fraction.gen.hcl", summary: "Invalid frame_indices", line: 3, detail: "frame_indices[1] must be a whole number. Got 15.5."},
		{file: "source_images_one.gen.hcl", summary: "Invalid source_images", line: 2, detail: "source_images must hold 2 to 6 images, not 1"},
		{file: "source_images_element.gen.hcl", summary: "Invalid source_images", line: 4, detail: "source_images[1] must be an http(s) URL or a data:image/<type>;base64,<data> URI."},
		{file: "input_width_range.gen.hcl", summary: "Invalid input_width", line: 4, detail: "input_width must be a pixel size from 1 to 8192. Got 0."},
		{file: "input_height_range.gen.hcl", summary: "Invalid input_height", line: 5, detail: "input_height must be a pixel size from 1 to 8192. Got 8193."},
		{file: "source_image_data_type.gen.hcl", summary: "Invalid source_image", line: 2, detail: "source_image must be a data:image/<type>;base64,<data> URI."},
		{file: "source_image_bad_base64.gen.hcl", summary: "Invalid source_image", line: 2, detail: "source_image must hold valid base64 after the comma of its data URI."},
		{file: "source_image_url_space.gen.hcl", summary: "Invalid source_image", line: 2, detail: "percent-encoded (' ' at byte 22 is not)"},
		{file: "source_image_too_large.gen.hcl", summary: "Invalid source_image", line: 7, detail: "source_image must be at most 10485760 bytes (10 MiB) long, not 10488022."},
	}

	entries, err := os.ReadDir(filepath.Join("testdata", "invalid"))
	if err != nil {
		t.Fatal(err)
	}
	inTable := map[string]bool{}
	for _, tt := range tests {
		inTable[tt.file] = true
	}
	for _, e := range entries {
		if !inTable[e.Name()] {
			t.Errorf("testdata/invalid/%s has no entry in the table", e.Name())
		}
	}

	for _, tt := range tests {
		t.Run(strings.TrimSuffix(strings.TrimSuffix(tt.file, ".gen.hcl"), ".gen.json"), func(t *testing.T) {
			dir := t.TempDir()
			src, err := os.ReadFile(filepath.Join("testdata", "invalid", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, tt.file), src, 0o644); err != nil {
				t.Fatal(err)
			}
			c, diags := loadTest(dir, tt.opts)
			if c == nil {
				t.Fatal("Load returned a nil *Config")
			}
			if !diags.HasErrors() {
				t.Fatalf("Load passed; want error %q on line %d", tt.summary, tt.line)
			}
			for _, d := range diags {
				if d.Subject == nil {
					t.Errorf("diagnostic %q has no range", d.Summary)
				}
			}
			if d := findDiag(diags, tt.summary, tt.file, tt.line); d == nil {
				t.Errorf("no error %q at %s line %d; got:\n%s", tt.summary, tt.file, tt.line, diagList(diags))
			} else if !strings.Contains(d.Detail, tt.detail) {
				t.Errorf("error %q: detail %q does not contain %q", tt.summary, d.Detail, tt.detail)
			}
			if _, ok := c.Files[tt.file]; !ok {
				t.Errorf("Config.Files lacks %s, so diagnostics would print without snippets", tt.file)
			}
		})
	}
}

func findDiag(diags hcl.Diagnostics, summary, file string, line int) *hcl.Diagnostic {
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Summary == summary && d.Subject != nil &&
			d.Subject.Filename == file && d.Subject.Start.Line == line {
			return d
		}
	}
	return nil
}

func diagList(diags hcl.Diagnostics) string {
	var b strings.Builder
	for _, d := range diags {
		if d.Subject != nil {
			b.WriteString(d.Subject.String() + ": ")
		}
		b.WriteString(d.Summary + ": " + d.Detail + "\n")
	}
	return b.String()
}
