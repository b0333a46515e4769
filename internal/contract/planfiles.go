package contract

import (
	"path"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/plan"
)

// planFiles lists, relative to the tree's root, the files the tree's plan
// reads besides itself: data files, body files, variable files, DPoP keys
// and each control's plan with its own files. They are kept beside the
// plan so that `perfgate run` after `unpack` reads them where the plan
// says. A plan this perfgate refuses (a base's, written for an older one)
// keeps only itself: the run reads the head's plan and refuses it there.
// Absolute paths and paths that leave the tree are not the tree's to carry.
func planFiles(treeDir, planRel string) []string {
	p, err := plan.ParseFile(filepath.Join(treeDir, filepath.FromSlash(planRel)))
	if err != nil {
		return nil
	}
	return filesOf(p, path.Dir(planRel), 0)
}

func filesOf(p *plan.Plan, dir string, depth int) []string {
	var rel []string
	for _, d := range p.Data {
		rel = append(rel, d.File)
	}
	for _, g := range p.Groups {
		rel = append(rel, g.BodyFile, g.DPoPKeyFile)
	}
	for _, v := range p.Vars {
		rel = append(rel, v.File)
	}
	var out []string
	for _, c := range p.Controls {
		if c.PlanFile == "" {
			continue
		}
		rel = append(rel, c.PlanFile)
		// A control's plan declares no controls itself (the plan refuses
		// it), so one level is all there is; depth only guards that.
		if c.Plan != nil && depth == 0 {
			out = append(out, filesOf(c.Plan, path.Dir(path.Join(dir, filepath.ToSlash(c.PlanFile))), depth+1)...)
		}
	}
	for _, f := range rel {
		if f == "" || filepath.IsAbs(f) {
			continue
		}
		p := path.Join(dir, filepath.ToSlash(f))
		if treePath(p) != nil {
			continue
		}
		out = append(out, p)
	}
	return out
}
