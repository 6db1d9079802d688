package workdir

import (
	"path/filepath"

	"github.com/genform/genform/config"
	"github.com/genform/genform/internal/cache"
)

// CacheOf is the cache of a configuration in the working directory dir.
func CacheOf(cfg *config.Config, dir string) *cache.Cache {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(filepath.Join(dir, filepath.FromSlash(cfg.Settings.CacheDir)))
	if err != nil {
		abs = filepath.Join(dir, filepath.FromSlash(cfg.Settings.CacheDir))
	}
	return cache.New(abs)
}
