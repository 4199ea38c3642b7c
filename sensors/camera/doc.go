// Package camera is the "camera" sensor kind: a frame Source (a V4L2
// webcam, OpenCV, a recorded clip, a command such as rpicam-vid, or a
// simulated scene), the motion detector of package motion, and what they
// tell the world model.
//
// A sample block (the defaults are shown where a key is optional):
//
//	sensors:
//	  - name: front_cam
//	    kind: camera
//	    interval: 1s                 # how often fps, drops and motion area are recorded
//	    options:
//	      source: v4l2               # sim | v4l2 | gocv | file | exec
//	      device: /dev/video0        # v4l2; gocv: an index ("0") or a path
//	      format: auto               # v4l2: auto | mjpeg | yuyv | grey
//	      width: 640                 # requested; the nearest offered size is used
//	      height: 480
//	      fps: 10
//	      buffers: 4                 # V4L2 buffers: few keep latency low
//	      snapshot_interval: 5s      # latest frame as JPEG in <name>.snapshot (0: off)
//	      snapshot_max_bytes: 262144 # larger snapshots are re-encoded at half size
//	      snapshot_quality: 75
//	      live_fps: 10               # <name>.live while a viewer watches (0: off)
//	      live_quality: 60
//	      reconnect: {initial: 500ms, max: 10s}  # reopening an unplugged camera
//	      motion:
//	        enabled: true
//	        frame_height: 100        # the detector works at this height
//	        threshold: 30            # luma difference that counts as change
//	        min_area: 10             # smallest region, pixels at frame_height
//	        improve_contrast: true
//	        compensate_lighting: true # fit the lighting per 16×16 tile before differencing
//	        alpha: 0.01              # background learning rate
//	        calibration_alpha: 0.2
//	        calibration_frames: 10
//	        lightning_threshold: 0.8 # this much of the frame changing at once resets
//	        lighting_jump: 25        # a jump of the lighting fit this large re-bases (3 frames blind)
//	        masks:                   # ignored polygons, Frigate syntax, pixels or fractions
//	          - "0,0,640,0,640,60,0,60"
//	        off_delay: 5s            # motion stays on this long after the last motion frame
//	        update_interval: 1s      # motion_update records while on
//
// Other sources:
//
//	source: file                    # replay a raw MJPEG or Y4M clip
//	path: clips/porch.mjpeg         # relative to the board file
//	pace: true                      # real time at fps (false: as fast as possible)
//	loop: true
//
//	source: exec                    # raw I420 frames from a command, e.g. a Pi CSI camera
//	command: [rpicam-vid, -t, "0", -n, --codec, yuv420, --width, "640", --height, "480", --framerate, "10", -o, "-"]
//	# width and height must be the command's; keep the width a multiple of 64
//	# (640, 1280) so that rows carry no hardware padding
//
//	source: gocv                    # needs a binary built with -tags gocv
//	# Pi camera through libcamera:
//	pipeline: "libcamerasrc ! video/x-raw,width=640,height=480,framerate=10/1,format=NV12 ! videoconvert ! video/x-raw,format=GRAY8 ! appsink drop=1 max-buffers=1"
//	# Jetson CSI camera:
//	# pipeline: "nvarguscamerasrc ! video/x-raw(memory:NVMM),width=1280,height=720,framerate=30/1 ! nvvidconv ! video/x-raw,format=GRAY8 ! appsink drop=1 max-buffers=1"
//
//	source: sim                     # the sim board: someone walks by every 40 s
//	sim: {seed: 1, objects: 2, noise: 4, drift: 0.08, drift_period: 60s, every: 40s}
//
// What a camera named front_cam records:
//
//	front_cam.fps               reading, frames processed per second
//	front_cam.drops             reading, frames lost so far (by the device, the clip's pacing, or the detector)
//	front_cam.motion            reading, 1 while motion is on, else 0
//	front_cam.motion_area       reading, changed area in percent of the frame
//	front_cam.motion_update     event (low) recorded every update_interval while motion is on
//	front_cam.snapshot          blob, image/jpeg, the latest frame every snapshot_interval
//	front_cam.motion_snapshot   blob, image/jpeg, the frame at the last motion start
//	front_cam.detect_ms         reading, the motion detector's mean time per frame
//	front_cam.live              blob, image/jpeg, frames at live_fps, only while a viewer watches
//	front_cam.live_motion       event (low) with each live frame: boxes, area, motion on/off, detect time
//	front_cam.health            text, "ok" or why the camera is degraded
//
// and raises motion_start (high: the agent preempts what it is doing),
// motion_end (normal), sensor_fault and sensor_recovered. Motion events
// carry the boxes in the frame's pixel coordinates ([x0, y0, x1, y1],
// x1 and y1 exclusive) and the changed area in percent.
//
// Live frames are produced only while a consumer holds a
// worldmodel.Model.Watch on <name>.live (the node's Sink implements
// sensors.Watcher); the node gives <name>.live a ring of 2 unless the board
// says otherwise.
//
// Snapshots are large: give them a small ring in the board's world
// capacities (world: capacities: front_cam.snapshot: 2).
package camera
