package board

import (
	"testing"

	"github.com/edgeagent/edgeagent/board/boardtest"
)

// TestNoValueInAnyError feeds every board under board-configs with
// each of its values replaced in turn by a marker through Parse, and
// checks that no error repeats the marker: errors name keys and
// positions, never what the file says (a reload's refusal travels to
// whoever sent it).
func TestNoValueInAnyError(t *testing.T) {
	// The sim board and a Pi's cover every block; the other Pi and the
	// Jetson repeat them.
	files := []string{"../board-configs/sim.yaml", "../board-configs/rpi5.yaml"}
	boardtest.Walk(t, files, boardtest.Markers, func(_ string, doc []byte) error {
		_, err := Parse("board.yaml", doc)
		return err
	})
}
