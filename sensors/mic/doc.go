// Package mic is the "mic" sensor kind: an audio Source delivering 16 kHz
// mono (a sound card through miniaudio, a command such as arecord, a WAV
// file, or a simulated soundscape), and what is heard: levels, voice
// activity, wake words, and the spoken command after a wake word.
//
// A sample block (the defaults are shown where a key is optional):
//
//	sensors:
//	  - name: mic
//	    kind: mic
//	    interval: 100ms              # level readings (10 Hz)
//	    priority: high               # of wake_word; high preempts a running agent cycle
//	    options:
//	      source: malgo              # malgo | exec | wav | sim
//	      device: ""                 # malgo: ID or name (substring); "" = the default device
//	      backends: []               # malgo: e.g. [alsa]; [] = miniaudio's order
//	      buffer: 2s                 # malgo: audio held for a slow pipeline before dropping
//	      loud_dbfs: -3              # loud_noise when a block peaks at this level (0: off)
//	      loud_priority: high
//	      loud_cooldown: 2s
//	      vad: {onset_db: 6, hangover: 250ms, quiet_dbfs: -65}
//	      wakeword:
//	        detector: builtin        # builtin | wyoming | off
//	        model: builtin           # trained head: builtin ("hey robot") | FILE.eawh (wakeword train) | none
//	        model_threshold: 0       # 0: the head's own, chosen by its trainer; check with `edgeagent wakeword test`
//	        refractory: 1.5s
//	        wyoming: ""              # detector wyoming: e.g. 127.0.0.1:10400 (wyoming-openwakeword)
//	        wyoming_names: []        # the server's wake words, e.g. [ok_nabu]; [] = its default
//	      stt:
//	        wyoming: ""              # e.g. 127.0.0.1:10300 (wyoming-faster-whisper); "" = no transcription
//	        model: ""
//	        language: ""             # e.g. en
//	        end_silence: 800ms       # the command ends after this much silence
//	        max_command: 8s
//	        no_speech_timeout: 4s
//	        timeout: 15s             # wait for the transcript
//	      half_duplex:               # while the robot's speaker plays (the say skill) and tail after:
//	        mode: mute               # mute: no wake word | raise: built-in score ≥ threshold only | off
//	        tail: 300ms
//	        threshold: 0.95          # raise: a person close by still barges in
//	      reconnect: {initial: 1s, max: 30s}
//
// Other sources:
//
//	source: exec                    # cgo-free builds, or any capture command
//	command: [arecord, -q, -D, "plughw:1,0", -f, S16_LE, -r, "16000", -c, "1", -t, raw]
//	format: {rate: 16000, channels: 1, encoding: s16le}   # what the command writes
//
//	source: wav                     # replay a recording
//	file: recordings/kitchen.wav
//	pace: true                      # real time (false: as fast as possible)
//	loop: false
//
//	source: sim                     # the sim board's scripted soundscape
//	sim:
//	  noise: pink                   # white | pink | none
//	  noise_dbfs: -55
//	  period: 30s                   # the script repeats
//	  utterances:
//	    - {file: ../sensors/mic/testdata/speech/pos/enrolled_a.wav, at: 10s, gain_db: 0}
//
// Check the wake word on recordings of the room it will listen in:
//
//	edgeagent wakeword test --board board-configs/rpi5.yaml kitchen-evening.wav
//
// What a mic named mic records:
//
//	mic.peak_dbfs     reading, peak level of the last interval, dBFS
//	mic.rms_dbfs      reading, RMS level of the last interval, dBFS
//	mic.noise_dbfs    reading, the VAD's background estimate
//	mic.speech        reading, 1 while someone speaks
//	mic.dropped       reading, samples lost so far (capture buffer full)
//	mic.health        text, "ok" or why the microphone is degraded
//
// and raises wake_word (high unless the block's priority says otherwise: it
// preempts what the agent is doing; data:
// name, detector, score, stt), voice_command (normal; data: text, which the
// agent takes as a text command), voice_command_failed (low: no speech,
// STT unreachable …), loud_noise, sensor_fault and sensor_recovered.
//
// The built-in detector runs a trained, speaker-independent model (the
// shipped "hey robot", or one made with `edgeagent wakeword train --phrase
// "…"`; see package wakeword and docs/bench/wake-word.md). With
// detector: wyoming, a server such as wyoming-openwakeword decides while it
// is reachable, and the built-in detector takes over (with a logged
// warning) while it is not.
package mic
