package localadmin

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// ErrNoAgent: no agent listens on the data directory's socket (none runs,
// or it is older than the socket).
var ErrNoAgent = errors.New("no local admin socket")

// Call sends one tool call to the agent whose data directory is dir and
// returns its reply. ctx bounds the whole call.
func Call(ctx context.Context, dir, tool string, params json.RawMessage) (Reply, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", Path(dir))
	switch {
	case errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED):
		return Reply{}, fmt.Errorf("%w in %s", ErrNoAgent, dir)
	case errors.Is(err, os.ErrPermission):
		return Reply{}, fmt.Errorf("the agent's admin socket in %s is not yours: run as the agent's user (or root)", dir)
	case err != nil:
		return Reply{}, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	req, err := json.Marshal(Request{Tool: tool, Params: params})
	if err != nil {
		return Reply{}, err
	}
	// A refusal is written before the request is read, and the socket
	// closed: the write may fail while the reply waits to be read.
	_, werr := c.Write(append(req, '\n'))
	line, err := bufio.NewReader(c).ReadBytes('\n')
	if err != nil {
		if ctx.Err() != nil {
			return Reply{}, ctx.Err()
		}
		return Reply{}, fmt.Errorf("local admin socket: no reply: %w", errors.Join(werr, err))
	}
	var r Reply
	if err := json.Unmarshal(line, &r); err != nil {
		return Reply{}, fmt.Errorf("local admin socket: a reply that is not JSON: %w", err)
	}
	return r, nil
}
