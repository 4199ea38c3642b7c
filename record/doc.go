// Package record is the recorder: a plugin that writes the agent's stream
// (the world model's observations, events and journal, read by cursor like
// MQTT does) to MCAP files that Foxglove opens without plugins.
//
// Channels, one per source, JSON with a JSON Schema per message type:
//
//	/obs/<source>            edgeagent.Reading | Text | Event | Blob (size only)
//	/obs/<camera>.snapshot   foxglove.CompressedImage (also .motion_snapshot)
//	/annotations/<camera>    foxglove.ImageAnnotations (motion boxes)
//	/events/<source>         edgeagent.Event (motion, wake word, e-stop, thresholds …)
//	/decisions               edgeagent.Event, the trace in data.trace
//	/tool_call/<tool>        edgeagent.Record: caller, via, params, result, duration
//	/command/<caller>        edgeagent.Record: a command submitted to the agent (text), via
//	/llm/<plugin>            edgeagent.Record: full prompt, raw answer, usage
//	/actuator/<name>         edgeagent.Record: the state as applied
//	/health/<component>      edgeagent.Record
//	/audio/<mic>.audio       edgeagent.Audio: raw PCM around speech (only with audio: true)
//	/recorder/stats          written, dropped, missed, frames skipped (every flush)
//
// A command a fleet or a group sent (caller mqtt) carries "via": {kind,
// name, topic} (tools.Via). The field is optional and new fields are only
// ever added, so the format has no version number: a recording made before
// commands were marked reads as one of direct commands and replays as it
// did, and an older binary reading a newer file ignores the mark.
//
// Frames and audio are also what `replay --detections detectors` runs the
// motion and wake-word detectors over again (see package replay).
//
// Metadata "edgeagent" holds the build (version, VCS revision, Go) and the
// device; the attachment "board.yaml" is the effective board config (the
// MQTT password redacted), from which a replay builds its agent. The files
// that board names (a mic's utterances, a wake-word head, skill texts, a
// model) are attachments too, "files/<n>/<name>", and the attached board
// names them so (see BoardFiles): a recording replays on any machine and
// checkout. They are streamed from the disk as each recording file starts,
// up to attach_max_bytes in all; a file beyond (a 200 MB model) is
// carried by its SHA-256, the recorder says so once, and a replay takes
// the file where it was recorded (or in another checkout of the tree)
// only while its hash is the same, else refuses to start naming the
// board setting (attach.go, metadata
// "edgeagent.files.details"; `recording info` lists them).
//
// The board's `record:` block (every key optional):
//
//	record:
//	  enabled: false        # record from the start into dir (else: run --record, record.start)
//	  dir: recordings       # relative to data_dir
//	  max_bytes: 268435456  # start a new file at this size …
//	  max_age: 1h           # … or this age
//	  keep: 24              # files kept in dir (the oldest of this device's are deleted)
//	  compression: lz4      # or zstd (smaller, more CPU)
//	  chunk_bytes: 131072   # a chunk is closed at this size …
//	  flush_every: 5s       # … or after this long: what a power cut can lose
//	  queue: 4096           # messages waiting for the disk; beyond, dropped and counted
//	  queue_bytes: 524288
//	  retry: 30s            # after a disk failure, try a new file this much later
//	  attach_max_bytes: 16777216  # the board's files each recording file carries, in all;
//	                        # beyond, a file is carried by its SHA-256 (0: none attached)
//	  frames:
//	    enabled: true
//	    interval: 1s        # one snapshot per interval outside motion …
//	    motion: true        # … every snapshot while the camera sees motion
//	    max_width: 320      # re-encoded at most this wide (0: as the camera encoded them)
//	    quality: 60
//	  audio: false          # the microphones' audio around speech (VAD-gated; 32 KB/s of speech)
//
// Tools (admin): record.start {name?} records into rotating files in dir,
// or into dir/<name>.mcap; record.stop completes the file; record.status
// (read) reports what is written and dropped, as does agent.status.
package record
