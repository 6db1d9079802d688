package apply

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/genform/genform/internal/addrs"
	"github.com/genform/genform/statefile"
)

// MoveInput says which record MoveRecord moves, and where its files go.
type MoveInput struct {
	Store *statefile.Store
	// Dst must be free: no record and no intent.
	Src, Dst addrs.Instance
	// Dir is the directory Dst's files belong in, relative to WorkDir; ""
	// keeps them where they are.
	Dir string
	// WorkDir is the working directory output paths are relative to.
	WorkDir string
	// OutputDir is the configuration's output_dir: emptied directories
	// are removed up to it, not beyond.
	OutputDir string
}

// MoveRecord records the resource at in.Src under in.Dst, with its
// protection, moving its files into in.Dir when that differs from where
// they are (`genform state mv`). It returns the record as now stored.
//
// The files move first and the state is committed after, the order apply
// uses for a rename: if the process dies in between, the state still names
// Src with the old paths, and running the same move again finishes it,
// because a file already at its new path is left alone. Committing first
// would leave a state naming files that are not there, with no command to
// complete the move. If the commit itself fails, the files are moved back.
func MoveRecord(in MoveInput) (*statefile.Resource, error) {
	old, err := in.Store.Resource(in.Src)
	if err != nil {
		return nil, err
	}
	if old == nil {
		return nil, fmt.Errorf("moving %s: %w", in.Src, statefile.ErrNotFound)
	}
	// Refused before any file moves; the transaction checks it again.
	if cur, err := in.Store.Resource(in.Dst); err != nil || cur != nil {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("moving %s to %s: %s: %w", in.Src, in.Dst, in.Dst, statefile.ErrExists)
	}
	rec := *old
	rec.Addr = in.Dst
	rec.Outputs = append([]statefile.Output(nil), old.Outputs...)
	if in.Dir != "" {
		rec.Dir = in.Dir
	}
	// The files move as apply moves a renamed instance's, by a run of the
	// engine that submits nothing.
	r := (&Engine{Dir: in.WorkDir, Store: in.Store}).start(context.Background(), nil)
	defer r.stop(nil)
	if err := r.relocate(&rec, old); err != nil {
		return nil, errors.Join(err, r.moveBack(&rec, old, in.OutputDir))
	}
	if err := r.refreshStats(&rec); err != nil {
		return nil, err
	}
	err = in.Store.Update(func(tx *statefile.Tx) error { return tx.Move(in.Src, &rec) })
	if err != nil {
		if berr := r.moveBack(&rec, old, in.OutputDir); berr != nil {
			return nil, fmt.Errorf("recording the move of %s to %s: %w (and moving its files back: %v)", in.Src, in.Dst, err, berr)
		}
		return nil, fmt.Errorf("recording the move of %s to %s: %w", in.Src, in.Dst, err)
	}
	if old.Dir != rec.Dir {
		pruneDirs(in.WorkDir, old.Dir, in.OutputDir)
	}
	return in.Store.Resource(in.Dst)
}

// moveBack undoes what relocate did for rec's outputs, removing the
// directories it emptied up to outputDir.
func (r *applyRun) moveBack(rec, old *statefile.Resource, outputDir string) error {
	if rec.Dir == old.Dir {
		return nil
	}
	var errs []error
	for i, o := range old.Outputs {
		if o.Path == "" || i >= len(rec.Outputs) || rec.Outputs[i].Path == o.Path {
			continue
		}
		if _, err := os.Stat(filepath.Join(r.e.Dir, filepath.FromSlash(o.Path))); err == nil {
			continue
		}
		if err := renameFile(r.e.Dir, rec.Outputs[i].Path, o.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	pruneDirs(r.e.Dir, rec.Dir, outputDir)
	return errors.Join(errs...)
}
