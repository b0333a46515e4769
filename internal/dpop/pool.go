package dpop

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Pool defaults: 64 proofs ahead covers a few seconds of a gate's 20
// arrivals a second, and a proof older than 30 s is thrown away, well
// inside the minute servers usually accept an iat for.
const (
	DefaultDepth  = 64
	DefaultMaxAge = 30 * time.Second
)

// Pool keeps proofs signed ahead of the schedule: one goroutine refills
// it as sends take proofs, so a send takes a ready proof instead of
// spending a signature's time. Start it, Take from one goroutine or many,
// and Stop it when the run ends; whoever starts it stops it.
type Pool struct {
	s      *Signer
	maxAge time.Duration
	ready  chan made

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	signed, inline, stale, failed atomic.Uint64
	errMu                         sync.Mutex
	err                           error
}

type made struct {
	proof string
	at    time.Time
}

// Stats is what a pool did: proofs signed by its goroutine, signed on the
// spot because none was ready (each of those delayed a send), thrown away
// as too old, and signatures that failed.
type Stats struct {
	Signed, Inline, Stale, Failed uint64
}

// Start starts a pool of depth proofs (DefaultDepth when 0) from s, each
// thrown away once older than maxAge (DefaultMaxAge when 0). Its goroutine
// ends when ctx ends or Stop is called.
func Start(ctx context.Context, s *Signer, depth int, maxAge time.Duration) *Pool {
	if depth <= 0 {
		depth = DefaultDepth
	}
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Pool{s: s, maxAge: maxAge, ready: make(chan made, depth), cancel: cancel, done: make(chan struct{})}
	// The pool is filled before Start returns (a few milliseconds of
	// signing), so the first sends of a run find proofs ready too.
	for range depth {
		proof, err := s.Sign()
		if err != nil {
			p.fail(err)
			break
		}
		p.signed.Add(1)
		p.ready <- made{proof: proof, at: time.Now()}
	}
	go p.fill(ctx)
	return p
}

func (p *Pool) fill(ctx context.Context) {
	defer close(p.done)
	for {
		proof, err := p.s.Sign()
		if err != nil {
			p.fail(err)
			// A failing signer (the system's random source) would spin:
			// wait a little before trying again.
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		p.signed.Add(1)
		select {
		case p.ready <- made{proof: proof, at: time.Now()}:
		case <-ctx.Done():
			return
		}
	}
}

func (p *Pool) fail(err error) {
	p.failed.Add(1)
	p.errMu.Lock()
	if p.err == nil {
		p.err = err
	}
	p.errMu.Unlock()
}

// Take returns a proof: a ready one when the pool has one fresh enough,
// else one signed on the spot (counted in Stats.Inline).
func (p *Pool) Take() (string, error) {
	for {
		select {
		case m := <-p.ready:
			if time.Since(m.at) > p.maxAge {
				p.stale.Add(1)
				continue
			}
			return m.proof, nil
		default:
			p.inline.Add(1)
			proof, err := p.s.Sign()
			if err != nil {
				p.fail(err)
				return "", err
			}
			return proof, nil
		}
	}
}

// Stop ends the pool's goroutine and waits for it. Safe to call twice.
func (p *Pool) Stop() {
	p.once.Do(p.cancel)
	<-p.done
}

// Stats reports what the pool did so far.
func (p *Pool) Stats() Stats {
	return Stats{Signed: p.signed.Load(), Inline: p.inline.Load(), Stale: p.stale.Load(), Failed: p.failed.Load()}
}

// Err is the first signing failure, or nil.
func (p *Pool) Err() error {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	return p.err
}
