// Package scratchimage makes a docker image that holds only the files it is
// given (what a `FROM scratch` Dockerfile of COPY lines would), in one
// `docker import` of a tar stream.
//
// Not `docker build`: the legacy builder, the only one a docker engine
// without buildx has, commits an image per Dockerfile step and takes a
// step from its cache when another build made the same one. Two demos, or
// two test binaries, build the same binary's image, and one's `docker rmi`
// prunes the untagged step images its image rests on, which the other's
// build may be adding a step to. In a rehearsal (run 148) a demo's build
// failed in a second, said only the CLI's deprecation banner and left a
// step image behind whose parent was gone: the mark of such a prune (a
// loop of overlapping builds and removals did not reproduce it). An import
// has no steps and no cache: each image is one layer of its own, made or
// not made.
package scratchimage

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// File is one file of the image.
type File struct {
	// Path is where the file sits in the image, absolute ("/perfgate").
	Path string
	// From is the host file whose bytes it gets; a symbolic link is
	// followed, so the image gets the file, not the link.
	From string
	// Mode is its permission bits (0o755 for a program). Zero means 0o644.
	Mode os.FileMode
}

// Options says what image to make. Nothing is pulled and no build context
// is sent: the image is exactly Files.
type Options struct {
	// Tag names the image (name:tag). An image already tagged so loses the
	// tag to the new one, as with docker build.
	Tag string
	// Files are the image's files; the folders above them are made.
	Files []File
	// Entrypoint is the image's ENTRYPOINT in exec form.
	Entrypoint []string
	// Labels are set on the image. They do not end up on any other image:
	// there are no intermediate ones.
	Labels map[string]string
}

// Import makes the image with `docker import`, streaming the files to it.
// The error names the step and carries docker's own message.
func Import(ctx context.Context, o Options) error {
	if o.Tag == "" || len(o.Files) == 0 {
		return fmt.Errorf("making a scratch image: a tag and at least one file are needed")
	}
	// Every file checked before docker starts: a missing one is named as
	// such, not as a cut stream.
	for _, f := range o.Files {
		if p := path.Clean(f.Path); !path.IsAbs(p) || p == "/" {
			return fmt.Errorf("making the image %s: the file %q: write its path in the image absolute, like /perfgate", o.Tag, f.Path)
		}
		if st, err := os.Stat(f.From); err != nil {
			return fmt.Errorf("making the image %s: reading %s for its %s: %w", o.Tag, f.From, f.Path, err)
		} else if !st.Mode().IsRegular() {
			return fmt.Errorf("making the image %s: %s (for its %s) is not a regular file", o.Tag, f.From, f.Path)
		}
	}
	args := []string{"import"}
	for _, c := range changes(o) {
		args = append(args, "--change", c)
	}
	args = append(args, "-", o.Tag)
	cmd := exec.CommandContext(ctx, "docker", args...)
	pr, pw := io.Pipe()
	cmd.Stdin = pr
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("making the image %s: starting docker import: %w", o.Tag, err)
	}
	// The writer closes the pipe with its error, which ends docker's read;
	// if docker exits first, the pipe is closed below and the writer ends
	// on that. Its error is read after Wait either way.
	werr := make(chan error, 1)
	go func() {
		err := writeTar(pw, o.Files)
		pw.CloseWithError(err)
		werr <- err
	}()
	err := cmd.Wait()
	// A writer still blocked (docker ended before reading it all) ends on
	// the closed pipe.
	pr.Close()
	wErr := <-werr
	switch {
	case wErr != nil && !errors.Is(wErr, io.ErrClosedPipe):
		// A file that could not be read: docker's complaint about the cut
		// stream would only hide it.
		return fmt.Errorf("making the image %s: %w", o.Tag, wErr)
	case err != nil:
		return fmt.Errorf("making the image %s: docker import: %v: %s", o.Tag, err, strings.TrimSpace(out.String()))
	case wErr != nil:
		return fmt.Errorf("making the image %s: %w", o.Tag, wErr)
	}
	return nil
}

// changes are the Dockerfile instructions docker import applies.
func changes(o Options) []string {
	var c []string
	if len(o.Entrypoint) > 0 {
		q := make([]string, len(o.Entrypoint))
		for i, a := range o.Entrypoint {
			q[i] = strconv.Quote(a)
		}
		c = append(c, "ENTRYPOINT ["+strings.Join(q, ", ")+"]")
	}
	keys := make([]string, 0, len(o.Labels))
	for k := range o.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c = append(c, "LABEL "+strconv.Quote(k)+"="+strconv.Quote(o.Labels[k]))
	}
	return c
}

// writeTar writes files as a tar stream, each folder above them first.
func writeTar(w io.Writer, files []File) error {
	tw := tar.NewWriter(w)
	made := map[string]bool{}
	// Fixed times: the same files make the same layer.
	mtime := time.Unix(0, 0)
	for _, f := range files {
		p := path.Clean(f.Path)
		var dirs []string
		for d := path.Dir(p); d != "/" && !made[d]; d = path.Dir(d) {
			dirs = append(dirs, d)
		}
		for i := len(dirs) - 1; i >= 0; i-- {
			made[dirs[i]] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dirs[i][1:] + "/", Mode: 0o755, ModTime: mtime}); err != nil {
				return fmt.Errorf("writing the folder %s: %w", dirs[i], err)
			}
		}
		if err := writeFile(tw, p, f, mtime); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeFile(tw *tar.Writer, p string, f File, mtime time.Time) error {
	src, err := os.Open(f.From)
	if err != nil {
		return fmt.Errorf("reading %s for the image's %s: %w", f.From, p, err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return fmt.Errorf("reading %s for the image's %s: %w", f.From, p, err)
	}
	mode := f.Mode
	if mode == 0 {
		mode = 0o644
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: p[1:], Mode: int64(mode.Perm()), Size: st.Size(), ModTime: mtime}); err != nil {
		return fmt.Errorf("writing the image's %s: %w", p, err)
	}
	if _, err := io.Copy(tw, src); err != nil {
		return fmt.Errorf("copying %s into the image's %s: %w", f.From, p, err)
	}
	return nil
}
