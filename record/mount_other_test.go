//go:build !linux

package record

import "errors"

func mountTmpfs(string) error { return errors.New("tmpfs mounts are Linux only") }
func unmount(string)          {}
