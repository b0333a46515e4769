package plan

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// DataSource is a file of values, one a line, that {name} draws from.
//
// draw = "fresh" (the default) hands out values without replacement in an
// order shuffled by the run's seed, because a target that caches makes a
// repeated identifier cheaper than a real lookup. draw = "zipf" picks with
// replacement, line 1 the most popular, P(rank r) proportional to
// 1/r^exponent, for a shared catalogue whose hot set a cache absorbs.
//
// The warm-up draws from its own part of the file, warmup_fraction of the
// lines taken evenly across it (every fifth line at 0.2, so a Zipf
// catalogue keeps its shape in both parts), which the measured stage never
// sends.
type DataSource struct {
	Name           string
	File           string // as written, relative to the plan's folder
	Draw           string // "fresh" or "zipf"
	Exponent       float64
	WarmupFraction float64
	// Exhausted says what a fresh draw does when its part runs out:
	// "refuse" (the default) refuses, when the plan is parsed (and in
	// CheckLoad for rates given as flags), any settings that would need more
	// values than the part holds; "reshuffle" allows it and starts the part
	// again in a new order, counting every repeat in the source's notes.
	Exhausted string
	Line      int // line of [data.<name>]
	FileLine  int // line of its file = key

	path             string
	warm, measured   []string
	warmCDF, measCDF []float64 // zipf only
}

// Values returns how many values each part holds.
func (d *DataSource) Values() (warmup, measured int) { return len(d.warm), len(d.measured) }

func (ps *parser) readValues(d *DataSource) {
	d.path = d.File
	if !filepath.IsAbs(d.path) {
		d.path = filepath.Join(ps.dir, d.File)
	}
	fileKey := []string{"data", d.Name, "file"}
	raw, err := readRegular(d.path, 512<<20)
	if err != nil {
		ps.At(fileKey, "", "cannot read data file %s (%v); write file = the path of a file of values, one a line, relative to the plan's folder", d.path, err)
		return
	}
	seen := map[string]int{}
	var values []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		v := strings.TrimSpace(sc.Text())
		if v == "" || strings.HasPrefix(v, "#") {
			continue
		}
		switch {
		case !utf8.ValidString(v):
			ps.add(d.path, line, "value is not UTF-8 text; write it as UTF-8 or percent-encoded")
			return
		case strings.IndexFunc(v, func(r rune) bool { return r < 0x21 || r == 0x7f }) >= 0:
			ps.add(d.path, line, "value holds a space or a control character, which would break the request line; write it percent-encoded (a space as %%20)")
			return
		}
		if first, dup := seen[v]; dup {
			ps.add(d.path, line, "value repeats line %d, so a fresh draw would send it twice and a zipf rank would be split; remove this line", first)
			return
		}
		seen[v] = line
		values = append(values, v)
	}
	if err := sc.Err(); err != nil {
		ps.add(d.path, line+1, "cannot read this line (%v); write one value a line, each under 1 MiB", err)
		return
	}
	warmN := int(math.Round(float64(len(values)) * d.WarmupFraction))
	if d.WarmupFraction > 0 && warmN == 0 || len(values)-warmN < 1 {
		ps.At(fileKey, "", "data file %s holds %d values, too few to give the warm-up %.0f%% and the measured stage the rest; add values to it", d.File, len(values), d.WarmupFraction*100)
		return
	}
	d.warm, d.measured = split(values, warmN)
	if d.Draw == "zipf" {
		d.warmCDF, d.measCDF = zipfCDF(len(d.warm), d.Exponent), zipfCDF(len(d.measured), d.Exponent)
	}
}

// split gives k of the values, spread evenly over the file, to the warm-up.
func split(values []string, k int) (warm, measured []string) {
	n := len(values)
	for i, v := range values {
		if (i+1)*k/n > i*k/n {
			warm = append(warm, v)
		} else {
			measured = append(measured, v)
		}
	}
	return warm, measured
}

// zipfCDF is the cumulative weight of ranks 1..n under 1/r^s. math/rand/v2's
// Zipf needs s > 1; readers' interest often fits s <= 1, so the table
// (8 bytes a value) serves every s > 0 exactly.
func zipfCDF(n int, s float64) []float64 {
	cdf := make([]float64, n)
	var sum float64
	for r := 1; r <= n; r++ {
		sum += math.Pow(float64(r), -s)
		cdf[r-1] = sum
	}
	return cdf
}

