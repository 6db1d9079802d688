# Three live providers in one configuration: an image OpenAI makes,
# animated by Runway (OpenAI answers the image itself, with no URL, so
# genform passes it to Runway as a data: URI), and a Luma video that runs
# between two Luma images (passed by their URLs; nothing is uploaded).
#
# With your keys it pays the providers themselves:
#
#   export OPENAI_API_KEY=... RUNWAYML_API_SECRET=... LUMAAI_API_KEY=...
#   genform plan
#   genform apply
#
# Without them, against genform's simulators of the three APIs on your
# machine (nothing is paid; the outputs are synthetic), each in its own
# terminal or in the background:
#
#   genform sim -provider openai -addr 127.0.0.1:8801 &
#   genform sim -provider runway -addr 127.0.0.1:8802 &
#   genform sim -provider luma   -addr 127.0.0.1:8803 &
#   export OPENAI_BASE_URL=http://127.0.0.1:8801 OPENAI_API_KEY=sim
#   export RUNWAY_BASE_URL=http://127.0.0.1:8802 RUNWAYML_API_SECRET=sim
#   export LUMA_BASE_URL=http://127.0.0.1:8803 LUMAAI_API_KEY=sim
#   genform plan
#   genform apply
#
# A base URL left unset (or empty) is the provider's own address.

provider "openai" {
  base_url = env("OPENAI_BASE_URL", "")
  prices   = { "gpt-image-2" = { image = 0.04 } }
}

provider "runway" {
  base_url = env("RUNWAY_BASE_URL", "")
  prices   = { "gen4_turbo" = { video_second = 0.05 } }
}

provider "luma" {
  base_url = env("LUMA_BASE_URL", "")
  # Luma's 20 requests a minute are for creates; genform's budget counts
  # every request, status reads included.
  requests_per_minute = 60
}

image "harbour" {
  provider     = openai
  model        = "gpt-image-2"
  prompt       = "a small harbour at dawn, fishing boats, watercolour"
  aspect_ratio = "3:2"
}

video "harbour_waves" {
  provider     = runway
  model        = "gen4_turbo"
  prompt       = "the boats rock gently as the tide comes in"
  source_image = image.harbour.outputs[0].media_url
  aspect_ratio = "16:9"
  duration     = 5
}

image "noon" {
  provider     = luma
  model        = "photon-1"
  prompt       = "the same harbour at noon, bright sun, watercolour"
  aspect_ratio = "16:9"
}

image "night" {
  provider     = luma
  model        = "photon-1"
  prompt       = "the same harbour at night, lanterns on the boats, watercolour"
  aspect_ratio = "16:9"
}

video "noon_to_night" {
  provider      = luma
  model         = "ray-2"
  prompt        = "the day passes over the harbour"
  source_images = [image.noon.outputs[0].media_url, image.night.outputs[0].media_url]
  aspect_ratio  = "16:9"
  duration      = 5
}
