package worldmodel

import (
	"time"
	"unsafe"
)

// slot is how a ring holds an Observation: 72 bytes instead of 112, so a
// full ring of 256 readings is an 18 KB array instead of 28 KB, about a
// third less for the tens of sources a robot keeps. The ring knows its
// source, so the slot does not repeat it; and each kind uses one of Unit
// and Text and one of Blob and Event, so the slot has room for one string
// and one reference, with a tag saying which they are. An observation that
// carries both strings, or both references, keeps its four payload fields
// in a spill allocated beside it: nothing a producer sets is lost.
type slot struct {
	seq   uint64
	time  time.Time
	value float64
	str   string         // Unit, or Text with tagText
	ref   unsafe.Pointer // *Blob with tagBlob, *Event with tagEvent, *spill with tagSpill
	kind  Kind
	tag   uint8
}

const (
	tagText  = 1 << iota // str is Text, not Unit
	tagBlob              // ref is a *Blob
	tagEvent             // ref is an *Event
	tagSpill             // ref is a *spill holding Unit, Text, Blob and Event; str is empty
)

// spill holds the payload of an observation that does not fit a slot.
type spill struct {
	unit, text string
	blob       *Blob
	event      *Event
}

var slotSize = int64(unsafe.Sizeof(slot{}))

// set stores o, all but its Source (the ring's), in s. It allocates only
// for an observation with both Unit and Text, or both Blob and Event.
// Ring.Append stores a reading (no Text, Blob or Event) itself, which is
// what set does for one, without the call. The fields are stored one by
// one: a composite literal is built on the stack and copied, and reading
// it back in 16-byte words stalls on the 8-byte stores (7-10 % of an
// append).
func (s *slot) set(o *Observation) {
	str, ref, tag := o.Unit, unsafe.Pointer(nil), uint8(0)
	switch {
	case (o.Unit != "" && o.Text != "") || (o.Blob != nil && o.Event != nil):
		str, ref, tag = "", unsafe.Pointer(&spill{o.Unit, o.Text, o.Blob, o.Event}), tagSpill
	case o.Text != "":
		str, tag = o.Text, tagText
	}
	if tag != tagSpill {
		switch {
		case o.Blob != nil:
			ref, tag = unsafe.Pointer(o.Blob), tag|tagBlob
		case o.Event != nil:
			ref, tag = unsafe.Pointer(o.Event), tag|tagEvent
		}
	}
	s.seq, s.time, s.value, s.str, s.ref, s.kind, s.tag = o.Seq, o.Time, o.Value, str, ref, o.Kind, tag
}

// observation returns what set stored, with source as its Source.
func (s *slot) observation(source string) Observation {
	o := Observation{Seq: s.seq, Time: s.time, Source: source, Kind: s.kind, Value: s.value}
	if s.tag&tagSpill != 0 {
		p := (*spill)(s.ref)
		o.Unit, o.Text, o.Blob, o.Event = p.unit, p.text, p.blob, p.event
		return o
	}
	if s.tag&tagText != 0 {
		o.Text = s.str
	} else {
		o.Unit = s.str
	}
	switch {
	case s.tag&tagBlob != 0:
		o.Blob = (*Blob)(s.ref)
	case s.tag&tagEvent != 0:
		o.Event = (*Event)(s.ref)
	}
	return o
}
