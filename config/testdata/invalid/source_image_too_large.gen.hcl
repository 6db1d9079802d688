locals {
  # 12 x 1000 x 874 = 10,488,000 characters of base64: past 10 MiB.
  chunk = join("", [for i in range(1000) : "AAAAAAAAAAAA"])
}

video "clip" {
  source_image = "data:image/png;base64,${join("", [for i in range(874) : local.chunk])}"
}
