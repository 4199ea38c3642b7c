package record

// The message types of a recording, each with the JSON Schema Foxglove
// reads to plot and display the channel without a plugin. Times are the
// messages' log times (nanoseconds since the epoch); seq is the world
// model's sequence number, which orders the messages of all channels.
// The foxglove.* schemas follow the field lists Foxglove documents for its
// well-known types, so the image panel shows frames and boxes.

// Schema names.
const (
	SchemaReading     = "edgeagent.Reading"
	SchemaText        = "edgeagent.Text"
	SchemaBlob        = "edgeagent.Blob"
	SchemaEvent       = "edgeagent.Event"
	SchemaRecord      = "edgeagent.Record"
	SchemaStats       = "edgeagent.RecorderStats"
	SchemaImage       = "foxglove.CompressedImage"
	SchemaAnnotations = "foxglove.ImageAnnotations"
	SchemaAudio       = "edgeagent.Audio"
)

var schemas = map[string]string{
	SchemaAudio: `{"title":"edgeagent.Audio","description":"A microphone's audio around speech: raw samples as the MIME type says (audio/L16: 16-bit big-endian PCM, rate and channels as parameters)","type":"object",
"properties":{"timestamp":{"type":"object","properties":{"sec":{"type":"integer","minimum":0},"nsec":{"type":"integer","minimum":0,"maximum":999999999}}},
"seq":{"type":"integer"},"source":{"type":"string"},"mime":{"type":"string"},"data":{"type":"string","contentEncoding":"base64"}},
"required":["timestamp","seq","source","mime","data"]}`,
	SchemaReading: `{"title":"edgeagent.Reading","description":"A numeric sensor reading","type":"object",
"properties":{"seq":{"type":"integer"},"source":{"type":"string"},"value":{"type":"number"},"unit":{"type":"string"}},
"required":["seq","source","value"]}`,
	SchemaText: `{"title":"edgeagent.Text","description":"A text observation","type":"object",
"properties":{"seq":{"type":"integer"},"source":{"type":"string"},"text":{"type":"string"}},
"required":["seq","source","text"]}`,
	SchemaBlob: `{"title":"edgeagent.Blob","description":"A binary observation (its size; the bytes are not kept)","type":"object",
"properties":{"seq":{"type":"integer"},"source":{"type":"string"},"mime":{"type":"string"},"bytes":{"type":"integer"}},
"required":["seq","source","bytes"]}`,
	SchemaEvent: `{"title":"edgeagent.Event","description":"An event: motion, wake word, e-stop, threshold, decision (data.trace) …","type":"object",
"properties":{"seq":{"type":"integer"},"kind":{"type":"string"},"source":{"type":"string"},
"priority":{"type":"string","enum":["low","normal","high","critical"]},"message":{"type":"string"},"data":{"type":"object"}},
"required":["seq","kind","source","priority"]}`,
	SchemaRecord: `{"title":"edgeagent.Record","description":"What the agent did: tool_call (caller, via: a fleet's or group's command, params, result), llm (prompt and raw answer), actuator (state as applied), health","type":"object",
"properties":{"seq":{"type":"integer"},"kind":{"type":"string"},"source":{"type":"string"},"data":{"type":"object"}},
"required":["seq","kind","source","data"]}`,
	SchemaStats: `{"title":"edgeagent.RecorderStats","description":"The recorder's own counters, written at every flush","type":"object",
"properties":{"written":{"type":"integer"},"dropped":{"type":"integer","description":"messages the recorder could not keep (queue full, disk failing)"},
"missed":{"type":"integer","description":"items the world model's rings overwrote before the recorder read them"},"frames_skipped":{"type":"integer"}},
"required":["written","dropped","missed"]}`,
	SchemaImage: `{"title":"foxglove.CompressedImage","description":"A compressed image","type":"object",
"properties":{"timestamp":{"type":"object","properties":{"sec":{"type":"integer","minimum":0},"nsec":{"type":"integer","minimum":0,"maximum":999999999}}},
"frame_id":{"type":"string"},"data":{"type":"string","contentEncoding":"base64"},"format":{"type":"string"}},
"required":["timestamp","frame_id","data","format"]}`,
	SchemaAnnotations: `{"title":"foxglove.ImageAnnotations","description":"Motion boxes over the camera image","type":"object",
"properties":{"circles":{"type":"array","items":{"type":"object"}},
"points":{"type":"array","items":{"type":"object","properties":{
  "timestamp":{"type":"object","properties":{"sec":{"type":"integer","minimum":0},"nsec":{"type":"integer","minimum":0,"maximum":999999999}}},
  "type":{"type":"integer","description":"0 unknown, 1 points, 2 line loop, 3 line strip, 4 line list"},
  "points":{"type":"array","items":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}}}},
  "outline_color":{"type":"object","properties":{"r":{"type":"number"},"g":{"type":"number"},"b":{"type":"number"},"a":{"type":"number"}}},
  "outline_colors":{"type":"array","items":{"type":"object"}},
  "fill_color":{"type":"object","properties":{"r":{"type":"number"},"g":{"type":"number"},"b":{"type":"number"},"a":{"type":"number"}}},
  "thickness":{"type":"number"}}}},
"texts":{"type":"array","items":{"type":"object"}}}}`,
}
