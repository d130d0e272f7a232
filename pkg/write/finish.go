package write

import (
	"context"
	"time"
)

// FinishGrace is how long the writes of an object already begun go on
// after the run was cancelled (Finishing): short enough to end before
// main's own grace (5 s) runs out, long enough for a few requests.
const FinishGrace = 3 * time.Second

// Finishing returns a context for the remaining writes of one object
// whose first write is done: it carries ctx's values and deadline but
// outlives its cancellation by grace, so that a signal stops a run between
// objects, not between the steps of one (a share without its release, a
// backup without its patch). stop releases it.
func Finishing(ctx context.Context, grace time.Duration) (finishing context.Context, stop func()) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if d, ok := ctx.Deadline(); ok {
		// A deadline is not a cancellation: it still holds.
		var cancelDeadline context.CancelFunc
		out, cancelDeadline = context.WithDeadline(out, d)
		cancelAll := cancel
		cancel = func() { cancelDeadline(); cancelAll() }
	}
	// The timer is not stopped with the rest: it only cancels what stop
	// has cancelled already.
	after := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return out, func() {
		after()
		cancel()
	}
}
