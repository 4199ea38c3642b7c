package store

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// A segment file is a run of records, each a 16-byte header and the value:
//
//	length  uint32, big-endian: bytes of the value
//	crc     uint32, big-endian: CRC-32C of the seq field and the value
//	seq     uint64, big-endian: the entry's sequence number
//	value   the JSON of the appended value
//
// Appends are whole records written with one write and fsynced, so a crash
// can only leave the last record of the newest segment incomplete; the
// length and the checksum tell such a torn record (or a rotted one) from a
// complete one. The seq in the record makes a file self-describing: its
// records increase from the first seq, which is also its name.
const recordHeader = 16

const segSuffix = ".seg"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segName is the file name of the segment whose records start at first,
// zero-padded so that names sort as the numbers do.
func segName(first uint64) string { return fmt.Sprintf("%020d%s", first, segSuffix) }

// appendRecord appends the record of seq and value to buf.
func appendRecord(buf []byte, seq uint64, value []byte) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(value)))
	buf = binary.BigEndian.AppendUint32(buf, recordCRC(seq, value))
	buf = binary.BigEndian.AppendUint64(buf, seq)
	return append(buf, value...)
}

func recordCRC(seq uint64, value []byte) uint32 {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	return crc32.Update(crc32.Checksum(s[:], castagnoli), castagnoli, value)
}

// createSegment creates the empty segment file of first in dir, for
// appending. The caller fsyncs dir.
func createSegment(dir string, first uint64) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, segName(first)), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o640)
}

// segmentError is a segment file that cannot be read at off: a bad record
// (err nil; torn by a crash, or rotted) or an I/O error. It never quotes
// the record: the audit log's values are not for error messages.
type segmentError struct {
	path string
	off  int64
	why  string // what is wrong with the record
	err  error
}

func (e *segmentError) Error() string {
	if e.err != nil {
		return fmt.Sprintf("segment %s at offset %d: %v", e.path, e.off, e.err)
	}
	return fmt.Sprintf("segment %s: bad record at offset %d: %s", e.path, e.off, e.why)
}

func (e *segmentError) Unwrap() error { return e.err }

// readSegment calls fn with the records of the segment file f from byte
// from to byte size (-1: to the end of the file), in order, with each
// record's offset, and returns where the records it read end. It reads
// with ReadAt, so several calls may share f. Every record is checked: its
// seq must be above the one before (the first at least first) and below
// below (0: no bound), its checksum must match. What fails is a
// *segmentError with its offset; an error from fn is returned as is.
// value is valid only during fn: one buffer serves every record, so
// reading a log costs its largest record, not its length.
func readSegment(f *os.File, first, below uint64, from, size int64, fn func(off int64, seq uint64, value []byte) error) (int64, error) {
	path := f.Name()
	if size < 0 {
		fi, err := f.Stat()
		if err != nil {
			return from, &segmentError{path: path, off: from, err: err}
		}
		size = fi.Size()
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, from, size-from), 32<<10)
	off, prev := from, first-1
	var hdr [recordHeader]byte
	var buf []byte
	for off < size {
		bad := func(why string) error { return &segmentError{path: path, off: off, why: why} }
		if size-off < recordHeader {
			return off, bad("incomplete header")
		}
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return off, &segmentError{path: path, off: off, err: err}
		}
		n := int64(binary.BigEndian.Uint32(hdr[0:]))
		sum := binary.BigEndian.Uint32(hdr[4:])
		seq := binary.BigEndian.Uint64(hdr[8:])
		if n > size-off-recordHeader {
			return off, bad("incomplete record")
		}
		buf = slices.Grow(buf[:0], int(n))[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return off, &segmentError{path: path, off: off, err: err}
		}
		if recordCRC(seq, buf) != sum {
			return off, bad("checksum mismatch")
		}
		if seq <= prev || below != 0 && seq >= below {
			return off, bad("sequence number out of order")
		}
		if err := fn(off, seq, buf); err != nil {
			return off, err
		}
		off += recordHeader + n
		prev = seq
	}
	return off, nil
}
