package store

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// bbolt reads its file through a shared, read-only memory map, and every
// page a transaction reads stays mapped, counted in the process's RSS,
// until bbolt replaces the map when the file grows. A store whose keys
// turn over (the command journal's window of ids, copied on every write)
// reads, in time, every page of its file: a slow climb of RSS toward the
// file's size that is only page cache, but is the number a robot's memory
// budget is held to. So every trimEvery writes the store drops the pages
// it has mapped; the few it uses again (meta, root, the newest leaves) come
// back at once from the page cache, with no disk read.
const trimEvery = 256

// trim drops the store's mapped pages (MADV_DONTNEED on a shared file map
// unmaps clean pages; their contents stay in the page cache and the file).
// It runs inside a read transaction, which holds bbolt's map lock: the map
// cannot be replaced, and its address reused, while the advice is given.
func trim(db *bolt.DB) error {
	return db.View(func(tx *bolt.Tx) error {
		data, size := db.Info().Data, tx.Size()
		if data == 0 || size <= 0 {
			return nil
		}
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, data, uintptr(size), unix.MADV_DONTNEED); errno != 0 {
			return fmt.Errorf("store: trim the map: %w", errno)
		}
		return nil
	})
}

// update runs fn in a write transaction, and trims the map after every
// trimEvery of them.
func (s *Bolt) update(fn func(*bolt.Tx) error) error {
	err := s.db.Update(fn)
	if s.writes.Add(1)%trimEvery == 0 {
		if terr := trim(s.db); terr != nil {
			s.trimErr.CompareAndSwap(nil, &terr)
		}
	}
	return err
}
