//go:build !linux

package load

import (
	"context"
	"time"
)

// runLoop: the event loop is Linux-only; other systems use the workers.
func runLoop(context.Context, *Attack, *endpoint, time.Time) (*Result, bool) { return nil, false }
