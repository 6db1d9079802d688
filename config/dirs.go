package config

import (
	"fmt"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
)

// checkDirs refuses instances that would share files: two whose
// directories are the same, or one whose directory is inside another's,
// whether the directories were written with dir or are the defaults
// (<output_dir>/<kind>/<name>, a level more per instance key). Each
// instance's files are its own: apply replaces and removes them, moves
// them when dir changes and deletes them with the resource, so another
// instance's files inside would go with them, and its subdirectory would
// stand where a file should. insts holds the instances of c.Resources, in
// the same order; those whose directory is not known yet are skipped.
func (c *Config) checkDirs(insts [][]instData) hcl.Diagnostics {
	type owner struct {
		r    *Resource
		inst *instData
	}
	dirs := make(map[string]owner)
	var diags hcl.Diagnostics
	// One diagnostic for each pair of resources, not for each of the
	// thousands of instances a for_each may have.
	reported := map[[2]*Resource]bool{}
	report := func(a, b *Resource) bool {
		if reported[[2]*Resource{a, b}] {
			return false
		}
		reported[[2]*Resource{a, b}] = true
		return true
	}
	for i, r := range c.Resources {
		for j := range insts[i] {
			inst := &insts[i][j]
			if inst.dir == "" {
				continue
			}
			if prev, ok := dirs[inst.dir]; ok {
				if !report(prev.r, r) {
					continue
				}
				diags = append(diags, dirDiag(prev.r, r, "Duplicate output directory",
					fmt.Sprintf("%s and %s both write their files to %s, so each would overwrite the other's.", prev.inst.addr, inst.addr, shownDir(inst))))
				continue
			}
			dirs[inst.dir] = owner{r, inst}
		}
	}
	diags = append(diags, c.checkDirsApart(insts)...)
	if len(dirs) < 2 {
		return diags
	}
	// Every directory against its parents: a few map lookups each, where
	// comparing every pair would be quadratic in a large for_each.
	for i, r := range c.Resources {
		for j := range insts[i] {
			inst := &insts[i][j]
			if inst.dir == "" || inst.dir == "." || dirs[inst.dir].inst != inst {
				continue
			}
			for p := filepath.Dir(inst.dir); ; p = filepath.Dir(p) {
				if outer, ok := dirs[p]; ok {
					if report(outer.r, r) {
						diags = append(diags, dirDiag(outer.r, r, "Overlapping output directories",
							fmt.Sprintf("%s writes its files to %s%s, inside %s%s, where %s writes its own: replacing, moving or deleting the files of one would reach the other's.", inst.addr, shownDir(inst), defaultNote(r), shownDir(outer.inst), defaultNote(outer.r), outer.inst.addr)))
					}
					break
				}
				if p == "." || p == string(filepath.Separator) {
					break
				}
			}
		}
	}
	return diags
}

// dirDiag reports two instances sharing files, on the dir attribute of
// the one that sets it (the later one when both do).
func dirDiag(ra, rb *Resource, summary, detail string) *hcl.Diagnostic {
	rng := rb.DeclRange
	switch {
	case rb.attribute("dir") != nil:
		rng = rb.attribute("dir").Expr.Range()
	case ra.attribute("dir") != nil:
		rng = ra.attribute("dir").Expr.Range()
	}
	return errorAt(&rng, summary,
		detail+" Give each its own dir, outside the others' (with count.index or each.key when one resource has several instances).")
}

// shownDir is an instance's directory as a message shows it. (A dir
// made from a sensitive value is refused before it gets here.)
func shownDir(inst *instData) string { return fmt.Sprintf("%q", inst.dir) }

// defaultNote says when r's directory is the default one, which the
// configuration does not show.
func defaultNote(r *Resource) string {
	if r.attribute("dir") != nil {
		return ""
	}
	return " (its default directory, <output_dir>/<kind>/<name>)"
}

// checkDirsApart refuses an instance whose directory holds the state file
// or the cache, or lies inside either: apply writes, replaces and removes
// files there, so an output could overwrite the state, and pruning the
// cache could remove outputs. One diagnostic per resource.
func (c *Config) checkDirsApart(insts [][]instData) hcl.Diagnostics {
	var diags hcl.Diagnostics
	sf, cd := c.Settings.StateFile, c.Settings.CacheDir
	for i, r := range c.Resources {
		for j := range insts[i] {
			inst := &insts[i][j]
			if inst.dir == "" || inst.dir == "." {
				continue
			}
			var what string
			switch {
			case c.Settings.Backend == nil && (within(sf, inst.dir) || within(inst.dir, sf)):
				what = fmt.Sprintf("the state file %q", sf)
			case within(cd, inst.dir) || within(inst.dir, cd):
				what = fmt.Sprintf("the cache (cache_dir %q)", cd)
			default:
				continue
			}
			rng := r.DeclRange
			if a := r.attribute("dir"); a != nil {
				rng = a.Expr.Range()
			}
			diags = append(diags, errorAt(&rng, "Output directory overlaps genform's own files",
				fmt.Sprintf("%s writes its files to %s%s, which holds or lies inside %s: apply writes and removes files in an output directory, so it would reach them. Give it a dir apart from state_file and cache_dir.", inst.addr, shownDir(inst), defaultNote(r), what)))
			break
		}
	}
	return diags
}
