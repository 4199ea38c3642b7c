package recording

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/foxglove/mcap/go/mcap"
)

// errDone ends Extract's pass once it has what it wants.
var errDone = errors.New("done")

// Extract streams the attachments named in want (name -> a new file's
// path) out of the recording at path, never holding one whole in memory,
// and checks each one's CRC. The pass stops at the last one wanted (the
// recorder writes them first). One wanted but not in the file is not an
// error: the caller sees no file there. A damaged one is, and no file is
// left for it.
func Extract(path string, want map[string]string) error {
	if len(want) == 0 {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	left := len(want)
	var bad error
	lx, err := mcap.NewLexer(f, &mcap.LexerOptions{
		MaxRecordSize: maxRecord, EmitChunks: true, ComputeAttachmentCRCs: true, // chunks skipped, not decompressed
		AttachmentCallback: func(a *mcap.AttachmentReader) error {
			dest, ok := want[a.Name]
			if !ok {
				return nil
			}
			if err := copyOut(a, dest); err != nil {
				bad = fmt.Errorf("%s: attachment %s: %w", path, a.Name, err)
				return errDone
			}
			if left--; left == 0 {
				return errDone
			}
			return nil
		},
	})
	if err != nil {
		return describe(path, err)
	}
	var buf []byte
	for {
		// Past the attachments, damage is Read's business (it says how
		// far a file cut short reads): what was not found is not there.
		_, rec, err := lx.Next(buf)
		if err != nil {
			return bad
		}
		if cap(rec) > cap(buf) {
			buf = rec
		}
	}
}

// copyOut writes a's data into a new file at dest, and removes it unless
// the data is whole and its CRC matches.
func copyOut(a *mcap.AttachmentReader, dest string) error {
	out, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, a.Data())
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = checkCRC(a)
	}
	if err != nil {
		_ = os.Remove(dest)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("cut short")
		}
	}
	return err
}

func checkCRC(a *mcap.AttachmentReader) error {
	want, err := a.ParsedCRC()
	if err != nil {
		return errors.New("cut short")
	}
	got, err := a.ComputedCRC()
	if err != nil {
		return err
	}
	if want != 0 && got != want { // 0: written without one
		return errors.New("damaged (its CRC does not match)")
	}
	return nil
}