// MaxBodyBytes is the largest request body a plan may name (docs/plan.md):
// perfgate holds each body in memory for the whole run, and no HTTP
// service's request needs more to be measured.
const MaxBodyBytes = 16 << 20

// bodyFiles holds each body file read while parsing one plan, by its path:
// groups naming one file share its bytes, read once.
type bodyFiles map[string]string

func (ps *parser) readBody(g *Group, key []string) {
	g.bodyPath = g.BodyFile
	if !filepath.IsAbs(g.bodyPath) {
		g.bodyPath = filepath.Join(ps.dir, g.BodyFile)
	}
	if body, ok := ps.bodies[g.bodyPath]; ok {
		g.Body = body
		return
	}
	if st, err := os.Stat(g.bodyPath); err == nil && st.Mode().IsRegular() && st.Size() > MaxBodyBytes {
		ps.At(key, "", "body file %s holds %d bytes, over the %d MiB limit of a request body; send a smaller body (perfgate holds each body in memory for the run)", g.bodyPath, st.Size(), MaxBodyBytes>>20)
		return
	}
	body, err := readRegularString(g.bodyPath, MaxBodyBytes)
	if err != nil {
		ps.At(key, "", "cannot read body file %s (%v); write body_file = a path relative to the plan's folder, or the body inline as body = '...'", g.bodyPath, err)
		return
	}
	if ps.bodies == nil {
		ps.bodies = bodyFiles{}
	}
	ps.bodies[g.bodyPath] = body
	g.Body = body
}

// drawer hands out one part's values for one run.
type drawer struct {
	values []string
	cdf    []float64
	rng    *rand.Rand
	order  []string
	next   int
	drawn  uint64
	reused uint64
}

// newDrawer draws from values for slice part of parts: a fresh draw shuffles
// the whole part by the seed alone and keeps its slice, so slices of one
// seed never overlap; a zipf draw gets a stream of its own per slice.
func newDrawer(values []string, cdf []float64, seed int64, stream uint64, part, parts int) *drawer {
	rng := rand.New(rand.NewPCG(uint64(seed), stream))
	if cdf != nil {
		return &drawer{values: values, cdf: cdf, rng: rand.New(rand.NewPCG(uint64(seed), stream|uint64(part)))}
	}
	all := append([]string(nil), values...)
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	n := len(all)
	slice := all[part*n/parts : (part+1)*n/parts]
	if len(slice) == 0 { // more pairs than values: share the part rather than draw nothing
		slice = all
	}
	return &drawer{values: slice, order: slice, rng: rng}
}

func (d *drawer) draw() string {
	if len(d.values) == 0 {
		return ""
	}
	d.drawn++
	if d.cdf != nil {
		u := d.rng.Float64() * d.cdf[len(d.cdf)-1]
		i := sort.SearchFloat64s(d.cdf, u)
		if i >= len(d.values) {
			i = len(d.values) - 1
		}
		return d.values[i]
	}
	if d.next == len(d.order) {
		// Exhausted: start the part again in a new order; every draw from
		// here on repeats a value and is counted so the report can say so.
		d.rng.Shuffle(len(d.order), func(i, j int) { d.order[i], d.order[j] = d.order[j], d.order[i] })
		d.next = 0
	}
	if d.drawn > uint64(len(d.order)) {
		d.reused++
	}
	v := d.order[d.next]
	d.next++
	return v
}

func (d *drawer) note(name, stage string) string {
	if d.reused == 0 {
		return ""
	}
	return fmt.Sprintf("data %s: the %s part's %d values ran out; %d of %d draws repeated a value (cache primed)", name, stage, len(d.values), d.reused, d.drawn)
}

// readRegular reads a plan's file, refusing anything but a regular file of
// at most limit bytes: a plan naming /dev/zero or a FIFO must not hang or
// exhaust the runner.
func readRegular(path string, limit int64) ([]byte, error) {
	s, err := readRegularString(path, limit)
	return []byte(s), err
}

// readRegularString is readRegular into a string of exactly the file's
// size, with no second copy, for files held for the whole run.
func readRegularString(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > limit {
		return "", fmt.Errorf("%s holds %d bytes, over the limit of %d", path, st.Size(), limit)
	}
	var b strings.Builder
	b.Grow(int(st.Size()))
	// One byte past the limit tells a file that grew since Stat.
	if _, err := io.Copy(&b, io.LimitReader(f, limit+1)); err != nil {
		return "", err
	}
	if int64(b.Len()) > limit {
		return "", fmt.Errorf("%s grew past the limit of %d bytes while being read", path, limit)
	}
	return b.String(), nil
}
