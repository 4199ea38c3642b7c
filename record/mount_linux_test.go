package record

import "syscall"

func mountTmpfs(dir string) error { return syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=192k") }
func unmount(dir string)          { _ = syscall.Unmount(dir, 0) }
