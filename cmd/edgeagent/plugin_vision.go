package main

import _ "github.com/edgeagent/edgeagent/tools/vision" // camera.describe (a camera and llm.vision_model)
