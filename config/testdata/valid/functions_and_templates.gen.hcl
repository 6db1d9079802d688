locals {
  shots  = csvdecode(file("shots.csv"))
  prompt = templatefile("prompt.tmpl", { subject = "a lighthouse", styles = ["noir", "wide"] })
}

image "shot" {
  for_each = { for s in local.shots : s.name => s }
  prompt   = "${local.prompt}, ${each.value.mood}"
  seed     = tonumber(each.value.seed)
}
