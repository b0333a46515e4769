package base

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// catFile is a read-only go-git object storer served by one long-lived
// `git cat-file --batch`. go-git's own storage decodes the whole pack
// index and builds an offset map of every object before its first lookup
// (about 100 ms of CPU on a 50k-commit repository, every time a repository
// is opened); cat-file answers a lookup in microseconds. The commits it
// yields are ordinary go-git commits, so a ContractCheck reads their trees
// and files with the go-git API.
type catFile struct {
	mu   sync.Mutex
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	dead error
}

var errReadOnly = errors.New("the base resolver's object store is read-only")

func (g *gitCLI) startCatFile(ctx context.Context) (*catFile, error) {
	cmd := exec.CommandContext(ctx, g.bin, "-c", "safe.directory="+g.dir, "-C", g.dir, "cat-file", "--batch")
	cmd.Env = gitEnv()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting git cat-file: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("starting git cat-file: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting git cat-file: %w", err)
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}, nil
}

// Close ends the cat-file process and waits for it.
func (c *catFile) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.in.Close()
	_ = c.cmd.Wait() // its exit status after stdin closed says nothing new
}

// lookup returns the object a revision names (any revision git reads:
// origin/main, v1.2.0^{commit}, a hash), or ok false when it names none.
func (c *catFile) lookup(rev string) (obj plumbing.EncodedObject, ok bool, err error) {
	if rev == "" || strings.ContainsAny(rev, "\n\x00") {
		return nil, false, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead != nil {
		return nil, false, c.dead
	}
	if _, err := io.WriteString(c.in, rev+"\n"); err != nil {
		c.dead = fmt.Errorf("git cat-file: %w", err)
		return nil, false, c.dead
	}
	header, err := c.out.ReadString('\n')
	if err != nil {
		c.dead = fmt.Errorf("git cat-file: %w", err)
		return nil, false, c.dead
	}
	// git echoes a revision it cannot read whole, spaces and all
	// ("HEAD ~3^{commit} missing"), so the verdict is the line's last
	// word, never a field count.
	if h := strings.TrimRight(header, "\n"); strings.HasSuffix(h, " missing") || strings.HasSuffix(h, " ambiguous") {
		return nil, false, nil
	}
	f := strings.Fields(header)
	if len(f) != 3 {
		return nil, false, nil
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		c.dead = fmt.Errorf("git cat-file: bad header %q", header)
		return nil, false, c.dead
	}
	typ, err := plumbing.ParseObjectType(f[1])
	if err != nil {
		c.dead = fmt.Errorf("git cat-file: bad header %q", header)
		return nil, false, c.dead
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(typ)
	mo.SetSize(size)
	if _, err := io.CopyN(mo, c.out, size); err != nil {
		c.dead = fmt.Errorf("git cat-file: reading %s: %w", f[0], err)
		return nil, false, c.dead
	}
	if _, err := c.out.Discard(1); err != nil {
		c.dead = fmt.Errorf("git cat-file: %w", err)
		return nil, false, c.dead
	}
	if mo.Hash().String() != f[0] {
		// MemoryObject hashes SHA-1; a SHA-256 repository would not match.
		return nil, false, fmt.Errorf("git cat-file: object %s hashed to %s (only SHA-1 repositories are read)", f[0], mo.Hash())
	}
	return mo, true, nil
}

// commit reads a revision as a commit, peeling tags; ok is false when the
// revision names no commit in the clone.
func (c *catFile) commit(rev string) (*object.Commit, bool, error) {
	obj, ok, err := c.lookup(rev + "^{commit}")
	if err != nil || !ok {
		return nil, false, err
	}
	cm, err := object.DecodeCommit(c, obj)
	if err != nil {
		return nil, false, fmt.Errorf("decoding commit %s: %w", rev, err)
	}
	return cm, true, nil
}

// The go-git storer interface, read-only.

func (c *catFile) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (c *catFile) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errReadOnly
}

func (c *catFile) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, ok, err := c.lookup(h.String())
	if err != nil {
		return nil, err
	}
	if !ok || (t != plumbing.AnyObject && obj.Type() != t) {
		return nil, plumbing.ErrObjectNotFound
	}
	return obj, nil
}

func (c *catFile) IterEncodedObjects(plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errors.New("iterating every object is not offered by the base resolver's store")
}

func (c *catFile) HasEncodedObject(h plumbing.Hash) error {
	_, err := c.EncodedObject(plumbing.AnyObject, h)
	return err
}

func (c *catFile) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	obj, err := c.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, err
	}
	return obj.Size(), nil
}

func (c *catFile) AddAlternate(string) error { return errReadOnly }
