package main

import _ "github.com/edgeagent/edgeagent/plugin/vision" // camera.describe (a camera and llm.vision_model)
