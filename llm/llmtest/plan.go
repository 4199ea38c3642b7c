package llmtest

import "encoding/json"

// PlanTools reads the JSON schema the agent's planner sends as a plan's
// format and returns the tool names its steps may use, one per alternative
// in the order the schema lists them. A fake model answers a plan request
// with one of these, as a real model is constrained to.
func PlanTools(schema []byte) ([]string, error) {
	var sch struct {
		Properties struct {
			Steps struct {
				Items struct {
					AnyOf []struct {
						Properties struct {
							Tool struct {
								Enum []string `json:"enum"`
							} `json:"tool"`
						} `json:"properties"`
					} `json:"anyOf"`
				} `json:"items"`
			} `json:"steps"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &sch); err != nil {
		return nil, err
	}
	var names []string
	for _, alt := range sch.Properties.Steps.Items.AnyOf {
		names = append(names, alt.Properties.Tool.Enum...)
	}
	return names, nil
}
