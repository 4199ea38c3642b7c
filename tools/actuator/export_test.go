package actuator

import (
	"context"
	"time"
)

// The tests are an external package (they build real kinds, which import
// this one); these give them the internals they check.

const (
	AuditQueue  = auditQueue
	BatchMax    = batchMax
	LatchBucket = latchBucket
	LatchKey    = latchKey
)

type AuditBatch = auditBatch

func (s *Set) AuditQuery(ctx context.Context, q Query) ([]Entry, error) {
	return s.audit.query(ctx, q)
}

func (s *Set) AuditSync(ctx context.Context) error { return s.audit.sync(ctx) }

type Bucket struct{ b *bucket }

func NewBucket(rate float64) *Bucket {
	if b := newBucket(rate); b != nil {
		return &Bucket{b}
	}
	return nil
}

func (b *Bucket) Take(now time.Time) (bool, time.Duration) { return b.b.take(now) }
