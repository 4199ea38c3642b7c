package clock

import "context"

// A call that waits for time to pass on its clock (a servo move with wait:
// true returns when the ramp, which steps on the clock, arrives) says so
// with Waiting. Whoever drives a virtual clock (a replay) gives the call a
// context made by WithWaitNotice and learns, without guessing from wall
// time, that the call now waits for the clock to move and will not return
// until it does: everything the call did before waiting has happened.

type waitNoticeKey struct{}

// WithWaitNotice returns a context under which Waiting calls notice.
func WithWaitNotice(ctx context.Context, notice func()) context.Context {
	return context.WithValue(ctx, waitNoticeKey{}, notice)
}

// Waiting tells the holder of ctx (see WithWaitNotice), if any, that the
// caller is about to wait for the clock's time to pass.
func Waiting(ctx context.Context) {
	if notice, ok := ctx.Value(waitNoticeKey{}).(func()); ok {
		notice()
	}
}
