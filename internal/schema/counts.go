package schema

import "slices"

// CountKeys are the input fields that say how many files one request
// makes, as the providers' model schemas name them. A block passes its
// input through unchanged, so a model the tables do not list (or a field
// a listed model's row does not map) can still ask for many files with
// one of these: the planner reads them (plans.InputCount), so that what a
// plan counts, prices and checks against -max-cost, and what apply keeps,
// is what the provider makes and charges for.
//
// Where each comes from:
//
//   - num_images: fal's image models (FLUX, Imagen, Ideogram, Seedream …;
//     the field of about 650 endpoints in fal's generated model client,
//     github.com/carlosdp/fal-rs src/endpoints); on Seedream 4
//     (fal.ai/models/fal-ai/bytedance/seedream/v4/text-to-image) it is the
//     number of separate generations, 1 to 6, each making up to
//     max_images.
//   - max_images: Seedream 4 and 4.5, images a generation, 1 to 15
//     (replicate.com/bytedance/seedream-4 and seedream-4.5 input schemas;
//     fal's Seedream 4 page above).
//   - num_outputs: Replicate's image models (black-forest-labs/flux-schnell,
//     stability-ai/sdxl, playground-v2.5, kandinsky …; their input schemas
//     on replicate.com).
//   - number_of_images: Replicate's openai/gpt-image-1, 1 to 10, and
//     community models (SD3 Explorer, PuLID); fal's omni-zero.
//   - number_of_outputs, number_of_images_per_pose: Replicate's
//     fofr/consistent-character (images per pose, for each output pose).
//   - image_num: Replicate's ad-inpaint ("Number of image to generate").
//   - n: OpenAI's Images API, 1 to 10 (Images API reference,
//     createImage).
//   - outputCount: Runway's text_to_image for gpt_image_2 (1 to 10),
//     gemini_image3_pro and gemini_image3.1_flash (1 or 4), seedream5_pro
//     and seedream5_lite ("Increasing this number will affect the number of
//     credits consumed"; runwayml/sdk-python
//     types/text_to_image_create_params.py).
//   - num_samples: fal's fashn/tryon ("Number of images to generate in a
//     single run").
//   - samples: Stability AI's v1 generation API, images a request.
//   - num_results: fal's Bria endpoints ("How many images you would like
//     to generate").
//   - batch_size: Replicate's zeroscope-v2-xl (videos a request) and the
//     ComfyUI-based models that batch latents.
//   - num_videos, number_of_videos: Google's Veo (GenerateVideosConfig
//     numberOfVideos, up to 4 a request) as hosts pass it through.
//   - image_number: the reference service's own name for the count, which
//     a block may carry over into input.
//
// Luma's generation requests take no count (one file a generation;
// lumalabs/lumaai-python types). Checked and left out: num_inference_steps,
// steps and the like (work per image, not files), num_frames (a video's
// length), and images, outputs, count, n_images, num_generations (no model
// schema found using them as a count; images is a list of source images).
//
// A key here that a model uses for something else (fal's live-portrait
// batch_size is a speed setting) makes the count too high, never too
// low: an estimate that errs, errs towards paying less than it says.
var CountKeys = []string{
	"num_images", "max_images", "num_outputs", "number_of_images",
	"number_of_outputs", "number_of_images_per_pose", "image_num", "n",
	"outputCount", "num_samples", "samples", "num_results", "batch_size",
	"num_videos", "number_of_videos", "image_number",
}

// IsCountKey reports whether input field key says how many files a
// request makes (CountKeys).
func IsCountKey(key string) bool { return slices.Contains(CountKeys, key) }
