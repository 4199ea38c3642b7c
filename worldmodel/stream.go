package worldmodel

import (
	"cmp"
	"context"
	"slices"
	"sync"
)

// The stream is everything the model holds — observations, events and the
// journal — in sequence order, read by cursor: MQTT, the dashboard and the
// recorder each hold one, as consumers of a tiny Kafka. A consumer that
// falls behind the rings loses the oldest items, sees how many (Missed), and
// never slows the producers.

// ItemKind says which field of an Item is set.
type ItemKind uint8

const (
	ItemObservation ItemKind = iota + 1
	ItemEvent
	ItemRecord
)

// Item is one element of the stream.
type Item struct {
	Kind   ItemKind
	Obs    Observation // ItemObservation
	Event  Event       // ItemEvent
	Record Record      // ItemRecord
}

// Seq is the item's model-wide sequence number.
func (it Item) Seq() uint64 {
	switch it.Kind {
	case ItemObservation:
		return it.Obs.Seq
	case ItemEvent:
		return it.Event.Seq
	}
	return it.Record.Seq
}

// Cursor is one consumer's position in the stream. It tracks, for each ring,
// how many of the ring's items (over its life) it has consumed, so the items
// a ring overwrote before the cursor got to them are counted exactly. A
// Cursor is not safe for concurrent use: it belongs to one consumer.
type Cursor struct {
	m      *Model
	obs    map[*Ring]uint64 // ring -> items consumed over the ring's life
	events uint64
	recs   uint64
	missed uint64
	// reported is what Lost has handed out of missed.
	reported uint64
	scr      []Item
}

// NewCursor returns a cursor at the start of what the model still holds
// (fromStart) or at its end, so that only what happens next is read.
func (m *Model) NewCursor(fromStart bool) *Cursor {
	c := &Cursor{m: m, obs: map[*Ring]uint64{}}
	if fromStart {
		return c
	}
	for _, r := range m.sources.Load().sorted {
		r.mu.Lock()
		c.obs[r] = r.total
		r.mu.Unlock()
	}
	m.evMu.Lock()
	c.events = m.evTotal
	m.evMu.Unlock()
	m.recMu.Lock()
	c.recs = m.recTotal
	m.recMu.Unlock()
	return c
}

// Missed is how many items the rings overwrote before this cursor read them.
func (c *Cursor) Missed() uint64 { return c.missed }

// Lost is how many items the rings overwrote before this cursor read them
// since the previous call of Lost: what a consumer counts and reports once.
func (c *Cursor) Lost() uint64 {
	n := c.missed - c.reported
	c.reported = c.missed
	return n
}

// Wait returns a channel that is closed at the model's next change. Call it
// before Read: what a Read after it misses, the channel announces.
func (c *Cursor) Wait() <-chan struct{} { return c.m.wake.wait() }

// followBatch bounds one Read of Follow, so a burst of items is handed out
// in pages rather than one slice as long as the rings.
const followBatch = 256

// Follow hands fn each item after the cursor, in sequence order, as the
// model changes, until ctx ends: the loop of a consumer that reacts to the
// stream (a wake word stops speech, a motion start asks for a description).
// A burst of items costs a Read per page, not a goroutine each. fn runs on
// the caller's goroutine and must not block for long: items wait meanwhile.
func (c *Cursor) Follow(ctx context.Context, fn func(Item)) {
	var items []Item
	for ctx.Err() == nil {
		wake := c.Wait() // before Read: what the Read misses, wake announces
		items = c.Read(items[:0], followBatch)
		for _, it := range items {
			fn(it)
		}
		if len(items) == followBatch {
			continue // a full page: more may be there already
		}
		select {
		case <-ctx.Done():
		case <-wake:
		}
	}
}

// Read appends to dst the items after the cursor, in sequence order, at
// most limit of them (limit <= 0: all), and moves the cursor past them.
func (c *Cursor) Read(dst []Item, limit int) []Item {
	upTo := c.m.visible() // nothing numbered up to here can still be in flight
	c.scr = c.scr[:0]
	for _, r := range c.m.sources.Load().sorted {
		c.scr = c.readRing(c.scr, r, upTo, limit)
	}
	c.scr = c.readEvents(c.scr, upTo, limit)
	c.scr = c.readRecords(c.scr, upTo, limit)
	slices.SortFunc(c.scr, func(a, b Item) int { return cmp.Compare(a.Seq(), b.Seq()) })
	if limit > 0 && len(c.scr) > limit {
		// Give back what is cut off: each ring's position counts only the
		// items handed out.
		for _, it := range c.scr[limit:] {
			switch it.Kind {
			case ItemObservation:
				c.obs[c.m.sources.Load().byName[it.Obs.Source]]--
			case ItemEvent:
				c.events--
			case ItemRecord:
				c.recs--
			}
		}
		c.scr = c.scr[:limit]
	}
	dst = append(dst, c.scr...)
	clear(c.scr) // drop references to blobs and data until the next Read
	return dst
}

// unread returns where in a ring of held items, total over its life, the
// cursor's position pos starts, counting what was overwritten as missed.
func (c *Cursor) unread(pos *uint64, held int, total uint64) int {
	oldest := total - uint64(held)
	if *pos < oldest {
		c.missed += oldest - *pos
		*pos = oldest
	}
	return int(*pos - oldest)
}

func (c *Cursor) readRing(dst []Item, r *Ring, upTo uint64, limit int) []Item {
	pos := c.obs[r]
	r.mu.Lock()
	defer r.mu.Unlock()
	n, taken := r.obs.len(), 0
	for i := c.unread(&pos, n, r.total); i < n && (limit <= 0 || taken < limit); i++ {
		o := r.obs.at(i)
		if o.seq > upTo {
			break
		}
		dst = append(dst, Item{Kind: ItemObservation, Obs: o.observation(r.source)})
		pos++
		taken++
	}
	c.obs[r] = pos
	return dst
}

func (c *Cursor) readEvents(dst []Item, upTo uint64, limit int) []Item {
	m := c.m
	return readLog(c, dst, &m.evMu, &m.events, &m.evTotal, &c.events, upTo, limit,
		func(e *Event) Item { return Item{Kind: ItemEvent, Event: *e} })
}

func (c *Cursor) readRecords(dst []Item, upTo uint64, limit int) []Item {
	m := c.m
	return readLog(c, dst, &m.recMu, &m.records, &m.recTotal, &c.recs, upTo, limit,
		func(r *Record) Item { return Item{Kind: ItemRecord, Record: *r} })
}

// readLog appends the unread items of one model-wide log (events, journal)
// under the log's lock mu; total counts the log's items over its life.
func readLog[T any](c *Cursor, dst []Item, mu *sync.Mutex, r *ring[T], total *uint64, pos *uint64, upTo uint64, limit int, item func(*T) Item) []Item {
	mu.Lock()
	defer mu.Unlock()
	n, taken := r.len(), 0
	for i := c.unread(pos, n, *total); i < n && (limit <= 0 || taken < limit); i++ {
		it := item(r.at(i))
		if it.Seq() > upTo {
			break
		}
		dst = append(dst, it)
		*pos++
		taken++
	}
	return dst
}
